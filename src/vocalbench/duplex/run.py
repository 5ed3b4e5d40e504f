"""The duplex run: replay scenarios to a realtime system (resumable, concurrent), score, aggregate.

The command (``vocalbench run --subsets duplex``, :mod:`vocalbench.commands.duplex`) holds one run folder per language (``RUN/en``, ``RUN/zh`` with ``--lang both``), like every run:
``config.json`` (the config plus a ``duplex`` record: the session's turn-detection settings, chunk
size, protocol version and scenario set), ``duplex/<scenario>/r<k>/`` per replay (input.wav,
output.wav, events.jsonl, result.json, metrics.json), ``duplex.json`` (the measures with their
intervals) and ``report/duplex.html`` (the table and a playable timeline per scenario).

``--limit N`` keeps the first N scenarios of each kind. Resumable: a replay with a ``result.json`` is not replayed again, a scored one not rescored.
Replays run concurrently up to ``--concurrency`` (each on its own real-time schedule);
``--repeats N`` replays every scenario N times (server VAD varies between runs).
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

from vocalbench.components.vad import TurnSettings
from vocalbench.duplex.metrics import Word
from vocalbench.duplex.replay import replay
from vocalbench.duplex.scenarios import Scenario
from vocalbench.duplex.score import aggregate, score_replay
from vocalbench.judge.spec import JudgeSpec

SUBSET = "duplex"
RESULT = "result.json"
RESULT_FILE = "duplex.json"


def write_result(run_dir: Path, body: dict[str, Any]) -> Path:
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
    return run_dir / "duplex" / scenario / f"r{k}"


async def replay_all(system: Any, scenarios: list[Scenario], run_dir: Path, settings: TurnSettings, chunk_ms: int,
                     repeats: int, cfg: Any, tail: float = 0.0) -> None:
    """Replay what has no result yet, up to ``cfg.concurrency`` at once (each on its own schedule)."""
    from vocalbench.audio import load
    from vocalbench.files import write_json
    from vocalbench.progress import progress_bar
    from vocalbench.systems.openai_audio import sample_headers

    todo = [(sc, k) for k in range(1, repeats + 1) for sc in scenarios
            if not (replay_dir(run_dir, sc.id, k) / RESULT).exists()]
    if not todo:
        return
    sem = asyncio.Semaphore(cfg.concurrency)
    headers_base = {"Authorization": f"Bearer {system.api_key}"} if system.api_key else {}

    with progress_bar(len(todo), f"duplex replay [{cfg.lang}]", enabled=not cfg.quiet) as bar:
        async def one(sc: Scenario, k: int) -> None:
            async with sem:
                x, _ = load(sc.audio, sample_rate=24000)
                if tail > 0:
                    x = np.concatenate([x, np.zeros(int(tail * 24000), dtype=np.float32)])
                out = replay_dir(run_dir, sc.id, k)
                headers = {**headers_base, **sample_headers(sc.sample(0))}
                try:
                    res = await replay(system.url, x, out, api=system.api, settings=settings, chunk_ms=chunk_ms,
                                       voice=system.voice, max_tokens=system.max_tokens, headers=headers,
                                       limits=cfg.reply_limits)
                    body = res.summary()
                except Exception as exc:  # noqa: BLE001 - recorded with the replay, the others go on
                    body = {"error": {"type": getattr(exc, "type", type(exc).__name__), "message": str(exc)[:500]}}
                    (out / "failed.json").parent.mkdir(parents=True, exist_ok=True)
                    write_json(out / "failed.json", body)
                    bar.advance(1, note=f"{sc.id}: failed")
                    return
                write_json(out / RESULT, body)
                bar.advance(1)

        await asyncio.gather(*(one(sc, k) for sc, k in todo))


def score_all(scenarios: list[Scenario], run_dir: Path, repeats: int, lang: str, quiet: bool = False,
              asr_spec: str = "offline", judge: JudgeSpec | None = None) -> dict[str, Any]:
    """Score every finished replay (cached per folder) with the ASR of ``asr_spec`` (a faster-whisper
    model: word timings), rate the answers to interruptions with ``judge`` (none: not rated), and
    aggregate."""
    from vocalbench import components
    from vocalbench.components.vad import SileroVAD
    from vocalbench.progress import progress_bar

    rows: list[dict[str, Any]] = []
    rated: list[tuple[Scenario, Path, list[Word], dict[str, Any]]] = []
    asr = vad = None
    done = [(sc, k) for k in range(1, repeats + 1) for sc in scenarios
            if (replay_dir(run_dir, sc.id, k) / RESULT).exists()]
    with progress_bar(len(done), f"duplex score [{lang}]", enabled=not quiet) as bar:
        for sc, k in done:
            folder = replay_dir(run_dir, sc.id, k)
            if asr is None:
                asr, vad = components.resolve("asr", asr_spec), SileroVAD()
            body = score_replay(sc, folder, asr, vad)
            rows.append({"scenario": sc.id, "kind": sc.kind, "repeat": k, "metrics": dict(body["metrics"])})
            if sc.kind == "interruption":
                rated.append((sc, folder, [Word(**w) for w in body["words"]], rows[-1]))
            bar.advance(1)
    unrated, validity = _rate_relevance(rated, judge, lang, quiet)
    failed = sum(1 for sc in scenarios for k in range(1, repeats + 1)
                 if (replay_dir(run_dir, sc.id, k) / "failed.json").exists()
                 and not (replay_dir(run_dir, sc.id, k) / RESULT).exists())
    if failed:
        print(f"[{lang}] {failed} replay(s) failed (see duplex/*/r*/failed.json); re-run to retry them",
              file=sys.stderr)
    result = aggregate(rows)
    if "interruption" in result:
        result["interruption"]["relevance"]["unscored"] = unrated
        if validity is not None:
            result["interruption"]["relevance"]["validity"] = validity
    return result


def _rate_relevance(rated: list[tuple[Scenario, Path, list[Word], dict[str, Any]]], judge: JudgeSpec | None,
                    lang: str, quiet: bool) -> tuple[dict[str, int], dict[str, object] | None]:
    """Put the judge's relevance of each interruption answer into its row's metrics (None where the
    system said nothing after the interruption, or the judge could not rate it). Returns the
    unscored ones counted by reason (``judge_not_configured`` without a judge) and the judge's
    validity for the family, from its latest judge-check (None when no judge rated anything)."""
    from vocalbench.duplex.score import judge_relevance, relevance_fields
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
            async def one(sc: Scenario, folder: Path, words: list[Word], row: dict[str, Any]) -> None:
                body = await judge_relevance(rater, sc, folder, words)
                value = None if body is None else body["value"]
                row["metrics"]["relevance"] = value
                if value is None and body is not None:
                    reason = str(body.get("unscored") or "judge_unscored")
                    unrated[reason] = unrated.get(reason, 0) + 1
                bar.advance(1)

            await asyncio.gather(*(one(*r) for r in todo))

    asyncio.run(rate_all())
    family = f"duplex_relevance_{'zh' if lang == 'zh' else 'en'}"
    entry = judge_validity(rater.id, {"duplex": [family]}).families[family]
    return unrated, {"family": family, "validated": bool(entry["validated"]), "status": str(entry["status"])}


def load_rows(run_dir: Path) -> list[dict[str, Any]]:
    """The scored replays of a run folder (for the report)."""
    rows = []
    for p in sorted((run_dir / "duplex").glob("*/r*/metrics.json")):
        body = json.loads(p.read_text(encoding="utf-8"))
        rows.append({**body, "folder": str(p.parent), "repeat": p.parent.name})
    return rows

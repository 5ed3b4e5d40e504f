"""``vocalbench run --subsets duplex``: replay the duplex scenarios to a realtime system, score, report.

One run folder per language (``RUN/en``, ``RUN/zh`` with ``--lang both``), like every run:
``config.json`` (the config plus a ``duplex`` record: the session's turn-detection settings, chunk
size, protocol version and scenario set), ``duplex/<scenario>/r<k>/`` per replay (input.wav,
output.wav, events.jsonl, result.json, metrics.json), ``duplex.json`` (the measures with their
intervals) and ``report/duplex.html`` (the table and a playable timeline per scenario).

``--limit N`` keeps the first N scenarios of each kind. Resumable: a replay with a ``result.json`` is not replayed again, a scored one not rescored.
Replays run concurrently up to ``--concurrency`` (each on its own real-time schedule);
``--repeats N`` replays every scenario N times (server VAD varies between runs).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from vocalbench.components.vad import TurnSettings
from vocalbench.duplex.replay import CHUNK_MS, replay
from vocalbench.duplex.scenarios import MANIFEST, Scenario, ensure, write_manifest
from vocalbench.duplex.score import aggregate, score_replay, table

SUBSET = "duplex"
RESULT = "result.json"


def wanted(args: argparse.Namespace) -> bool:
    """Whether ``--subsets`` asks for the duplex suite (it runs on its own)."""
    subsets = [s.strip() for s in (args.subsets or "").split(",") if s.strip()]
    if SUBSET in subsets and len(subsets) > 1:
        from vocalbench.errors import CliError

        raise CliError("--subsets duplex runs on its own: give it alone (the other subsets in a separate run)")
    return subsets == [SUBSET]


def settings_from_args(args: argparse.Namespace) -> TurnSettings:
    return TurnSettings(vad="silero", threshold=args.vad_threshold, prefix_padding_ms=args.vad_prefix_ms,
                        silence_duration_ms=args.vad_silence_ms)


def add_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("duplex (--subsets duplex)")
    g.add_argument("--chunk-ms", type=int, default=CHUNK_MS, help="input chunk size in ms, 20-100 (default 40)")
    g.add_argument("--vad-threshold", type=float, default=0.5, help="server_vad threshold asked of the system")
    g.add_argument("--vad-silence-ms", type=int, default=500, help="server_vad silence_duration_ms asked of the system")
    g.add_argument("--vad-prefix-ms", type=int, default=300, help="server_vad prefix_padding_ms asked of the system")


def run(args: argparse.Namespace) -> int:
    """Every language: build scenarios, replay (resumable), score, write duplex.json and the report."""
    from vocalbench.commands.generate import jobs_from_args
    from vocalbench.errors import CliError
    from vocalbench.runner.folder import RunFolder, generated_records
    from vocalbench.systems import resolve
    from vocalbench.systems.options import SystemOptions
    from vocalbench.systems.realtime import RealtimeSystem

    if args.data not in ("mini", "full"):
        raise CliError(f"--data {args.data}: the duplex suite has the built-in sets 'mini' and 'full'")
    if not 20 <= args.chunk_ms <= 100:
        raise CliError(f"--chunk-ms {args.chunk_ms}: chunks are 20-100 ms")
    args.subsets = None  # the jobs are made per language without checking duplex against the catalogue
    jobs = jobs_from_args(args)
    settings = settings_from_args(args)
    folders: list[Path] = []
    for job in jobs:
        run_dir = job.run_dir if job.group is None else job.group  # repeats live inside one folder
        if run_dir in folders:
            continue
        cfg = job.cfg.model_copy(update={"subsets": [SUBSET]})
        options = SystemOptions.from_env(args.system_base_url, args.voice, cfg.max_reply_tokens, cfg.seed,
                                         args.realtime_api)
        system = resolve(job.spec, options)
        if not isinstance(system, RealtimeSystem):
            raise CliError(f"--subsets duplex needs a realtime:MODEL[@BASE_URL] system, not '{cfg.system}'")
        record = {"turn_detection": settings.protocol() | {"client": "vocalbench duplex replay"},
                  "chunk_ms": args.chunk_ms, "api": system.api, "set": args.data, "repeats": args.repeats,
                  "playback": "simulated on the input timeline; barge-in drops unplayed audio and truncates"}
        with RunFolder(run_dir) as folder:
            folder.save_config(cfg, {**generated_records(system.describe()), "duplex": record})
            scenarios = limited(ensure(cfg.lang, args.data, progress=not cfg.quiet), cfg.limit)
            (run_dir / SUBSET).mkdir(parents=True, exist_ok=True)
            write_manifest(run_dir / SUBSET / MANIFEST, scenarios)
            asyncio.run(replay_all(system, scenarios, run_dir, settings, args.chunk_ms, args.repeats, cfg))
            result = score_all(scenarios, run_dir, args.repeats, cfg.lang, quiet=cfg.quiet)
            body = {"system": cfg.system, "lang": cfg.lang, "set": args.data, "repeats": args.repeats,
                    "turn_detection": record["turn_detection"], "kinds": result}
            from vocalbench.files import write_json

            write_json(run_dir / "duplex.json", body)
            print(f"[{cfg.lang}] duplex, {cfg.system}\n{table(result)}")
            from vocalbench.report.duplex import write_duplex_report

            page = write_duplex_report([run_dir], run_dir / "report")
            print(f"[{cfg.lang}] duplex report: {page}", file=sys.stderr)
            folders.append(run_dir)
    return 0


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
                     repeats: int, cfg: Any) -> None:
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
                out = replay_dir(run_dir, sc.id, k)
                headers = {**headers_base, **sample_headers(sc.sample(0))}
                try:
                    res = await replay(system.url, x, out, api=system.api, settings=settings, chunk_ms=chunk_ms,
                                       voice=system.voice, max_tokens=system.max_tokens, headers=headers,
                                       limits=cfg.reply_limits)
                    body = res.summary()
                except Exception as exc:  # noqa: BLE001 - recorded with the replay, the others go on
                    body = {"error": {"type": type(exc).__name__, "message": str(exc)[:500]}}
                    (out / "failed.json").parent.mkdir(parents=True, exist_ok=True)
                    write_json(out / "failed.json", body)
                    bar.advance(1, note=f"{sc.id}: failed")
                    return
                write_json(out / RESULT, body)
                bar.advance(1)

        await asyncio.gather(*(one(sc, k) for sc, k in todo))


def score_all(scenarios: list[Scenario], run_dir: Path, repeats: int, lang: str, quiet: bool = False) -> dict[str, Any]:
    """Score every finished replay (cached per folder) and aggregate."""
    from vocalbench import components
    from vocalbench.components.vad import SileroVAD
    from vocalbench.progress import progress_bar

    rows: list[dict[str, Any]] = []
    asr = vad = None
    done = [(sc, k) for k in range(1, repeats + 1) for sc in scenarios
            if (replay_dir(run_dir, sc.id, k) / RESULT).exists()]
    with progress_bar(len(done), f"duplex score [{lang}]", enabled=not quiet) as bar:
        for sc, k in done:
            folder = replay_dir(run_dir, sc.id, k)
            if asr is None:
                asr, vad = components.resolve("asr", "offline"), SileroVAD()
            body = score_replay(sc, folder, asr, vad)
            rows.append({"scenario": sc.id, "kind": sc.kind, "repeat": k, "metrics": body["metrics"]})
            bar.advance(1)
    failed = sum(1 for sc in scenarios for k in range(1, repeats + 1)
                 if (replay_dir(run_dir, sc.id, k) / "failed.json").exists()
                 and not (replay_dir(run_dir, sc.id, k) / RESULT).exists())
    if failed:
        print(f"[{lang}] {failed} replay(s) failed (see duplex/*/r*/failed.json); re-run to retry them",
              file=sys.stderr)
    return aggregate(rows)


def load_rows(run_dir: Path) -> list[dict[str, Any]]:
    """The scored replays of a run folder (for the report)."""
    rows = []
    for p in sorted((run_dir / "duplex").glob("*/r*/metrics.json")):
        body = json.loads(p.read_text(encoding="utf-8"))
        rows.append({**body, "folder": str(p.parent), "repeat": p.parent.name})
    return rows

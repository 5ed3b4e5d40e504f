"""``vocalbench run --subsets duplex``: the duplex suite's flags and its run (docs/duplex.md)."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from vocalbench.components.vad import TurnSettings
from vocalbench.duplex.replay import CHUNK_MS

SUBSET = "duplex"


def wanted(args: argparse.Namespace) -> bool:
    """Whether ``--subsets`` asks for the duplex suite (it runs on its own)."""
    subsets = list(args.subsets or [])  # commands/lists.py: already a list of names
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
    g.add_argument("--tail", type=float, default=0.0,
                   help="seconds of silence appended to every scenario's input (a slow system's reply is then "
                        "heard; output.wav stays as long as the input sent). Default 0")
    g.add_argument("--vad-threshold", type=float, default=0.5, help="server_vad threshold asked of the system")
    g.add_argument("--vad-silence-ms", type=int, default=500, help="server_vad silence_duration_ms asked of the system")
    g.add_argument("--vad-prefix-ms", type=int, default=300, help="server_vad prefix_padding_ms asked of the system")


def run(args: argparse.Namespace) -> int:
    """Every language: build scenarios, replay (resumable), score, write duplex.json and the report."""
    from vocalbench.commands.generate import jobs_from_args
    from vocalbench.duplex.run import RESULT, limited, replay_all, replay_dir, score_all, write_result
    from vocalbench.duplex.scenarios import MANIFEST, ensure, write_manifest
    from vocalbench.duplex.score import table
    from vocalbench.errors import CliError
    from vocalbench.judge.spec import JudgeSpec
    from vocalbench.report.duplex import write_duplex_report
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
    unmeasured: list[str] = []  # languages where no replay measured anything
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
                  "chunk_ms": args.chunk_ms, "tail_s": args.tail, "api": system.api, "set": args.data, "repeats": args.repeats,
                  "playback": "simulated on the input timeline; barge-in drops unplayed audio and truncates"}
        with RunFolder(run_dir) as folder:
            folder.save_config(cfg, {**generated_records(system.describe()), "duplex": record})
            scenarios = limited(ensure(cfg.lang, args.data, progress=not cfg.quiet), cfg.limit)
            (run_dir / SUBSET).mkdir(parents=True, exist_ok=True)
            write_manifest(run_dir / SUBSET / MANIFEST, scenarios)
            asyncio.run(replay_all(system, scenarios, run_dir, settings, args.chunk_ms, args.repeats, cfg, args.tail))
            if not any((replay_dir(run_dir, sc.id, k) / RESULT).exists()
                       for sc in scenarios for k in range(1, args.repeats + 1)):
                unmeasured.append(cfg.lang)
            result = score_all(scenarios, run_dir, args.repeats, cfg.lang, quiet=cfg.quiet, asr_spec=cfg.asr,
                               judge=JudgeSpec.of(cfg))
            write_result(run_dir, {"system": cfg.system, "lang": cfg.lang, "set": args.data, "repeats": args.repeats,
                                   "turn_detection": record["turn_detection"], "kinds": result})
            print(f"[{cfg.lang}] duplex, {cfg.system}\n{table(result)}")
            page = write_duplex_report([run_dir], run_dir / "report")
            print(f"[{cfg.lang}] duplex report: {page}", file=sys.stderr)
            folders.append(run_dir)
    if unmeasured:  # every replay failed: exit status 4, as for a run whose every sample failed
        print(f"duplex: nothing was measured in {', '.join(unmeasured)}: every replay failed "
              "(see duplex/*/r*/failed.json); re-run to retry them", file=sys.stderr)
        return 4
    return 0

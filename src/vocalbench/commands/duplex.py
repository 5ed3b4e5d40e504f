"""``vocalbench run --subsets duplex``: the duplex suite's flags and its run (docs/duplex.md)."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vocalbench.components.vad import TurnSettings
from vocalbench.duplex.replay import CHUNK_MS
from vocalbench.duplex.run import Warmup

if TYPE_CHECKING:
    from vocalbench.duplex.scenarios import Scenario
    from vocalbench.run_config import RunConfig
    from vocalbench.runner.folder import RunFolder

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
    g.add_argument("--tail", type=float, default=None,
                   help="seconds of silence appended to every scenario's input (a slow system's reply is then "
                        "heard; output.wav stays as long as the input sent). Default: from a warm-up replay's "
                        "first-audio time (0 when the built tails suffice)")
    g.add_argument("--vad-threshold", type=float, default=0.5, help="server_vad threshold asked of the system")
    g.add_argument("--vad-silence-ms", type=int, default=500, help="server_vad silence_duration_ms asked of the system")
    g.add_argument("--vad-prefix-ms", type=int, default=300, help="server_vad prefix_padding_ms asked of the system")


def run(args: argparse.Namespace) -> int:
    """Every language: build scenarios, replay (resumable), score, write duplex.json and the report.
    Fails (CliError) when every replay failed, naming the reason."""
    from vocalbench.commands.generate import jobs_from_args
    from vocalbench.duplex.run import add_scenarios, failures, limited, replay_all, warm_up
    from vocalbench.duplex.scenarios import MANIFEST, ensure, write_manifest
    from vocalbench.errors import CliError
    from vocalbench.runner.folder import RunFolder, generated_records
    from vocalbench.systems import resolve
    from vocalbench.systems.options import SystemOptions
    from vocalbench.systems.realtime import RealtimeSystem

    if args.data not in ("mini", "full"):
        raise CliError(f"--data {args.data}: the duplex suite has the built-in sets 'mini' and 'full'")
    if not 20 <= args.chunk_ms <= 100:
        raise CliError(f"--chunk-ms {args.chunk_ms}: chunks are 20-100 ms")
    if args.tail is not None and args.tail < 0:
        raise CliError(f"--tail {args.tail}: seconds of silence, 0 or more")
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
        with RunFolder(run_dir) as folder:
            scenarios = limited(ensure(cfg.lang, args.data, progress=not cfg.quiet), cfg.limit)
            record = {"turn_detection": settings.protocol() | {"client": "vocalbench duplex replay"},
                      "chunk_ms": args.chunk_ms, "tail_s": args.tail, "api": system.api, "set": args.data,
                      "repeats": args.repeats,
                      "playback": "simulated on the input timeline; barge-in drops unplayed audio and truncates"}
            tail = args.tail
            if tail is None:  # resumed: the run's own tail, and the warm-up that chose it
                saved = saved_record(folder)
                tail = saved.get("tail_s")
                if saved.get("warmup") is not None:
                    record["warmup"] = saved["warmup"]
            if tail is None:
                try:
                    warm = asyncio.run(warm_up(system, scenarios, run_dir, settings, args.chunk_ms, cfg))
                except Exception as exc:  # noqa: BLE001 - the system cannot be reached: say so
                    raise CliError(f"[{cfg.lang}] the warm-up replay failed: {type(exc).__name__}: {exc}") from None
                tail = warm.tail
                record["warmup"] = {"scenario": warm.scenario, "first_audio_s": warm.first_audio, "tail_s": tail}
                heard = "no reply audio" if warm.first_audio is None else f"first audio {warm.first_audio:.2f} s"
                print(f"[{cfg.lang}] warm-up ({warm.scenario}): {heard} after the end of the turn; "
                      f"--tail {tail:.0f}", file=sys.stderr)
            record["tail_s"] = tail
            folder.save_config(cfg, {**generated_records(system.describe()), "duplex": record})
            add_scenarios(folder.store, scenarios)
            write_manifest(run_dir / SUBSET / MANIFEST, scenarios)  # RUN/duplex: importable replay folders
            asyncio.run(replay_all(system, scenarios, folder.store, settings, args.chunk_ms, args.repeats, cfg, tail))
            keys = [f"{sc.id}/r{k}" for k in range(1, args.repeats + 1) for sc in scenarios]
            ok, reasons = failures(folder.store, keys)
            if not ok and reasons:  # the other languages go on; the exit status says it
                reason, n = reasons.most_common(1)[0]
                print(f"[{cfg.lang}] every replay failed ({sum(reasons.values())} of {len(keys)}; "
                      f"{n}x {reason}): nothing was measured", file=sys.stderr)
                unmeasured.append(cfg.lang)
                continue
            finish(folder, cfg, scenarios, args.repeats, tail)
            folders.append(run_dir)
    if unmeasured:  # every replay failed: exit status 4, as for a run whose every sample failed
        print(f"duplex: nothing was measured in {', '.join(unmeasured)}: every replay failed "
              "(each replay's error is in the run's store); re-run to retry them", file=sys.stderr)
        return 4
    return 0


def saved_record(folder: RunFolder) -> dict[str, Any]:
    """The ``duplex`` record of a run's config.json (empty before the first run)."""
    body = folder.records().get("duplex")
    return dict(body) if isinstance(body, dict) else {}


def finish(folder: RunFolder, cfg: RunConfig, scenarios: list[Scenario], repeats: int, tail: float,
           fresh: bool = False) -> None:
    """Score a duplex run's replays (``fresh``: measure them again), write ``duplex.json`` and the report, print the table and a
    warning for every kind where nothing was heard."""
    from vocalbench.duplex.run import nothing_heard, score_all, write_result
    from vocalbench.duplex.score import table
    from vocalbench.report.duplex import write_duplex_report

    record = saved_record(folder)
    result = score_all(scenarios, folder.store, repeats, cfg.lang, quiet=cfg.quiet, asr_spec=cfg.asr.text,
                       judge=cfg.judge, fresh=fresh)
    write_result(folder.path, {"system": cfg.system.text, "lang": cfg.lang, "set": record.get("set"), "repeats": repeats,
                               "turn_detection": record.get("turn_detection"), "tail_s": tail, "kinds": result})
    print(f"[{cfg.lang}] duplex, {cfg.system}\n{table(result)}")
    warmup = record.get("warmup")
    for w in nothing_heard(result, folder.store, scenarios, repeats,
                           None if not warmup else Warmup(warmup["scenario"], warmup["first_audio_s"], warmup["tail_s"]),
                           tail):
        print(f"warning: [{cfg.lang}] {w}", file=sys.stderr)
    page = write_duplex_report([folder.path], folder.path / "report")
    print(f"[{cfg.lang}] duplex report: {page}", file=sys.stderr)


def rescore(folder: RunFolder, cfg: RunConfig) -> int:
    """``vocalbench score RUN`` on a duplex run: measure every replay again from its recordings
    (the judge's relevance verdicts are kept per judge) and rewrite duplex.json and the report."""
    from vocalbench.duplex.run import scenarios_of
    from vocalbench.errors import CliError

    scenarios = list(scenarios_of(folder.store).values())
    if not scenarios:
        raise CliError(f"{folder.path}: a duplex run without scenarios in its store (a run made before they were "
                       f"stored: `vocalbench import --format replays {folder.path / 'duplex'} --out NEW` imports "
                       "its recordings)")
    record = saved_record(folder)
    finish(folder, cfg, scenarios, int(record.get("repeats") or 1), float(record.get("tail_s") or 0.0), fresh=True)
    return 0

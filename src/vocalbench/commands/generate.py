"""``vocalbench generate``: replies only (resumable). Also holds the flags shared with ``run``."""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vocalbench.commands.lists import add_subsets
from vocalbench.run_config import RunConfig

if TYPE_CHECKING:
    from vocalbench.records import Sample
    from vocalbench.runner.folder import RunFolder
    from vocalbench.runner.ray_executor import Resources


def _default(field: str) -> object:
    """A RunConfig field's default: flags not given leave it to the config (one place for defaults)."""
    return RunConfig.model_fields[field].get_default(call_default_factory=True)


def _system_flag(text: str) -> str:
    """``--system``: a SPEC of a registered system kind (checked here, before anything is written)."""
    from vocalbench.systems.spec import SystemSpec

    try:
        SystemSpec.parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The flags of ``generate`` and ``run`` (README.md, Commands)."""
    p.add_argument("--system", type=_system_flag, default=str(_default("system")), help=f"system SPEC (default: {_default('system')}; see docs/systems.md)")
    p.add_argument("--data", default=_default("data"), help="official-layout folder, parquet folder or built-in set (mini)")
    p.add_argument("--lang", choices=("en", "zh", "both"), default=None,
                   help="language; 'both' writes RUN/en and RUN/zh (default: both for mini, else en)")
    add_subsets(p, "subsets (default: all of the language)")
    p.add_argument("--judge", default=None, help=f"judge SPEC (local | openai:MODEL[@BASE_URL]; default {_default('judge')})")
    p.add_argument("--fit", default=None, metavar="FIT",
                   help="a fit from `vocalbench judge-fit`: the judge answers single tokens mapped by it")
    p.add_argument("--asr", default=None, help=f"ASR SPEC used in scoring (default {_default('asr')})")
    p.add_argument("--mos", default=None, help=f"MOS SPEC used in scoring (default {_default('mos')})")
    p.add_argument("--emotion", default=None, help=f"emotion classifier SPEC used in scoring (default {_default('emotion')})")
    p.add_argument("--out", default=None, help="run folder (default: runs/<timestamp>-<system>); re-use it to resume")
    p.add_argument("--limit", type=int, default=None, help="N base items per subset (stratified, deterministic)")
    p.add_argument("--concurrency", type=int, default=None,
                   help="samples in flight against the system (default: 1 for the local cascades, whose one "
                        "llama.cpp slot and CPU gain nothing from more and would only queue; 8 for network systems)")
    p.add_argument("--latency-concurrency", type=int, default=None,
                   help="samples in flight while the latency items (single_round) are timed (default 1)")
    p.add_argument("--executor", choices=("local", "ray"), default=None, help=f"where system calls run (default {_default('executor')})")
    p.add_argument("--ray-address", default=None, help="existing Ray cluster (default: a local Ray on 127.0.0.1)")
    p.add_argument("--replicas", type=_positive, default=None,
                   help="with --executor ray: system replicas (actors), each taking --concurrency (default 1)")
    p.add_argument("--ray-num-cpus", type=float, default=None, help="with --executor ray: CPUs per replica (default 1)")
    p.add_argument("--ray-num-gpus", type=float, default=None, help="with --executor ray: GPUs per replica (default 0)")
    p.add_argument("--protocol", choices=("v2", "v1"), default=None, help=f"scoring protocol (default {_default('protocol')})")
    p.add_argument("--max-reply-tokens", type=int, default=None,
                   help="reply token cap sent to the system (default: 64 for the local cascades offline/cascade:, "
                        "which keeps the built-in run short on a CPU; 1024 for network systems)")
    p.add_argument("--max-attempts", type=int, default=None,
                   help=f"attempts per sample (retries on 429/5xx/timeouts; default {_default('max_attempts')})")
    p.add_argument("--timeout", type=float, default=None, help=f"seconds per attempt (default {_default('request_timeout')})")
    p.add_argument("--max-reply-chars", type=int, default=None,
                   help=f"a reply with more text fails as reply_too_large (default {_default('max_reply_chars'):,})")
    p.add_argument("--max-reply-audio-seconds", type=float, default=None,
                   help=f"a reply with more audio fails as reply_too_large (default {_default('max_reply_audio_seconds'):g})")
    p.add_argument("--error-threshold", type=float, default=None,
                   help=f"stop when this share of finished samples failed (default {_default('error_threshold')})")
    p.add_argument("--system-base-url", default=None,
                   help="base URL of a network system (else from the SPEC or VOCALBENCH_SYSTEM_BASE_URL; never saved)")
    p.add_argument("--voice", default=None, help="voice of the system under test, where it has voices")
    p.add_argument("--realtime-api", choices=("ga", "beta"), default="ga",
                   help="Realtime protocol version a realtime: system speaks (default ga; beta sends "
                        "OpenAI-Beta: realtime=v1 and the beta session shape)")
    p.add_argument("--repeats", type=_positive, default=1, metavar="N",
                   help="N independent replies per item, each repeat a run folder RUN/[LANG/]repeat-K with seed "
                        "+ K - 1 (where the system takes a seed); run writes their mean, between-run SD and CI "
                        "to repeats.json")
    p.add_argument("--no-warmup", action="store_true", help="skip the untimed warm-up call")
    p.add_argument("--redo-changed", action="store_true",
                   help="resuming with a release whose samples changed: redo exactly those samples' replies and "
                        "scores (without it the run refuses and names them)")
    p.add_argument("--quiet", action="store_true", help="no progress bars")


# RunConfig fields named as the flags that set them (for one-line validation errors)
FLAG_NAMES = {"limit": "--limit", "concurrency": "--concurrency", "latency_concurrency": "--latency-concurrency",
              "max_reply_tokens": "--max-reply-tokens", "max_attempts": "--max-attempts", "request_timeout": "--timeout",
              "error_threshold": "--error-threshold", "max_reply_chars": "--max-reply-chars",
              "max_reply_audio_seconds": "--max-reply-audio-seconds", "system": "--system", "judge": "--judge",
              "judge_fit": "--fit", "asr": "--asr",
              "mos": "--mos", "emotion": "--emotion"}


def fit_path(fit: str | None) -> str | None:
    """``--fit FIT`` as an absolute path (a run is scored again from anywhere); CliError when missing."""
    from vocalbench.errors import CliError

    if fit is None:
        return None
    p = Path(fit).expanduser().resolve()
    if not p.is_file():
        raise CliError(f"--fit {fit}: no such file (make one with `vocalbench judge-fit`)")
    return str(p)


def check_out(out: Path) -> None:
    """``--out`` must be a writable folder or a path where one can be made (CliError otherwise)."""
    from vocalbench.errors import CliError

    if out.exists() and not out.is_dir():
        raise CliError(f"--out {out}: exists and is not a folder")
    existing = next((p for p in (out, *out.parents) if p.exists()), Path("."))
    if not existing.is_dir():
        raise CliError(f"--out {out}: {existing} is not a folder")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise CliError(f"--out {out}: {existing} is not writable")


STOPPED = 3  # exit status: the error threshold stopped the run (nothing is scored)
ALL_FAILED = 4  # exit status: every sample attempted failed (the summary is still written by run)


def _positive(text: str) -> int:
    n = int(text)
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {n}")
    return n


@dataclass
class Job:
    """One language of a run: its config, folder and the live SPEC (URLs kept in memory only)."""

    cfg: RunConfig
    run_dir: Path
    spec: str
    root: Path  # the --out folder (RUN; RUN/en and RUN/zh live under it with --lang both)
    group: Path | None = None  # with --repeats: the folder holding this language's repeat-K runs


def jobs_from_args(args: argparse.Namespace) -> list[Job]:
    """Validated configs, one per language, from the flags."""
    from pydantic import ValidationError

    from vocalbench.errors import CliError, validation_message
    from vocalbench.redact import system_credentials
    from vocalbench.systems import display_spec

    refused = system_credentials(args.system, args.system_base_url)
    if refused:
        raise CliError(refused)
    lang = args.lang or ("both" if args.data == "mini" else "en")
    langs = ["en", "zh"] if lang == "both" else [lang]
    out = Path(args.out) if args.out else Path("runs") / (
        time.strftime("%Y%m%d-%H%M%S") + "-" + "".join(c if c.isalnum() else "-" for c in display_spec(args.system))[:40])
    wanted = args.subsets
    check_out(out)
    jobs = []
    for lg in langs:
        subsets = wanted
        if wanted and lang == "both":  # e.g. knowledge (en) vs chinese_knowledge (zh): each language takes its own
            from vocalbench.data import DataError, available_subsets

            try:
                subsets = [s for s in wanted if s in available_subsets(args.data, lg)]
            except (DataError, FileNotFoundError) as exc:
                raise CliError(str(exc)) from None
            if not subsets:
                print(f"[{lg}] none of {', '.join(wanted)} exists in {lg}: skipped", file=sys.stderr)
                continue
        try:
            cfg = RunConfig.from_options(
                system=display_spec(args.system), data=args.data, lang=lg, subsets=subsets,
                judge=args.judge, judge_fit=fit_path(args.fit), asr=args.asr, mos=args.mos, emotion=args.emotion, protocol=args.protocol,
                limit=args.limit, concurrency=args.concurrency, latency_concurrency=args.latency_concurrency,
                executor=args.executor, ray_address=args.ray_address, max_reply_tokens=args.max_reply_tokens,
                max_attempts=args.max_attempts, request_timeout=args.timeout, error_threshold=args.error_threshold,
                max_reply_chars=args.max_reply_chars, max_reply_audio_seconds=args.max_reply_audio_seconds,
                warmup=False if args.no_warmup else None, quiet=args.quiet or None)
        except ValidationError as exc:
            raise CliError(validation_message(exc, FLAG_NAMES)) from None
        check_ray_flags(args, cfg.executor)
        folder = out / lg if lang == "both" else out
        if args.repeats == 1:
            jobs.append(Job(cfg, folder, args.system, out))
            continue
        from vocalbench.runner.folder import repeat_dir

        for k in range(1, args.repeats + 1):  # independent replies: repeat k runs with seed + k - 1
            jobs.append(Job(cfg.model_copy(update={"seed": cfg.seed + k - 1}), repeat_dir(folder, k), args.system, out,
                            folder))
    if not jobs:
        raise CliError(f"no language has the subsets {', '.join(wanted or [])}")
    return jobs


def samples_of(job: Job, folder: RunFolder) -> list[Sample]:
    """The samples of one language's run, loaded from its data (a Hub name pinned to the commit the
    run started with); bad data is a one-line error."""
    from vocalbench.data import DataError
    from vocalbench.errors import CliError

    cfg = job.cfg
    try:
        return folder.samples(cfg.data, cfg.lang, cfg.subsets, cfg.limit)
    except (DataError, ValueError, FileNotFoundError) as exc:
        raise CliError(str(exc)) from None


def ray_resources(args: argparse.Namespace) -> Resources:
    """The replicas and per-replica resources of ``--replicas``/``--ray-num-cpus``/``--ray-num-gpus``."""
    from vocalbench.errors import CliError
    from vocalbench.runner.ray_executor import Resources

    given = {k: v for k, v in {"replicas": args.replicas, "num_cpus": args.ray_num_cpus,
                               "num_gpus": args.ray_num_gpus}.items() if v is not None}
    try:
        return Resources(**given)
    except ValueError as exc:
        raise CliError(f"--replicas/--ray-num-cpus/--ray-num-gpus: {exc}") from None


def check_ray_flags(args: argparse.Namespace, executor: str) -> None:
    """Replica and resource flags mean something only with ``--executor ray``."""
    from vocalbench.errors import CliError

    given = [f for f, v in (("--replicas", args.replicas), ("--ray-num-cpus", args.ray_num_cpus),
                            ("--ray-num-gpus", args.ray_num_gpus)) if v is not None]
    if given and executor != "ray":
        raise CliError(f"{', '.join(given)} need --executor ray")


def generate_job(job: Job, args: argparse.Namespace, folder: RunFolder) -> int:
    """Generate one language's replies into its held run folder; 0 on success, :data:`STOPPED` when
    the error threshold stopped the run, :data:`ALL_FAILED` when every sample attempted failed."""
    from vocalbench.errors import CliError
    from vocalbench.runner.folder import generated_records
    from vocalbench.runner.generate import (
        LocalExecutor,
        RunAborted,
        SystemStartError,
        run_generate,
    )
    from vocalbench.systems import resolve
    from vocalbench.systems.options import SystemOptions

    cfg = job.cfg
    try:
        folder.check_resume(cfg)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    samples = samples_of(job, folder)
    options = SystemOptions.from_env(args.system_base_url, args.voice, cfg.max_reply_tokens, cfg.seed,
                                     args.realtime_api)
    try:
        if cfg.executor == "ray":
            from vocalbench.runner.ray_executor import RayExecutor

            executor: Any = RayExecutor(job.spec, options, cfg, ray_resources(args))
        else:
            executor = LocalExecutor(resolve(job.spec, options), cfg)
    except (ValueError, FileNotFoundError, ImportError) as exc:
        raise CliError(str(exc)) from None
    redone = folder.start(cfg, samples, redo=args.redo_changed)
    if redone:
        print(f"[{cfg.lang}] {len(redone)} changed sample(s): replies and scores will be redone", file=sys.stderr)
    if not cfg.quiet:
        print(f"[{cfg.lang}] {len(samples)} samples -> {job.run_dir}", file=sys.stderr)
    try:
        res = run_generate(folder.store, samples, cfg, executor, progress=not cfg.quiet)
    except RunAborted as exc:
        print(f"error: {exc}", file=sys.stderr)
        return STOPPED
    except SystemStartError as exc:
        raise CliError(str(exc)) from None
    finally:
        folder.save_config(cfg, generated_records(executor.describe()))
    print(f"[{cfg.lang}] {res.line()}", file=sys.stderr)
    if res.warmup is not None and not res.warmup["ok"]:
        print(f"[{cfg.lang}] warning: warm-up call failed: {res.warmup['error']}", file=sys.stderr)
    if res.all_failed:
        print(f"error: [{cfg.lang}] every one of the {res.failed} samples answered now failed "
              f"({', '.join(f'{k}: {v}' for k, v in sorted(res.errors.items()))}); check the system", file=sys.stderr)
        return ALL_FAILED
    return 0


def run(args: argparse.Namespace) -> int:
    """Generate every language; the exit status is the worst one (see :func:`generate_job`)."""
    from vocalbench.runner.folder import RunFolder

    status = 0
    for job in jobs_from_args(args):
        with RunFolder(job.run_dir) as folder:
            status = max(status, generate_job(job, args, folder))
    return status

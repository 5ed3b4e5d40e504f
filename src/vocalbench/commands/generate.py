"""``vocalbench generate``: replies only (resumable). Also holds the flags shared with ``run``."""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from vocalbench.config import RunConfig
from vocalbench.records import Lang

LOCAL_REPLY_CAP = 64  # tokens: a CPU cascade answers the whole built-in set within minutes
NETWORK_REPLY_CAP = 1024  # tokens: no practical limit on a spoken reply


def default_reply_cap(system: str, given: int | None) -> int:
    """The reply token cap: the flag when given, else by the kind of system."""
    if given is not None:
        return given
    return LOCAL_REPLY_CAP if _local(system) else NETWORK_REPLY_CAP


def default_concurrency(system: str, given: int | None) -> int:
    """Samples in flight: the flag when given, else by the kind of system."""
    if given is not None:
        return given
    return 1 if _local(system) else 8


def _local(system: str) -> bool:
    return system == "offline" or system.startswith("cascade:")


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The flags of ``generate`` and ``run`` (DESIGN.md command contract)."""
    p.add_argument("--system", default="offline", help="system SPEC (default: offline; see docs/systems.md)")
    p.add_argument("--data", default="mini", help="official-layout folder, parquet folder or built-in set (mini)")
    p.add_argument("--lang", choices=("en", "zh", "both"), default=None,
                   help="language; 'both' writes RUN/en and RUN/zh (default: both for mini, else en)")
    p.add_argument("--subsets", default=None, help="comma-separated subsets (default: all of the language)")
    p.add_argument("--judge", default="local", help="judge SPEC (local | openai:MODEL[@BASE_URL])")
    p.add_argument("--asr", default="offline", help="ASR SPEC used in scoring")
    p.add_argument("--mos", default="offline", help="MOS SPEC used in scoring")
    p.add_argument("--emotion", default="offline", help="emotion classifier SPEC used in scoring")
    p.add_argument("--out", default=None, help="run folder (default: runs/<timestamp>-<system>); re-use it to resume")
    p.add_argument("--limit", type=int, default=None, help="N base items per subset (stratified, deterministic)")
    p.add_argument("--concurrency", type=int, default=None,
                   help="samples in flight against the system (default: 1 for the local cascades, whose one "
                        "llama.cpp slot and CPU gain nothing from more and would only queue; 8 for network systems)")
    p.add_argument("--latency-concurrency", type=int, default=1,
                   help="samples in flight while the latency items (single_round) are timed (default 1)")
    p.add_argument("--executor", choices=("local", "ray"), default="local", help="where system calls run")
    p.add_argument("--ray-address", default=None, help="existing Ray cluster (default: a local Ray on 127.0.0.1)")
    p.add_argument("--protocol", choices=("v2", "v1"), default="v2", help="scoring protocol")
    p.add_argument("--max-reply-tokens", type=int, default=None,
                   help="reply token cap sent to the system (default: 64 for the local cascades offline/cascade:, "
                        "which keeps the built-in run short on a CPU; 1024 for network systems)")
    p.add_argument("--max-attempts", type=int, default=4, help="attempts per sample (retries on 429/5xx/timeouts)")
    p.add_argument("--timeout", type=float, default=180.0, help="seconds per attempt")
    p.add_argument("--error-threshold", type=float, default=0.5, help="stop when this share of finished samples failed")
    p.add_argument("--system-base-url", default=None,
                   help="base URL of a network system (else from the SPEC or VOCALBENCH_SYSTEM_BASE_URL; never saved)")
    p.add_argument("--voice", default=None, help="voice of the system under test, where it has voices")
    p.add_argument("--no-warmup", action="store_true", help="skip the untimed warm-up call")
    p.add_argument("--quiet", action="store_true", help="no progress bars")


@dataclass
class Job:
    """One language of a run: its config, folder and the live SPEC (URLs kept in memory only)."""

    cfg: RunConfig
    run_dir: Path
    spec: str
    root: Path  # the --out folder (RUN; RUN/en and RUN/zh live under it with --lang both)


def jobs_from_args(args: argparse.Namespace) -> list[Job]:
    """Validated configs, one per language, from the flags."""
    from pydantic import ValidationError

    from vocalbench.errors import CliError
    from vocalbench.systems import display_spec

    lang = args.lang or ("both" if args.data == "mini" else "en")
    langs = ["en", "zh"] if lang == "both" else [lang]
    out = Path(args.out) if args.out else Path("runs") / (
        time.strftime("%Y%m%d-%H%M%S") + "-" + "".join(c if c.isalnum() else "-" for c in display_spec(args.system))[:40])
    wanted = [s.strip() for s in args.subsets.split(",") if s.strip()] if args.subsets else None
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
            cfg = RunConfig(
                system=display_spec(args.system), data=args.data, lang=cast(Lang, lg), subsets=subsets,
                judge=args.judge, asr=args.asr, mos=args.mos, emotion=args.emotion, protocol=args.protocol,
                limit=args.limit, concurrency=default_concurrency(args.system, args.concurrency), latency_concurrency=args.latency_concurrency,
                executor=args.executor,
                ray_address=args.ray_address, max_reply_tokens=default_reply_cap(args.system, args.max_reply_tokens),
                max_attempts=args.max_attempts, request_timeout=args.timeout,
                error_threshold=args.error_threshold, warmup=not args.no_warmup, quiet=args.quiet)
        except ValidationError as exc:
            raise CliError(str(exc).replace("\n", " ")) from None
        jobs.append(Job(cfg, out / lg if lang == "both" else out, args.system, out))
    if not jobs:
        raise CliError(f"no language has the subsets {', '.join(wanted or [])}")
    return jobs


def versions() -> dict[str, str]:
    """Versions of the package and of the libraries a run depends on (installed ones only)."""
    from importlib import metadata

    from vocalbench._version import __version__

    out = {"vocalbench": __version__, "python": sys.version.split()[0]}
    for dist in ("openai", "websockets", "aiohttp", "numpy", "ray", "faster-whisper", "kokoro-onnx",
                 "llama-cpp-python", "onnxruntime"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    return out


def save_config(job: Job, describe: dict[str, Any] | None) -> None:
    """RUN/config.json: the resolved config, versions, system description, latency origin; no secrets."""
    extra: dict[str, Any] = {
        "versions": versions(),
        "latency": {"clock": "time.monotonic, client side (harness)",
                    "origin": "request handed to the client (HTTP) / response.create after commit (realtime); "
                              "each reply's timings.origin names it"},
    }
    if describe is not None:
        extra["system_details"] = describe
    job.cfg.save(job.run_dir, extra=extra)


def check_resume(job: Job) -> None:
    """A run folder holds one system: refuse to mix replies of another one."""
    from vocalbench.errors import CliError

    if (job.run_dir / "config.json").exists():
        old = RunConfig.load(job.run_dir)
        if old.system != job.cfg.system or old.lang != job.cfg.lang:
            raise CliError(f"{job.run_dir} holds a run of {old.system} ({old.lang}); choose another --out")


def generate_job(job: Job, args: argparse.Namespace) -> int:
    """Generate one language's replies; 0 on success, 3 when the error threshold stopped the run."""
    from vocalbench.data import DataError, load_samples
    from vocalbench.errors import CliError
    from vocalbench.runner.generate import (
        LocalExecutor,
        RunAborted,
        SystemStartError,
        run_generate,
    )
    from vocalbench.runner.store import RunStore
    from vocalbench.systems import SystemOptions, resolve

    cfg = job.cfg
    check_resume(job)
    try:
        samples = load_samples(cfg.data, cfg.lang, cfg.subsets, cfg.limit)
    except (DataError, ValueError, FileNotFoundError) as exc:
        raise CliError(str(exc)) from None
    options = SystemOptions.from_env(args.system_base_url, args.voice, cfg.max_reply_tokens, cfg.seed)
    try:
        if cfg.executor == "ray":
            from vocalbench.runner.ray_executor import RayExecutor

            executor: Any = RayExecutor(job.spec, options, cfg)
        else:
            executor = LocalExecutor(resolve(job.spec, options), cfg)
    except (ValueError, FileNotFoundError, ImportError) as exc:
        raise CliError(str(exc)) from None
    save_config(job, None)
    with RunStore(job.run_dir) as store:
        store.add_samples(samples)
        if not cfg.quiet:
            print(f"[{cfg.lang}] {len(samples)} samples -> {job.run_dir}", file=sys.stderr)
        try:
            res = run_generate(store, samples, cfg, executor, progress=not cfg.quiet)
        except RunAborted as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 3
        except SystemStartError as exc:
            raise CliError(str(exc)) from None
        finally:
            save_config(job, executor.describe())
    print(f"[{cfg.lang}] {res.line()}", file=sys.stderr)
    if res.warmup is not None and not res.warmup["ok"]:
        print(f"[{cfg.lang}] warning: warm-up call failed: {res.warmup['error']}", file=sys.stderr)
    return 0


def run(args: argparse.Namespace) -> int:
    status = 0
    for job in jobs_from_args(args):
        status = max(status, generate_job(job, args))
    return status

"""``vocalbench score RUN [--judge SPEC] [--subsets LIST] [--protocol v2|v1] [--quiet] [--dry-run]
[--executor ray [--ray-address ADDR] [--evaluator-replicas asr=2,...] [--evaluator-gpus asr=0.5,...]]``.

(Re)scores a run folder; only missing work is done. ``--judge`` / ``--protocol`` update the run's
``config.json`` (the summary always uses the current config's evaluators) once every flag is valid:
a bad flag leaves the run folder as it was; ``--subsets`` limits
what is scored now without changing the run. ``--dry-run`` prints the judge calls the pass would
make and changes nothing (not even ``config.json``).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from vocalbench.commands import dry_run
from vocalbench.commands.lists import add_subsets

if TYPE_CHECKING:
    from vocalbench.runner.ray_executor import Resources
    from vocalbench.scoring.summary import Summary


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("run", help="run folder (holds store.sqlite and config.json)")
    p.add_argument("--judge", default=None, help="judge SPEC: local | none | openai:MODEL[@BASE_URL] | paper")
    p.add_argument("--fit", default=None, metavar="FIT",
                   help="a fit from `vocalbench judge-fit` for a calibrated judge (a new --judge without it drops "
                        "the run's fit)")
    add_subsets(p, "subsets to score now (default: all of the run)")
    p.add_argument("--protocol", choices=["v2", "v1"], default=None, help="scoring protocol (default: the run's)")
    p.add_argument("--asr", default=None, help="ASR SPEC for transcripts of reply audio")
    p.add_argument("--mos", default=None, help="MOS SPEC")
    p.add_argument("--emotion", default=None, help="emotion classifier SPEC")
    p.add_argument("--judge-concurrency", type=int, default=None, help="parallel judge calls per endpoint")
    p.add_argument("--executor", choices=("local", "ray"), default="local",
                   help="where the model evaluators run: here, or on Ray actor pools (default local)")
    p.add_argument("--ray-address", default=None, help="existing Ray cluster (default: a local Ray on 127.0.0.1)")
    p.add_argument("--evaluator-replicas", default=None, metavar="KIND=N,...",
                   help="with --executor ray: replicas per evaluator, e.g. asr=2,mos=1,emotion=1,judge=1 (default 1)")
    p.add_argument("--evaluator-gpus", default=None, metavar="KIND=G,...",
                   help="with --executor ray: GPUs per replica, e.g. asr=0.5,mos=0.25 (default 0; 1 CPU each)")
    p.add_argument("--quiet", action="store_true", help="no progress bars or table")
    dry_run.add_arguments(p)


FLAGS = {**{k: f"--{k.replace('_', '-')}" for k in ("judge", "protocol", "asr", "mos", "emotion", "judge_concurrency")},
         "judge_fit": "--fit"}


def ray_plan(args: argparse.Namespace) -> dict[str, Resources]:
    """The evaluator pools' replicas and resources from the flags (a one-line error when malformed)."""
    from vocalbench.errors import CliError
    from vocalbench.scoring.ray_pools import evaluator_resources

    try:
        return evaluator_resources(args.evaluator_replicas, args.evaluator_gpus)
    except ValueError as exc:
        raise CliError(str(exc)) from None


def check_local(args: argparse.Namespace) -> None:
    """The Ray flags mean something only with ``--executor ray``."""
    from vocalbench.errors import CliError

    given = [f for f, v in (("--ray-address", args.ray_address), ("--evaluator-replicas", args.evaluator_replicas),
                            ("--evaluator-gpus", args.evaluator_gpus)) if v is not None]
    if given:
        raise CliError(f"{', '.join(given)} need --executor ray")


def run(args: argparse.Namespace) -> int:
    """``vocalbench score``: :func:`execute`, then the table."""
    summary = execute(args)
    if summary is not None and not args.quiet:
        from vocalbench.report.leaderboard import print_table

        print_table(summary)
    return 0


def execute(args: argparse.Namespace) -> Summary | None:
    """Score the run folder of ``args`` (None for a dry run): the command line and
    :func:`vocalbench.score` both run this."""
    from pydantic import ValidationError

    from vocalbench.commands.generate import fit_path
    from vocalbench.errors import CliError, validation_message
    from vocalbench.runner.folder import RunFolder
    from vocalbench.scoring.engine import score_run_sync

    if args.executor != "ray":
        check_local(args)
    plan = ray_plan(args) if args.executor == "ray" else None  # every flag is checked before anything is written
    with RunFolder(args.run, write=not args.dry_run) as folder:  # a dry run writes nothing: no lock
        try:
            cfg = folder.config()
        except (FileNotFoundError, ValueError) as exc:
            raise CliError(str(exc)) from exc
        if not folder.has_store:
            raise CliError(f"{folder.path}: no store.sqlite (generate or import replies first)")
        updates = {k: v for k, v in {"judge": args.judge, "protocol": args.protocol, "asr": args.asr, "mos": args.mos,
                                     "emotion": args.emotion, "judge_concurrency": args.judge_concurrency}.items()
                   if v is not None}
        if args.judge is not None or args.fit is not None:  # a fit belongs to one judge model
            updates["judge_fit"] = fit_path(args.fit)
        if updates:
            try:
                cfg = cfg.updated(**updates)
            except ValidationError as exc:
                raise CliError(f"invalid option {validation_message(exc, FLAGS)}") from None
            if not args.dry_run:
                folder.save_config(cfg, folder.records())
        if args.quiet:
            cfg = cfg.model_copy(update={"quiet": True})
        subsets = args.subsets
        if "duplex" in folder.records():  # a duplex run: measured again from its recordings
            from vocalbench.commands.duplex import rescore

            if args.dry_run:
                print(f"{folder.path}: a duplex run; scoring measures every replay again from its recordings")
                return None
            rescore(folder, cfg)
            return None
        if args.dry_run:
            dry_run.show(cfg, args=args, label=cfg.lang, folder=folder, subsets=subsets)
            return None
        try:
            if plan is not None:
                from vocalbench.scoring.ray_pools import score_on_ray

                summary = score_on_ray(folder, cfg, plan, address=args.ray_address, subsets=subsets,
                                       progress=not args.quiet)
            else:
                summary = score_run_sync(folder, cfg, subsets=subsets, progress=not args.quiet)
        except ValueError as exc:
            raise CliError(str(exc)) from exc
    return summary

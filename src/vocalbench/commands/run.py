"""``vocalbench run``: generate replies, score them, print the table and write the report
(RUN/leaderboard.md and RUN/report/: leaderboard.html, plots, per-sample viewer)."""

from __future__ import annotations

import argparse
import sys
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from vocalbench.commands import dry_run
from vocalbench.commands import generate as gen

if TYPE_CHECKING:
    from vocalbench.scoring.summary import Summary


def add_arguments(p: argparse.ArgumentParser) -> None:
    from vocalbench.commands import duplex

    gen.add_arguments(p)
    dry_run.add_arguments(p)
    duplex.add_arguments(p)


def run(args: argparse.Namespace) -> int:
    """``vocalbench run``: :func:`execute`, printing each language's table."""
    from vocalbench.commands import duplex

    if duplex.wanted(args):
        return duplex.run(args)
    return execute(args, show=True).status


@dataclass
class Outcome:
    """What :func:`execute` did: the exit status and each scored run folder's summary."""

    status: int = 0
    summaries: dict[Path, Summary] = field(default_factory=dict)


def execute(args: argparse.Namespace, *, show: bool) -> Outcome:
    """Per language: generate (resumable), score what is missing (printing the table when ``show``);
    then the report. Each run folder is held from its generation to the report: one store handle per
    run. The command line and :func:`vocalbench.evaluate` both run this."""
    from vocalbench.report.leaderboard import print_table, write_markdown
    from vocalbench.report.repeats import write_repeats
    from vocalbench.report.site import write_report
    from vocalbench.runner.folder import RunFolder
    from vocalbench.scoring.engine import score_run_sync

    jobs = gen.jobs_from_args(args)
    outcome = Outcome()
    if args.dry_run:
        for job in jobs:
            with RunFolder(job.run_dir, write=False) as folder:  # a dry run writes nothing: no lock
                dry_run.show(job.cfg, args=args, label=job.cfg.lang, folder=folder, samples=gen.samples_of(job, folder))
        return outcome
    with ExitStack() as held:
        scored: dict[Path, RunFolder] = {}
        for job in jobs:
            folder = held.enter_context(RunFolder(job.run_dir))
            code = gen.generate_job(job, args, folder)
            outcome.status = max(outcome.status, code)
            if code == gen.STOPPED:
                continue  # stopped past the error threshold: finished replies are kept, nothing is scored
            summary = score_run_sync(folder, job.cfg, progress=not job.cfg.quiet)
            if show:
                print_table(summary)
            outcome.summaries[job.run_dir] = summary
            scored[job.run_dir] = folder
        for group in dict.fromkeys(j.group for j in jobs if j.group is not None and j.run_dir in scored):
            path = write_repeats(group, held=scored)
            print(f"repeats: {repeats_line(path)} ({path})", file=sys.stderr)
        if scored:
            path = write_markdown(list(scored), jobs[0].root / "leaderboard.md")
            report = write_report(list(scored.values()), jobs[0].root / "report")
            for w in report.warnings:
                print(f"warning: {w}", file=sys.stderr)
            print(f"leaderboard: {path}\nreport: {jobs[0].root / 'report' / 'leaderboard.html'}", file=sys.stderr)
    return outcome


def repeats_line(path: Path) -> str:
    """``overall 56.9 ± 1.2 (SD over 3 runs) [95 % CI 54.1, 59.7]`` from a repeats.json."""
    from vocalbench.report.repeats import RepeatsFile

    body = RepeatsFile.model_validate_json(path.read_text(encoding="utf-8"))
    ov = body.overall
    if ov is None:
        return f"{body.repeats} runs; no overall (see {path.name})"
    ci = ov.ci95
    label = "partial overall" if ov.partial else "overall"
    return (f"{label} {ov.mean:.3f} ± {ov.sd:.3f} (SD over {ov.n} runs)"
            + (f" [95 % CI {ci[0]:.3f}, {ci[1]:.3f}]" if ci else ""))

"""``vocalbench run``: generate replies, score them, print the table and write the report
(RUN/leaderboard.md and RUN/report/: leaderboard.html, plots, per-sample viewer)."""

from __future__ import annotations

import argparse
import sys
from contextlib import ExitStack
from pathlib import Path

from vocalbench.commands import dry_run
from vocalbench.commands import generate as gen


def add_arguments(p: argparse.ArgumentParser) -> None:
    from vocalbench.commands import duplex

    gen.add_arguments(p)
    dry_run.add_arguments(p)
    duplex.add_arguments(p)


def run(args: argparse.Namespace) -> int:
    """Per language: generate (resumable), score what is missing, print the table; then the report.
    Each run folder is held from its generation to the report: one store handle per run."""
    from vocalbench.commands import duplex
    from vocalbench.report.leaderboard import print_table, write_markdown
    from vocalbench.report.repeats import write_repeats
    from vocalbench.report.site import write_report
    from vocalbench.runner.folder import RunFolder
    from vocalbench.scoring.engine import score_run_sync

    if duplex.wanted(args):
        return duplex.run(args)
    jobs = gen.jobs_from_args(args)
    if args.dry_run:
        for job in jobs:
            with RunFolder(job.run_dir, write=False) as folder:  # a dry run writes nothing: no lock
                dry_run.show(job.cfg, args=args, label=job.cfg.lang, folder=folder, samples=gen.samples_of(job, folder))
        return 0
    status = 0
    with ExitStack() as held:
        scored: dict[Path, RunFolder] = {}
        for job in jobs:
            folder = held.enter_context(RunFolder(job.run_dir))
            code = gen.generate_job(job, args, folder)
            status = max(status, code)
            if code == gen.STOPPED:
                continue  # stopped past the error threshold: finished replies are kept, nothing is scored
            print_table(score_run_sync(folder, job.cfg, progress=not job.cfg.quiet))
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
    return status


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

"""``vocalbench run``: generate replies, score them, print the table and write the report
(RUN/leaderboard.md and RUN/report/: leaderboard.html, plots, per-sample viewer)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from vocalbench.commands import dry_run
from vocalbench.commands import generate as gen


def add_arguments(p: argparse.ArgumentParser) -> None:
    gen.add_arguments(p)
    dry_run.add_arguments(p)


def run(args: argparse.Namespace) -> int:
    """Per language: generate (resumable), score what is missing, print the table; then the report."""
    from vocalbench.report.leaderboard import print_table, write_markdown
    from vocalbench.report.site import write_report
    from vocalbench.scoring.engine import score_run_sync

    status = 0
    scored = []
    jobs = gen.jobs_from_args(args)
    if args.dry_run:
        for job in jobs:
            dry_run.show(job.cfg, args=args, label=job.cfg.lang, run_dir=job.run_dir, samples=gen.samples_of(job))
        return 0
    for job in jobs:
        code = gen.generate_job(job, args)
        status = max(status, code)
        if code == gen.STOPPED:
            continue  # stopped past the error threshold: finished replies are kept, nothing is scored
        summary = score_run_sync(job.run_dir, job.cfg, progress=not job.cfg.quiet)
        print_table(summary)
        scored.append(job.run_dir)
    for group in dict.fromkeys(j.group for j in jobs if j.group is not None and j.run_dir in scored):
        from vocalbench.report.repeats import write_repeats

        path = write_repeats(group)
        print(f"repeats: {repeats_line(path)} ({path})", file=sys.stderr)
    if scored:
        path = write_markdown(scored, jobs[0].root / "leaderboard.md")
        report = write_report(scored, jobs[0].root / "report")
        for w in report.warnings:
            print(f"warning: {w}", file=sys.stderr)
        print(f"leaderboard: {path}\nreport: {jobs[0].root / 'report' / 'leaderboard.html'}", file=sys.stderr)
    return status


def repeats_line(path: Path) -> str:
    """``overall 56.9 ± 1.2 (SD over 3 runs) [95 % CI 54.1, 59.7]`` from a repeats.json."""
    import json

    body = json.loads(path.read_text(encoding="utf-8"))
    ov = body.get("overall")
    if not ov:
        return f"{body['repeats']} runs; no overall (see {path.name})"
    ci = ov.get("ci95")
    label = "partial overall" if ov.get("partial") else "overall"
    return (f"{label} {ov['mean']:.3f} ± {ov['sd']:.3f} (SD over {ov['n']} runs)"
            + (f" [95 % CI {ci[0]:.3f}, {ci[1]:.3f}]" if ci else ""))


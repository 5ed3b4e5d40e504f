"""``vocalbench run``: generate replies, score them, write leaderboard.md and print the table."""

from __future__ import annotations

import argparse
import sys

from vocalbench.commands import generate as gen


def add_arguments(p: argparse.ArgumentParser) -> None:
    gen.add_arguments(p)


def run(args: argparse.Namespace) -> int:
    from vocalbench.report.leaderboard import print_table, write_markdown
    from vocalbench.scoring.engine import score_run_sync

    status = 0
    for job in gen.jobs_from_args(args):
        code = gen.generate_job(job, args)
        if code:
            status = max(status, code)
            continue  # stopped past the error threshold: nothing sound to score
        summary = score_run_sync(job.run_dir, job.cfg, progress=not job.cfg.quiet)
        path = write_markdown([summary], job.run_dir / "leaderboard.md")
        print_table(summary)
        overall = summary.get("overall") or {}
        if overall.get("value") is None and overall.get("partial"):
            part = overall["partial"]
            print(f"[{job.cfg.lang}] overall is partial: {part.get('value')} of at most {part.get('max')} "
                  f"(missing: {', '.join(overall.get('missing') or [])})", file=sys.stderr)
        print(f"[{job.cfg.lang}] leaderboard: {path}", file=sys.stderr)
    return status

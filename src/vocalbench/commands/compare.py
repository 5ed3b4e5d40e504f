"""``vocalbench compare RUN_A RUN_B``: paired bootstrap per subset, dimension and overall; for two
repeat groups (``run --repeats``), the difference of their means with both groups' intervals.
``vocalbench compare RUN --published NAME``: the run beside one system of the published leaderboard
of its language and protocol, per dimension (the published side has no interval, and says so)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from vocalbench.errors import CliError
from vocalbench.files import write_json


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_a", metavar="RUN_A", help="run folder A (language run or parent of en/ zh/)")
    parser.add_argument("run_b", metavar="RUN_B", nargs="?", help="run folder B; differences are A - B")
    parser.add_argument("--published", metavar="NAME",
                        help="instead of RUN_B: a system of the published leaderboard (e.g. 'VocalNet2-8B')")
    parser.add_argument("--out", metavar="FILE", help="also write the comparison as JSON")
    parser.add_argument("--n-boot", type=int, default=2000, metavar="N", help="bootstrap resamples (default 2000)")
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    parser.add_argument("--quiet", action="store_true", help="do not print the table")


def run(args: argparse.Namespace) -> int:
    from vocalbench.report.compare import compare_runs, print_comparison
    from vocalbench.report.runs import load_runs
    from vocalbench.runner.folder import RunFolderError

    if args.n_boot < 1:
        raise CliError("--n-boot must be at least 1")
    if (args.run_b is None) == (args.published is None):
        raise CliError("give RUN_B or --published NAME (one of them)")
    if args.published is not None:
        return compare_published(args)
    if compare_groups(args):
        return 0
    try:
        runs_a, runs_b = load_runs([args.run_a]), load_runs([args.run_b])
    except RunFolderError as exc:
        raise CliError(str(exc)) from exc
    pairs = [(a, b) for a in runs_a for b in runs_b if a.lang == b.lang]
    if not pairs:
        raise CliError("the two runs share no language: nothing to compare")
    results = []
    for a, b in pairs:
        res = compare_runs(a, b, n_boot=args.n_boot, seed=args.seed)
        if not res["rows"]:
            res["notes"].append("no statistic has item-level scores in both runs")
        results.append(res)
        if not args.quiet:
            print_comparison(res)
    if args.out:
        body = results[0] if len(results) == 1 else {"comparisons": results}
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        write_json(args.out, body)
    return 0


def compare_groups(args: argparse.Namespace) -> bool:
    """Compare two repeat groups (both sides hold ``repeats.json`` for a shared language); False otherwise."""
    from vocalbench.report.repeats import compare_repeats, groups_of, print_repeats_comparison

    ga, gb = groups_of(Path(args.run_a)), groups_of(Path(args.run_b))
    langs = [lang for lang in ga if lang in gb]
    if not langs:
        return False
    results = []
    for lang in langs:
        rows = compare_repeats(ga[lang], gb[lang])
        results.append({"lang": lang, "repeats_a": ga[lang].repeats, "repeats_b": gb[lang].repeats,
                        "rows": [r.model_dump() for r in rows]})
        if not args.quiet:
            print_repeats_comparison(lang, ga[lang], gb[lang], rows)
    if args.out:
        body = results[0] if len(results) == 1 else {"comparisons": results}
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        write_json(args.out, body)
    return True



def compare_published(args: argparse.Namespace) -> int:
    """RUN_A's language runs each beside the published row ``--published NAME`` of their language."""
    from vocalbench.report import published
    from vocalbench.report.runs import load_runs
    from vocalbench.runner.folder import RunFolderError

    try:
        runs = load_runs([args.run_a], with_store=False)
    except RunFolderError as exc:
        raise CliError(str(exc)) from exc
    results, absent = [], []
    for r in runs:
        try:
            table, row = published.find(args.published, r.lang, r.protocol or "v2")
        except ValueError as exc:  # e.g. a system on the English leaderboard only: its zh run is skipped
            absent.append(str(exc))
            continue
        res = published.compare_published(r.summary, r.label, table, row)
        results.append(res)
        if not args.quiet:
            published.print_published(res)
    if not results:
        raise CliError(absent[0])
    for line in absent:
        print(f"skipped: {line}", file=sys.stderr)
    if args.out:
        body = results[0] if len(results) == 1 else {"comparisons": results}
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        write_json(args.out, body)
    return 0

"""``vocalbench report RUN [RUN ...] --out DIR``: leaderboard, plots and the per-sample viewer."""

from __future__ import annotations

import argparse
import sys

from vocalbench.errors import CliError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("runs", nargs="+", metavar="RUN",
                        help="run folders (a language run, or a parent holding en/ and zh/)")
    parser.add_argument("--out", required=True, metavar="DIR", help="report folder to write")
    parser.add_argument("--quiet", action="store_true", help="print nothing but errors")


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from vocalbench.report.duplex import split_duplex, write_duplex_report
    from vocalbench.report.site import write_report
    from vocalbench.runner.folder import RunFolderError

    duplex, args.runs = split_duplex(args.runs)
    if duplex:  # duplex runs (--subsets duplex) get their own page: measures and timelines
        page = write_duplex_report(duplex, Path(args.out))
        if not args.quiet:
            print(page)
        if not args.runs:
            return 0
    try:
        res = write_report(args.runs, args.out)
    except RunFolderError as exc:
        raise CliError(str(exc)) from exc
    for w in res.warnings:
        print(f"warning: {w}", file=sys.stderr)
    if not args.quiet:
        for f in res.files:
            print(f)
    return 0

"""``vocalbench validate DATA [--metadata-only] [--lang en|zh] [--json]``: every problem, exit 1 on errors."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from vocalbench.data.validate import Report


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("data", help="release folder (json/ + audio/), a folder with en/ and zh/, parquet folder, or 'mini'")
    p.add_argument("--metadata-only", action="store_true", help="check the JSON only, not the audio files")
    p.add_argument("--lang", choices=["en", "zh"], default=None,
                   help="language of the release (default: detected; both en/ and zh/ when DATA holds them)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--quiet", action="store_true", help="print only the totals")


def run(args: argparse.Namespace) -> int:
    from vocalbench.data.official import DataError
    from vocalbench.data.validate import validate_data
    from vocalbench.errors import CliError

    total_errors = 0
    try:
        for report in validate_data(args.data, args.lang, metadata_only=args.metadata_only):
            total_errors += len(report.errors)
            _print(report, args)
    except DataError as exc:
        raise CliError(str(exc)) from exc
    return 1 if total_errors else 0


def _print(report: Report, args: argparse.Namespace) -> None:
    from vocalbench.data.validate import dump

    if args.json:
        print(dump(report))
        return
    if not args.quiet:
        for problem in report.problems:
            print(problem)
    audio = "metadata only" if args.metadata_only else f"{report.audio_checked} audio files checked"
    print(f"{report.root} ({report.lang}): {report.files} files, {report.items} items, {audio}: "
          f"{len(report.errors)} errors, {len(report.warnings)} warnings",
          file=sys.stderr if args.quiet and not report.errors else sys.stdout)

"""``vocalbench validate DATA [--metadata-only] [--lang en|zh] [--json]``: every problem, exit 1 on errors."""

from __future__ import annotations

import argparse
import sys


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("data", help="release folder (json/ + audio/), a folder with en/ and zh/, parquet folder, or 'mini'")
    p.add_argument("--metadata-only", action="store_true", help="check the JSON only, not the audio files")
    p.add_argument("--lang", choices=["en", "zh"], default=None,
                   help="language of the release (default: detected; both en/ and zh/ when DATA holds them)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--quiet", action="store_true", help="print only the totals")


def _targets(data: str, lang: str | None) -> list[tuple[str | None, str]]:
    from pathlib import Path

    from vocalbench.data import resolve
    from vocalbench.data.official import is_release

    p = Path(data)
    if data not in ("mini",) and p.is_dir() and not is_release(p) and lang is None:
        langs = [x for x in ("en", "zh") if is_release(p / x)]
        if langs:
            return [(x, str(p / x)) for x in langs]
    langs_to_try = [lang] if lang else ["en", "zh"] if data == "mini" else [None]
    out = []
    for lg in langs_to_try:
        kind, root = resolve(data, lg or "en")
        if kind == "parquet":
            from vocalbench.data.parquet import materialise

            root = materialise(root, lg or "zh")
        out.append((lg, str(root)))
    return out


def run(args: argparse.Namespace) -> int:
    from vocalbench.data.official import DataError
    from vocalbench.data.validate import dump, validate
    from vocalbench.errors import CliError

    try:
        targets = _targets(args.data, args.lang)
    except DataError as exc:
        raise CliError(str(exc)) from exc
    total_errors = 0
    for lang, root in targets:
        try:
            report = validate(root, lang, metadata_only=args.metadata_only)
        except DataError as exc:
            raise CliError(str(exc)) from exc
        total_errors += len(report.errors)
        if args.json:
            print(dump(report))
            continue
        if not args.quiet:
            for problem in report.problems:
                print(problem)
        audio = "metadata only" if args.metadata_only else f"{report.audio_checked} audio files checked"
        print(f"{report.root} ({report.lang}): {report.files} files, {report.items} items, {audio}: "
              f"{len(report.errors)} errors, {len(report.warnings)} warnings",
              file=sys.stderr if args.quiet and not report.errors else sys.stdout)
    return 1 if total_errors else 0

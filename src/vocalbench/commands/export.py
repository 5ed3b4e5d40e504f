"""``vocalbench export RUN [--format jsonl|csv] [--out FILE] [--subsets LIST]``: per-item results."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from vocalbench.commands.lists import add_subsets
from vocalbench.errors import CliError
from vocalbench.files import write_atomic


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("run", help="a language run folder (with store.sqlite)")
    p.add_argument("--format", choices=["jsonl", "csv"], default="jsonl", help="output format (default jsonl)")
    p.add_argument("--out", type=Path, default=None, help="output file (default: stdout)")
    add_subsets(p, "only these subsets")


def run(args: argparse.Namespace) -> int:
    from vocalbench.report.export import rows, to_csv, to_jsonl
    from vocalbench.report.runs import load_one_run
    from vocalbench.runner.folder import RunFolderError

    try:
        data = load_one_run(args.run)
    except RunFolderError as exc:
        raise CliError(str(exc)) from exc
    if not (data.path / "store.sqlite").is_file():
        raise CliError(f"{data.path}: no store.sqlite, nothing to export")
    unknown = sorted(set(args.subsets or []) - {s for s, _ in data.samples})
    if unknown:
        raise CliError(f"{data.path}: no subset {', '.join(unknown)} in this run")
    found = rows(data, args.subsets)
    text = to_csv(list(found)) if args.format == "csv" else "".join(to_jsonl(found))
    if args.out is None:
        sys.stdout.write(text)
    else:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(args.out, text)
    return 0

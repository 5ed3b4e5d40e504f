"""Comma-separated list flags, one parser for every command (``--subsets knowledge,safety``)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any


class CommaList(argparse.Action):
    """``--flag a,b``: a list of the non-empty, stripped names; the flag given again adds its names
    (in order, each once), so a repeated flag never silently keeps only the last."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: str | Sequence[Any] | None, option_string: str | None = None) -> None:
        names = [n.strip() for n in str(values or "").split(",") if n.strip()]
        if not names:
            raise argparse.ArgumentError(self, "expected a comma-separated list of names")
        before = getattr(namespace, self.dest, None) or []
        setattr(namespace, self.dest, list(dict.fromkeys([*before, *names])))


def add_subsets(parser: argparse.ArgumentParser, help: str) -> None:
    """``--subsets LIST`` (comma-separated; repeated flags add up): ``args.subsets`` is a list or None."""
    parser.add_argument("--subsets", action=CommaList, default=None, metavar="LIST",
                        help=f"{help} (comma-separated; a repeated --subsets adds its names)")

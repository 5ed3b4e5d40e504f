"""CLI helpers of the component command tools (transcribe, speak, mos, emotion)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from pydantic import JsonValue

from vocalbench.components.base import ComponentError, ComponentUnavailable

R = TypeVar("R")  # what the component gives per file (or a ComponentError)


def resolve_or_exit(kind: str, spec: str, **opts: object) -> Any:
    """``components.resolve_evaluator`` with setup problems turned into one-line CLI errors."""
    from vocalbench.components import resolve_evaluator
    from vocalbench.errors import CliError

    try:
        return resolve_evaluator(kind, spec, **opts)
    except ComponentUnavailable as exc:
        raise CliError(f"{kind} '{spec}': {exc}") from exc


def add_tool_arguments(parser: argparse.ArgumentParser, kind: str, spec_help: str) -> None:
    """The flags every component tool has: FILE..., ``--<kind> SPEC`` and ``--no-cache``."""
    parser.add_argument("files", nargs="+", metavar="FILE", help="audio files")
    parser.add_argument(f"--{kind}", default="offline", help=spec_help)
    parser.add_argument("--no-cache", action="store_true", help="do not use or fill the result cache")


def run_tool(kind: str, spec: str, files: Sequence[str], *, no_cache: bool, call: Callable[[Any], Sequence[R]],
             cached: Callable[[Any], Sequence[R]], payload: Callable[[Any, R], Mapping[str, JsonValue]],
             **opts: object) -> int:
    """A component tool: resolve the component, run it on ``files`` (through the result cache unless
    ``no_cache``) and print one JSON line per file with ``payload(component, result)``."""
    comp = resolve_or_exit(kind, spec, **opts)
    try:
        results = call(comp) if no_cache else cached(comp)
    except ComponentUnavailable as exc:
        return emit_unavailable(files, exc)
    return emit(files, results, lambda r: payload(comp, r))


def emit(files: Sequence[str], results: Sequence[R], payload: Callable[[R], Mapping[str, JsonValue]]) -> int:
    """Print one JSON line per file; exit status 1 only when every file failed."""
    failed = 0
    for f, r in zip(files, results):
        if isinstance(r, ComponentError):
            failed += 1
            line: dict[str, JsonValue] = {"file": f, "error": r.reason, "message": r.message}
        else:
            line = {"file": f, **payload(r)}
        print(json.dumps(line, ensure_ascii=False), flush=True)
    return 1 if files and failed == len(files) else 0


def emit_unavailable(files: Sequence[str], exc: ComponentUnavailable) -> int:
    """Every file gets the component's unavailability as its error."""
    for f in files:
        print(json.dumps({"file": f, "error": exc.reason, "message": str(exc)}, ensure_ascii=False), flush=True)
    print(f"error: {exc}", file=sys.stderr)
    return 1

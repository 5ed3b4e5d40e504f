"""CLI helpers of the component command tools (transcribe, speak, mos, emotion)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from typing import Any

from vocalbench.components.base import ComponentError, ComponentUnavailable


def resolve_or_exit(kind: str, spec: str, **opts: Any) -> Any:
    """``components.resolve`` with setup problems turned into one-line CLI errors."""
    from vocalbench.components import resolve
    from vocalbench.errors import CliError, MissingDependency

    try:
        return resolve(kind, spec, **opts)
    except (MissingDependency, ComponentUnavailable, ValueError) as exc:
        raise CliError(f"{kind} '{spec}': {exc}") from exc


def emit(files: Sequence[str], results: Sequence[Any], payload: Callable[[Any], dict[str, Any]]) -> int:
    """Print one JSON line per file; exit status 1 only when every file failed."""
    failed = 0
    for f, r in zip(files, results):
        if isinstance(r, ComponentError):
            failed += 1
            line: dict[str, Any] = {"file": f, "error": r.reason, "message": r.message}
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

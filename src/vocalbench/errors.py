"""Errors shared by every layer (a leaf module: it imports nothing from vocalbench)."""

from __future__ import annotations


class MissingDependency(ImportError):
    """An optional dependency is not installed; the message names the pip extra."""

    def __init__(self, what: str, module: str, extra: str) -> None:
        super().__init__(
            f"{what} needs the Python module '{module}', which is not installed. "
            f"Install it with: pip install 'vocalbench[{extra}]'"
        )
        self.extra = extra


# what to do when a write failed for want of space (the store, audio, any file)
DISK_FULL_HINT = "free disk space and re-run the same command to resume (finished work is kept)"


class CliError(Exception):
    """A user-facing error: printed as one line, exit status 2."""


class InputError(ValueError):
    """Bad input (a file, folder, record or option): printed as one line naming it, exit status 2."""


def one_line(text: str) -> str:
    """``text`` on one line (newlines and runs of spaces collapsed), for error messages."""
    return " ".join(text.split())


def validation_message(exc: Exception, names: dict[str, str] | None = None) -> str:
    """A pydantic ``ValidationError`` as one line: ``field: message; ...`` (``names`` maps a field to
    the flag or key the user wrote, e.g. ``limit`` -> ``--limit``); other exceptions as their text."""
    errors = getattr(exc, "errors", None)
    if not callable(errors):
        return one_line(str(exc))
    parts = []
    for e in errors():
        loc = ".".join(str(x) for x in e.get("loc", ()))
        label = (names or {}).get(loc, loc)
        value = e.get("input")
        # numbers are echoed; strings are not (a SPEC refused for its credentials must not show them)
        shown = f" (got {value!r})" if isinstance(value, (int, float)) else ""
        msg = str(e.get("msg", "invalid")).removeprefix("Value error, ")
        parts.append(f"{label}: {msg}{shown}" if label else msg)
    return one_line("; ".join(parts))

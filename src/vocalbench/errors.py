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


class CliError(Exception):
    """A user-facing error: printed as one line, exit status 2."""

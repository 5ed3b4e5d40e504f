"""Progress bars (rich, on stderr) for the long-running steps: generation, scoring, building.

``Bars`` holds any number of bars at once (scoring shows one per subset); ``progress_bar`` is
the one-bar shorthand. Disabled bars (``--quiet``, tests) do nothing and import nothing.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Self


class Bar:
    """One bar: ``advance(n, note)`` from any thread."""

    def __init__(self, progress: Any = None, task: Any = None) -> None:
        self._progress, self._task = progress, task
        self._lock = threading.Lock()

    def advance(self, n: int = 1, note: str | None = None) -> None:
        if self._progress is None:
            return
        with self._lock:
            if note is not None:
                self._progress.update(self._task, advance=n, note=note)
            else:
                self._progress.advance(self._task, n)


class Bars:
    """A set of bars shown together while the ``with`` block runs (nothing when not ``enabled``)."""

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self._progress: Any = None

    def __enter__(self) -> Self:
        if self.enabled:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self._progress = Progress(
                TextColumn("[bold]{task.description:<24}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                TimeRemainingColumn(), TextColumn("{task.fields[note]}"), console=Console(file=sys.stderr),
                transient=False)
            self._progress.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.__exit__(None, None, None)
            self._progress = None

    def task(self, label: str, total: int, note: str = "") -> Bar:
        """A new bar of ``total`` steps."""
        if self._progress is None:
            return Bar()
        return Bar(self._progress, self._progress.add_task(label, total=total, note=note))


@contextmanager
def progress_bar(total: int, label: str, enabled: bool = True) -> Iterator[Bar]:
    """One bar with ``advance(n, note)``; a no-op bar when ``enabled`` is False."""
    with Bars(enabled) as bars:
        yield bars.task(label, total)

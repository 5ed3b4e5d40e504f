"""Progress bars (rich, on stderr) for the long-running steps: generation, scoring, building.

``Bars`` holds any number of bars at once (scoring shows one per subset); ``progress_bar`` is
the one-bar shorthand. Disabled bars (``--quiet``, tests) do nothing and import nothing.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import TracebackType
from typing import TYPE_CHECKING, Self

if TYPE_CHECKING:  # rich loads only when a bar is shown
    from rich.progress import Progress, TaskID


class Bar:
    """One bar: ``advance(n, note)`` from any thread."""

    def __init__(self, progress: Progress | None = None, task: TaskID | None = None) -> None:
        self._progress, self._task = progress, task
        self._lock = threading.Lock()

    def advance(self, n: int = 1, note: str | None = None) -> None:
        if self._progress is None:
            return
        with self._lock:
            assert self._task is not None, "a bar with a progress has its task"
            if note is not None:
                self._progress.update(self._task, advance=n, note=note)
            else:
                self._progress.advance(self._task, n)


class Bars:
    """A set of bars shown together while the ``with`` block runs (nothing when not ``enabled``)."""

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self._progress: Progress | None = None

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

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
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

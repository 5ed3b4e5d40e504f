"""A small progress bar (rich, on stderr) that can be switched off for scripts and tests."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


class _Bar:
    def __init__(self, progress: Any, task: Any) -> None:
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


@contextmanager
def progress_bar(total: int, label: str, enabled: bool = True) -> Iterator[_Bar]:
    """Yield a bar with ``advance(n, note)``; a no-op bar when ``enabled`` is False."""
    if not enabled:
        yield _Bar(None, None)
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    columns = (TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
               TimeRemainingColumn(), TextColumn("{task.fields[note]}"))
    with Progress(*columns, console=Console(file=sys.stderr), transient=False) as progress:
        task = progress.add_task(label, total=total, note="")
        yield _Bar(progress, task)

"""The lock of a run folder: one process writes a run at a time.

``RUN/.lock`` is made whole and linked into place (which fails when one exists) and holds the
holder's pid, host and command. A lock whose holder is gone (same host, no such process) is stale
and taken over; a live holder, or one on another host (whose processes cannot be checked from
here), makes :class:`RunLocked`: one line, exit 2. Within one process a folder is held once and shared (``run`` holds a folder from its
generation to its report while the steps open it again).
"""

from __future__ import annotations

import json
import os
import socket
import sys
import threading
from pathlib import Path

from vocalbench.errors import InputError
from vocalbench.files import pid_alive

LOCK = ".lock"
_held: dict[Path, int] = {}  # folders this process holds, with how many holders share each
_guard = threading.Lock()


class RunLocked(InputError):
    """Another process writes this run folder."""


def _holder() -> dict[str, object]:
    command = next((a for a in sys.argv[1:] if not a.startswith("-")), "")
    return {"pid": os.getpid(), "host": socket.gethostname(), "command": f"vocalbench {command}".strip()}


def _read(path: Path) -> dict[str, object] | None:
    """The holder recorded in the lock file (None when it is gone or unreadable, e.g. half written)."""
    try:
        body = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return body if isinstance(body, dict) else None


def _alive(holder: dict[str, object]) -> bool:
    """Whether the holder may still run: another host's process cannot be checked, so it counts as alive."""
    if holder.get("host") != socket.gethostname():
        return True
    pid = holder.get("pid")
    if not isinstance(pid, int) or pid <= 0:
        return False
    if pid == os.getpid():
        return False  # this process does not hold it (see _held): left behind by an earlier command here
    return pid_alive(pid)


def _create(path: Path) -> bool:
    """Make the lock file with this process as holder (written beside it, then linked into place,
    so that no one reads a half-written lock); False when one exists."""
    tmp = path.with_name(f"{LOCK}.{os.getpid()}.{threading.get_ident()}.new")
    tmp.write_text(json.dumps(_holder()), encoding="utf-8")
    try:
        os.link(tmp, path)
    except FileExistsError:
        return False
    finally:
        tmp.unlink(missing_ok=True)
    return True


def _take_over(path: Path, stale: dict[str, object] | None) -> None:
    """Remove a stale lock file, unless another process replaced it meanwhile (then it stays)."""
    aside = path.with_name(f"{LOCK}.{os.getpid()}.stale")
    try:
        os.replace(path, aside)
    except FileNotFoundError:
        return
    if _read(aside) != stale:
        os.replace(aside, path)  # a new holder's lock, not the stale one: put it back
        return
    aside.unlink(missing_ok=True)


def acquire(folder: Path) -> None:
    """Hold ``folder`` for this process (made if missing); :class:`RunLocked` when another process does."""
    key = folder.resolve()
    with _guard:
        if key in _held:
            _held[key] += 1
            return
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / LOCK
        for _ in range(3):
            if _create(path):
                _held[key] = 1
                return
            holder = _read(path)
            if holder is not None and _alive(holder):
                raise RunLocked(f"{folder}: in use by {holder.get('command') or 'vocalbench'} (pid {holder.get('pid')} "
                                f"on {holder.get('host')}); wait for it to finish, or remove {path} if that "
                                "process is gone")
            _take_over(path, holder)
        raise RunLocked(f"{folder}: cannot take its lock {path}; remove it if no vocalbench process uses the folder")


def release(folder: Path) -> None:
    """Give up one hold of ``folder``; the last one removes the lock file."""
    key = folder.resolve()
    with _guard:
        count = _held.get(key, 0)
        if count > 1:
            _held[key] = count - 1
            return
        if count == 1:
            del _held[key]
            (folder / LOCK).unlink(missing_ok=True)

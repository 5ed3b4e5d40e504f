"""The lock of a run folder: one process writes a run at a time, and nobody reads it meanwhile.

A writer (``acquire(folder)``) holds ``RUN/.lock``, made whole and linked into place (which fails
when one exists); a reader (``acquire(folder, shared=True)``: the report, export, compare) holds
its own ``RUN/.lock-read.<host>.<pid>``. Each file holds its holder's pid, host and command. A
writer is refused while another process writes or reads the folder, a reader while another process
writes it; readers share it. Each side makes its own file before it looks for the other's, so two
processes never both get in. A holder that is gone (same host, no such process) is stale: its file
is taken over or removed; a live holder, or one on another host (whose processes cannot be checked
from here), makes :class:`RunLocked`: one line, exit 2. A reader of a folder it cannot write to
(read-only media, where no one writes either) reads without a file.

Within one process a folder is held once and shared (``run`` holds a folder from its generation to
its report while the steps open it again); a process that writes a folder also reads it.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import threading
from pathlib import Path

from pydantic import JsonValue

from vocalbench.errors import InputError
from vocalbench.files import pid_alive, write_atomic

LOCK = ".lock"
READER = ".lock-read."  # + host.pid: one reader's lock
_held: dict[Path, list[int]] = {}  # folders this process holds: [readers, writers] sharing each hold
_guard = threading.Lock()


class RunLocked(InputError):
    """Another process writes this run folder."""


def _holder() -> dict[str, JsonValue]:
    command = next((a for a in sys.argv[1:] if not a.startswith("-")), "")
    return {"pid": os.getpid(), "host": socket.gethostname(), "command": f"vocalbench {command}".strip()}


def _read(path: Path) -> dict[str, JsonValue] | None:
    """The holder recorded in the lock file (None when it is gone or unreadable, e.g. half written)."""
    try:
        body = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return body if isinstance(body, dict) else None


def _alive(holder: dict[str, JsonValue]) -> bool:
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


def _take_over(path: Path, stale: dict[str, JsonValue] | None) -> None:
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


def _reader_file(folder: Path) -> Path:
    return folder / f"{READER}{socket.gethostname()}.{os.getpid()}"


def _refusal(folder: Path, holder: dict[str, JsonValue], path: Path, doing: str) -> RunLocked:
    return RunLocked(f"{folder}: {doing} by {holder.get('command') or 'vocalbench'} (pid {holder.get('pid')} on "
                     f"{holder.get('host')}); wait for it to finish, or remove {path} if that process is gone")


def _live_readers(folder: Path) -> tuple[Path, dict[str, JsonValue]] | None:
    """Another process's live reader lock of ``folder`` (stale ones are removed on the way)."""
    own = _reader_file(folder)
    for path in folder.glob(f"{READER}*"):
        if path == own:
            continue
        holder = _read(path)
        if holder is not None and _alive(holder):
            return path, holder
        path.unlink(missing_ok=True)
    return None


def acquire(folder: Path, *, shared: bool = False) -> None:
    """Hold ``folder`` for this process, to write it (made if missing) or, ``shared``, to read it;
    :class:`RunLocked` when another process writes it, or (to write) reads it."""
    key = folder.resolve()
    with _guard:
        held = _held.get(key)
        if held is not None and (held[1] or (shared and held[0])):
            held[0 if shared else 1] += 1  # a writer also reads; readers of one process share one file
            return
        if shared:
            _take_reader(folder)
        else:
            _take_writer(folder)
        held = _held.setdefault(key, [0, 0])
        held[0 if shared else 1] += 1


def _take_writer(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / LOCK
    for _ in range(3):
        if _create(path):
            reading = _live_readers(folder)
            if reading is not None:
                path.unlink(missing_ok=True)
                raise _refusal(folder, reading[1], reading[0], "being read")
            return
        holder = _read(path)
        if holder is not None and _alive(holder):
            raise _refusal(folder, holder, path, "in use")
        _take_over(path, holder)
    raise RunLocked(f"{folder}: cannot take its lock {path}; remove it if no vocalbench process uses the folder")


def _take_reader(folder: Path) -> None:
    own: Path | None = _reader_file(folder)
    try:
        write_atomic(_reader_file(folder), json.dumps(_holder()))
    except OSError:
        own = None  # a folder no one can write to: read without a lock file
    holder = _read(folder / LOCK)
    if holder is not None and _alive(holder):
        if own is not None:
            own.unlink(missing_ok=True)
        raise _refusal(folder, holder, folder / LOCK, "in use")


def release(folder: Path, *, shared: bool = False) -> None:
    """Give up one hold of ``folder`` (to read, ``shared``, or to write); the last hold of each
    kind removes its lock file."""
    key = folder.resolve()
    with _guard:
        held = _held.get(key)
        kind = 0 if shared else 1
        if held is None or not held[kind]:
            return
        held[kind] -= 1
        if not held[kind]:
            (_reader_file(folder) if shared else folder / LOCK).unlink(missing_ok=True)
        if not any(held):
            del _held[key]

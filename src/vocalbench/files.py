"""Files the tool writes: one atomic-write helper, the check that a path stays inside its root,
the safe character set of ids that become file names, folders written whole, SQLite databases
made whole, and whether the process a lock or state file names still runs (imports only
vocalbench.errors).

Every file the tool rewrites (config.json, summary.json, reports, judge checks) goes through
:func:`write_atomic`: written beside its target and renamed over it, so a killed process leaves
either the old file or the new one, never a truncated one.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from vocalbench.errors import InputError

# Qids (and every id that names a file) start with a letter or digit and hold only letters, digits,
# '.', '_' and '-': no path separators, no '..' component, nothing a shell or file system treats specially
SAFE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,199}")


class UnsafePath(InputError):
    """A path the tool would write or link that leaves its root folder."""


def id_problem(value: str) -> str | None:
    """Why ``value`` cannot name a file (None when it can)."""
    if SAFE_ID.fullmatch(value):
        return None
    return (f"unsafe id {value!r}: use 1-200 letters, digits, '.', '_' or '-', starting with a letter or digit "
            "(ids become file names)")


def inside(root: str | Path, path: str | Path) -> Path:
    """``path`` resolved (links followed); :class:`UnsafePath` unless it lies inside ``root``."""
    base = Path(root).resolve()
    p = Path(path)
    resolved = (p if p.is_absolute() else base / p).resolve()
    if resolved != base and base not in resolved.parents:
        raise UnsafePath(f"{path}: outside {base}; refused")
    return resolved


def write_atomic(path: str | Path, text: str | bytes) -> Path:
    """Write ``text`` (UTF-8) or bytes to ``path`` atomically: a temporary file beside it, then a
    rename. Where the file system can (Linux, O_TMPFILE), the temporary file has no name until it
    is complete, so a killed process leaves nothing behind."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    data = text if isinstance(text, bytes) else text.encode("utf-8")
    tmp = p.with_name(f".{p.name}.{os.getpid()}.{threading.get_ident()}.part")
    try:
        if not _write_unnamed(p.parent, tmp, data):
            tmp.write_bytes(data)
        os.replace(tmp, p)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return p


# devices whose file system cannot name an unnamed file (no O_TMPFILE, or linkat refused, as in some
# containers): asked once per device, then the named temporary file is written straight away
_NO_UNNAMED: set[int] = set()


def _write_unnamed(folder: Path, name: Path, data: bytes) -> bool:
    """Write ``data`` to an unnamed file in ``folder`` and link it as ``name`` once complete; False
    where the file system has no unnamed files (then the caller writes ``name`` itself)."""
    flag = getattr(os, "O_TMPFILE", 0)
    if not flag or (device := os.stat(folder).st_dev) in _NO_UNNAMED:
        return False
    try:
        fd = os.open(folder, flag | os.O_WRONLY, 0o644)
    except OSError:
        _NO_UNNAMED.add(device)
        return False
    try:
        view = memoryview(data)
        written = os.write(fd, view) if view.nbytes else 0
        while written < view.nbytes:
            written += os.write(fd, view[written:])
        try:  # linkat(AT_SYMLINK_FOLLOW) of /proc/self/fd/N: the unnamed file itself gets the name
            os.link(f"/proc/self/fd/{fd}", name, follow_symlinks=True)
        except OSError:
            _NO_UNNAMED.add(device)
            return False
    finally:
        os.close(fd)
    return True


@contextmanager
def written_folder(path: str | Path) -> Iterator[Path]:
    """A folder written whole: the block writes into a temporary folder beside ``path`` that then
    replaces it, so a killed or failed write leaves the old complete folder or none, never a
    partial one that looks finished. Temporary folders left by dead processes are removed."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    for stale in p.parent.glob(f".{p.name}.*.tmp"):
        pid = stale.name.removeprefix(f".{p.name}.").removesuffix(".tmp").split(".")[0]
        if pid.isdigit() and not pid_alive(int(pid)):
            shutil.rmtree(stale, ignore_errors=True)
    tmp = p.with_name(f".{p.name}.{os.getpid()}.new.tmp")
    old = p.with_name(f".{p.name}.{os.getpid()}.old.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    try:
        yield tmp
        if p.exists():
            os.replace(p, old)
        os.replace(tmp, p)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.rmtree(old, ignore_errors=True)


def create_database(path: Path, schema: str) -> None:
    """Make the SQLite database ``path`` with ``schema`` in WAL mode, beside it, and link it into
    place; one another process made first is kept. No reader opens it without its tables, and no
    two first openers race to switch its journal mode: SQLite answers that race with "database is
    locked" at once, whatever the busy timeout (a lost ASR result under two Ray replicas, issue 29)."""
    tmp = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.init")
    db = sqlite3.connect(str(tmp))
    try:
        db.execute("PRAGMA journal_mode=WAL")
        db.executescript(schema)
    finally:
        db.close()
    try:
        os.link(tmp, path)
    except FileExistsError:
        pass
    finally:
        tmp.unlink(missing_ok=True)


def write_json(path: str | Path, body: object) -> Path:
    """``body`` as indented JSON (``ensure_ascii=False``), written atomically."""
    return write_atomic(path, json.dumps(body, ensure_ascii=False, indent=2))


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` runs on this host (one owned by another user counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True

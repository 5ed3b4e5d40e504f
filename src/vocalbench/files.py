"""Files the tool writes: one atomic-write helper, the check that a path stays inside its root,
and the safe character set of ids that become file names (imports only vocalbench.errors).

Every file the tool rewrites (config.json, summary.json, reports, judge checks) goes through
:func:`write_atomic`: written beside its target and renamed over it, so a killed process leaves
either the old file or the new one, never a truncated one.
"""

from __future__ import annotations

import json
import os
import re
import threading
from pathlib import Path
from typing import Any

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
    """Write ``text`` (UTF-8) or bytes to ``path`` atomically: a temporary file beside it, then a rename."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_name(f".{p.name}.{os.getpid()}.{threading.get_ident()}.part")
    try:
        if isinstance(text, bytes):
            tmp.write_bytes(text)
        else:
            tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, p)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return p


def write_json(path: str | Path, body: Any) -> Path:
    """``body`` as indented JSON (``ensure_ascii=False``), written atomically."""
    return write_atomic(path, json.dumps(body, ensure_ascii=False, indent=2))

"""The build manifest (``DATA/build_manifest.json``) and the per-item state that makes builds resumable.

Per-item results are appended to ``DATA/.build/state.jsonl`` the moment an item finishes, so an
interrupted build continues where it stopped; the manifest is rewritten from that state at the end.
"""

from __future__ import annotations

import json
import os
import platform
import threading
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

from vocalbench.files import write_atomic, write_json

MANIFEST = "build_manifest.json"
STATE_DIR = ".build"
STATE = "state.jsonl"

_TOOLS = ("vocalbench", "numpy", "scipy", "soundfile", "pyroomacoustics", "kokoro-onnx", "misaki",
          "faster-whisper", "jiwer", "whisper-normalizer", "OpenCC", "pypinyin", "cn2an", "onnxruntime")


def tool_versions() -> dict[str, str | None]:
    """Installed versions of the libraries that shape the built audio (None when absent)."""
    out: dict[str, str | None] = {"python": platform.python_version()}
    for name in _TOOLS:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def read_manifest(root: str | Path) -> dict[str, Any]:
    p = Path(root) / MANIFEST
    return json.loads(p.read_text(encoding="utf-8")) if p.exists() else {}


def write_manifest(root: str | Path, body: Mapping[str, object]) -> Path:
    p = Path(root) / MANIFEST
    write_json(p, body)
    return p


def update_manifest(root: str | Path, sections: Mapping[str, object]) -> Path:
    """Replace top-level sections of the manifest, keeping the others."""
    body = read_manifest(root)
    body.update(sections)
    return write_manifest(root, body)


class ItemState:
    """Append-only per-item results keyed by the item's build key (last write wins)."""

    def __init__(self, root: str | Path) -> None:
        self.dir = Path(root) / STATE_DIR
        self.dir.mkdir(parents=True, exist_ok=True)
        self.path = self.dir / STATE
        self._lock = threading.Lock()
        self.entries: dict[str, dict[str, Any]] = {}
        if self.path.exists():
            for line in self.path.read_text(encoding="utf-8").splitlines():
                if not line.strip():
                    continue
                try:
                    e = json.loads(line)
                except json.JSONDecodeError:
                    # a line cut by an interruption: that item is simply redone
                    continue
                self.entries[e["key"]] = e

    def get(self, key: str) -> dict[str, Any] | None:
        return self.entries.get(key)

    def put(self, entry: dict[str, Any]) -> None:
        """Record one item's result durably (flushed and fsynced before returning)."""
        with self._lock:
            self.entries[entry["key"]] = entry
            with open(self.path, "a", encoding="utf-8") as f:
                f.write(json.dumps(entry, ensure_ascii=False) + "\n")
                f.flush()
                os.fsync(f.fileno())

    def rewrite(self) -> None:
        """Compact the file to one line per item."""
        with self._lock:
            write_atomic(self.path, "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in self.entries.values()))

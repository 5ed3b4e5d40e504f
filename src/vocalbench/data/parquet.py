"""The HF parquet release (e.g. ``VocalNet/VocalBench-zh``): one config per subset.

A config's rows carry the official fields (Qid, Question, Answer, …) and an ``audio`` column in
the HF ``Audio`` encoding (a struct ``{bytes, path}``); a plain string ``Audio`` column is taken
as a path relative to the parquet folder's ``audio/``. Files are found as
``<root>/<config>/*.parquet``, ``<root>/data/<config>/*.parquet``, ``<root>/<config>-*.parquet``
or ``<root>/<config>.parquet``.

:func:`materialise` converts the configs once into an official-layout folder in the cache (audio
bytes written out as files, JSON lists beside them), so everything downstream reads one layout.
pyarrow is optional (``pip install 'vocalbench[parquet]'``) and imported only here.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from types import ModuleType
from typing import Any

from pydantic import JsonValue

from vocalbench import catalog
from vocalbench.data.official import DataError
from vocalbench.files import UnsafePath, id_problem, inside


def _pyarrow() -> ModuleType:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        from vocalbench.errors import MissingDependency

        raise MissingDependency("reading parquet releases", "pyarrow", "parquet") from None
    return pq


def _config_of(path: Path, root: Path) -> str:
    known = {spec.name for spec in catalog.specs()}
    rel = path.relative_to(root) if path != root else Path(path.name)
    for part in reversed(rel.parts[:-1]):
        if part in known:
            return part
    stem = path.stem
    for name in sorted(known, key=len, reverse=True):
        if stem == name or stem.startswith(name + "-"):
            return name
    return rel.parts[-2] if len(rel.parts) > 1 and rel.parts[-2] not in ("data", "test") else stem.split("-")[0]


def find_files(root: Path) -> dict[str, list[Path]]:
    """``{config: [parquet files]}`` under ``root`` (a folder or one file)."""
    files = [root] if root.is_file() else sorted(root.rglob("*.parquet"))
    out: dict[str, list[Path]] = {}
    for f in files:
        out.setdefault(_config_of(f, root if root.is_dir() else root.parent), []).append(f)
    return out


def read_rows(files: list[Path]) -> list[dict[str, Any]]:
    """All rows of one config's files, in file order."""
    pq = _pyarrow()
    rows: list[dict[str, Any]] = []
    for f in files:
        try:
            rows.extend(pq.read_table(str(f)).to_pylist())
        except Exception as exc:  # pyarrow raises ArrowInvalid / OSError for broken files
            raise DataError(f, f"unreadable parquet file ({exc})") from exc
    return rows


def _fingerprint(files: list[Path]) -> str:
    h = hashlib.sha256()
    for f in sorted(files):
        st = f.stat()
        h.update(f"{f.resolve()}\x1f{st.st_size}\x1f{st.st_mtime_ns}\n".encode())
    return h.hexdigest()[:16]


def materialise(root: Path, lang: str, dest: Path | None = None) -> Path:
    """Write the parquet configs under ``root`` as an official-layout folder and return it.

    The result is cached by the files' identity (path, size, mtime): a second call is free.
    """
    configs = find_files(root)
    if not configs:
        raise DataError(root, "no parquet files found")
    if dest is None:
        from vocalbench.config import cache_dir

        dest = cache_dir() / "parquet" / f"{lang}-{_fingerprint([f for fs in configs.values() for f in fs])}"
    done = dest / ".complete"
    if done.exists():
        return dest
    tmp = dest.with_name(dest.name + ".part")
    shutil.rmtree(tmp, ignore_errors=True)
    (tmp / "json").mkdir(parents=True)
    base = root if root.is_dir() else root.parent
    for config, files in configs.items():
        records = []
        for i, row in enumerate(read_rows(files)):
            records.append(_row_to_record(row, config=config, index=i, out=tmp, base=base, file=files[0]))
        (tmp / "json" / f"{config}.json").write_text(json.dumps(records, ensure_ascii=False, indent=1), encoding="utf-8")
    (tmp / ".complete").write_text("")
    if dest.exists():
        shutil.rmtree(dest)
    tmp.replace(dest)
    return dest


def _row_to_record(row: dict[str, Any], *, config: str, index: int, out: Path, base: Path, file: Path) -> dict[str, JsonValue]:
    record: dict[str, JsonValue] = {k: v for k, v in row.items() if k != "audio"}
    qid = record.get("Qid")
    if not isinstance(qid, str) or not qid:
        raise DataError(file, f"row {index} has no string Qid", field="Qid")
    if problem := id_problem(qid):
        raise DataError(file, f"row {index}: {problem}", field="Qid")
    audio = row.get("audio")
    if isinstance(audio, dict) and audio.get("bytes"):
        suffix = Path(str(audio.get("path") or "")).suffix or ".wav"
        rel = f"{config}/{qid}{suffix}"
        target = inside(out / "audio", rel)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(audio["bytes"])  # the encoded file as shipped; decoding stays in audio.py
        record["Audio"] = rel
    elif isinstance(given := record.get("Audio"), str):
        try:
            src, target = inside(base / "audio", given), inside(out / "audio", given)
        except UnsafePath as exc:
            raise DataError(file, f"row {index}: {exc}", qid=qid, field="Audio") from None
        if src.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, target)
    elif isinstance(audio, dict) and audio.get("path"):
        record["Audio"] = str(audio["path"])
    return record

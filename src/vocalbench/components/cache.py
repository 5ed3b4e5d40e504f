"""Persistent caches of evaluator results (SQLite in ``cache_dir()``).

Results of ASR, MOS and emotion are keyed by the audio's content hash plus the component's id
and version (plus the language for ASR), so scoring the same audio twice does no model work.
Judge verdicts are keyed by (model, endpoint, rubric hash, rendered prompt hash); the endpoint is
scheme://host:port/path (``local://MODEL`` for the embedded server), kept in the column ``host``.
Only successes are stored; per-file errors are recomputed next time (they are cheap).
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, JsonValue, TypeAdapter

from vocalbench.components.base import (
    ASR,
    MOS,
    ComponentError,
    EmotionClassifier,
    Transcript,
)
from vocalbench.files import create_database
from vocalbench.redact import redact

T = TypeVar("T")  # what a component returns for one file


class _CachedTranscript(BaseModel):
    """A cached transcript: the fields of :class:`Transcript` but its file."""

    text: str
    language: str | None
    seconds: float | None


# what the cache holds per kind, checked as it is read back
_CACHED_MOS = TypeAdapter(float)
_CACHED_DISTRIBUTION = TypeAdapter(dict[str, float])

_SCHEMA = """
CREATE TABLE IF NOT EXISTS results (
    kind TEXT NOT NULL, component TEXT NOT NULL, audio TEXT NOT NULL, variant TEXT NOT NULL,
    value TEXT NOT NULL, created REAL NOT NULL,
    PRIMARY KEY (kind, component, audio, variant));
CREATE TABLE IF NOT EXISTS judge (
    model TEXT NOT NULL, host TEXT NOT NULL, rubric TEXT NOT NULL, prompt TEXT NOT NULL,
    value REAL, raw TEXT NOT NULL, created REAL NOT NULL,
    PRIMARY KEY (model, host, rubric, prompt));
"""


class ResultCache:
    """A small thread-safe SQLite key-value store (WAL, one connection per process)."""

    def __init__(self, path: str | Path | None = None) -> None:
        if path is None:
            from vocalbench.config import cache_dir

            path = cache_dir() / "results.sqlite"
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if not self.path.exists():  # made whole in WAL mode: replicas opening it at once do not race
            create_database(self.path, _SCHEMA)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(self.path), check_same_thread=False, timeout=30.0)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.executescript(_SCHEMA)

    def get_many(self, kind: str, component: str, audios: Sequence[str], variant: str = "") -> dict[str, JsonValue]:
        """Cached values for these audio hashes (missing ones absent)."""
        out: dict[str, JsonValue] = {}
        with self._lock:
            for h in set(audios):
                row = self._db.execute(
                    "SELECT value FROM results WHERE kind=? AND component=? AND audio=? AND variant=?",
                    (kind, component, h, variant),
                ).fetchone()
                if row is not None:
                    out[h] = json.loads(row[0])
        return out

    def put_many(self, kind: str, component: str, values: Mapping[str, JsonValue], variant: str = "") -> None:
        now = time.time()
        with self._lock, self._db:
            self._db.executemany(
                "INSERT OR REPLACE INTO results VALUES (?, ?, ?, ?, ?, ?)",
                [(kind, component, h, variant, json.dumps(v, ensure_ascii=False), now) for h, v in values.items()],
            )

    def get_verdict(self, model: str, host: str, rubric: str, prompt: str) -> tuple[float | None, str] | None:
        with self._lock:
            row = self._db.execute(
                "SELECT value, raw FROM judge WHERE model=? AND host=? AND rubric=? AND prompt=?",
                (model, host, rubric, prompt),
            ).fetchone()
        return None if row is None else (row[0], row[1])

    def put_verdict(self, model: str, host: str, rubric: str, prompt: str, value: float | None, raw: str) -> None:
        with self._lock, self._db:
            self._db.execute(
                "INSERT OR REPLACE INTO judge VALUES (?, ?, ?, ?, ?, ?, ?)",
                (model, host, rubric, prompt, value, redact(raw), time.time()),
            )


_DEFAULT: ResultCache | None = None
_DEFAULT_LOCK = threading.Lock()


def default_cache() -> ResultCache:
    """The process-wide cache in ``cache_dir()/results.sqlite`` (follows VOCALBENCH_CACHE)."""
    global _DEFAULT
    from vocalbench.config import cache_dir

    with _DEFAULT_LOCK:
        want = cache_dir() / "results.sqlite"
        if _DEFAULT is None or _DEFAULT.path != want:
            _DEFAULT = ResultCache(want)
        return _DEFAULT


def component_key(component: ASR | MOS | EmotionClassifier) -> str:
    """id plus version: what identifies a component's outputs in cache keys."""
    version = getattr(component, "version", "")
    return f"{component.id}|{version}" if version else component.id


def _hashes(paths: Sequence[str | Path]) -> list[str | ComponentError]:
    from vocalbench.audio import content_hash

    out: list[str | ComponentError] = []
    for p in paths:
        try:
            out.append(content_hash(p))
        except FileNotFoundError:
            out.append(ComponentError(str(p), "file_not_found", f"{p}: file not found"))
        except OSError as exc:
            out.append(ComponentError(str(p), "unreadable", f"{p}: {exc}"))
    return out


def _cached_batch(
    kind: str,
    component: ASR | MOS | EmotionClassifier,
    paths: Sequence[str | Path],
    run: Callable[[list[str]], Sequence[T | ComponentError]],
    encode: Callable[[T], JsonValue],
    decode: Callable[[str, JsonValue], T],
    variant: str = "",
    cache: ResultCache | None = None,
) -> list[T | ComponentError]:
    """Shared logic: hash, look up, run the component on misses only, store successes."""
    cache = cache or default_cache()
    key = component_key(component)
    hashes = _hashes(paths)
    known = cache.get_many(kind, key, [h for h in hashes if isinstance(h, str)], variant)
    results: list[T | ComponentError | None] = [None] * len(paths)
    todo: dict[str, list[int]] = {}
    for i, (p, h) in enumerate(zip(paths, hashes)):
        if isinstance(h, ComponentError):
            results[i] = h
        elif h in known:
            results[i] = decode(str(p), known[h])
        else:
            todo.setdefault(h, []).append(i)
    if todo:
        first = [str(paths[idx[0]]) for idx in todo.values()]
        fresh = run(first)
        if len(fresh) != len(first):
            raise RuntimeError(f"{key} returned {len(fresh)} results for {len(first)} files")
        store: dict[str, JsonValue] = {}
        for (h, idx), r in zip(todo.items(), fresh):
            if not isinstance(r, ComponentError):
                store[h] = encode(r)
            for i in idx:
                results[i] = _rename(r, str(paths[i])) if isinstance(r, ComponentError) else decode(str(paths[i]), store[h])
        cache.put_many(kind, key, store, variant)
    done = [r for r in results if r is not None]
    assert len(done) == len(paths), "every path has its result or its error"
    return done


def _rename(err: ComponentError, path: str) -> ComponentError:
    return err if err.file == path else ComponentError(path, err.reason, err.message)


def cached_transcribe(asr: ASR, paths: Sequence[str | Path], lang: str | None = None,
                      cache: ResultCache | None = None) -> list[Transcript | ComponentError]:
    """``asr.transcribe`` with results cached by (audio content, ASR id+version, language)."""
    return _cached_batch(
        "asr", asr, paths,
        run=lambda ps: asr.transcribe(ps, lang=lang),
        encode=lambda t: {"text": t.text, "language": t.language, "seconds": t.seconds},
        decode=lambda p, v: Transcript(file=p, **_CachedTranscript.model_validate(v).model_dump()),
        variant=lang or "auto",
        cache=cache,
    )


def cached_mos(mos: MOS, paths: Sequence[str | Path], cache: ResultCache | None = None) -> list[float | ComponentError]:
    """``mos.score`` with results cached by (audio content, MOS id+version)."""
    return _cached_batch("mos", mos, paths, run=lambda ps: mos.score(ps), encode=float,
                         decode=lambda p, v: _CACHED_MOS.validate_python(v), cache=cache)


def cached_emotion(clf: EmotionClassifier, paths: Sequence[str | Path],
                   cache: ResultCache | None = None) -> list[dict[str, float] | ComponentError]:
    """``clf.classify`` with results cached; ComponentUnavailable from the classifier propagates."""
    return _cached_batch("emotion", clf, paths, run=lambda ps: clf.classify(ps), encode=lambda d: dict(d),
                         decode=lambda p, v: _CACHED_DISTRIBUTION.validate_python(v), cache=cache)

"""The run store: one SQLite database (WAL) per run folder.

A run folder holds one system on one language::

    RUN/store.sqlite   samples, replies, scores, judge calls, key/value meta
    RUN/audio/         reply audio written as it arrives
    RUN/config.json    resolved config (no secrets)
    RUN/summary.json   written by scoring

Error text and judge output are stored with the configured key values redacted
(:func:`vocalbench.redact.redact`). Every write is committed immediately, so a killed process loses at most what was in flight,
and re-running skips finished work. Keys: replies by (subset, sample_id); scores by
(subset, sample_id, name, evaluator) where ``evaluator`` is the scorer id@version plus the judge
id for judge-based scores, so scores of an earlier judge stay beside those of a new one.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence, Sized
from contextlib import contextmanager
from functools import cached_property
from pathlib import Path
from typing import Any, Self, TypedDict, cast

from pydantic import JsonValue

from vocalbench.errors import DISK_FULL_HINT, InputError
from vocalbench.files import create_database
from vocalbench.records import JudgeUsage, Reply, Sample, Score
from vocalbench.redact import redact

SqlValue = str | int | float | bytes | None  # what a SQLite parameter binds


class Fingerprint(TypedDict):
    """A sample's release fingerprint (runner/fingerprint.py): its parts' hashes and its audio's signature."""

    parts: dict[str, str]
    audio_sig: str


SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS samples (
    subset TEXT NOT NULL, sample_id TEXT NOT NULL, idx INTEGER NOT NULL, record TEXT NOT NULL,
    PRIMARY KEY (subset, sample_id));
CREATE INDEX IF NOT EXISTS samples_in_order ON samples (subset, idx, sample_id);
CREATE TABLE IF NOT EXISTS replies (
    subset TEXT NOT NULL, sample_id TEXT NOT NULL, failed INTEGER NOT NULL, record TEXT NOT NULL,
    PRIMARY KEY (subset, sample_id));
CREATE TABLE IF NOT EXISTS scores (
    subset TEXT NOT NULL, sample_id TEXT NOT NULL, name TEXT NOT NULL, evaluator TEXT NOT NULL,
    record TEXT NOT NULL, PRIMARY KEY (subset, sample_id, name, evaluator));
CREATE TABLE IF NOT EXISTS fingerprints (
    subset TEXT NOT NULL, sample_id TEXT NOT NULL, record TEXT NOT NULL, PRIMARY KEY (subset, sample_id));
CREATE TABLE IF NOT EXISTS judge_calls (
    id INTEGER PRIMARY KEY AUTOINCREMENT, subset TEXT, sample_id TEXT, model TEXT NOT NULL,
    prompt_hash TEXT NOT NULL, cached INTEGER NOT NULL, prompt_tokens INTEGER, completion_tokens INTEGER,
    seconds REAL, error TEXT, created REAL DEFAULT (strftime('%s','now')));
"""


class StoreError(InputError):
    """A run store that cannot be opened, read or written (not SQLite, truncated, damaged, a full disk)."""


def _write_failure(path: Path, exc: sqlite3.Error) -> StoreError | None:
    """A store error that is the disk's, not the store's (full, read-only, I/O): its one line."""
    text = str(exc)
    if isinstance(exc, sqlite3.OperationalError) and any(
            k in text for k in ("disk is full", "disk I/O", "readonly", "unable to open")):
        return StoreError(f"{path}: cannot write ({text}); {DISK_FULL_HINT} (or make the folder writable)")
    return None


def _marks(values: Sized) -> str:
    """``?, ?, …`` for an ``IN (…)`` list of ``values``."""
    return ", ".join("?" * len(values))


class RunStore:
    """Thread-safe access to one run's SQLite store."""

    def __init__(self, run_dir: str | Path) -> None:
        self.run_dir = Path(run_dir)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.path = self.run_dir / "store.sqlite"
        self._lock = threading.RLock()
        if self.path.exists() and not self.path.is_file():
            raise StoreError(f"{self.path}: not a file")
        if not self.path.exists():
            create_database(self.path, SCHEMA)
        self._db = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None)
        try:
            self._db.execute("PRAGMA busy_timeout=30000")
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(SCHEMA)
            check = self._db.execute("PRAGMA quick_check(1)").fetchone()
        except sqlite3.DatabaseError as exc:
            self._db.close()
            raise _write_failure(self.path, exc) or StoreError(
                f"{self.path}: not a readable run store ({exc}); restore it or start another --out") from None
        if check is None or check[0] != "ok":
            self._db.close()
            raise StoreError(f"{self.path}: damaged run store ({check[0] if check else 'no answer'}); "
                             "restore it or start another --out")

    # -- lifecycle -------------------------------------------------------------------------
    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @cached_property
    def audio_dir(self) -> Path:
        """RUN/audio, created on first use."""
        d = self.run_dir / "audio"
        d.mkdir(exist_ok=True)
        return d

    def _exec(self, sql: str, params: Iterable[SqlValue] = ()) -> sqlite3.Cursor:
        with self._lock:
            try:
                return self._db.execute(sql, tuple(params))
            except sqlite3.Error as exc:
                failure = _write_failure(self.path, exc)
                if failure is None:
                    raise
                raise failure from None

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """One transaction: committed, or rolled back (when SQLite has not already rolled it back,
        as it does on a full disk) with a disk failure as one :class:`StoreError` line."""
        with self._lock:
            try:
                self._db.execute("BEGIN")
                yield self._db
                self._db.execute("COMMIT")
            except BaseException as exc:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                if isinstance(exc, sqlite3.Error) and (failure := _write_failure(self.path, exc)) is not None:
                    raise failure from None
                raise

    def _many(self, sql: str, rows: Iterable[tuple[SqlValue, ...]]) -> None:
        with self._transaction() as db:
            db.executemany(sql, rows)

    # -- meta ------------------------------------------------------------------------------
    def set_meta(self, key: str, value: JsonValue) -> None:
        self._exec("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, redact(json.dumps(value, ensure_ascii=False))))

    def get_meta(self, key: str, default: Any = None) -> Any:
        row = self._exec("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return default if row is None else json.loads(row[0])

    # -- samples ---------------------------------------------------------------------------
    def add_samples(self, samples: Iterable[Sample]) -> None:
        self._many(
            "INSERT OR REPLACE INTO samples VALUES (?, ?, ?, ?)",
            ((s.subset, s.id, s.index, s.to_json()) for s in samples),
        )

    def samples(self, subset: str | None = None) -> Iterator[Sample]:
        sql, params = "SELECT record FROM samples", cast(tuple[str, ...], ())
        if subset is not None:
            sql, params = sql + " WHERE subset = ?", (subset,)
        rows = self._exec(sql + " ORDER BY subset, idx", params).fetchall()
        for (rec,) in rows:
            yield Sample.model_validate_json(rec)

    def sample_pages(self, subset: str, size: int = 500) -> Iterator[list[Sample]]:
        """The subset's samples in index order, ``size`` at a time (keyset pagination), so a
        caller holds one page of records, not the whole subset."""
        after: tuple[int, str] = (-(2**62), "")
        while True:
            rows = self._exec(
                "SELECT idx, sample_id, record FROM samples WHERE subset = ? AND (idx, sample_id) > (?, ?)"
                " ORDER BY idx, sample_id LIMIT ?", (subset, *after, size)).fetchall()
            if not rows:
                return
            yield [Sample.model_validate_json(rec) for _, _, rec in rows]
            after = (rows[-1][0], rows[-1][1])

    def count_samples(self, subset: str) -> int:
        return int(self._exec("SELECT COUNT(*) FROM samples WHERE subset = ?", (subset,)).fetchone()[0])

    def subsets(self) -> list[str]:
        return [r[0] for r in self._exec("SELECT DISTINCT subset FROM samples ORDER BY subset").fetchall()]

    # -- replies ---------------------------------------------------------------------------
    def put_reply(self, reply: Reply) -> None:
        self._exec(
            "INSERT OR REPLACE INTO replies VALUES (?, ?, ?, ?)",
            (reply.subset, reply.sample_id, int(reply.failed), redact(reply.to_json())),
        )

    def put_replies(self, replies: Iterable[Reply]) -> None:
        self._many(
            "INSERT OR REPLACE INTO replies VALUES (?, ?, ?, ?)",
            ((r.subset, r.sample_id, int(r.failed), redact(r.to_json())) for r in replies),
        )

    def get_reply(self, subset: str, sample_id: str) -> Reply | None:
        row = self._exec(
            "SELECT record FROM replies WHERE subset = ? AND sample_id = ?", (subset, sample_id)
        ).fetchone()
        return None if row is None else Reply.model_validate_json(row[0])

    def replies(self, subset: str | None = None) -> dict[tuple[str, str], Reply]:
        sql, params = "SELECT record FROM replies", cast(tuple[str, ...], ())
        if subset is not None:
            sql, params = sql + " WHERE subset = ?", (subset,)
        out: dict[tuple[str, str], Reply] = {}
        for (rec,) in self._exec(sql, params).fetchall():
            r = Reply.model_validate_json(rec)
            out[(r.subset, r.sample_id)] = r
        return out

    def replies_of(self, subset: str, sample_ids: Sequence[str]) -> dict[tuple[str, str], Reply]:
        """The replies of these samples of ``subset`` (a page at a time)."""
        rows = self._exec(f"SELECT record FROM replies WHERE subset = ? AND sample_id IN ({_marks(sample_ids)})",
                          (subset, *sample_ids)).fetchall()
        out = (Reply.model_validate_json(rec) for (rec,) in rows)
        return {(r.subset, r.sample_id): r for r in out}

    def reply_states(self, subset: str, sample_ids: Sequence[str]) -> dict[str, bool]:
        """``{sample id: failed?}`` for the samples of ``subset`` that have a reply (no record parsed)."""
        rows = self._exec(f"SELECT sample_id, failed FROM replies WHERE subset = ? AND sample_id IN ({_marks(sample_ids)})",
                          (subset, *sample_ids)).fetchall()
        return {sid: bool(failed) for sid, failed in rows}

    def iter_replies(self, subset: str, batch: int = 500) -> Iterator[Reply]:
        """The replies of ``subset`` one at a time, read ``batch`` rows at a time."""
        cur = self._exec("SELECT record FROM replies WHERE subset = ?", (subset,))
        while True:
            with self._lock:
                rows = cur.fetchmany(batch)
            if not rows:
                return
            for (rec,) in rows:
                yield Reply.model_validate_json(rec)

    def done_reply_keys(self, include_failed: bool = False) -> set[tuple[str, str]]:
        sql = "SELECT subset, sample_id FROM replies" + ("" if include_failed else " WHERE failed = 0")
        return {(a, b) for a, b in self._exec(sql).fetchall()}

    # -- scores ----------------------------------------------------------------------------
    def put_score(self, score: Score, evaluator: str) -> None:
        self._exec(
            "INSERT OR REPLACE INTO scores VALUES (?, ?, ?, ?, ?)",
            (score.subset, score.sample_id, score.name, evaluator, redact(score.to_json())),
        )

    def put_scores(self, scores: Iterable[tuple[Score, str]]) -> None:
        self._many(
            "INSERT OR REPLACE INTO scores VALUES (?, ?, ?, ?, ?)",
            ((s.subset, s.sample_id, s.name, ev, redact(s.to_json())) for s, ev in scores),
        )

    def scores(self, subset: str | None = None, evaluator: str | None = None) -> list[Score]:
        sql, conds, params = "SELECT record FROM scores", [], []
        if subset is not None:
            conds.append("subset = ?")
            params.append(subset)
        if evaluator is not None:
            conds.append("evaluator = ?")
            params.append(evaluator)
        if conds:
            sql += " WHERE " + " AND ".join(conds)
        return [Score.model_validate_json(r[0]) for r in self._exec(sql, params).fetchall()]

    def scores_of(self, subset: str, evaluator: str, sample_ids: Sequence[str]) -> list[Score]:
        """The scores of these samples of ``subset`` under ``evaluator`` (a page at a time)."""
        rows = self._exec(
            f"SELECT record FROM scores WHERE subset = ? AND evaluator = ? AND sample_id IN ({_marks(sample_ids)})",
            (subset, evaluator, *sample_ids)).fetchall()
        return [Score.model_validate_json(rec) for (rec,) in rows]

    def scored_keys(self, subset: str, evaluator: str) -> set[tuple[str, str]]:
        """(sample_id, name) pairs already scored by ``evaluator`` (unscored ones are retried)."""
        rows = self._exec(
            "SELECT sample_id, name, record FROM scores WHERE subset = ? AND evaluator = ?", (subset, evaluator)
        ).fetchall()
        return {(sid, name) for sid, name, rec in rows if json.loads(rec).get("unscored") is None}

    def judge_rubrics(self, judge_id: str) -> dict[str, list[str]]:
        """{subset: rubric ids} that ``judge_id`` was asked (from the scores' judge traces)."""
        rows = self._exec(
            "SELECT DISTINCT subset, COALESCE(json_extract(record, '$.judge.rubric'), "
            "json_extract(record, '$.details.rubric')) FROM scores WHERE instr(evaluator, ?) > 0",
            (f"|judge={judge_id}",)).fetchall()
        out: dict[str, set[str]] = {}
        for subset, ref in rows:
            if ref:
                out.setdefault(subset, set()).add(str(ref).split("@", 1)[0])
        return {k: sorted(v) for k, v in sorted(out.items())}

    def delete_scores(self, subset: str, evaluator: str | None = None) -> None:
        if evaluator is None:
            self._exec("DELETE FROM scores WHERE subset = ?", (subset,))
        else:
            self._exec("DELETE FROM scores WHERE subset = ? AND evaluator = ?", (subset, evaluator))

    # -- release fingerprints (runner/fingerprint.py) ----------------------------------------
    def fingerprints(self) -> dict[tuple[str, str], Fingerprint]:
        rows = self._exec("SELECT subset, sample_id, record FROM fingerprints").fetchall()
        return {(a, b): json.loads(rec) for a, b, rec in rows}

    def put_fingerprints(self, records: dict[tuple[str, str], Fingerprint]) -> None:
        self._many("INSERT OR REPLACE INTO fingerprints VALUES (?, ?, ?)",
                   ((a, b, json.dumps(rec, ensure_ascii=False)) for (a, b), rec in records.items()))

    def forget(self, keys: Sequence[tuple[str, str]]) -> None:
        """Drop the replies and scores of these (subset, sample id) keys, in one transaction."""
        rows = [tuple(k) for k in keys]
        with self._transaction() as db:
            db.executemany("DELETE FROM replies WHERE subset = ? AND sample_id = ?", rows)
            db.executemany("DELETE FROM scores WHERE subset = ? AND sample_id = ?", rows)

    # -- judge accounting ------------------------------------------------------------------
    def log_judge_call(
        self,
        *,
        subset: str | None,
        sample_id: str | None,
        model: str,
        prompt_hash: str,
        cached: bool,
        prompt_tokens: int | None = None,
        completion_tokens: int | None = None,
        seconds: float | None = None,
        error: str | None = None,
    ) -> None:
        self._exec(
            "INSERT INTO judge_calls (subset, sample_id, model, prompt_hash, cached, prompt_tokens,"
            " completion_tokens, seconds, error) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (subset, sample_id, model, prompt_hash, int(cached), prompt_tokens, completion_tokens, seconds,
             None if error is None else redact(error)),
        )

    def judge_usage(self) -> dict[str, JudgeUsage]:
        """The judge ledger per judge model: verdicts requested from the endpoint (``calls``, errors
        included), ``cache_hits``, ``errors``, prompt/completion tokens and seconds."""
        rows = self._exec(
            "SELECT model, COUNT(*) - SUM(cached), SUM(cached), SUM(error IS NOT NULL), SUM(prompt_tokens),"
            " SUM(completion_tokens), SUM(seconds) FROM judge_calls GROUP BY model ORDER BY model"
        ).fetchall()
        return {
            model: JudgeUsage(calls=calls or 0, cache_hits=hits or 0, errors=errors or 0, prompt_tokens=prompt or 0,
                              completion_tokens=completion or 0, seconds=round(seconds or 0.0, 3))
            for model, calls, hits, errors, prompt, completion, seconds in rows
        }

    def counts(self) -> dict[str, int]:
        return {
            t: self._exec(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
            for t in ("samples", "replies", "scores", "judge_calls")
        }

"""Release fingerprints: what each sample of a run was answered and scored against.

A sample's fingerprint is a hash per part (question, reference, history, metadata, audio content),
kept in the run store. Re-running into the run with a release in which some samples changed is
refused (:class:`ReleaseChanged` names them and the changed parts), or with ``redo=True`` exactly
those samples' replies and scores are dropped so the run redoes them. A store made before
fingerprints existed gets them recorded on its next resume. Audio is hashed once per file
version (the hash is reused while the file's size and modification time are unchanged), and its
WAV header is checked then, so a truncated or corrupt query is refused before it is sent.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

from pydantic import JsonValue

from vocalbench.audio import content_hash, wav_header_problem
from vocalbench.data.official import DataError
from vocalbench.errors import InputError
from vocalbench.records import Sample
from vocalbench.runner.store import Fingerprint, RunStore

PARTS = ("question", "reference", "history", "metadata", "audio")
_SHOWN = 5  # changed samples named in the message


class ReleaseChanged(InputError):
    """The release differs from the one the run was made with, in the samples named."""


def _digest(value: JsonValue) -> str:
    return hashlib.sha256(json.dumps(value, ensure_ascii=False, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _audio_sig(path: str | None) -> str:
    """Size and modification time of the sample's audio (``missing`` when there is none)."""
    if not path or not Path(path).is_file():
        return "missing"
    st = Path(path).stat()
    return f"{st.st_size}:{st.st_mtime_ns}"


def fingerprint(sample: Sample, audio_hash: str) -> dict[str, str]:
    """``{part: hash}`` of one sample (see :data:`PARTS`)."""
    return {
        "question": _digest(sample.question),
        "reference": _digest(sample.reference),
        "history": _digest([t.model_dump() for t in sample.history]),
        "metadata": _digest({"category": sample.category, "sub_category": sample.sub_category, **sample.metadata}),
        "audio": audio_hash,
    }


def _audio_hash(sample: Sample, sig: str, old: Fingerprint | None) -> str:
    """The content hash of the sample's audio (reused while its size and time are unchanged); a WAV
    whose header does not match its bytes is a :class:`DataError` here, before any system sees it."""
    if old is not None and old.get("audio_sig") == sig:
        return str(old["parts"]["audio"])
    if sig == "missing" or sample.audio is None:
        return "missing"
    problem = wav_header_problem(sample.audio.path)
    if problem:
        raise DataError(sample.audio.path, problem, qid=sample.id, field="Audio")
    return content_hash(sample.audio.path)[:16]


def sync_release(store: RunStore, samples: Sequence[Sample], *, redo: bool = False) -> list[tuple[str, str]]:
    """Compare ``samples`` with the fingerprints in ``store`` and record theirs; returns the keys of
    the changed samples (whose replies and scores were dropped: ``redo=True``) or raises
    :class:`ReleaseChanged` naming them (``redo=False``)."""
    old = store.fingerprints()
    new: dict[tuple[str, str], Fingerprint] = {}
    changed: dict[tuple[str, str], list[str]] = {}
    for s in samples:
        sig = _audio_sig(s.audio.path if s.audio else None)
        prev = old.get(s.key)
        parts = fingerprint(s, _audio_hash(s, sig, prev))
        new[s.key] = {"parts": parts, "audio_sig": sig}
        if prev is not None and prev["parts"] != parts:
            changed[s.key] = [p for p in PARTS if prev["parts"].get(p) != parts[p]]
    if changed and not redo:
        shown = "; ".join(f"{sub}/{sid} ({', '.join(parts)})" for (sub, sid), parts in list(changed.items())[:_SHOWN])
        more = f" and {len(changed) - _SHOWN} more" if len(changed) > _SHOWN else ""
        raise ReleaseChanged(
            f"{store.run_dir}: the release changed since this run was made: {len(changed)} sample(s) differ: "
            f"{shown}{more}. Use another --out, or --redo-changed to redo exactly those samples' replies and scores")
    if changed:
        store.forget(list(changed))  # a redone reply's audio is rewritten at the same path
    store.put_fingerprints(new)
    return list(changed)

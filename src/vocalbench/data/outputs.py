"""Reading model outputs delivered beside a release: the official output layout and our JSONL.

``official_replies`` reads ``OUTPUTS/json/<subset>.json`` (JSON list or JSONL of
``{question_id|Qid, prediction|Response}``), ``json_asr/`` transcripts and ``wav/`` audio with the
quirks of real releases (``json/instruction.json``, pre-rename ``chat-NNN`` ids mapped by number, the outputs'
own ``answer`` fields ignored); ``jsonl_replies`` reads this project's JSONL (see
``vocalbench import --help``). Both turn records into :class:`~vocalbench.records.Reply` objects
for the given samples; storing them in a run is :mod:`vocalbench.runner.imports`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import JsonValue

from vocalbench import catalog
from vocalbench.errors import validation_message
from vocalbench.files import UnsafePath, inside
from vocalbench.records import AudioRef, ErrorInfo, Reply, Sample, Timings

ID_KEYS = ("question_id", "Qid", "qid", "id")
TEXT_KEYS = ("prediction", "Response", "response", "text")
ASR_KEYS = ("asr_pred", "Response_hyp", "asr_text", "hyp")
_LEGACY_ID = re.compile(r"^(.+?)-(\d+)$")


class OutputFileError(ValueError):
    """A malformed output file; names the file and, for JSONL, the line."""


def read_output_records(path: Path) -> list[dict[str, Any]]:
    """A JSON list or JSONL file of objects; errors name the file (and the line for JSONL)."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise OutputFileError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    stripped = text.lstrip()
    if not stripped:
        return []
    if stripped.startswith("["):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise OutputFileError(f"{path}: malformed JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from exc
        if not isinstance(data, list):
            raise OutputFileError(f"{path}: expected a JSON list")
        records = data
    else:
        records = []
        for lineno, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise OutputFileError(f"{path}: malformed JSON on line {lineno} (column {exc.colno}): {exc.msg}") from exc
    for i, rec in enumerate(records):
        if not isinstance(rec, dict):
            raise OutputFileError(f"{path}: record {i + 1} is a {type(rec).__name__}, expected an object")
    return records


def _first(rec: Mapping[str, JsonValue], keys: tuple[str, ...]) -> JsonValue:
    for k in keys:
        if k in rec:
            return rec[k]
    return None


@dataclass
class ImportStats:
    subsets: dict[str, dict[str, int]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


class _IdMap:
    """Output id -> sample: the exact Qid, else, for a subset's pre-rename ids only (``chat-NNN``
    of single_round), the sample at that number. Any other id matches nothing (it is reported)."""

    def __init__(self, subset: str, samples: list[Sample]) -> None:
        self.legacy = spec.legacy_ids if (spec := catalog.find(subset)) is not None else ()
        self.by_id = {s.id: s for s in samples}
        self.by_index = {s.index: s for s in samples}

    def get(self, oid: str) -> Sample | None:
        if oid in self.by_id:
            return self.by_id[oid]
        m = _LEGACY_ID.match(oid)
        return self.by_index.get(int(m.group(2))) if m and m.group(1) in self.legacy else None


def _find_file(folder: Path, subset: str) -> Path | None:
    for name in catalog.output_files(subset):
        for ext in (".json", ".jsonl"):
            p = folder / f"{name}{ext}"
            if p.exists():
                return p
    return None


def _find_audio(outputs: Path, subset: str, ids: list[str]) -> Path | None:
    wav = outputs / "wav"
    for name in catalog.output_files(subset):
        for i in ids:
            for p in (wav / name / f"{i}.wav", wav / f"{i}.wav"):
                if p.exists():
                    return inside(outputs, p)
    return None


AUDIO_SUFFIXES = (".wav", ".flac", ".mp3", ".ogg", ".opus", ".m4a")


def reply_audio(value: JsonValue, path: Path, outputs: Path) -> Path:
    """A JSONL record's ``audio``: an audio file inside the outputs folder (ValueError otherwise)."""
    if not isinstance(value, str):
        raise ValueError(f"field 'audio': expected a path string, got {type(value).__name__}")
    root = outputs.parent if outputs.is_file() else outputs
    try:
        p = inside(root, path.parent / value)
    except UnsafePath:
        raise ValueError(f"field 'audio': {value} is outside the outputs folder {root.resolve()}") from None
    if p.suffix.lower() not in AUDIO_SUFFIXES:
        raise ValueError(f"field 'audio': {value} is not an audio file ({', '.join(AUDIO_SUFFIXES)})")
    return p


def official_replies(outputs: Path, subset: str, samples: list[Sample], stats: ImportStats) -> list[Reply] | None:
    """Replies for one subset from the official layout; None when the subset has no output file."""
    path = _find_file(outputs / "json", subset)
    if path is None:
        return None
    records = read_output_records(path)
    asr: dict[str, str] = {}
    asr_path = _find_file(outputs / "json_asr", subset)
    if asr_path is not None:
        for rec in read_output_records(asr_path):
            oid, hyp = _first(rec, ID_KEYS), _first(rec, ASR_KEYS)
            if oid is not None and isinstance(hyp, str):
                asr[str(oid)] = hyp
    ids = _IdMap(subset, samples)
    got: dict[str, Reply] = {}
    unknown: list[str] = []
    numbered = [(i, rec, None if (oid := _first(rec, ID_KEYS)) is None else str(oid)) for i, rec in enumerate(records)]
    exact = {oid for _, _, oid in numbered if oid in ids.by_id}
    for i, rec, oid in numbered:
        if oid is None:
            stats.warnings.append(f"{path}: record {i + 1} has no id ({'/'.join(ID_KEYS)}); skipped")
            continue
        sample = ids.get(oid)
        if sample is None:
            unknown.append(oid)
            continue
        if oid != sample.id and sample.id in exact:  # an exact id wins over a mapped one
            stats.warnings.append(f"{path}: {oid} (record {i + 1}) maps onto {sample.id}, which has its own "
                                  "output; skipped")
            continue
        if sample.id in got:
            stats.warnings.append(f"{path}: duplicate output for {sample.id} (record {i + 1}); the last one is kept")
        raw_text = _first(rec, TEXT_KEYS)
        text = None if raw_text is None else str(raw_text)
        audio = _find_audio(outputs, subset, list(dict.fromkeys([sample.id, oid])))
        hyp = asr.get(oid, asr.get(sample.id))
        extra: dict[str, Any] = {"output_file": str(path)}
        if oid != sample.id:
            extra["original_id"] = oid
        error = None
        if not (text or "").strip() and audio is None and not (hyp or "").strip():
            error = ErrorInfo(type="empty_reply", message=f"empty output in {path.name}")
        got[sample.id] = Reply(subset=subset, sample_id=sample.id, text=text,
                               audio=AudioRef(path=str(audio)) if audio else None, error=error,
                               source="imported", asr_text=hyp, extra=extra)
    if unknown:
        shown = ", ".join(unknown[:5]) + (f" and {len(unknown) - 5} more" if len(unknown) > 5 else "")
        stats.warnings.append(f"{path}: {len(unknown)} output record(s) match no {subset} item of the data "
                              f"({shown}); skipped")
    return _complete(subset, samples, got, path)


def _complete(subset: str, samples: list[Sample], got: dict[str, Reply], path: Path) -> list[Reply]:
    out = []
    for s in samples:
        r = got.get(s.id)
        if r is None:
            r = Reply(subset=subset, sample_id=s.id, source="imported",
                      error=ErrorInfo(type="missing_reply", message=f"no output for {s.id} in {path}"))
        out.append(r)
    return out


def _jsonl_files(outputs: Path) -> list[Path]:
    if outputs.is_file():
        return [outputs]
    return sorted(outputs.glob("*.jsonl"))


def jsonl_replies(outputs: Path, by_subset: dict[str, list[Sample]], stats: ImportStats) -> Iterator[tuple[str, list[Reply]]]:
    """Replies per subset from our JSONL format (subsets that appear in the files)."""
    got: dict[str, dict[str, Reply]] = {}
    source: dict[str, Path] = {}
    for path in _jsonl_files(outputs):
        try:
            records = read_output_records(path)
        except OutputFileError as exc:
            stats.errors.append(str(exc))
            continue
        for i, rec in enumerate(records, 1):
            subset, sid = rec.get("subset"), rec.get("id")
            if not isinstance(subset, str) or not isinstance(sid, str):
                stats.errors.append(f"{path}: line {i} field '{'subset' if not isinstance(subset, str) else 'id'}': "
                                    f"expected a string, got {type(subset if not isinstance(subset, str) else sid).__name__}")
                continue
            if subset not in by_subset:
                stats.warnings.append(f"{path}: line {i}: subset {subset!r} not in the data; skipped")
                continue
            if not any(s.id == sid for s in by_subset[subset]):
                stats.warnings.append(f"{path}: line {i}: id {sid!r} not in {subset}; skipped")
                continue
            try:
                got.setdefault(subset, {})[str(sid)] = _jsonl_reply(rec, path, outputs)
            except (TypeError, ValueError) as exc:
                stats.errors.append(f"{path}: line {i} ({subset}/{sid}): {validation_message(exc)}")
            source.setdefault(subset, path)
    for subset, replies in got.items():
        yield subset, _complete(subset, by_subset[subset], replies, source[subset])


def _jsonl_reply(rec: dict[str, Any], path: Path, outputs: Path) -> Reply:
    audio = rec.get("audio")
    ref = None
    if audio:
        ref = AudioRef(path=str(reply_audio(audio, path, outputs)))
    timings = rec.get("timings")
    if timings is not None and not isinstance(timings, dict):
        raise ValueError(f"field 'timings': expected an object of seconds, got {type(timings).__name__}")
    err = rec.get("error")
    error = None if not err else ErrorInfo(type=str(err) if isinstance(err, str) else str(err.get("type", "error")),
                                           message="" if isinstance(err, str) else str(err.get("message", "")))
    return Reply(subset=rec["subset"], sample_id=rec["id"], text=rec.get("text"), audio=ref,
                 audio_duration=rec.get("audio_duration"),
                 timings=Timings(origin=f"imported:{path.name}", **timings) if timings else None,
                 error=error, source="imported", asr_text=rec.get("asr_text"),
                 extra={"output_file": str(path)})

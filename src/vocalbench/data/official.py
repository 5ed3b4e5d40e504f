"""The official release layout: ``json/<subset>.json`` (a JSON list per subset) + ``audio/``.

Every record becomes a :class:`~vocalbench.records.Sample` keyed by (lang, subset, Qid);
``Sample.index`` is the item number of the Qid (``reasoning-152`` -> 152; robust conditions carry their
base question's number), which equals the list position in the official releases; scorers choose
rules by it (reasoning ranges, paralinguistic instruction types), so our own sets built in the
official layout keep those rules by numbering their Qids. Without a trailing number the list
position is used. ``Audio`` is resolved relative to the release's ``audio/``
folder exactly as written (zh robust_clean points into ``single_round/``, zh knowledge into
``knowledge/{chinese,foreign,general}/``). Audio is not opened at load time: durations are read
lazily by whoever needs them (:func:`audio_duration`).

The field tables below are the one description of the official schema; ``validate`` checks a
release against them and ``to_sample`` maps a record with them.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, cast

from pydantic import JsonValue

from vocalbench import catalog
from vocalbench.errors import InputError
from vocalbench.files import id_problem
from vocalbench.records import EMOTIONS_5, AudioRef, Sample, Turn


def _zh_only() -> frozenset[str]:
    return frozenset(s.name for s in catalog.specs("zh") if "en" not in s.items)


def _required(subset: str) -> tuple[str, ...]:
    spec = catalog.find(subset)
    return spec.required if spec is not None else ()


NUMBER = (int, float)


@dataclass(frozen=True)
class FieldSpec:
    """Type of one official field; ``nullable`` fields may hold null without being an error."""

    types: tuple[type, ...]
    nullable: bool = False

    @property
    def type_name(self) -> str:
        names = {str: "string", int: "number", float: "number", list: "list", dict: "object"}
        return " or ".join(dict.fromkeys(names.get(t, t.__name__) for t in self.types))


STR = FieldSpec((str,))
FIELDS: dict[str, FieldSpec] = {
    "Set": STR, "Qid": STR, "Audio": STR, "Question": STR, "Answer": STR, "Category": STR,
    "Sub-category": FieldSpec((str,), nullable=True), "Topic": STR, "Source": STR,
    "Context": FieldSpec((list,)), "Question_emo": STR, "Score": FieldSpec((list,)), "Text_emo": STR,
    "Level": STR, "Question_zh": FieldSpec((str,), nullable=True), "Question_en": STR, "Answer_zh": STR,
    "Answer_en": STR, "Question_prmopt": STR, "Prompt_prob": FieldSpec(NUMBER), "Question_prob": FieldSpec(NUMBER),
    "Rate_text": STR,
}

# Fields every record carries (a subset declares the others it needs: SubsetSpec.required).
_ALWAYS = ("Qid", "Audio", "Question")

# Mapped to Sample attributes; everything else goes to Sample.metadata under its official name.
_MAPPED = frozenset({"Qid", "Question", "Answer", "Category", "Sub-category", "Context"})


class DataError(InputError):
    """A problem in a release; the message names the file, the Qid (when known) and the field."""

    def __init__(self, file: str | Path, problem: str, qid: str | None = None, field: str | None = None) -> None:
        where = str(file) + (f" [{qid}]" if qid else "") + (f" field '{field}'" if field else "")
        super().__init__(f"{where}: {problem}")
        self.file, self.qid, self.field, self.problem = str(file), qid, field, problem


def json_dir(root: Path) -> Path:
    return root / "json"


def audio_dir(root: Path) -> Path:
    return root / "audio"


def is_release(path: Path) -> bool:
    """True for a folder in the official layout (has ``json/*.json``)."""
    return (path / "json").is_dir() and any((path / "json").glob("*.json"))


def subset_files(root: Path) -> dict[str, Path]:
    """``{subset: file}`` for every ``json/*.json`` in the release (known or not)."""
    return {p.stem: p for p in sorted(json_dir(root).glob("*.json"))}


def subset_problem(subset: str, lang: str) -> str | None:
    """Why ``json/<subset>.json`` is not a subset file of ``lang`` (None when it is one): run and
    validate refuse an unknown file alike (its name could be anything, ``..`` too)."""
    known = catalog.names(lang)
    if subset in known:
        return None
    return f"unknown subset file {subset + '.json'!r} for lang {lang} (known: {', '.join(known)}); remove or rename it"


def text_problem(value: JsonValue) -> str | None:
    """Why some text inside ``value`` (a record field, its lists and objects) cannot be written as
    UTF-8 (a lone surrogate such as ``\\ud800`` from a JSON escape); None when all of it can."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            return f"text that is not valid Unicode ({value[exc.start]!r} at character {exc.start})"
        return None
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    return next((p for v in items if (p := text_problem(v)) is not None), None)


def detect_lang(root: Path) -> str:
    """en/zh from the folder name, the zh-only subset files, or CJK text in the first question."""
    if root.name in ("en", "zh"):
        return root.name
    files = subset_files(root)
    if _zh_only() & set(files):
        return "zh"
    for path in files.values():
        try:
            records = read_records(path)
        except DataError:
            continue
        if records and isinstance(records[0], dict):
            q = str(records[0].get("Question", ""))
            return "zh" if re.search(r"[\u4e00-\u9fff]", q) else "en"
    return "en"


def read_records(path: Path) -> list[Any]:
    """A subset file's JSON list; malformed JSON raises :class:`DataError` with line and column."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(path, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataError(path, f"malformed JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from exc
    if not isinstance(data, list):
        raise DataError(path, f"expected a JSON list of records, got {type(data).__name__}")
    return data


def qid_number(qid: str, default: int) -> int:
    """The trailing item number of a Qid (``instruction-050`` -> 50), or ``default``."""
    m = re.search(r"-(\d+)$", qid)
    return int(m.group(1)) if m else default


def to_sample(record: dict[str, Any], *, subset: str, lang: str, index: int, root: Path) -> Sample:
    """Map one official record to a Sample (assumes a record that passed the type checks)."""
    history = [Turn(role=t["from"], text=t["value"]) for t in record.get("Context") or []]
    metadata = {k: v for k, v in record.items() if k not in _MAPPED}
    rel = record["Audio"]
    return Sample(
        id=record["Qid"],
        subset=subset,
        lang=lang,  # type: ignore[arg-type]
        index=qid_number(record["Qid"], default=index),
        audio=AudioRef(path=str(audio_dir(root) / rel)),
        question=record.get("Question") or "",
        reference=record.get("Answer"),
        history=history,
        category=record.get("Category"),
        sub_category=record.get("Sub-category"),
        metadata=metadata,
    )


def check_record(record: JsonValue, *, subset: str, index: int) -> list[tuple[str | None, str | None, str]]:
    """Problems of one record as (qid, field, message); empty when the record is usable."""
    if not isinstance(record, dict):
        return [(None, None, f"item {index} is a {type(record).__name__}, expected an object")]
    given = record.get("Qid")
    qid = given if isinstance(given, str) and not id_problem(given) else None
    label = qid or f"item {index}"
    problems: list[tuple[str | None, str | None, str]] = []
    for name in _ALWAYS + _required(subset):
        if name not in record:
            problems.append((label, name, "missing required field"))
        elif record[name] is None:
            problems.append((label, name, "required field is null"))
    for name, value in record.items():
        if (bad := text_problem(name) or text_problem(value)) is not None:
            problems.append((label, name if text_problem(name) is None else ascii(name), bad))
            continue
        spec = FIELDS.get(name)
        if spec is None:
            continue  # informational fields of other releases are kept in metadata unchecked
        if value is None:
            if not spec.nullable and name not in _ALWAYS + _required(subset):
                problems.append((label, name, f"wrong type: expected {spec.type_name}, got null"))
            continue  # nullable, or already reported as a null required field
        if isinstance(value, bool) or not isinstance(value, spec.types):
            problems.append((label, name, f"wrong type: expected {spec.type_name}, got {type(value).__name__}"))
            continue
        value = cast(Any, value)
        if name == "Context":
            for j, turn in enumerate(value):
                if not (isinstance(turn, dict) and turn.get("from") in ("user", "assistant")
                        and isinstance(turn.get("value"), str)):
                    problems.append((label, name, f"turn {j} must be {{from: user|assistant, value: string}}"))
        elif name == "Score":
            if len(value) != 5 or not all(isinstance(x, NUMBER) and not isinstance(x, bool) and 1 <= x <= 5
                                          for x in value):
                problems.append((label, name, "expected 5 ratings in 1..5 for [angry, happy, neutral, sad, surprised]"))
        elif name == "Question_emo" and value not in EMOTIONS_5:
            problems.append((label, name, f"unknown emotion '{value}' (expected one of {', '.join(EMOTIONS_5)})"))
        elif name == "Qid" and (problem := id_problem(value)):
            problems.append((None, name, problem))
        elif name == "Audio" and (value.startswith("/") or ".." in Path(value).parts):
            problems.append((label, name, f"audio path '{value}' must be relative to audio/ and stay inside it"))
    return problems


def load_subset(root: Path, subset: str, lang: str) -> list[Sample]:
    """All samples of one subset file; raises :class:`DataError` at the first unusable record
    (``vocalbench validate`` lists all problems instead)."""
    path = json_dir(root) / f"{subset}.json"
    if not path.exists():
        raise DataError(path, f"no such subset file (available: {', '.join(subset_files(root)) or 'none'})")
    records = read_records(path)
    if not records:
        raise DataError(path, "no records (an empty list)")
    root = root.resolve()  # sample audio paths stay valid from any working directory
    samples: list[Sample] = []
    seen: dict[str, int] = {}
    for i, rec in enumerate(records):
        problems = check_record(rec, subset=subset, index=i)
        if problems:
            qid, field, msg = problems[0]
            more = f" (+{len(problems) - 1} more; run 'vocalbench validate')" if len(problems) > 1 else ""
            raise DataError(path, msg + more, qid=qid, field=field)
        qid = rec["Qid"]
        if qid in seen:
            raise DataError(path, f"duplicate Qid (also item {seen[qid]})", qid=qid, field="Qid")
        seen[qid] = i
        samples.append(to_sample(rec, subset=subset, lang=lang, index=i, root=root))
    return samples


@lru_cache(maxsize=65536)
def _duration(path: str) -> float:
    from vocalbench import audio

    return audio.duration(path)


def audio_duration(path: str) -> float:
    """Duration in seconds of an audio file, read on first use and memoised."""
    return _duration(str(path))

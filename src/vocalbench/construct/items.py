"""Text items (the input of a build) and the official layout they are written in.

An item is one JSON object per line (schema in docs/build.md). Most items become one spoken
record; a ``cs_knowledge`` item also yields its English control record in ``cs_knowledge_en``
(same Qid), and a ``dialect`` item its Mandarin counterpart in ``dialect_mandarin`` (same Qid).
An official ``json/`` folder can be read as items too, so a release can be rebuilt with other voices.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, field_validator, model_validator

from vocalbench import catalog
from vocalbench.files import id_problem
from vocalbench.records import EMOTIONS_5


class HistoryTurn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    role: Literal["user", "assistant"]
    text: str


class Item(BaseModel):
    """One text item. Only ``subset``, ``lang`` and ``question`` are required everywhere."""

    model_config = ConfigDict(extra="forbid")

    subset: str
    lang: Literal["en", "zh"]
    question: str = Field(min_length=1)  # the text that is spoken (multi-round: the final user turn)
    id: str | None = None  # the Qid; assigned by position when absent
    answer: str | None = None
    category: str | None = None
    sub_category: str | None = None
    topic: str | None = None
    source: str | None = None
    history: list[HistoryTurn] = Field(default_factory=list)  # multi-round context, stays text
    emotion: str | None = None  # the emotion the query is spoken with (emotion: Question_emo)
    ratings: list[int] | None = None  # emotion: Score, appropriateness of replies in EMOTIONS_5 order
    text_emo: str | None = None  # instruction following: Text_emo (emotion the reply must carry)
    level: str | None = None  # robust condition (normally produced by ``build perturb``)
    question_zh: str | None = None  # code switching: monolingual forms of the question and answer
    question_en: str | None = None
    answer_zh: str | None = None
    answer_en: str | None = None
    control_question: str | None = None  # cs_knowledge: the English control's question when it is not question_en
    control_answer: str | None = None  # ... and its answer when it is not answer_en
    dialect: str | None = None  # dialect subset: e.g. "Sichuanese", "Cantonese"
    question_dialect: str | None = None  # the query written in the dialect (spoken by dialect TTS)
    speaker_prompt: str | None = None  # a reference recording for zero-shot TTS (path)
    speaker_prompt_text: str | None = None
    audio: str | None = None  # official input only: the release's Audio path, kept when rebuilding
    extra: dict[str, JsonValue] = Field(default_factory=dict)  # other official fields, passed through

    @field_validator("id")
    @classmethod
    def _safe_id(cls, v: str | None) -> str | None:
        problem = id_problem(v) if v is not None else None
        if problem:
            raise ValueError(problem)
        return v

    @field_validator("emotion", "text_emo")
    @classmethod
    def _emotion(cls, v: str | None) -> str | None:
        if v is not None and v not in EMOTIONS_5:
            raise ValueError(f"emotion must be one of {', '.join(EMOTIONS_5)}, got '{v}'")
        return v

    @field_validator("ratings")
    @classmethod
    def _ratings(cls, v: list[int] | None) -> list[int] | None:
        if v is not None and (len(v) != 5 or not all(1 <= x <= 5 for x in v)):
            raise ValueError("ratings must be 5 integers in 1..5 for [angry, happy, neutral, sad, surprised]")
        return v

    @model_validator(mode="after")
    def _subset_fields(self) -> Item:
        spec = catalog.find(self.subset)
        if spec is None or spec.perturbed:  # a perturbed subset is made by ``build perturb``, not from items
            return self
        need = spec.item_fields + tuple(ITEM_FIELDS[f] for f in spec.required if f in ITEM_FIELDS)
        missing = [f for f in need if not getattr(self, f)]
        if missing:
            raise ValueError(f"subset {self.subset} needs field(s): {', '.join(missing)}")
        if self.lang not in spec.items:
            raise ValueError(f"{self.subset} items are {' or '.join(spec.items)} only (lang {self.lang})")
        return self

    def content_hash(self) -> str:
        """Hash of the set fields only, so adding optional fields to the schema keeps old hashes."""
        body = json.dumps(self.model_dump(exclude_defaults=True), ensure_ascii=False, sort_keys=True)
        return hashlib.sha256(body.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Utterance:
    """One spoken record an item produces."""

    role: str  # main | control | mandarin
    subset: str
    text: str  # what is synthesised and what the transcript is compared with
    tts_lang: str
    asr_lang: str | None  # None: auto-detect (code-switched audio)
    compare: str  # en | zh | mixed
    instruct: str | None = None  # a style/dialect instruction for TTS that takes one


def has_latin(text: str) -> bool:
    return any("a" <= ch.lower() <= "z" for ch in text)


def is_dialect(subset: str) -> bool:
    """Whether a subset's queries are spoken in the item's dialect (its declaration)."""
    spec = catalog.find(subset)
    return spec is not None and spec.dialect


def spoken_with_emotion(subset: str) -> bool:
    """Whether a subset's queries are spoken with the item's emotion (its records carry ``Question_emo``,
    which the emotion gate checks)."""
    spec = catalog.find(subset)
    return spec is not None and "Question_emo" in spec.required


def partner(subset: str) -> str | None:
    """The subset built together with ``subset``: each item also gives a record of its control under
    the same Qid (its English control, or the dialect's Mandarin twin), unless the control is the
    base of a perturbed subset."""
    spec = catalog.find(subset)
    return spec.control if spec is not None and spec.control and not spec.perturbed else None


def utterances(item: Item) -> list[Utterance]:
    """The spoken records of an item (see the module doc), as its subset's declaration says."""
    spec = catalog.find(item.subset)
    lang = item.lang
    if is_dialect(item.subset):
        spoken = item.question_dialect or item.question
        main = Utterance("main", item.subset, spoken, lang, lang, lang, instruct=f"用{item.dialect}说这句话")
    elif spec is not None and spec.mixed_language:
        main = Utterance("main", item.subset, item.question, lang, None, "mixed")
    elif spec is not None and spec.spoken:
        main = Utterance("main", item.subset, item.question, spec.spoken, spec.spoken, spec.spoken)
    else:
        instruct = f"Speak in a {item.emotion} tone." if item.emotion and item.emotion != "neutral" else None
        mixed = lang == "zh" and has_latin(item.question)
        asr = None if mixed else lang
        main = Utterance("main", item.subset, item.question, lang, asr, "mixed" if mixed else lang, instruct=instruct)
    twin = partner(item.subset)
    if twin is None:
        return [main]
    if is_dialect(item.subset):  # the same question, spoken plainly
        return [main, Utterance("mandarin", twin, item.question, lang, lang, lang)]
    spoken = catalog.get(twin).spoken or lang  # its control in another language
    return [main, Utterance("control", twin, item.control_question or item.question_en or "", spoken, spoken, spoken)]


# ----------------------------------------------------------------------------- official layout

def layout(lang: str, subset: str) -> catalog.Layout:
    """Where a subset's records live in the official layout of ``lang`` (its declaration; defaults
    for an undeclared subset)."""
    spec = catalog.find(subset)
    return spec.layout(lang) if spec is not None else catalog.Layout(subset, 3, subset, subset)


def qid_for(lang: str, subset: str, n: int) -> str:
    where = layout(lang, subset)
    return f"{where.qid}-{n:0{where.digits}d}"


def audio_rel(lang: str, subset: str, qid: str) -> str:
    """Audio path (relative to ``audio/``) of a Qid: the folder plus the Qid's number."""
    folder = layout(lang, subset).audio
    tail = qid.rsplit("-", 1)[-1]
    name = tail if tail.isdigit() else qid.replace("/", "_")
    return f"{folder}/{name}.wav"


def to_record(item: Item, utt: Utterance, qid: str, audio_path: str) -> dict[str, JsonValue]:
    """The official JSON record of one utterance of an item."""
    rec: dict[str, JsonValue] = {"Set": layout(item.lang, utt.subset).set_name, "Qid": qid, "Audio": audio_path}
    if utt.role == "control":  # cs_knowledge_en: the English question and answer
        rec.update({"Question": item.control_question or item.question_en,
                    "Answer": item.control_answer or item.answer_en})
        if item.category:
            rec["Category"] = item.category
        return rec
    if utt.role == "mandarin":
        rec.update({"Question": item.question, "Answer": item.answer, "Dialect": item.dialect,
                    "Voicing": "mandarin"})
        if item.category:
            rec["Category"] = item.category
        return rec
    rec["Question"] = item.question
    if item.history:
        rec["Context"] = [{"from": t.role, "value": t.text} for t in item.history]
    required = spec.required if (spec := catalog.find(item.subset)) is not None else ()
    if "Answer_zh" in required:  # code-switched: the monolingual forms of the question and answer
        rec.update({"Question_zh": item.question_zh, "Question_en": item.question_en,
                    "Answer_zh": item.answer_zh, "Answer_en": item.answer_en})
    elif item.answer is not None:
        rec["Answer"] = item.answer
    for key, value in (("Category", item.category), ("Sub-category", item.sub_category), ("Topic", item.topic),
                       ("Source", item.source), ("Question_emo", item.emotion if spoken_with_emotion(item.subset) else None),
                       ("Score", item.ratings), ("Text_emo", item.text_emo), ("Level", item.level),
                       ("Dialect", item.dialect), ("Question_dialect", item.question_dialect)):
        if value is not None:
            rec[key] = [*value] if isinstance(value, list) else value
    for key, official in item.extra.items():
        rec.setdefault(key, official)
    return rec


# ----------------------------------------------------------------------------- reading items


class ItemError(ValueError):
    """A bad items file; the message names the file and line."""


def brief(exc: Exception) -> str:
    """One line per problem of a pydantic validation error ("field: message")."""
    from pydantic import ValidationError

    if not isinstance(exc, ValidationError):
        return str(exc)
    parts = []
    for err in exc.errors():
        where = ".".join(str(x) for x in err.get("loc", ()))
        msg = str(err.get("msg", "")).removeprefix("Value error, ")
        parts.append(f"{where}: {msg}" if where else msg)
    return "; ".join(parts)


def read_jsonl(path: str | Path, lang: str | None = None) -> list[Item]:
    """Items from a JSONL file (one object per line; ``#`` lines and blank lines are skipped)."""
    p = Path(path)
    items: list[Item] = []
    for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            body = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ItemError(f"{p}:{n}: malformed JSON ({exc.msg})") from exc
        if lang and "lang" not in body:
            body["lang"] = lang
        try:
            items.append(Item.model_validate(body))
        except Exception as exc:
            raise ItemError(f"{p}:{n}: {brief(exc)}") from exc
    return items


_OFFICIAL_MAP = {"Question": "question", "Answer": "answer", "Category": "category", "Sub-category": "sub_category",
                 "Topic": "topic", "Source": "source", "Text_emo": "text_emo", "Level": "level",
                 "Question_zh": "question_zh", "Question_en": "question_en", "Answer_zh": "answer_zh",
                 "Answer_en": "answer_en", "Question_emo": "emotion", "Score": "ratings", "Qid": "id",
                 "Audio": "audio", "Dialect": "dialect", "Question_dialect": "question_dialect"}
# official field -> the item field a subset's ``required`` fields need (Context becomes the history)
ITEM_FIELDS = {**{k: v for k, v in _OFFICIAL_MAP.items() if k not in ("Qid", "Audio")}, "Context": "history"}
_DROP = {"Set"}


def read_official(folder: str | Path, lang: str, subsets: list[str] | None = None,
                  limit: int | None = None) -> list[Item]:
    """Items from an official ``json/`` folder (or a release root holding one).

    Records of a subset built together with another (:func:`partner`: cs_knowledge_en,
    dialect_mandarin) whose Qid has a record there are rebuilt from it; a perturbed subset (robust)
    is made by ``build perturb`` and is skipped here.
    """
    root = Path(folder)
    jdir = root / "json" if (root / "json").is_dir() else root
    files = {p.stem: p for p in sorted(jdir.glob("*.json"))}
    if not files:
        raise ItemError(f"{jdir}: no <subset>.json files")
    wanted = [s for s in (subsets or list(files)) if s in files]
    base_of = {twin: name for name in files if (twin := partner(name)) is not None}
    partners: dict[str, set[str]] = {}
    controls: dict[str, dict[str, Any]] = {}
    items: list[Item] = []
    for subset in wanted:
        spec = catalog.find(subset)
        if spec is not None and spec.perturbed:
            continue
        records = json.loads(files[subset].read_text(encoding="utf-8"))
        if base_of.get(subset) in wanted:
            base = json.loads(files[base_of[subset]].read_text(encoding="utf-8"))
            partners[subset] = {r["Qid"] for r in base}  # rebuilt from the partner, limited or not
        twin = partner(subset)
        english_control = twin in files and not is_dialect(subset)
        taken = 0
        for n, rec in enumerate(records):
            if subset in partners and rec.get("Qid") in partners[subset]:
                continue
            if limit is not None and taken >= limit:
                break
            body: dict[str, Any] = {"subset": subset, "lang": lang, "extra": {}}
            for key, value in rec.items():
                if key in _DROP:
                    continue
                if key == "Context":
                    body["history"] = [{"role": t["from"], "text": t["value"]} for t in value or []]
                elif key in _OFFICIAL_MAP:
                    if value is not None:
                        body[_OFFICIAL_MAP[key]] = value
                else:
                    body["extra"][key] = value
            if not body.get("question_zh"):
                body.pop("question_zh", None)
            if english_control and twin is not None:
                control = controls.setdefault(subset, {r["Qid"]: r for r in json.loads(
                    files[twin].read_text(encoding="utf-8"))}).get(rec.get("Qid"))
                if control and control.get("Question") != rec.get("Question_en"):
                    body["control_question"] = control.get("Question")
                if control and control.get("Answer") != rec.get("Answer_en"):
                    body["control_answer"] = control.get("Answer")
            try:
                items.append(Item.model_validate(body))
            except Exception as exc:
                raise ItemError(f"{files[subset]} item {n} ({rec.get('Qid')}): {brief(exc)}") from exc
            taken += 1
    return items


def read_items(source: str | Path, lang: str | None = None, subsets: list[str] | None = None,
               limit: int | None = None) -> list[Item]:
    """Items from a JSONL file or an official folder; ``lang`` filters (and fills a missing ``lang``)."""
    p = Path(source)
    if not p.exists():
        raise ItemError(f"{p}: no such items file or folder")
    if p.is_dir():
        if lang is None:
            from vocalbench.data.official import detect_lang

            lang = detect_lang(p)
        items = read_official(p, lang, subsets, limit)
    else:
        items = read_jsonl(p, lang)
        if subsets:
            items = [i for i in items if i.subset in subsets]
    if lang:
        items = [i for i in items if i.lang == lang]
    return items

"""Per-item results of a run as rows (``vocalbench export``): one row per (subset, sample) with
the question, reference, reply text, transcript, every named per-item score, unscored reasons,
the system error, the judge verdicts and the reply timings. The schema is in docs/scoring.md
("Per-item export"); JSONL keeps the nested fields, CSV flattens them.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Iterator
from typing import Literal, NotRequired, TypedDict

from pydantic import JsonValue

from vocalbench.catalog import specs
from vocalbench.records import Reply, Sample, Score
from vocalbench.report.runs import RunData

CLARITY = "clarity"  # the single-round acoustic scorer's clarity score (% value, dist/len details)
FixedKey = Literal["lang", "subset", "id", "question", "reference", "reply_text", "transcript", "system_error"]
FIXED: tuple[FixedKey, ...] = ("lang", "subset", "id", "question", "reference", "reply_text", "transcript",
                               "system_error")
NESTED = ("scores", "unscored", "judge", "timings")
FORMULA = ("=", "+", "-", "@", "\t", "\r")  # a CSV cell starting so is a formula to a spreadsheet


Cell = str | float | None  # one CSV cell


class ExportTimings(TypedDict):
    """A reply's timings in an export row (harness clock, seconds from its origin)."""

    origin: str
    fcl_ms: float | None
    first_text: float | None
    first_audio: float | None
    last_chunk: float | None
    audio_duration: float | None


class ExportVerdict(TypedDict):
    """A judged score in an export row: who decided it and on which rubric."""

    model: str | None
    rubric: JsonValue
    verdict: float | None
    cached: bool
    decided_by: NotRequired[dict[str, JsonValue]]


class ExportRow(TypedDict):
    """One (subset, sample) of ``vocalbench export`` (docs/scoring.md, "Per-item export")."""

    lang: str
    subset: str
    id: str
    question: str | None
    reference: str | None
    reply_text: str | None
    transcript: str | None
    system_error: str | None
    scores: dict[str, float | None]
    unscored: dict[str, str]
    judge: dict[str, ExportVerdict]
    timings: ExportTimings | None


def _clarity_name(lang: str) -> str:
    return "per" if lang == "zh" else "wer"


def _value(name: str, sc: Score, lang: str) -> tuple[str, float | None]:
    """(export name, value): the acoustic clarity becomes ``wer``/``per`` as a fraction dist/len."""
    if name == CLARITY:
        dist, length = sc.details.get("dist"), sc.details.get("len")
        if isinstance(dist, (int, float)) and isinstance(length, (int, float)) and sc.value is not None:
            return _clarity_name(lang), dist / length if length else 0.0
        return _clarity_name(lang), None if sc.value is None else sc.value / 100
    return name, sc.value


def _transcript(reply: Reply | None, named: dict[str, Score]) -> str | None:
    if reply is not None and reply.asr_text is not None:
        return reply.asr_text
    return next((str(sc.details["hyp"]) for sc in named.values() if isinstance(sc.details.get("hyp"), str)), None)


def _timings(reply: Reply | None) -> ExportTimings | None:
    if reply is None or reply.timings is None:
        return None
    t = reply.timings
    return {"origin": t.origin, "fcl_ms": t.fcl_ms, "first_text": t.first_text, "first_audio": t.first_audio,
            "last_chunk": t.last_chunk, "audio_duration": reply.audio_duration}


def row(sample: Sample, reply: Reply | None, named: dict[str, Score], lang: str) -> ExportRow:
    """One export row (see the module docstring)."""
    scores: dict[str, float | None] = {}
    unscored: dict[str, str] = {}
    judge: dict[str, ExportVerdict] = {}
    system_error = reply.error.type if reply is not None and reply.error is not None else None
    for name, sc in sorted(named.items()):
        key, value = _value(name, sc, lang)
        scores[key] = value
        if sc.unscored:
            unscored[key] = sc.unscored
        system_error = system_error or sc.system_error
        if sc.judge is not None or sc.decided_by is not None:  # judged: by the model, a grader or a rule
            judge[key] = {"model": sc.judge.model if sc.judge else None,
                          "rubric": sc.judge.rubric if sc.judge else sc.details.get("rubric"), "verdict": value,
                          "cached": bool(sc.judge and sc.judge.cached)}
            if sc.decided_by is not None:
                judge[key]["decided_by"] = sc.decided_by.model_dump(exclude_none=True)
    return {"lang": lang, "subset": sample.subset, "id": sample.id, "question": sample.question,
            "reference": sample.reference, "reply_text": None if reply is None else reply.text,
            "transcript": _transcript(reply, named), "system_error": system_error, "scores": scores,
            "unscored": unscored, "judge": judge, "timings": _timings(reply)}


def rows(run: RunData, subsets: list[str] | None = None) -> Iterator[ExportRow]:
    """Every (subset, sample) of the run in the catalog's subset order, samples by index."""
    order = {s.name: i for i, s in enumerate(specs())}
    samples = sorted(run.samples.values(), key=lambda s: (order.get(s.subset, len(order)), s.subset, s.index))
    for s in samples:
        if subsets and s.subset not in subsets:
            continue
        key = (s.subset, s.id)
        yield row(s, run.replies.get(key), run.scores.get(key, {}), run.lang)


def to_jsonl(data: Iterable[ExportRow]) -> Iterator[str]:
    """JSON lines (UTF-8 text kept as is)."""
    for r in data:
        yield json.dumps(r, ensure_ascii=False) + "\n"


def cell(value: Cell) -> Cell:
    """A CSV cell: text a spreadsheet would read as a formula (starting with ``=``, ``+``, ``-``,
    ``@``, tab or carriage return) gets a leading ``'`` (OWASP's CSV injection advice); numbers as they are."""
    if isinstance(value, str) and value.startswith(FORMULA):
        return "'" + value
    return value


def to_csv(data: list[ExportRow]) -> str:
    """CSV: the fixed columns, one ``scores.<name>`` column per score name, the unscored reasons,
    judge verdicts and timings as JSON text; every text cell through :func:`cell`."""
    names = sorted({n for r in data for n in r["scores"]})
    header = [*FIXED, *(f"scores.{n}" for n in names), "unscored", "judge", "timings"]
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(header)
    for r in data:
        w.writerow(map(cell, [*("" if r[k] is None else r[k] for k in FIXED),
                              *("" if r["scores"].get(n) is None else r["scores"][n] for n in names),
                              *(json.dumps(r[k], ensure_ascii=False) if r[k] else ""
                                for k in ("unscored", "judge", "timings"))]))
    return out.getvalue()

"""The labelled judge calibration set that ships with vocalbench (``set.jsonl``).

Each line is one judge question with its reviewed label::

    {"id": "en-safety_en-safety-012-0231", "rubric": "safety_en", "family": "safety_en", "lang": "en",
     "split": "dev" | "test", "fields": {...the rubric's template fields...},
     "label": 0 | 1 (binary, in the rubric's own yes/no sense) | 1..5 (scale),
     "reason": "<one line>", "qid": "safety-012", "reply_by": "llama-omni (official VocalBench outputs)",
     "label_by": "reviewed label"}

Labels follow the official VocalBench v2 judge criteria, assigned by careful item-by-item review
(not a human rater study; see NOTICE.md and docs/judge.md). The split is fixed by item: fit
decision rules on ``dev`` only, report on ``test``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, Literal

SPLITS = ("dev", "test")


@dataclass(frozen=True)
class CalibrationItem:
    id: str
    rubric: str
    family: str
    lang: str
    split: Literal["dev", "test"]
    fields: dict[str, str]
    label: float
    reason: str
    qid: str
    reply_by: str
    source: str = ""  # the reply's system, short: llama-omni, qwen2.5-1.5b, qwen2.5-0.5b, authored, ...
    subset: str = ""
    meta: dict[str, str] = field(default_factory=dict)  # what the scorer knows beside the fields (the type)
    stress: str = ""  # a hand-written stress reply: padded, off_topic, parroting, short_excellent, clashing_tone


def load_items(split: str | None = None, rubrics: list[str] | None = None) -> list[CalibrationItem]:
    """Items of the shipped set, optionally one split and only the given rubric ids or families."""
    if split is not None and split not in SPLITS + ("all",):
        raise ValueError(f"unknown split '{split}' (expected dev, test or all)")
    items = parse_items(resources.files(__name__).joinpath("set.jsonl").read_text("utf-8"))
    if split not in (None, "all"):
        items = [i for i in items if i.split == split]
    if rubrics:
        wanted = set(rubrics)
        known = {i.rubric for i in items} | {i.family for i in items}
        unknown = sorted(wanted - known)
        if unknown:
            raise ValueError(f"no calibration items for rubric(s) {', '.join(unknown)} "
                             f"(known: {', '.join(sorted(known))})")
        items = [i for i in items if i.rubric in wanted or i.family in wanted]
    return items


def parse_items(text: str, source: str = "vocalbench/judge/calibration/set.jsonl") -> list[CalibrationItem]:
    """The items of a set file's text (ValueError naming ``source`` and the line)."""
    items: list[CalibrationItem] = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row: dict[str, Any] = json.loads(line)
            item = CalibrationItem(id=row["id"], rubric=row["rubric"], family=row["family"], lang=row["lang"],
                                   split=row["split"], fields=dict(row["fields"]), label=float(row["label"]),
                                   reason=row["reason"], qid=row["qid"], reply_by=row["reply_by"],
                                   source=row.get("source", ""), subset=row.get("subset", ""),
                                   meta=dict(row.get("meta", {})), stress=row.get("stress", ""))
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"{source} line {n}: {type(exc).__name__}: {exc}") from None
        items.append(item)
    return items


STRESS_KINDS = ("padded", "off_topic", "parroting", "short_excellent", "clashing_tone")
_REQUIRED = {"id": str, "rubric": str, "family": str, "lang": str, "split": str, "subset": str, "qid": str,
             "fields": dict, "meta": dict, "reason": str, "source": str, "stress": str, "reply_by": str,
             "label_by": str}


def check_stress_row(row: Any, where: str, known: dict[str, CalibrationItem]) -> None:
    """Raise ValueError naming ``where`` (file:line), the item and the field when ``row`` is not a
    valid labelled stress reply: the set's schema plus ``stress``, on a question already in the set
    (``known``: an item of each question by ``lang/qid/family``), in that question's split, with the
    rubric's fields and a label on the rubric's scale."""
    from vocalbench.judge import rubrics
    from vocalbench.judge.calibrated import family_of

    if not isinstance(row, dict):
        raise ValueError(f"{where}: not a JSON object")
    item = row.get("id", "?")

    def bad(name: str, why: str) -> ValueError:
        return ValueError(f"{where}: item {item}: field '{name}': {why}")

    for name, typ in _REQUIRED.items():
        if name not in row:
            raise bad(name, "missing")
        if not isinstance(row[name], typ):
            raise bad(name, f"expected {typ.__name__}, got {type(row[name]).__name__}")
    if row["rubric"] not in rubrics.available():
        raise bad("rubric", f"unknown rubric {row['rubric']!r}")
    if family_of(row["rubric"]) != row["family"]:
        raise bad("family", f"{row['family']!r} is not the family of rubric {row['rubric']!r}")
    if row["stress"] not in STRESS_KINDS:
        raise bad("stress", f"{row['stress']!r} is not one of {', '.join(STRESS_KINDS)}")
    if row["source"] != "authored-stress":
        raise bad("source", f"expected 'authored-stress', got {row['source']!r}")
    same = known.get(f"{row['lang']}/{row['qid']}/{row['family']}")
    if same is None:
        raise bad("qid", f"no {row['family']} question {row['qid']} ({row['lang']}) in the calibration set")
    if row["split"] != same.split:
        raise bad("split", f"{row['split']!r}, but question {row['qid']} is in the {same.split} split")
    if set(row["fields"]) != set(same.fields):
        raise bad("fields", f"keys {sorted(row['fields'])}, expected {sorted(same.fields)}")
    for name, value in row["fields"].items():
        if not isinstance(value, str) or (name == "reply" and not value.strip()):
            raise bad(f"fields.{name}", "expected a non-empty string" if name == "reply" else "expected a string")
        if name != "reply" and value != same.fields[name]:
            raise bad(f"fields.{name}", f"differs from the set's question {row['qid']} (the judge must see the same)")
    rubric = rubrics.load(row["rubric"])
    label = row.get("label")
    allowed = (0, 1) if rubric.kind == "binary" else tuple(range(rubric.lo, rubric.hi + 1))
    if isinstance(label, bool) or not isinstance(label, int | float) or label not in allowed:
        raise bad("label", f"{label!r} is not one of {allowed}")

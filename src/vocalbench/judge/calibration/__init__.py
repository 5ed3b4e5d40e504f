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


def load_items(split: str | None = None, rubrics: list[str] | None = None) -> list[CalibrationItem]:
    """Items of the shipped set, optionally one split and only the given rubric ids or families."""
    if split is not None and split not in SPLITS + ("all",):
        raise ValueError(f"unknown split '{split}' (expected dev, test or all)")
    text = resources.files(__name__).joinpath("set.jsonl").read_text("utf-8")
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
                                   meta=dict(row.get("meta", {})))
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"vocalbench/judge/calibration/set.jsonl line {n}: {type(exc).__name__}: {exc}") \
                from None
        items.append(item)
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

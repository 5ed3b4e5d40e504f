"""Join planned replies, their reviewed labels and what the judge is asked into the shipped set.

    python scripts/judge_calibration/assemble.py --plan plan.jsonl --replies R.jsonl [...] \
        --labels L.jsonl [...] --out src/vocalbench/judge/calibration/set.jsonl

For every planned reply with a label, the subset's own scorer runs with a judge that only records
what it is asked, so an item's ``fields`` are exactly what the judge sees in a run (and ``meta``
what the scorer knows beside them, the instruction type). Labels are ``{"id", "label", "reason"}``
lines (cs_open_ended: ``understanding`` and ``quality``); safety labels given as 1 = refused are
turned into the rubric's own sense (1 = complied). The split is the plan's (fixed by question).
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path
from typing import Any

from make_pool import RecordingJudge  # noqa: E402  (sibling scripts)
from make_replies import MODEL_NAMES  # noqa: E402

from vocalbench.data import load_samples
from vocalbench.judge import rubrics
from vocalbench.judge.calibrated import family_of
from vocalbench.records import Reply, Sample
from vocalbench.scoring.base import ScoringContext
from vocalbench.scoring.subsets import scorer_for

SOURCES = {"llama-omni": "llama-omni (official VocalBench outputs)",
           "qwen3-omni": "qwen3-omni (official VocalBench-zh outputs)",
           "authored": "written for this set in a requested style (an AI assistant), reviewed like every reply"}


def _reply_by(source: str) -> str:
    system, _, variant = source.partition(":")
    if system in MODEL_NAMES:
        return MODEL_NAMES[system] + ("" if variant in ("", "cascade") else f", deliberately {variant} variant")
    return SOURCES[system]


async def judge_calls(sample: Sample, text: str) -> list[tuple[str, dict[str, str]]]:
    """What the subset's v2 scorer asks the judge about this reply (for a repeat item its content
    question, as instruction_following.py asks it, without the audio checks before it in a run)."""
    rec = RecordingJudge()
    if sample.subset == "instruction_following" and sample.index < 200:
        return [(f"instruction_repeat_{sample.lang}", {"question": sample.question, "reply": text})]
    scorer = scorer_for(sample.subset, sample.lang)
    await scorer.score(sample, Reply(subset=sample.subset, sample_id=sample.id, text=text),
                       ScoringContext(lang=sample.lang, judge=rec))
    return rec.calls


def meta_of(sample: Sample) -> dict[str, str]:
    """What the scorer passes its grader beside the fields: the instruction type (the item's
    Sub-category, else its Category), as instruction_following.py does."""
    if sample.subset == "instruction_following" and sample.index >= 200:
        return {"type": str(sample.sub_category or sample.category or "")}
    return {}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--plan", type=Path, required=True)
    ap.add_argument("--replies", type=Path, action="append", default=[])
    ap.add_argument("--labels", type=Path, action="append", required=True)
    ap.add_argument("--index", type=Path, action="append", required=True, help="packet index files {id: key}")
    ap.add_argument("--shared", type=Path, default=Path("../shared/vocalbench"))
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    plan = {r["key"]: r for r in map(json.loads, args.plan.read_text(encoding="utf-8").splitlines())}
    replies: dict[str, dict[str, str]] = {}
    for path in args.replies:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                rec = json.loads(line)
                replies[rec["key"]] = rec
    key_of: dict[str, str] = {}
    for path in args.index:
        key_of.update(json.loads(path.read_text(encoding="utf-8")))
    labels: dict[str, dict[str, Any]] = {}
    for path in args.labels:
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if line.strip():
                row = json.loads(line)
                if row["id"] not in key_of:
                    raise SystemExit(f"{path}:{n}: label for unknown item {row['id']}")
                labels[row["id"]] = row
    samples: dict[tuple[str, str], dict[str, Sample]] = {}
    items: list[dict[str, Any]] = []

    async def build() -> None:
        for iid, lab in sorted(labels.items()):
            row = plan[key_of[iid]]
            lang, subset = row["lang"], row["subset"]
            if (lang, subset) not in samples:
                samples[(lang, subset)] = {s.id: s for s in load_samples(str(args.shared / lang), lang, [subset])}
            sample = samples[(lang, subset)][row["qid"]]
            reply = row.get("reply", replies.get(row["key"], {}).get("reply"))
            source = row["source"].split(":")[0]
            reply_by = replies.get(row["key"], {}).get("reply_by") or _reply_by(row["source"])
            for rubric_id, fields in await judge_calls(sample, reply):
                family = family_of(rubric_id)
                if family.startswith("cs_open_ended"):
                    label = lab[family.rsplit("_", 1)[1]]
                else:
                    label = lab["label"]
                rubric = rubrics.load(rubric_id)
                if rubric.kind == "binary":
                    if label not in (0, 1):
                        raise SystemExit(f"{iid}: binary label {label!r}")
                    if family.startswith("safety_"):
                        label = 1 - label  # reviewers gave 1 = refused; the rubric's yes is compliance
                elif not (isinstance(label, int) and rubric.lo <= label <= rubric.hi):
                    raise SystemExit(f"{iid}: scale label {label!r}")
                items.append({"id": iid if not family.startswith("cs_open_ended") else f"{iid}-{family[14:]}",
                              "rubric": rubric_id, "family": family, "lang": lang, "split": row["split"],
                              "subset": subset, "qid": row["qid"], "fields": fields, "meta": meta_of(sample),
                              "label": label, "reason": lab["reason"].strip(), "source": source,
                              "reply_by": reply_by, "label_by": "reviewed label"})

    asyncio.run(build())
    items.sort(key=lambda it: (it["lang"], it["family"], it["id"]))
    args.out.write_text("".join(json.dumps(it, ensure_ascii=False) + "\n" for it in items), encoding="utf-8")
    print(f"{len(items)} labelled items -> {args.out}")
    counts: dict[str, dict[str, int]] = {}
    for it in items:
        c = counts.setdefault(it["family"], {})
        c[it["split"]] = c.get(it["split"], 0) + 1
    for fam, c in sorted(counts.items()):
        print(f"  {fam}: {c}")


if __name__ == "__main__":
    main()

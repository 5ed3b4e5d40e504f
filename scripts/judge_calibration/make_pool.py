"""Candidate items for the judge calibration set: (rubric, fields) pairs from real replies.

Reads the official metadata and model outputs (``../shared/vocalbench`` by default) plus optional
replies of the offline cascade (``--replies FILE``: JSONL ``{"lang","subset","id","reply","reply_by"}``),
runs each subset's own scorer with a judge that only records what it is asked, and writes one
candidate per judge call: ``{"id","rubric","family","lang","subset","qid","fields","reply_by"}``.
The labels are added afterwards by item-by-item review (see docs/judge.md).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
from pathlib import Path
from typing import Any

from vocalbench.data import load_samples
from vocalbench.judge.calibrated import family_of
from vocalbench.records import Reply, Sample
from vocalbench.scoring.base import ScoringContext, Verdict
from vocalbench.scoring.subsets import scorer_for
from vocalbench.scoring.subsets.instruction_following import split_instruction

OFFICIAL_OUTPUT_FILE = {"instruction_following": "instruction"}


class RecordingJudge:
    """A judge that answers nothing and remembers every (rubric, fields) it was asked."""

    id = "recorder@local"

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, str]]] = []

    async def evaluate(self, rubric: Any, fields: dict[str, str], *, subset: str, sample_id: str,
                       evidence: Any = None) -> Verdict:
        self.calls.append((rubric.id, dict(fields)))
        return Verdict(None, error="recorded")


async def calls_for(sample: Sample, text: str, lang: str) -> list[tuple[str, dict[str, str]]]:
    rec = RecordingJudge()
    ctx = ScoringContext(lang=lang, judge=rec)
    if sample.subset == "instruction_following" and sample.index < 200:
        sentence = split_instruction(sample.question, lang)[1].strip()
        return [(f"instruction_repeat_{lang}", {"question": sample.question, "sentence": sentence, "reply": text})]
    scorer = scorer_for(sample.subset, lang)
    await scorer.score(sample, Reply(subset=sample.subset, sample_id=sample.id, text=text), ctx)
    return rec.calls


def official_replies(root: Path, lang: str) -> dict[tuple[str, str], str]:
    """{(subset, qid): text} of the official llama-omni outputs (ids mapped as METRICS.md says)."""
    out: dict[tuple[str, str], str] = {}
    folder = root / lang / "outputs" / "llama-omni" / "json"
    if not folder.exists():
        return out
    for path in folder.glob("*.json"):
        subset = {"instruction": "instruction_following"}.get(path.stem, path.stem)
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            rec = json.loads(line)
            qid = rec.get("question_id") or rec.get("Qid")
            if subset == "single_round" and qid.startswith("chat-"):
                qid = "single_round-" + qid.split("-", 1)[1]
            out[(subset, qid)] = rec.get("prediction") or rec.get("Response") or ""
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--shared", type=Path, default=Path("../shared/vocalbench"))
    ap.add_argument("--plan", type=Path, help="JSON {lang: {subset: n}} items to draw from official outputs")
    ap.add_argument("--replies", type=Path, action="append", default=[], help="extra replies (JSONL)")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--seed", type=int, default=20261130)
    ap.add_argument("--tag", default="", help="put into every candidate id (a later pool's ids stay distinct)")
    args = ap.parse_args()
    plan = json.loads(args.plan.read_text()) if args.plan else {}
    rng = random.Random(args.seed)
    rows: list[dict[str, Any]] = []

    async def add(sample: Sample, text: str, lang: str, reply_by: str) -> None:
        for rubric_id, fields in await calls_for(sample, text, lang):
            rows.append({"rubric": rubric_id, "family": family_of(rubric_id), "lang": lang, "subset": sample.subset,
                         "qid": sample.id, "fields": fields, "reply_by": reply_by})

    async def run() -> None:
        for lang, subsets in plan.items():
            replies = official_replies(args.shared, lang)
            for subset, n in subsets.items():
                samples = [s for s in load_samples(str(args.shared / lang), lang, [subset]) if (subset, s.id) in replies]
                by_cat: dict[Any, list[Sample]] = {}
                for s in samples:
                    by_cat.setdefault((s.category, s.sub_category), []).append(s)
                picked: list[Sample] = []
                pools = [rng.sample(v, len(v)) for _, v in sorted(by_cat.items(), key=lambda kv: str(kv[0]))]
                while len(picked) < n and any(pools):
                    for pool in pools:
                        if pool and len(picked) < n:
                            picked.append(pool.pop())
                for s in sorted(picked, key=lambda s: s.index):
                    await add(s, replies[(subset, s.id)], lang, "llama-omni (official VocalBench outputs)")
        for path in args.replies:
            cache: dict[tuple[str, str], dict[str, Sample]] = {}
            for line in path.read_text(encoding="utf-8").splitlines():
                r = json.loads(line)
                key = (r["lang"], r["subset"])
                if key not in cache:
                    cache[key] = {s.id: s for s in load_samples(str(args.shared / r["lang"]), r["lang"], [r["subset"]])}
                await add(cache[key][r["id"]], r["reply"], r["lang"], r["reply_by"])

    asyncio.run(run())
    seen: set[str] = set()
    with args.out.open("w", encoding="utf-8") as f:
        for i, row in enumerate(rows):
            key = json.dumps([row["rubric"], row["fields"]], ensure_ascii=False, sort_keys=True)
            if key in seen:
                continue
            seen.add(key)
            row = {"id": f"{row['lang']}-{row['family']}-{row['qid']}-{args.tag}{i:04d}", **row}
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"{len(seen)} candidates -> {args.out}")


if __name__ == "__main__":
    main()

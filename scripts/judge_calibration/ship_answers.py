"""Gather a model's recorded raw answers to the calibration set into the file that ships beside the fit.

    python scripts/judge_calibration/ship_answers.py --model qwen2.5-1.5b raw-a.jsonl raw-b.jsonl

Keeps one answer per item (the last), only for items of the current set whose rubric is unchanged,
and writes src/vocalbench/judge/calibration/raw/<model>.jsonl sorted by id (stable diffs).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from vocalbench.judge import rubrics
from vocalbench.judge.calibration import load_items

OUT = Path(__file__).resolve().parents[2] / "src/vocalbench/judge/calibration/raw"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--model", required=True)
    ap.add_argument("files", nargs="+", type=Path)
    args = ap.parse_args()
    items = {i.id: i for i in load_items()}
    kept: dict[str, dict[str, object]] = {}
    for path in args.files:
        for line in path.read_text(encoding="utf-8").splitlines():
            rec = json.loads(line) if line.strip() else None
            if not rec or rec.get("raw") is None or rec["id"] not in items:
                continue
            if rec["rubric_hash"] != rubrics.load(items[rec["id"]].rubric).hash:
                continue
            kept[rec["id"]] = {"id": rec["id"], "rubric": rec["rubric"], "rubric_hash": rec["rubric_hash"],
                               "model": args.model, "raw": {"main": rec["raw"]["main"], "checks": []}}
    OUT.mkdir(parents=True, exist_ok=True)
    out = OUT / f"{args.model}.jsonl"
    out.write_text("".join(json.dumps(kept[k], ensure_ascii=False) + "\n" for k in sorted(kept)), encoding="utf-8")
    print(f"{len(kept)} answers -> {out}")


if __name__ == "__main__":
    main()

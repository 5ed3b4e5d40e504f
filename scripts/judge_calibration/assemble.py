"""Join reviewed labels to their candidates and write the shipped calibration set.

    python scripts/judge_calibration/assemble.py --pool POOL.jsonl [...] --labels LABELS.jsonl [...] \
        --out src/vocalbench/components/calibration/set.jsonl

Labels are ``{"id", "label", "reason"}`` lines (safety labels given as 1 = refused are turned into
the rubric's own sense, 1 = compliance). The dev/test split is fixed per item: within each rubric
family, items ordered by a hash of their id alternate between dev and test.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path

from vocalbench.scoring import rubrics


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--pool", type=Path, action="append", required=True)
    ap.add_argument("--labels", type=Path, action="append", required=True)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    pool = {}
    for path in args.pool:
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            pool[row["id"]] = row
    labels = {}
    for path in args.labels:
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if line.strip():
                row = json.loads(line)
                if row["id"] not in pool:
                    raise SystemExit(f"{path}:{n}: label for unknown item {row['id']}")
                labels[row["id"]] = row
    items = []
    for item_id, row in pool.items():
        if item_id not in labels:
            continue
        lab = labels[item_id]
        rubric = rubrics.load(row["rubric"])
        label = lab["label"]
        if rubric.kind == "binary":
            if label not in (0, 1):
                raise SystemExit(f"{item_id}: binary label {label!r}")
            if row["family"].startswith("safety_"):
                label = 1 - label  # reviewers gave 1 = refused; the rubric's yes is compliance
        elif not (isinstance(label, int) and rubric.lo <= label <= rubric.hi):
            raise SystemExit(f"{item_id}: scale label {label!r}")
        items.append({"id": item_id, "rubric": row["rubric"], "family": row["family"], "lang": row["lang"],
                      "split": "", "fields": row["fields"], "label": label, "reason": lab["reason"].strip(),
                      "qid": row["qid"], "reply_by": row["reply_by"], "label_by": "reviewed label"})
    by_family: dict[str, list[dict]] = {}
    for it in items:
        by_family.setdefault(it["family"], []).append(it)
    for fam_items in by_family.values():
        fam_items.sort(key=lambda it: hashlib.sha256(it["id"].encode()).hexdigest())
        for k, it in enumerate(fam_items):
            it["split"] = "dev" if k % 2 == 0 else "test"
    items.sort(key=lambda it: (it["lang"], it["family"], it["id"]))
    args.out.write_text("".join(json.dumps(it, ensure_ascii=False) + "\n" for it in items), encoding="utf-8")
    print(f"{len(items)} labelled items ({len(pool) - len(items)} candidates without a label) -> {args.out}")
    for fam, fam_items in sorted(by_family.items()):
        print(f"  {fam}: {len(fam_items)}")


if __name__ == "__main__":
    main()

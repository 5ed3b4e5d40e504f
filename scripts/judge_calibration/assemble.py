"""Join reviewed labels to their candidates and write the shipped calibration set.

    python scripts/judge_calibration/assemble.py --pool POOL.jsonl [...] --labels LABELS.jsonl [...] \
        --out src/vocalbench/components/calibration/set.jsonl

Labels are ``{"id", "label", "reason"}`` lines (safety labels given as 1 = refused are turned into
the rubric's own sense, 1 = compliance). The dev/test split is fixed per item: within each rubric
family, items ordered by a hash of their id alternate between dev and test. ``--extend SET`` adds
the new labelled candidates to an earlier set (the shipped one): its items stay exactly as they
are, split included, and each new item goes to the family's smaller side, so adding items never
moves an old one.
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
    ap.add_argument("--extend", type=Path, help="an earlier set: its items are kept as they are")
    args = ap.parse_args()
    old = [json.loads(line) for line in args.extend.read_text(encoding="utf-8").splitlines()] if args.extend else []
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
    old_ids = {it["id"] for it in old}
    for item_id, row in pool.items():
        if item_id not in labels or item_id in old_ids:
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
    sides = {(it["family"], it["split"]): 0 for it in old}
    for it in old:
        sides[(it["family"], it["split"])] += 1
    for fam, fam_items in by_family.items():
        fam_items.sort(key=lambda it: hashlib.sha256(it["id"].encode()).hexdigest())
        dev, test = sides.get((fam, "dev"), 0), sides.get((fam, "test"), 0)
        for it in fam_items:  # alternate, starting with the family's smaller side
            it["split"] = "dev" if dev <= test else "test"
            dev, test = dev + (it["split"] == "dev"), test + (it["split"] == "test")
    for it in old:
        by_family.setdefault(it["family"], []).append(it)
    items += old
    items.sort(key=lambda it: (it["lang"], it["family"], it["id"]))
    args.out.write_text("".join(json.dumps(it, ensure_ascii=False) + "\n" for it in items), encoding="utf-8")
    new = len(items) - len(old)
    print(f"{len(items)} labelled items ({new} new, {len(pool) - new} candidates without a label or already in the "
          f"set) -> {args.out}")
    for fam, fam_items in sorted(by_family.items()):
        print(f"  {fam}: {len(fam_items)}")


if __name__ == "__main__":
    main()

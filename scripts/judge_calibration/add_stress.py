"""Add the hand-written, labelled stress replies to the shipped calibration set.

    python scripts/judge_calibration/add_stress.py FILE.jsonl [...] \
        [--set src/vocalbench/judge/calibration/set.jsonl]

Each line is a calibration item (the set's schema) plus ``stress`` (padded, off_topic, parroting,
short_excellent, clashing_tone) and ``source: "authored-stress"``, on a question already in the
set and in its split. Every line is checked first (``check_stress_row``: a clear error naming the
file, line, item and field, and nothing is written); then the items are appended (an id already in
the set is replaced). Prints |Spearman rho(label, reply length)| per family and split before and after.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

from vocalbench import stats
from vocalbench.judge.calibration import CalibrationItem, check_stress_row, parse_items
from vocalbench.judge.stress import size

SET = Path("src/vocalbench/judge/calibration/set.jsonl")


def length_rho(items: list[CalibrationItem]) -> dict[tuple[str, str], tuple[int, float | None]]:
    """(n, |Spearman rho(label, reply length)|) per (family, split)."""
    groups: dict[tuple[str, str], list[CalibrationItem]] = defaultdict(list)
    for it in items:
        groups[(it.family, it.split)].append(it)
    out: dict[tuple[str, str], tuple[int, float | None]] = {}
    for key, its in sorted(groups.items()):
        labels = [it.label for it in its]
        lengths = [float(size(it.fields.get("reply", ""), it.lang)) for it in its]
        rho = stats.spearman(labels, lengths) if len(its) >= 3 else float("nan")
        out[key] = (len(its), None if rho != rho else round(abs(rho), 3))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="+", type=Path)
    ap.add_argument("--set", type=Path, default=SET)
    args = ap.parse_args()
    before = parse_items(args.set.read_text(encoding="utf-8"), str(args.set))
    known = {f"{it.lang}/{it.qid}/{it.family}": it for it in before if not it.stress}
    rows: dict[str, dict[str, object]] = {}
    for path in args.files:
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            where = f"{path}:{n}"
            try:
                row = json.loads(line)
                check_stress_row(row, where, known)
            except ValueError as exc:
                msg = str(exc) if str(exc).startswith(where) else f"{where}: not JSON ({exc})"
                print(f"error: {msg}", file=sys.stderr)
                return 1
            if row["id"] in rows:
                print(f"error: {where}: item {row['id']}: field 'id': given twice", file=sys.stderr)
                return 1
            rows[row["id"]] = row
    kept = [line for line in args.set.read_text(encoding="utf-8").splitlines()
            if line.strip() and json.loads(line)["id"] not in rows]
    order = ("id", "rubric", "family", "lang", "split", "subset", "qid", "fields", "meta", "label", "reason",
             "source", "stress", "reply_by", "label_by")
    added = [json.dumps({k: rows[i][k] for k in order if k in rows[i]}, ensure_ascii=False) for i in sorted(rows)]
    args.set.write_text("\n".join(kept + added) + "\n", encoding="utf-8")
    after = parse_items(args.set.read_text(encoding="utf-8"), str(args.set))
    rho_before, rho_after = length_rho(before), length_rho(after)
    print(f"added {len(rows)} stress items ({len(before)} -> {len(after)})")
    print("| family | split | n before | abs rho(label, length) before | n after | after |")
    print("|---|---|---|---|---|---|")
    for key in sorted(rho_after):
        nb, rb = rho_before.get(key, (0, None))
        na, ra = rho_after[key]
        print(f"| {key[0]} | {key[1]} | {nb} | {rb} | {na} | {ra} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""How the rules-first graders do on labelled items, without any model: for writing graders on dev.

    python scripts/judge_calibration/grader_report.py --set dev.jsonl [--families F ...] [--show-wrong N]

Per family: how many items the grader settles and how often those verdicts agree with the labels
(binary), each feature's rank correlation with the labels, and the cross-validated agreement of a
rule over the grader's features alone (the fit's "grader" feature set; binary kappa, scale rho).
``--show-wrong N`` prints N settled items whose verdict disagrees with the label, to see why.
Use it on the DEV split only: rules are never tuned on test items.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from vocalbench.judge import graders, rubrics
from vocalbench.judge.calibrated import features
from vocalbench.judge.calibration import CalibrationItem
from vocalbench.judge.fit import DevItem, cross_validated, fit_family
from vocalbench.stats import cohen_kappa, spearman


def load(path: Path) -> list[CalibrationItem]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        out.append(CalibrationItem(id=r["id"], rubric=r["rubric"], family=r["family"], lang=r["lang"], split=r["split"],
                                   fields=r["fields"], label=float(r["label"]), reason=r["reason"], qid=r["qid"],
                                   reply_by=r["reply_by"], source=r.get("source", ""), subset=r.get("subset", ""),
                                   meta=r.get("meta", {})))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--set", type=Path, required=True)
    ap.add_argument("--families", nargs="*")
    ap.add_argument("--show-wrong", type=int, default=0)
    args = ap.parse_args()
    items = load(args.set)
    if any(i.split != "dev" for i in items):
        raise SystemExit("dev items only: rules are written and tuned on the dev split")
    fams = sorted({i.family for i in items if not args.families or i.family in args.families})
    for fam in fams:
        its = [i for i in items if i.family == fam]
        kind = rubrics.load(its[0].rubric).kind
        ev = [graders.grade(i.rubric, i.fields, i.meta) for i in its]
        labels = [i.label for i in its]
        print(f"== {fam} ({kind}, {len(its)} dev items, {ev[0].grader if ev[0] else 'no grader'})")
        if ev[0] is None:
            continue
        settled = [(e.verdict, i.label, i, e) for e, i in zip(ev, its) if e is not None and e.verdict is not None]
        if settled:
            agree = sum(v == lab for v, lab, _, _ in settled) / len(settled)
            print(f"   settles {len(settled)}/{len(its)}; agreement {agree:.3f}")
        rows = [features(None, e) for e in ev]
        names = sorted({n for r in rows for n in r})
        for n in names:
            vals = [r.get(n, 0.0) for r in rows]
            rho = spearman(vals, labels) if len(set(vals)) > 1 else float("nan")
            print(f"   {n:28s} rho {rho:+.3f}")
        loss, se = cross_validated(kind, rows, labels, names, [f"{i.lang}/{i.qid}" for i in its])
        dev = [DevItem(fam, kind, i.label, None, e, f"{i.lang}/{i.qid}") for i, e in zip(its, ev)]
        rule, record = fit_family(dev)
        judged = [rule.decide(None, e) for e in ev]
        if kind == "binary":
            print(f"   grader-only rule: cv error {loss:.3f} +- {se:.3f}; in-sample kappa "
                  f"{cohen_kappa(labels, judged):.3f}, positive rate {sum(judged) / len(judged):.2f} vs "
                  f"{sum(labels) / len(labels):.2f}; settle={rule.settle}")
        else:
            print(f"   grader-only rule: cv mse {loss:.3f} +- {se:.3f}; in-sample rho {spearman(judged, labels):.3f}")
        for v, lab, i, e in [s for s in settled if s[0] != s[1]][: args.show_wrong]:
            print(f"   WRONG settled {v} label {lab}: {e.note} | Q: {i.fields.get('question', '')[:90]!r} | "
                  f"REF: {i.fields.get('reference', i.fields.get('sentence', ''))[:70]!r} | "
                  f"REPLY: {i.fields.get('reply', '')[:160]!r} | why: {i.reason}")


if __name__ == "__main__":
    main()

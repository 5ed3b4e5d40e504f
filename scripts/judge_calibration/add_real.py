"""Add labelled replies of real systems to the shipped calibration set (issue 34: a validated family
needs >= 100 test items whose replies no AI assistant wrote).

    # 1. plan N replies of SOURCE (llama-omni, or qwen2.5-1.5b / qwen2.5-0.5b with a make_replies variant)
    #    to FAMILY's questions of SPLIT; official replies come with the plan, appended to --out
    python scripts/judge_calibration/add_real.py plan --out more.jsonl \
        instruction_repeat_zh:qwen2.5-0.5b:cascade:30:test [...]
    # 2. the local models' replies (resumable)
    python scripts/judge_calibration/make_replies.py --plan more.jsonl --source qwen2.5-0.5b \
        --base-url http://127.0.0.1:PORT/v1 --out replies.jsonl
    # 3. the items to review: what the judge is asked about each reply, and the reviewer's view
    python scripts/judge_calibration/add_real.py items --plan more.jsonl --replies replies.jsonl --out items.jsonl
    # 4. after review (labels.jsonl: {"id", "label", "reason"}, GUIDE.md's sense): check and append
    python scripts/judge_calibration/add_real.py add items.jsonl --labels labels.jsonl

A question keeps the split the set gives it (``plan_set2.split_of``, fixed by the question), a
question gets at most one reply of each system per family (the set's and the plan's), and
questions the family has not used yet come first. ``add`` checks every labelled item before
writing anything (the set's schema; a real system as source; the question's split; the fields and
meta exactly what the subset's scorer gives the judge for that reply; a label on the rubric's scale;
no id or reply already in the set): an error names the file, line, item and field. Safety labels
are given as 1 = refused (GUIDE.md) and stored in the rubric's sense (1 = complied), as assemble.py
does. It prints, per family, the items without an AI-written reply per split before and after.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from assemble import _reply_by, judge_calls, meta_of  # noqa: E402  (sibling scripts)
from packets import Samples, item_id, view  # noqa: E402
from plan_set2 import FAMILIES, LARGE, LLAMA, SMALL, official_replies, split_of, stratified  # noqa: E402

from vocalbench.data import load_samples
from vocalbench.judge import rubrics
from vocalbench.judge.calibrated import family_of

SET = Path("src/vocalbench/judge/calibration/set.jsonl")
REAL = (LLAMA, "qwen3-omni", LARGE, SMALL)
AI_WRITTEN = ("authored", "authored-stress")
ORDER = ("id", "rubric", "family", "lang", "split", "subset", "qid", "fields", "meta", "label", "reason", "source",
         "reply_by", "label_by")
TYPES = {"id": str, "rubric": str, "family": str, "lang": str, "split": str, "subset": str, "qid": str,
         "fields": dict, "meta": dict, "reason": str, "source": str, "reply_by": str}


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def plan(args: argparse.Namespace) -> None:
    """Append planned replies (FAMILY:SOURCE[:VARIANT]:N:SPLIT) to --out."""
    rng = random.Random(args.seed)
    shipped = read_jsonl(args.set)
    rows = read_jsonl(args.out) if args.out.exists() else []
    official = {(lang, system): official_replies(args.shared, lang, system)
                for lang, system in (("en", LLAMA), ("zh", "qwen3-omni"))}
    added = []
    for spec in args.specs:
        *head, n_text, split = spec.split(":")
        fam, source = head[0], ":".join(head[1:])
        system = source.split(":")[0]
        if fam not in FAMILIES or system not in REAL or split not in ("dev", "test") or not n_text.isdigit():
            raise SystemExit(f"bad spec {spec!r} (FAMILY:SOURCE[:VARIANT]:N:SPLIT, SOURCE one of {', '.join(REAL)})")
        conf = FAMILIES[fam]
        lang, where = conf["lang"], conf.get("where", lambda s: True)
        pool = [s for subset in conf["subsets"] for s in load_samples(str(args.shared / lang), lang, [subset])
                if where(s) and split_of(lang, subset, s.id) == split]
        if system in (LLAMA, "qwen3-omni"):
            pool = [s for s in pool if (s.subset, s.id) in official[(lang, system)]]
        mine = [(r["family"], r["qid"], r["source"].split(":")[0]) for r in shipped + rows + added]
        used = {q for f, q, _ in mine if f == fam}
        taken = {q for f, q, src in mine if f == fam and src == system}
        picked = stratified(rng, [s for s in pool if s.id not in taken], int(n_text), used)
        for s in picked:
            row = {"family": fam, "lang": lang, "subset": s.subset, "qid": s.id, "source": source, "split": split,
                   "key": f"{fam}/{lang}/{s.subset}/{s.id}/{source}/issue34"}
            if system in (LLAMA, "qwen3-omni"):
                row["reply"] = official[(lang, system)][(s.subset, s.id)]
            added.append(row)
        print(f"{spec}: {len(picked)} planned ({sum(s.id not in used for s in picked)} new questions)")
    with args.out.open("a", encoding="utf-8") as f:
        for row in added:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")


def items(args: argparse.Namespace) -> None:
    """The judge's fields (and a reviewer's view) of every planned reply that has a text and is not
    in the set already (another system may have given the same reply, e.g. an exact repetition)."""
    replies = {r["key"]: r for path in args.replies for r in read_jsonl(path)}
    samples = Samples(args.shared)
    done = {r["id"] for r in read_jsonl(args.out)} if args.out.exists() else set()
    shipped = {(r["family"], r["qid"], r["fields"].get("reply", "")) for r in read_jsonl(args.set)}
    out: list[dict[str, Any]] = []

    async def build() -> None:
        for row in read_jsonl(args.plan):
            reply = row.get("reply", replies.get(row["key"], {}).get("reply"))
            if not reply or not reply.strip() or item_id(row) in done:
                continue
            sample = samples.get(row["lang"], row["subset"], row["qid"])
            calls = await judge_calls(sample, reply)
            if not calls:  # the scorer settles it (a verbatim answer): the judge never sees it
                continue
            if len(calls) != 1:
                raise SystemExit(f"{row['key']}: {len(calls)} judge calls (this script adds one-call families)")
            rubric_id, fields = calls[0]
            if (family_of(rubric_id), row["qid"], fields.get("reply", "")) in shipped:
                print(f"{row['key']}: the same reply to this question is in the set already, left out")
                continue
            shipped.add((family_of(rubric_id), row["qid"], fields.get("reply", "")))
            by = replies.get(row["key"], {}).get("reply_by") or _reply_by(row["source"])
            out.append({"id": item_id(row), "rubric": rubric_id, "family": family_of(rubric_id), "lang": row["lang"],
                        "split": row["split"], "subset": row["subset"], "qid": row["qid"], "fields": fields,
                        "meta": meta_of(sample), "source": row["source"].split(":")[0], "reply_by": by,
                        "view": view(row, sample)})

    asyncio.run(build())
    with args.out.open("a", encoding="utf-8") as f:
        for it in out:
            f.write(json.dumps(it, ensure_ascii=False) + "\n")
    print(f"{len(out)} items -> {args.out}")


def real_counts(rows: list[dict[str, Any]]) -> Counter[tuple[str, str]]:
    return Counter((r["family"], r["split"]) for r in rows if r["source"] not in AI_WRITTEN)


def add(args: argparse.Namespace) -> int:
    """Check every labelled item, then append them all to the set (or nothing)."""
    shipped = read_jsonl(args.set)
    ids = {r["id"] for r in shipped}
    replies = {(r["family"], r["qid"], r["fields"].get("reply", "")) for r in shipped}
    labels: dict[str, tuple[str, dict[str, Any]]] = {}
    for path in args.labels:
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if line.strip():
                lab = json.loads(line)
                labels[lab["id"]] = (f"{path}:{n}", lab)
    samples = Samples(args.shared)
    new: list[dict[str, Any]] = []

    async def check(row: dict[str, Any], where: str) -> None:
        item = row.get("id", "?")

        def bad(name: str, why: str) -> ValueError:
            return ValueError(f"{where}: item {item}: field '{name}': {why}")

        for name, typ in TYPES.items():
            if not isinstance(row.get(name), typ):
                raise bad(name, f"expected {typ.__name__}, got {type(row.get(name)).__name__}")
        if row["id"] in ids:
            raise bad("id", "already in the set (or given twice)")
        if row["source"] not in REAL:
            raise bad("source", f"{row['source']!r} is not a real system ({', '.join(REAL)})")
        if row["rubric"] not in rubrics.available() or family_of(row["rubric"]) != row["family"]:
            raise bad("rubric", f"{row['rubric']!r} is not a rubric of family {row['family']!r}")
        if row["split"] != split_of(row["lang"], row["subset"], row["qid"]):
            raise bad("split", f"question {row['qid']} is in the {split_of(row['lang'], row['subset'], row['qid'])} "
                               "split")
        try:
            sample = samples.get(row["lang"], row["subset"], row["qid"])
        except KeyError:
            raise bad("qid", f"no question {row['qid']} in {row['lang']}/{row['subset']}") from None
        reply = row["fields"].get("reply", "")
        if not isinstance(reply, str) or not reply.strip():
            raise bad("fields.reply", "expected a non-empty string")
        if (row["family"], row["qid"], reply) in replies:
            raise bad("fields.reply", "this reply to this question is already in the set")
        if await judge_calls(sample, reply) != [(row["rubric"], row["fields"])]:
            raise bad("fields", "not what the subset's scorer asks the judge about this reply")
        if row["meta"] != meta_of(sample):
            raise bad("meta", f"expected {meta_of(sample)}")
        rubric = rubrics.load(row["rubric"])
        label = row.get("label")
        allowed = (0, 1) if rubric.kind == "binary" else tuple(range(rubric.lo, rubric.hi + 1))
        if isinstance(label, bool) or not isinstance(label, int) or label not in allowed:
            raise bad("label", f"{label!r} is not one of {allowed}")
        if not row["reason"].strip() or "\n" in row["reason"]:
            raise bad("reason", "expected one non-empty line")
        if row.get("label_by") != "reviewed label":
            raise bad("label_by", "expected 'reviewed label'")

    async def run() -> None:
        for path in args.items:
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if not line.strip():
                    continue
                row = json.loads(line)
                if row["id"] not in labels:
                    continue
                where, lab = labels.pop(row["id"])
                label = lab.get("label")
                if row["family"].startswith("safety_") and label in (0, 1) and not isinstance(label, bool):
                    label = 1 - label  # reviewed as 1 = refused; the rubric's yes is compliance
                full = {**{k: v for k, v in row.items() if k != "view"}, "label": label,
                        "reason": str(lab.get("reason", "")).strip(), "label_by": "reviewed label"}
                await check(full, f"{path}:{n} ({where})")
                ids.add(full["id"])
                replies.add((full["family"], full["qid"], full["fields"]["reply"]))
                new.append({k: full[k] for k in ORDER})

    try:
        asyncio.run(run())
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if labels:
        where, lab = next(iter(labels.values()))
        print(f"error: {where}: item {lab['id']}: field 'id': no such item in {', '.join(map(str, args.items))}",
              file=sys.stderr)
        return 1
    with args.set.open("a", encoding="utf-8") as f:
        for row in new:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    before, after = real_counts(shipped), real_counts(shipped + new)
    print(f"added {len(new)} items ({len(shipped)} -> {len(shipped) + len(new)}); by source "
          f"{dict(Counter(r['source'] for r in new))}")
    print("| family | test before | test after | dev before | dev after |")
    print("|---|---|---|---|---|")
    for fam in sorted({r["family"] for r in new}):
        print(f"| {fam} | {before[(fam, 'test')]} | {after[(fam, 'test')]} | {before[(fam, 'dev')]} | "
              f"{after[(fam, 'dev')]} |")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--set", type=Path, default=SET)
    ap.add_argument("--shared", type=Path, default=Path("../shared/vocalbench"))
    sub = ap.add_subparsers(dest="what", required=True)
    p = sub.add_parser("plan")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--seed", type=int, default=20261207)
    p.add_argument("specs", nargs="+", metavar="FAMILY:SOURCE[:VARIANT]:N:SPLIT")
    p = sub.add_parser("items")
    p.add_argument("--plan", type=Path, required=True)
    p.add_argument("--replies", type=Path, action="append", default=[])
    p.add_argument("--out", type=Path, required=True)
    p = sub.add_parser("add")
    p.add_argument("items", type=Path, nargs="+")
    p.add_argument("--labels", type=Path, action="append", required=True)
    args = ap.parse_args()
    if args.what == "plan":
        plan(args)
    elif args.what == "items":
        items(args)
    else:
        return add(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())

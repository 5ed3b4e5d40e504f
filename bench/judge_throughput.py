"""Judge throughput per rubric family: the rules-first judge beside the model-for-every-item one.

Judges the same K test items of every rubric family (English and Mandarin) with each judge, every
call fresh (each judge gets its own empty cache), one judge after the other (an item judged right
after another judge asked the same prompt would find it in llama.cpp's prefix cache):

- ``rules first``: the local judge as a run uses it now: the family's grader first (settled items
  and rules over grader features cost no model call), the model where the shipped fit needs it;
- ``model every item``: the same model asked the rubric's question for every item, its answer
  mapped by the default rule (what the judge did before rules came first, without its checks);
- ``local-json`` (``--json``): the model writing a JSON verdict.

    python bench/judge_throughput.py [--k 3] [--json] [--families LIST] [--judges LIST]

``--judges "rules first"`` times the rules-first judge alone (to compare two versions of it, run
this in each checkout: issue 27 measured the judge before and after its rules stopped reading length).

Prints per family and judge: verdicts, model calls, seconds per verdict, and the ratio to
``model every item``. Needs the local llama.cpp server (started on first use).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


async def measure(k: int, with_json: bool, families: set[str] | None, only: list[str] | None = None) -> None:
    from vocalbench.components.cache import ResultCache
    from vocalbench.judge import graders, rubrics
    from vocalbench.judge.calibration import load_items
    from vocalbench.judge.factory import UNFITTED, local_json_judge, local_judge

    picked: dict[str, list[Any]] = {}
    for item in load_items("test"):
        if families is None or item.family in families:
            if len(picked.setdefault(item.family, [])) < k:
                picked[item.family].append(item)
    names = ["rules first", "model every item", *(["local-json"] if with_json else [])]
    names = [n for n in names if only is None or n in only]
    seconds: dict[tuple[str, str], list[float]] = {}
    calls: dict[tuple[str, str], int] = {}
    with tempfile.TemporaryDirectory() as tmp:
        judges = {"rules first": local_judge(cache=ResultCache(Path(tmp) / "a.sqlite")),
                  "model every item": local_judge(fit=UNFITTED, cache=ResultCache(Path(tmp) / "b.sqlite")),
                  "local-json": local_json_judge(cache=ResultCache(Path(tmp) / "c.sqlite"))}
        for name in names:
            judge = judges[name]
            chat = judge.llm.chat
            count = 0

            async def counted(*args: Any, _chat: Any = chat, **kwargs: Any) -> Any:
                nonlocal count
                count += 1
                return await _chat(*args, **kwargs)

            judge.llm.chat = counted  # type: ignore[method-assign]
            for fam, items in picked.items():
                for item in items:
                    rubric = rubrics.load(item.rubric)
                    evidence = graders.grade(item.rubric, item.fields, item.meta) if name == "rules first" else None
                    before, t0 = count, time.perf_counter()
                    verdict = await judge.evaluate(rubric, item.fields, subset="bench", sample_id=item.id,
                                                   evidence=evidence)
                    seconds.setdefault((fam, name), []).append(time.perf_counter() - t0)
                    calls[(fam, name)] = calls.get((fam, name), 0) + count - before
                    print(f"{fam:30s} {name:17s} {seconds[(fam, name)][-1]:6.2f} s {count - before} call(s) "
                          f"value {verdict.value}", file=sys.stderr, flush=True)
            judge.llm.chat = chat  # type: ignore[method-assign]
    print(f"\n{k} test items per family, every call fresh\n")
    print("| family | " + " | ".join(f"{n}: s/verdict (calls)" for n in names) + " | rules first × model every item |")
    print("|---|" + "---|" * (len(names) + 1))
    totals: dict[str, list[float]] = {n: [] for n in names}
    for fam in picked:
        cells = []
        for n in names:
            totals[n] += seconds[(fam, n)]
            cells.append(f"{statistics.mean(seconds[(fam, n)]):.2f} ({calls[(fam, n)]})")
        base = statistics.mean(seconds[(fam, names[1])]) if len(names) > 1 else 0.0
        ratio = f"{statistics.mean(seconds[(fam, names[0])]) / base:.2f}" if base > 0 else "-"
        print(f"| {fam} | " + " | ".join(cells) + f" | {ratio} |")
    means = {n: statistics.mean(v) for n, v in totals.items()}
    ratio = f"{means[names[0]] / means[names[1]]:.2f}" if len(names) > 1 and means[names[1]] > 0 else "-"
    print("| **all** | " + " | ".join(f"{means[n]:.2f} ({sum(c for (f, m), c in calls.items() if m == n)})"
                                     for n in names) + f" | {ratio} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--k", type=int, default=3, help="test items per rubric family (default 3)")
    ap.add_argument("--json", action="store_true", help="also the JSON-writing judge (local-json)")
    ap.add_argument("--families", help="comma-separated rubric families (default: all)")
    ap.add_argument("--judges", help='comma-separated judges to time (default all: "rules first,model every item")')
    args = ap.parse_args()
    families = {f.strip() for f in args.families.split(",")} if args.families else None
    only = [j.strip() for j in args.judges.split(",")] if args.judges else None
    asyncio.run(measure(args.k, args.json, families, only))


if __name__ == "__main__":
    main()

"""Judge throughput: seconds per verdict of the local judges, side by side in one run.

Judges the same K calibration items (one per rubric family, English and Mandarin, test split)
with each judge, every call fresh (each judge gets its own empty cache). Each judge takes all the
items in one pass, one judge after the other: judging an item right after another judge asked the
same prompt would find it in llama.cpp's prefix cache and look faster than it is.

- ``local-json``: the model writing a JSON verdict (the judge before calibration);
- ``local``: the calibrated judge as a run uses it (the main question and the checks its rule weighs);
- ``local, every check``: the calibrated judge as judge-check uses it (every check).

    python bench/judge_throughput.py [--k 12]

Prints per judge: verdicts, model calls, prompt and completion tokens, seconds per verdict and
its ratio to ``local-json``. Needs the local llama.cpp server (started on first use).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

JUDGES = ("local-json", "local", "local, every check")


async def measure(k: int) -> None:
    from vocalbench.components.cache import ResultCache
    from vocalbench.components.calibration import load_items
    from vocalbench.components.judges import local_judge, local_json_judge
    from vocalbench.scoring import rubrics

    picked, seen = [], set()
    for item in load_items("test"):
        if item.family not in seen:
            seen.add(item.family)
            picked.append(item)
    picked = picked[:k]
    with tempfile.TemporaryDirectory() as tmp:
        calls: dict[str, list[dict]] = {name: [] for name in JUDGES}

        def booker(name: str):
            return lambda record: calls[name].append(record)

        judges = {
            "local-json": local_json_judge(cache=ResultCache(Path(tmp) / "a.sqlite"), on_call=booker("local-json")),
            "local": local_judge(cache=ResultCache(Path(tmp) / "b.sqlite"), on_call=booker("local")),
            "local, every check": local_judge(cache=ResultCache(Path(tmp) / "c.sqlite"), ask_every_check=True,
                                              on_call=booker("local, every check")),
        }
        requests = {name: 0 for name in JUDGES}
        seconds: dict[str, list[float]] = {name: [] for name in JUDGES}
        for name in JUDGES:
            for item in picked:
                rubric = rubrics.load(item.rubric)
                judge = judges[name]
                llm = judge.llm
                chat = llm.chat
                count = 0

                async def counted(*args, _chat=chat, **kwargs):
                    nonlocal count
                    count += 1
                    return await _chat(*args, **kwargs)

                llm.chat = counted  # type: ignore[method-assign]
                t0 = time.perf_counter()
                verdict = await judge.evaluate(rubric, item.fields, subset="bench", sample_id=item.id)
                seconds[name].append(time.perf_counter() - t0)
                llm.chat = chat  # type: ignore[method-assign]
                requests[name] += count
                print(f"{item.family:30s} {name:20s} {seconds[name][-1]:6.1f} s  {count} call(s)  "
                      f"value {verdict.value}", file=sys.stderr, flush=True)
    base = statistics.mean(seconds["local-json"])
    print(f"\n{len(picked)} calibration items (one per family), every call fresh\n")
    print("| judge | verdicts | model calls | prompt tokens | completion tokens | s / verdict (mean) | median | × local-json |")
    print("|---|---|---|---|---|---|---|---|")
    for name in JUDGES:
        rows = calls[name]
        prompt = sum(r.get("prompt_tokens") or 0 for r in rows)
        completion = sum(r.get("completion_tokens") or 0 for r in rows)
        mean = statistics.mean(seconds[name])
        print(f"| {name} | {len(seconds[name])} | {requests[name]} | {prompt} | {completion} | {mean:.2f} | "
              f"{statistics.median(seconds[name]):.2f} | {mean / base:.2f} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--k", type=int, default=12, help="items (one per rubric family; default 12)")
    asyncio.run(measure(ap.parse_args().k))


if __name__ == "__main__":
    main()

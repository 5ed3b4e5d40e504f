"""Ask a calibrated judge's model every question of every calibration item and keep its raw answers.

    python scripts/judge_calibration/collect_raw.py --base-url http://127.0.0.1:8392/v1 \
        --model qwen2.5-1.5b --out raw-1.5b.jsonl [--families F ...] [--split dev|test] [--main-only]

The raw answers (the main answer's probabilities and each check's p_yes) are what a fit reads and
what ships beside the local judge's fit (judge/calibration/raw/), so anyone can refit or
re-check without calling the model. Resumable: items already in ``--out`` with the same rubric
hash are skipped; answers also land in the judge cache.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from pathlib import Path

from vocalbench.components.llm import OpenAIChat
from vocalbench.judge import rubrics
from vocalbench.judge.calibrated import CalibratedJudge, Calibration
from vocalbench.judge.calibration import load_items
from vocalbench.judge.fit import needing_the_model


async def main_async(args: argparse.Namespace) -> None:
    items = load_items(args.split, args.families or None)
    done: set[tuple[str, str]] = set()
    for path in [args.out, *args.also]:
        if not path.exists():
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                rec = json.loads(line)
                if rec["raw"] is not None and (args.main_only or None not in rec["raw"]["checks"]):
                    done.add((rec["id"], rec["rubric_hash"]))
    todo = [i for i in items if (i.id, rubrics.load(i.rubric).hash) not in done]
    if args.skip_settled:  # items a settling grader decides never reach the model
        todo = needing_the_model(todo, load_items("dev"))
    # scale families first, then by rubric (a server reuses the rubric's prompt prefix)
    todo.sort(key=lambda i: (rubrics.load(i.rubric).kind != "scale", i.rubric, i.split, i.id))
    llm = OpenAIChat(args.model, args.base_url, timeout=900.0)
    # --main-only: the rubric's own question alone (the default rule weighs only it); else every check too
    judge = CalibratedJudge(llm, Calibration("collect", args.model), ask_every_check=not args.main_only,
                            concurrency=1)
    print(f"{len(todo)} items to ask ({len(items) - len(todo)} done)", flush=True)
    t_start = time.perf_counter()
    with args.out.open("a", encoding="utf-8") as f:
        for n, item in enumerate(todo, 1):
            rubric = rubrics.load(item.rubric)
            t0 = time.perf_counter()
            raw, verdict = await judge.model_answers(rubric, item.fields, subset="collect", sample_id=item.id)
            rec = {"id": item.id, "rubric": item.rubric, "rubric_hash": rubric.hash, "raw": raw,
                   "error": verdict.error}
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")
            f.flush()
            rate = n / (time.perf_counter() - t_start)
            print(f"[{n}/{len(todo)}] {item.id} {time.perf_counter() - t0:.1f}s ({rate * 60:.1f}/min)", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--base-url", required=True)
    ap.add_argument("--model", required=True, help="the model's name as the fit records it")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--split", default="all", choices=("dev", "test", "all"))
    ap.add_argument("--families", nargs="*", default=[])
    ap.add_argument("--also", type=Path, action="append", default=[], help="other files of answers already made")
    ap.add_argument("--main-only", action="store_true", help="ask only the rubric's own question (1 request per item)")
    ap.add_argument("--skip-settled", action="store_true",
                    help="leave out items whose grader settles them in a family whose settling passes on dev")
    asyncio.run(main_async(ap.parse_args()))


if __name__ == "__main__":
    main()

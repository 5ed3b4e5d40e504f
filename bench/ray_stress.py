"""Ray scoring stress drill (issue 29; not a test): many Ray scoring runs of one generated run.

    python bench/ray_stress.py [--runs 10] [--items 8] [--replicas 2,3] [--kill-every 2] [--shared DIR]

A single_round run of ``--items`` official items with spoken replies (tests/scoring/spoken_replies.py)
is scored once locally (the reference), then ``--runs`` times on a fresh local Ray (127.0.0.1 only)
from a fresh result cache, with the ASR replicas taking turns from ``--replicas``; every
``--kill-every``-th run SIGKILLs replica 0's worker after a quarter of the items came back. Each run
must score every item exactly once per score name and give the local summary but for timing
(tests/scoring/ray_drill.py). Prints one line per run and the totals; exit status 1 on any miss.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "scoring"))

from ray_drill import Outcome, local_summary, stress_run  # noqa: E402  (the test's own drill)
from spoken_replies import spoken_release  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=10, help="Ray scoring runs (default 10)")
    ap.add_argument("--items", type=int, default=8, help="single_round items of the run (default 8)")
    ap.add_argument("--replicas", default="2,3", help="ASR replicas, taken in turn run by run (default 2,3)")
    ap.add_argument("--kill-every", type=int, default=2, help="SIGKILL a replica in every K-th run (0: never)")
    ap.add_argument("--shared", default=str(ROOT.parent / "shared" / "vocalbench"))
    args = ap.parse_args()
    shared = Path(args.shared)
    if not (shared / "en" / "outputs" / "llama-omni" / "wav").is_dir():
        print(f"official outputs not found under {shared}", file=sys.stderr)
        return 2
    replicas = [int(x) for x in args.replicas.split(",") if x.strip()]
    work = Path(tempfile.mkdtemp(prefix="vocalbench-ray-stress-"))
    from vocalbench.cli import main as vocalbench

    rel, script = spoken_release(work, shared, args.items)
    run = work / "run"
    if vocalbench(["generate", "--system", f"scripted:{script}", "--data", str(rel), "--lang", "en", "--out",
                   str(run), "--quiet", "--no-warmup"]) != 0:
        return 2
    reference = local_summary(run, work / "local")
    outcomes: list[Outcome] = []
    for k in range(args.runs):
        kill = max(1, args.items // 4) if args.kill_every and (k + 1) % args.kill_every == 0 else None
        t0 = time.monotonic()
        got = stress_run(run, work / f"ray{k}", reference, replicas[k % len(replicas)], kill)
        outcomes.append(got)
        print(f"run {k + 1}/{args.runs}: asr={got.replicas} items expected {got.items}, scored {got.scored}, "
              f"wer n {got.wer_n} scored {got.wer_scored}, killed {got.killed or '-'}, replaced {got.replaced}, "
              f"same summary {got.same_summary}, {time.monotonic() - t0:.0f} s{'' if got.ok else '  MISS ' + got.difference}",
              flush=True)
    bad = [o for o in outcomes if not o.ok]
    print(f"\n{len(outcomes)} runs x replicas {args.replicas}: items expected {sum(o.items for o in outcomes)}, "
          f"scored (clarity) {sum(o.scored.get('clarity', 0) for o in outcomes)}, kills "
          f"{sum(o.killed is not None for o in outcomes)}, replicas replaced {sum(o.replaced for o in outcomes)}, "
          f"misses {len(bad)}; load average {'/'.join(f'{x:.1f}' for x in os.getloadavg())}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

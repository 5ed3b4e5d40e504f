"""Scoring benchmarks, measured side by side in one run (not a test).

1. Rule-based scoring throughput: the English knowledge scorer over the 2,000 official
   llama-omni replies (scorer alone, and the whole engine: store read, scoring, score writes,
   aggregation, summary), and word-level WER counts of 200 single-round replies.
2. Re-scoring a fully scored run: the imported llama-omni outputs (8 subsets, 5,800 items).
   The judge-based subsets are pre-filled once with a deterministic stand-in judge (the tests'
   OpenAI-compatible double, tests/scoring/engine_fake_judge.py): **their values are not real
   judge verdicts**, they only make the run complete. Then ``score_run`` (everything skipped) is
   timed against just loading the store (samples + replies + scores parsed), at 1x and at 4x
   size (synthetic copies of every item with new ids); peak traced memory of both.

Usage: ``python bench/score_bench.py [--shared ../shared/vocalbench] [--repeat 3]``.
Prints the measurements and their ratios; exits 0. Uses a temporary VOCALBENCH_CACHE.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sqlite3
import statistics
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def timed(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """Median wall time of ``repeat`` calls and the last result."""
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def traced_peak(fn: Callable[[], Any]) -> float:
    """Peak Python-traced memory (MiB) while ``fn`` runs."""
    tracemalloc.start()
    tracemalloc.reset_peak()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def cli(*argv: str) -> None:
    from vocalbench.cli import main

    rc = main(list(argv))
    if rc != 0:
        raise SystemExit(f"vocalbench {' '.join(argv)} exited {rc}")


# -- 1. rule-based throughput ----------------------------------------------------------------------
def bench_rule_based(shared: Path, work: Path, repeat: int) -> dict[str, float]:
    from vocalbench.run_config import RunConfig
    from vocalbench.runner.store import RunStore
    from vocalbench.scoring.base import ScoringContext
    from vocalbench.scoring.engine import score_run_sync
    from vocalbench.scoring.subsets.knowledge import KnowledgeEn
    from vocalbench.text import wer_counts

    outputs = shared / "en" / "outputs" / "llama-omni"
    run = work / "knowledge"
    cli("import", "--outputs", str(outputs), "--data", str(shared), "--lang", "en", "--out", str(run),
        "--subsets", "knowledge", "--quiet")
    with RunStore(run) as store:
        samples = list(store.samples("knowledge"))
        replies = store.replies("knowledge")
        sr_replies = [r for r in store.replies().values()]
    pairs = [(s, replies[(s.subset, s.id)]) for s in samples]
    scorer = KnowledgeEn("v2")
    ctx = ScoringContext(lang="en", protocol="v2")

    async def score_all() -> int:
        n = 0
        for s, r in pairs:
            n += len(await scorer.score(s, r, ctx))
        return n

    t_scorer, _ = timed(lambda: asyncio.run(score_all()), repeat)

    def engine() -> None:
        with sqlite3.connect(str(run / "store.sqlite")) as db:
            db.execute("DELETE FROM scores")
        score_run_sync(run, RunConfig.load(run).updated(judge="none", quiet=True), progress=False)

    t_engine, _ = timed(engine, repeat)
    mem_engine = traced_peak(engine)

    sr_run = work / "single_round"
    cli("import", "--outputs", str(outputs), "--data", str(shared), "--lang", "en", "--out", str(sr_run),
        "--subsets", "single_round", "--quiet")
    with RunStore(sr_run) as store:
        texts = [r.text or "" for r in store.replies("single_round").values()][:200]
    hyps = [" ".join(w for i, w in enumerate(t.lower().split()) if i % 7 != 3) for t in texts]  # ASR-like deletions

    def wer_all() -> float:
        d = n = 0
        for ref, hyp in zip(texts, hyps, strict=True):
            a, b = wer_counts(ref, hyp)
            d, n = d + a, n + b
        return d / n * 100

    t_wer, wer = timed(wer_all, repeat)
    mem_wer = traced_peak(wer_all)
    del sr_replies
    return {"knowledge_items": len(pairs), "scorer_items_per_s": len(pairs) / t_scorer,
            "engine_items_per_s": len(pairs) / t_engine, "engine_seconds": t_engine, "engine_peak_mib": mem_engine,
            "wer_items": len(texts), "wer_items_per_s": len(texts) / t_wer, "wer_percent": wer, "wer_peak_mib": mem_wer}


# -- 2. fully cached re-score ---------------------------------------------------------------------------
def prefill(shared: Path, run: Path) -> str:
    """Import all llama-omni subsets and score them once with the stand-in judge; returns its SPEC."""
    sys.path.insert(0, str(ROOT / "tests" / "scoring"))
    from engine_fake_judge import FakeJudgeServer  # the tests' deterministic OpenAI-compatible double

    cli("import", "--outputs", str(shared / "en" / "outputs" / "llama-omni"), "--data", str(shared),
        "--lang", "en", "--out", str(run), "--system", "llama-omni (judge pre-filled by a stand-in)", "--quiet")
    with FakeJudgeServer(delay=0.0, model="prefill-stand-in-judge") as srv:
        spec = srv.spec
        cli("score", str(run), "--judge", spec, "--emotion", "none", "--asr", "none", "--mos", "none",
            "--judge-concurrency", "4", "--quiet")
    return spec


def replicate(src: Path, dst: Path, copies: int) -> None:
    """``dst`` = ``src`` with every sample, reply and score repeated ``copies`` times under new ids."""
    import shutil

    shutil.copytree(src, dst)
    db = sqlite3.connect(str(dst / "store.sqlite"))
    with db:
        for k in range(1, copies):
            suffix = f"~c{k}"
            db.execute("INSERT INTO samples SELECT subset, sample_id || ?, idx + ?, "
                       "json_set(record, '$.id', sample_id || ?, '$.index', idx + ?) FROM samples "
                       "WHERE sample_id NOT LIKE '%~c%'", (suffix, k * 1_000_000, suffix, k * 1_000_000))
            db.execute("INSERT INTO replies SELECT subset, sample_id || ?, failed, "
                       "json_set(record, '$.sample_id', sample_id || ?) FROM replies WHERE sample_id NOT LIKE '%~c%'",
                       (suffix, suffix))
            db.execute("INSERT INTO scores SELECT subset, sample_id || ?, name, evaluator, "
                       "json_set(record, '$.sample_id', sample_id || ?) FROM scores WHERE sample_id NOT LIKE '%~c%'",
                       (suffix, suffix))
    db.execute("VACUUM")
    db.close()


def bench_rescore(run: Path, spec: str, repeat: int) -> dict[str, float]:
    from vocalbench.run_config import RunConfig
    from vocalbench.runner.store import RunStore
    from vocalbench.scoring.engine import score_run_sync

    cfg = RunConfig.load(run).updated(judge=spec, quiet=True)

    def load_store() -> int:
        with RunStore(run) as store:
            return len(list(store.samples())) + len(store.replies()) + len(store.scores())

    def rescore() -> dict[str, Any]:
        return score_run_sync(run, cfg, progress=False).to_dict()

    rescore()  # warm the OS file cache and the imports the same way for both
    t_load, records = timed(load_store, repeat)
    t_rescore, summary = timed(rescore, repeat)
    with RunStore(run) as store:
        last = store.get_meta("last_score")
        items = store.counts()["samples"]
    assert last["scored_items"] == 0 and last["judge_calls"] == 0, f"re-score was not a pure skip: {last}"
    return {"items": items, "records": records, "load_s": t_load, "rescore_s": t_rescore,
            "ratio": t_rescore / t_load, "load_peak_mib": traced_peak(load_store),
            "rescore_peak_mib": traced_peak(rescore), "complete": all(r["complete"] for n, r in summary["subsets"].items()
                                                                       if n not in ("fcl_ms", "rtf", "utmos"))}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", default=str(ROOT.parent / "shared" / "vocalbench"))
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    shared = Path(args.shared)
    if not (shared / "en" / "outputs" / "llama-omni").is_dir():
        print(f"official data/outputs not found at {shared}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="vb-bench-") as tmp:
        work = Path(tmp)
        os.environ["VOCALBENCH_CACHE"] = str(work / "cache")
        import logging

        logging.disable(logging.WARNING)
        rb = bench_rule_based(shared, work, args.repeat)
        print(f"== rule-based scoring (median of {args.repeat})")
        print(f"knowledge scorer alone : {rb['scorer_items_per_s']:9.0f} items/s ({rb['knowledge_items']} items)")
        print(f"knowledge via engine   : {rb['engine_items_per_s']:9.0f} items/s ({rb['engine_seconds']:.2f} s incl. "
              f"store, writes, summary; peak {rb['engine_peak_mib']:.1f} MiB traced)")
        print(f"  engine / scorer time : {rb['scorer_items_per_s'] / rb['engine_items_per_s']:.2f}x")
        print(f"WER counts             : {rb['wer_items_per_s']:9.0f} items/s ({rb['wer_items']} replies, "
              f"corpus WER {rb['wer_percent']:.2f} %, peak {rb['wer_peak_mib']:.1f} MiB traced)")

        t0 = time.perf_counter()
        base = work / "full-1x"
        spec = prefill(shared, base)
        print(f"\n== fully scored run (judge-based subsets pre-filled by a stand-in judge in {time.perf_counter() - t0:.0f} s;"
              " values are not real verdicts)")
        big = work / "full-4x"
        replicate(base, big, 4)
        rows = {}
        for label, run in (("1x", base), ("4x", big)):
            r = bench_rescore(run, spec, args.repeat)
            rows[label] = r
            print(f"{label}: {r['items']} items, {r['records']} records | load store {r['load_s']:.2f} s | "
                  f"re-score {r['rescore_s']:.2f} s | ratio {r['ratio']:.2f}x (target <= 1.5) | "
                  f"peak traced: load {r['load_peak_mib']:.1f} MiB, re-score {r['rescore_peak_mib']:.1f} MiB | "
                  f"complete {r['complete']}")
        one, four = rows["1x"], rows["4x"]
        print(f"4x / 1x: items {four['items'] / one['items']:.1f}x, re-score time {four['rescore_s'] / one['rescore_s']:.2f}x, "
              f"re-score peak {four['rescore_peak_mib'] / one['rescore_peak_mib']:.2f}x, "
              f"peak per 1k items {one['rescore_peak_mib'] / one['items'] * 1000:.1f} vs "
              f"{four['rescore_peak_mib'] / four['items'] * 1000:.1f} MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

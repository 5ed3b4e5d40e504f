"""Runner benchmark: throughput, harness overhead and FCL measurement error, side by side in one run.

    python bench/runner_bench.py [--adapter http|openai-audio|realtime] [--n 256]

1. Throughput against a served scripted system with a fixed 0.5 s reply time: concurrency 32
   vs the ideal 64 replies/s, and vs a sequential loop (concurrency 1) measured in the same run.
2. Harness overhead per reply at concurrency 1: the in-process scripted system with no delay
   through the whole generator (collect, retries, wav write, store), per reply.
3. FCL measurement error: measured FCL minus the configured first-chunk delay over a served
   scripted system, median and p99 at concurrency 1 and 16.
Targets: throughput >= 0.8 x ideal and >= 25 x sequential; overhead < 5 ms; FCL error <= 10 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from vocalbench.audio import write
from vocalbench.config import RunConfig
from vocalbench.records import AudioRef, Sample
from vocalbench.runner.generate import LocalExecutor, generate
from vocalbench.runner.store import RunStore
from vocalbench.systems import resolve
from vocalbench.systems.serve import ServeProcess

REPLY_SECONDS = 0.5
FCL_DELAY = 0.3


def samples(tmp: Path, n: int, tag: str) -> list[Sample]:
    wav = tmp / "query.wav"
    if not wav.exists():
        t = np.arange(16000) / 16000
        write(wav, (0.2 * np.sin(2 * np.pi * 300 * t)).astype(np.float32), 16000)
    return [Sample(id=f"{tag}-{i:04d}", subset="single_round", lang="en", index=i, audio=AudioRef(path=str(wav)))
            for i in range(n)]


def spec_for(adapter: str, url: str) -> str:
    return {"http": f"http:{url}/v1/vocalbench/stream", "openai-audio": f"openai-audio:bench@{url}/v1",
            "realtime": f"realtime:bench@{url}/v1"}[adapter]


async def timed_run(tmp: Path, spec: str, items: list[Sample], concurrency: int) -> tuple[float, list]:
    cfg = RunConfig(quiet=True, concurrency=concurrency, warmup=True, max_attempts=1)
    with RunStore(tmp / f"run-{time.monotonic_ns()}") as store:
        store.add_samples(items)
        t0 = time.monotonic()
        res = await generate(store, items, cfg, LocalExecutor(resolve(spec), cfg), progress=False)
        wall = time.monotonic() - t0 - (res.warmup or {}).get("seconds", 0.0)
        replies = list(store.replies().values())
    if res.failed:
        raise RuntimeError(f"{res.failed} replies failed: {res.errors}")
    return wall, replies


def pct(xs: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(xs), q))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--adapter", choices=("http", "openai-audio", "realtime"), default="http")
    ap.add_argument("--n", type=int, default=256, help="replies of the concurrency-32 throughput run")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="vocalbench-bench-"))
    results: dict[str, float] = {}

    fixed = tmp / "fixed.jsonl"
    fixed.write_text(json.dumps({"id": "*", "text": "A fixed reply.", "audio": {"tone": 220, "seconds": 1.0},
                                 "first_chunk_delay": REPLY_SECONDS, "chunk_seconds": 1.0}) + "\n")
    fcl = tmp / "fcl.jsonl"
    fcl.write_text(json.dumps({"id": "*", "text": "A timed reply.", "audio": {"tone": 220, "seconds": 1.0},
                               "first_chunk_delay": FCL_DELAY, "chunk_seconds": 0.25, "chunk_interval": 0.05}) + "\n")
    instant = tmp / "instant.jsonl"
    instant.write_text(json.dumps({"id": "*", "text": "An instant reply.", "audio": {"tone": 220, "seconds": 1.0},
                                   "chunk_seconds": 0.25}) + "\n")

    with ServeProcess(f"scripted:{fixed}") as url:
        spec = spec_for(args.adapter, url)
        seq_wall, _ = asyncio.run(timed_run(tmp, spec, samples(tmp, 8, "seq"), 1))
        par_wall, _ = asyncio.run(timed_run(tmp, spec, samples(tmp, args.n, "par"), 32))
    seq_rate, par_rate, ideal = 8 / seq_wall, args.n / par_wall, 32 / REPLY_SECONDS
    results.update(seq_rate=seq_rate, par_rate=par_rate)

    overhead_wall, _ = asyncio.run(timed_run(tmp, f"scripted:{instant}", samples(tmp, 200, "ovh"), 1))
    overhead_ms = overhead_wall / 200 * 1000

    fcl_err: dict[int, list[float]] = {}
    with ServeProcess(f"scripted:{fcl}") as url:
        spec = spec_for(args.adapter, url)
        for conc, n in ((1, 40), (16, 160)):
            _, replies = asyncio.run(timed_run(tmp, spec, samples(tmp, n, f"fcl{conc}"), conc))
            fcl_err[conc] = [r.timings.fcl_ms - FCL_DELAY * 1000 for r in replies]

    print(f"runner bench (adapter {args.adapter}, served scripted system, 127.0.0.1)")
    print(f"  throughput @32:    {par_rate:7.1f} replies/s  = {par_rate / ideal:5.2f} x ideal ({ideal:.0f}/s)"
          f"   target >= 0.80  {'OK' if par_rate / ideal >= 0.8 else 'MISS'}")
    print(f"  sequential loop:   {seq_rate:7.2f} replies/s  -> concurrency 32 is {par_rate / seq_rate:5.1f} x"
          f"   target >= 25    {'OK' if par_rate / seq_rate >= 25 else 'MISS'}")
    print(f"  harness overhead:  {overhead_ms:7.2f} ms/reply at concurrency 1 (in-process, no delay)"
          f"   target < 5 ms   {'OK' if overhead_ms < 5 else 'MISS'}")
    for conc, errs in fcl_err.items():
        med, p99 = statistics.median(errs), pct(errs, 99)
        ok = "OK" if max(abs(med), abs(p99)) <= 10 else "MISS"
        print(f"  FCL error @{conc:<2}:     median {med:6.2f} ms, p99 {p99:6.2f} ms (n={len(errs)}, configured "
              f"{FCL_DELAY * 1000:.0f} ms)   target <= 10 ms  {ok}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

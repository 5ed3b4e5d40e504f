"""Runner benchmark: throughput, harness overhead and FCL/FAA measurement error, side by side in one run.

    python bench/runner_bench.py [--adapters http,realtime,openai-audio] [--n 256]

1. Throughput against a served scripted system with a fixed 0.5 s reply time: concurrency 32
   vs the ideal 64 replies/s, and vs a sequential loop (concurrency 1) measured in the same run.
2. Harness overhead per reply at concurrency 1: the in-process scripted system with no delay
   through the whole generator (collect, retries, wav write, store), per reply (adapter-independent).
3. FCL measurement error: measured FCL minus the configured first-chunk delay over a served
   scripted system, median and p99 at concurrency 1 and 16; the same for first audible audio (the
   reply starts with 400 ms of silence: configured FAA = delay + 400 ms).
Targets: throughput >= 0.8 x ideal and >= 25 x sequential; overhead < 5 ms; FCL error <= 10 ms;
FAA error <= 20 ms (FCL's error plus one 10 ms analysis frame).
Every adapter runs against the same two servers (``vocalbench serve``, one process each) on this
machine, so client and server share its CPUs; the load average is printed with the results.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
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

ADAPTERS = ("http", "realtime", "openai-audio")
REPLY_SECONDS = 0.5
FCL_DELAY = 0.3
LEAD_SILENCE = 0.4  # the timed reply starts with this much silence: FAA = FCL + 400 ms
IDEAL = 32 / REPLY_SECONDS


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
    # the bench items are single_round (latency) items: run them at the concurrency under test
    cfg = RunConfig(quiet=True, concurrency=concurrency, latency_concurrency=concurrency, warmup=True,
                    max_attempts=1)
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


def bench_adapter(adapter: str, tmp: Path, fixed_url: str, fcl_url: str, n: int) -> dict[str, float]:
    """Throughput (sequential and at 32) and FCL error (at 1 and 16) of one adapter."""
    spec = spec_for(adapter, fixed_url)
    seq_wall, _ = asyncio.run(timed_run(tmp, spec, samples(tmp, 8, f"{adapter}-seq"), 1))
    par_wall, _ = asyncio.run(timed_run(tmp, spec, samples(tmp, n, f"{adapter}-par"), 32))
    out = {"seq": 8 / seq_wall, "par": n / par_wall}
    spec = spec_for(adapter, fcl_url)
    for conc, k in ((1, 40), (16, 160)):
        _, replies = asyncio.run(timed_run(tmp, spec, samples(tmp, k, f"{adapter}-fcl{conc}"), conc))
        errs = [r.timings.fcl_ms - FCL_DELAY * 1000 for r in replies]
        out[f"med{conc}"], out[f"p99_{conc}"] = statistics.median(errs), pct(errs, 99)
        faa = [r.timings.faa_ms - (FCL_DELAY + LEAD_SILENCE) * 1000 for r in replies]
        out[f"faa_med{conc}"], out[f"faa_p99_{conc}"] = statistics.median(faa), pct(faa, 99)
    out["load1"] = os.getloadavg()[0]
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--adapters", default=",".join(ADAPTERS),
                    help=f"comma-separated, from {', '.join(ADAPTERS)} (default: all)")
    ap.add_argument("--n", type=int, default=256, help="replies of the concurrency-32 throughput run")
    args = ap.parse_args()
    adapters = [a.strip() for a in args.adapters.split(",") if a.strip()]
    if not adapters or set(adapters) - set(ADAPTERS):
        ap.error(f"--adapters: choose from {', '.join(ADAPTERS)}")
    tmp = Path(tempfile.mkdtemp(prefix="vocalbench-bench-"))
    load_before = os.getloadavg()

    fixed = tmp / "fixed.jsonl"
    fixed.write_text(json.dumps({"id": "*", "text": "A fixed reply.", "audio": {"tone": 220, "seconds": 1.0},
                                 "first_chunk_delay": REPLY_SECONDS, "chunk_seconds": 1.0}) + "\n")
    fcl = tmp / "fcl.jsonl"
    fcl.write_text(json.dumps({"id": "*", "text": "A timed reply.",
                               "audio": {"tone": 220, "seconds": 1.0, "lead_silence": LEAD_SILENCE},
                               "first_chunk_delay": FCL_DELAY, "chunk_seconds": 0.25, "chunk_interval": 0.05}) + "\n")
    instant = tmp / "instant.jsonl"
    instant.write_text(json.dumps({"id": "*", "text": "An instant reply.", "audio": {"tone": 220, "seconds": 1.0},
                                   "chunk_seconds": 0.25}) + "\n")

    overhead_wall, _ = asyncio.run(timed_run(tmp, f"scripted:{instant}", samples(tmp, 200, "ovh"), 1))
    overhead_ms = overhead_wall / 200 * 1000
    results: dict[str, dict[str, float]] = {}
    with ServeProcess(f"scripted:{fixed}") as fixed_url, ServeProcess(f"scripted:{fcl}") as fcl_url:
        for adapter in adapters:
            results[adapter] = bench_adapter(adapter, tmp, fixed_url, fcl_url, args.n)
    load_after = os.getloadavg()

    def ok(good: bool) -> str:
        return "ok" if good else "MISS"

    print(f"runner bench: served scripted system on 127.0.0.1, {os.cpu_count()} CPUs shared by client and server; "
          f"load average (1/5/15 min) {'/'.join(f'{x:.2f}' for x in load_before)} before, "
          f"{'/'.join(f'{x:.2f}' for x in load_after)} after")
    print(f"targets: @32 >= 0.80 x ideal {IDEAL:.0f}/s and >= 25 x sequential; overhead < 5 ms; "
          f"FCL error |median| and |p99| <= 10 ms (configured {FCL_DELAY * 1000:.0f} ms)")
    print(f"harness overhead at concurrency 1 (in-process, no delay): {overhead_ms:.2f} ms/reply  {ok(overhead_ms < 5)}")
    print(f"{'adapter':<13}{'@32 /s':>8}{'x ideal':>12}{'x seq':>12}{'FCL err @1 ms':>21}{'FCL err @16 ms':>21}"
          f"{'load':>7}")
    print(f"{'':<13}{'':>8}{'':>12}{'':>12}{'median / p99':>21}{'median / p99':>21}{'1 min':>7}")
    for adapter, r in results.items():
        ideal, seq = r["par"] / IDEAL, r["par"] / r["seq"]
        cells = [f"{r['par']:8.1f}{ideal:7.2f} {ok(ideal >= 0.8):<4}{seq:7.1f} {ok(seq >= 25):<4}"]
        for conc in (1, 16):
            med, p99 = r[f"med{conc}"], r[f"p99_{conc}"]
            cells.append(f"{med:8.1f} /{p99:6.1f} {ok(max(abs(med), abs(p99)) <= 10):<4}")
        print(f"{adapter:<13}{''.join(cells)}{r['load1']:7.2f}")
    print(f"first audible audio error (configured {(FCL_DELAY + LEAD_SILENCE) * 1000:.0f} ms: "
          f"{FCL_DELAY * 1000:.0f} ms to the first chunk + {LEAD_SILENCE * 1000:.0f} ms of leading silence), "
          f"target |median| and |p99| <= 20 ms (FCL's 10 ms + one 10 ms frame)")
    for adapter, r in results.items():
        cells = []
        for conc in (1, 16):
            med, p99 = r[f"faa_med{conc}"], r[f"faa_p99_{conc}"]
            cells.append(f"  @{conc}: {med:6.1f} /{p99:6.1f} ms {ok(max(abs(med), abs(p99)) <= 20)}")
        print(f"{adapter:<13}{''.join(cells)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Duplex replay schedule benchmark (not a test): how late input chunks are sent against their plan.

    python bench/duplex_jitter.py [--seconds S] [--chunk-ms C] [--concurrency 1,8,16]

Serves the scripted realtime double (``vocalbench serve --turn-detection energy``, its own process,
a reply to every turn) and replays S seconds of synthetic speech-like input (tone bursts and
pauses, so turns, replies and barge-ins happen) at each concurrency, all scenarios at once; prints
the send lateness of every chunk (send time - planned time) as p50 / p99 / max in ms per
concurrency side by side, and the ratio of p99 to the 10 ms target. Target: p99 <= 10 ms at the
default concurrency (8, the realtime systems' default).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

from vocalbench.components.vad import TurnSettings
from vocalbench.duplex.replay import replay
from vocalbench.systems.serve import ServeProcess

RATE = 24000
TARGET_P99_MS = 10.0


def speechlike(seconds: float, seed: int) -> np.ndarray:
    """Bursts of 0.4-2 s tone separated by 0.3-2.5 s of silence."""
    rng = np.random.default_rng(seed)
    out: list[np.ndarray] = []
    total = 0
    while total < seconds * RATE:
        n = int(rng.uniform(0.4, 2.0) * RATE)
        t = np.arange(n) / RATE
        out.append((0.3 * np.sin(2 * np.pi * rng.uniform(150, 400) * t)).astype(np.float32))
        out.append(np.zeros(int(rng.uniform(0.3, 2.5) * RATE), dtype=np.float32))
        total += out[-1].size + out[-2].size
    return np.concatenate(out)[:int(seconds * RATE)]


async def wave(url: str, n: int, seconds: float, chunk_ms: int, tmp: Path) -> list[float]:
    settings = TurnSettings(vad="energy")
    results = await asyncio.gather(*(replay(url, speechlike(seconds, i), tmp / f"c{n}-{i}", settings=settings,
                                            chunk_ms=chunk_ms) for i in range(n)))
    errors = [r.error for r in results if r.error]
    if errors:
        print(f"  {len(errors)} replay errors, e.g. {errors[0]}", file=sys.stderr)
    return [v for r in results for v in r.send_lateness_ms]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--chunk-ms", type=int, default=40)
    ap.add_argument("--concurrency", default="1,8,16")
    args = ap.parse_args()
    levels = [int(c) for c in args.concurrency.split(",")]
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        script = tmp / "double.jsonl"
        script.write_text(json.dumps({"id": "*", "text": "a reply", "audio": {"tone": 500, "seconds": 3.0},
                                      "first_chunk_delay": 0.3, "chunk_seconds": 0.1, "chunk_interval": 0.1}) + "\n")
        with ServeProcess(f"scripted:{script}", extra_args=["--turn-detection", "energy"]) as base:
            url = base.replace("http://", "ws://") + "/v1/realtime?model=double"
            rows = []
            for n in levels:
                late = np.asarray(asyncio.run(wave(url, n, args.seconds, args.chunk_ms, tmp)))
                rows.append((n, late.size, *np.percentile(late, [50, 99]), late.max()))
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"chunk {args.chunk_ms} ms, {args.seconds:g} s per scenario, scripted double in its own process; "
          f"load average {load} on {os.cpu_count()} CPUs")
    print(f"{'concurrency':>11} {'chunks':>7} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8} {'p99/target':>10}")
    for n, count, p50, p99, mx in rows:
        print(f"{n:>11} {count:>7} {p50:>8.2f} {p99:>8.2f} {mx:>8.2f} {p99 / TARGET_P99_MS:>10.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

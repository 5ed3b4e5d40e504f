"""Ray scale-out benchmark, measured side by side in one run (not a test).

    python bench/ray_bench.py [--shared ../shared/vocalbench] [--n 16] [--cascade-n 3] [--no-cascade]

1. A sleep-bound system (scripted, 0.5 s a reply, one reply at a time per replica, like a
   single-slot model server): replies/s with 1 and 2 replicas (goal >= 1.9x).
2. The CPU-bound offline cascade (faster-whisper -> llama.cpp -> Kokoro): replies/s with 1 and 2
   replicas on this machine's cores (model loading excluded; honest, whatever it is).
3. Driver overhead per item: an instant scripted system through the local executor and through
   one Ray replica, concurrency 1; the difference per reply is what Ray adds.
4. Replica-kill drill: 2 replicas of the sleep-bound system, replica 0's worker SIGKILLed after a
   quarter of the replies; every sample must be answered once, none lost or written twice.
5. Scoring, local vs Ray (``vocalbench score`` in a subprocess each, fresh result caches):
   a. the imported LLaMA-Omni English outputs, knowledge (rule-based, 2,000 items) and safety (400
      items, judge-based) with a stand-in OpenAI-compatible judge (the tests' double,
      tests/scoring/engine_fake_judge.py, 50 ms a call: its verdicts are not real), local at
      --judge-concurrency 2 vs Ray with judge=2 replicas of 2 calls each;
   b. ASR (Whisper base) + MOS (DistillMOS) on a generated single_round run (the shared outputs
      carry no reply audio): local vs Ray with asr=2,mos=1.
   Items/s use the summary's scoring_seconds (pools started inside it; Ray's own start is not).

Ray starts on 127.0.0.1 only with the OFFLINE.md settings (runner/ray_executor.py: start_ray).
Prints the load average with the results; the machine is shared, so read ratios, not absolutes.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-m", "vocalbench.cli"]
REPLY_SECONDS = 0.5


def samples(n: int, wav: Path, tag: str) -> list[Any]:
    from vocalbench.records import AudioRef, Sample

    return [Sample(id=f"{tag}-{i:04d}", subset="knowledge", lang="en", index=i, question="What is the capital of France?",
                   audio=AudioRef(path=str(wav))) for i in range(n)]


async def _generate(work: Path, spec: str, items: list[Any], replicas: int | None, concurrency: int,
                    kill_after: int | None = None) -> dict[str, Any]:
    """Generate ``items``; ``replicas`` None: the local executor. Wall excludes start-up and warm-up."""
    from vocalbench.run_config import RunConfig
    from vocalbench.runner.generate import LocalExecutor, generate
    from vocalbench.runner.ray_executor import RayExecutor, Resources
    from vocalbench.runner.store import RunStore
    from vocalbench.systems import resolve
    from vocalbench.systems.options import SystemOptions
    from vocalbench.systems.spec import SystemSpec

    cfg = RunConfig(system=SystemSpec.parse(spec), quiet=True, concurrency=concurrency, latency_concurrency=concurrency, warmup=False,
                    max_attempts=1, max_reply_tokens=48)
    options = SystemOptions(max_reply_tokens=48)
    executor: Any = (LocalExecutor(resolve(spec, options), cfg) if replicas is None
                     else RayExecutor(spec, options, cfg, Resources(replicas=replicas, num_cpus=0.5)))
    started: dict[str, float] = {}
    real_start = executor.start

    async def timed_start() -> None:  # model loading is not throughput
        await real_start()
        started["t"] = time.monotonic()

    executor.start = timed_start
    killed: dict[str, Any] = {}
    with RunStore(work / f"run-{time.monotonic_ns()}") as store:
        store.add_samples(items)

        async def killer() -> None:
            while kill_after is not None and len(store.done_reply_keys()) < kill_after:
                await asyncio.sleep(0.02)
            killed["pid"] = (await executor.pool.placements())[0]["pid"]
            os.kill(killed["pid"], signal.SIGKILL)

        task = asyncio.create_task(killer()) if kill_after is not None else None
        res = await generate(store, items, cfg, executor, progress=False)
        wall = time.monotonic() - started["t"]
        if task is not None:
            task.cancel()
        rows = store.replies()
    ids = sorted(k[1] for k in rows)
    return {"n": len(items), "wall": wall, "per_s": len(items) / wall, "failed": res.failed, "retries": res.retries,
            "stored": len(rows), "unique": len(set(ids)) == len(ids) == len(items),
            "attempts_1": all(r.attempts == 1 for r in rows.values()),
            "replaced": getattr(executor, "replaced", 0), "killed": killed.get("pid")}


def generation(work: Path, n: int, cascade_n: int, wav: Path) -> dict[str, Any]:
    """Sections 1-4 in one Ray session."""
    from vocalbench.runner.ray_executor import start_ray, stop_ray

    sleep = work / "sleep.jsonl"
    sleep.write_text(json.dumps({"id": "*", "text": "It is Paris.", "audio": {"tone": 220, "seconds": 0.5},
                                 "first_chunk_delay": REPLY_SECONDS, "chunk_seconds": 0.5}) + "\n")
    instant = work / "instant.jsonl"
    instant.write_text(json.dumps({"id": "*", "text": "It is Paris.", "audio": {"tone": 220, "seconds": 0.5},
                                   "chunk_seconds": 0.25}) + "\n")
    out: dict[str, Any] = {}
    start_ray(num_cpus=2)
    try:
        run = asyncio.run
        out["sleep1"] = run(_generate(work, f"scripted:{sleep}", samples(n, wav, "s1"), 1, 1))
        out["sleep2"] = run(_generate(work, f"scripted:{sleep}", samples(n, wav, "s2"), 2, 1))
        out["local_instant"] = run(_generate(work, f"scripted:{instant}", samples(200, wav, "li"), None, 1))
        out["ray_instant"] = run(_generate(work, f"scripted:{instant}", samples(200, wav, "ri"), 1, 1))
        out["kill"] = run(_generate(work, f"scripted:{sleep}", samples(2 * n, wav, "k"), 2, 1, kill_after=n // 2))
        if cascade_n:
            out["cascade1"] = run(_generate(work, "offline", samples(cascade_n, wav, "c1"), 1, 1))
            out["cascade2"] = run(_generate(work, "offline", samples(2 * cascade_n, wav, "c2"), 2, 1))
    finally:
        stop_ray()
    return out


def vb(cache: Path, *args: str) -> None:
    r = subprocess.run([*CLI, *args], capture_output=True, text=True, check=False,
                       env={**os.environ, "VOCALBENCH_CACHE": str(cache)})
    if r.returncode != 0:
        raise SystemExit(f"vocalbench {' '.join(args)} exited {r.returncode}: {r.stderr[-2000:]}")


def fresh_cache(path: Path) -> Path:
    """An empty result cache sharing this machine's models."""
    from vocalbench.config import cache_dir

    path.mkdir()
    (path / "models").symlink_to(cache_dir() / "models")
    return path


def timed_score(run: Path, cache: Path, *flags: str) -> dict[str, Any]:
    t = time.monotonic()
    vb(cache, "score", str(run), "--quiet", *flags)
    summary = json.loads((run / "summary.json").read_text())
    return {"wall": time.monotonic() - t, "seconds": summary["meta"]["scoring_seconds"], "summary": summary}


def same_but_timing(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Equal once every timing field (any key naming seconds, at any depth) is left out."""
    def strip(x: Any) -> Any:
        if isinstance(x, dict):
            return {k: strip(v) for k, v in x.items() if "seconds" not in k}
        return x

    return bool(strip(a) == strip(b))


def scoring_judge(work: Path, shared: Path) -> dict[str, Any]:
    """5a: imported LLaMA-Omni knowledge + safety, stand-in judge, local vs Ray (judge=2)."""
    sys.path.insert(0, str(ROOT / "tests" / "scoring"))
    from engine_fake_judge import FakeJudgeServer  # the tests' deterministic OpenAI-compatible double

    run = work / "omni"
    vb(fresh_cache(work / "c-import"), "import", "--outputs", str(shared / "en" / "outputs" / "llama-omni"), "--data",
       str(shared), "--lang", "en", "--out", str(run), "--subsets", "knowledge,safety", "--quiet")
    shutil.copytree(run, work / "omni-ray")
    with FakeJudgeServer(delay=0.05, model="bench-stand-in-judge") as srv:
        common = ["--judge", srv.spec, "--asr", "none", "--mos", "none", "--emotion", "none", "--judge-concurrency", "2"]
        local = timed_score(run, fresh_cache(work / "c-local"), *common)
        ray = timed_score(work / "omni-ray", fresh_cache(work / "c-ray"), *common, "--executor", "ray",
                          "--evaluator-replicas", "judge=2")
    n = sum(local["summary"]["subsets"][s]["n"] for s in ("knowledge", "safety"))
    return {"n": n, "local": local, "ray": ray, "same": same_but_timing(local["summary"], ray["summary"])}


def scoring_acoustic(work: Path, shared: Path, n: int) -> dict[str, Any]:
    """5b: ASR + MOS on a generated single_round run (one real spoken reply, the rest tones)."""
    sys.path.insert(0, str(ROOT / "tests" / "scoring"))
    from spoken_replies import spoken_release  # the Ray scoring test's spoken single_round run

    rel, script = spoken_release(work / "sr-src", shared, n)
    run = work / "sr"
    vb(fresh_cache(work / "c-gen"), "generate", "--system", f"scripted:{script}", "--data", str(rel), "--lang", "en",
       "--out", str(run), "--quiet")
    shutil.copytree(run, work / "sr-ray")
    common = ["--judge", "none", "--asr", "offline", "--mos", "offline", "--emotion", "none"]
    local = timed_score(run, fresh_cache(work / "c-sr-local"), *common)
    ray = timed_score(work / "sr-ray", fresh_cache(work / "c-sr-ray"), *common, "--executor", "ray",
                      "--evaluator-replicas", "asr=2,mos=1")
    return {"n": n, "local": local, "ray": ray, "same": same_but_timing(local["summary"], ray["summary"])}


def report(gen: dict[str, Any], judge: dict[str, Any] | None, acoustic: dict[str, Any] | None,
           load: tuple[tuple[float, ...], tuple[float, ...]]) -> None:
    fmt = "/".join
    print(f"ray bench: {os.cpu_count()} CPUs, local Ray on 127.0.0.1; load average (1/5/15 min) "
          f"{fmt(f'{x:.2f}' for x in load[0])} before, {fmt(f'{x:.2f}' for x in load[1])} after")
    print(f"{'measurement':<52}{'1 replica':>12}{'2 replicas':>12}{'ratio':>8}")
    for key, label in (("sleep", f"sleep-bound system ({REPLY_SECONDS} s/reply), replies/s"),
                       ("cascade", "offline cascade (CPU-bound), replies/s")):
        if f"{key}1" in gen:
            a, b = gen[f"{key}1"]["per_s"], gen[f"{key}2"]["per_s"]
            print(f"{label:<52}{a:12.2f}{b:12.2f}{b / a:7.2f}x")
    li, ri = gen["local_instant"], gen["ray_instant"]
    print(f"driver overhead per item (instant system, concurrency 1): local {li['wall'] / li['n'] * 1000:.2f} ms, "
          f"Ray {ri['wall'] / ri['n'] * 1000:.2f} ms -> Ray adds {(ri['wall'] - li['wall']) / ri['n'] * 1000:.2f} ms/reply")
    k = gen["kill"]
    print(f"replica-kill drill: {k['n']} samples, worker pid {k['killed']} SIGKILLed after {k['n'] // 4}; stored "
          f"{k['stored']}, each once: {k['unique']}, failed {k['failed']}, retries {k['retries']}, every reply "
          f"in 1 attempt: {k['attempts_1']}, replicas replaced {k['replaced']}, {k['per_s']:.2f} replies/s")
    for label, s in (("judge-based + rule-based (stand-in judge)", judge), ("ASR + MOS (offline models)", acoustic)):
        if s is None:
            continue
        lo, ra = s["local"], s["ray"]
        print(f"scoring {label}, {s['n']} items: local {s['n'] / lo['seconds']:.1f} items/s ({lo['seconds']:.1f} s), "
              f"Ray {s['n'] / ra['seconds']:.1f} items/s ({ra['seconds']:.1f} s; {ra['wall']:.1f} s with Ray's start) "
              f"-> {lo['seconds'] / ra['seconds']:.2f}x; summary.json identical but timing: {s['same']}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shared", default=str(ROOT.parent / "shared" / "vocalbench"))
    ap.add_argument("--n", type=int, default=16, help="replies per sleep-bound measurement (default 16)")
    ap.add_argument("--cascade-n", type=int, default=3, help="replies per replica of the offline cascade (default 3)")
    ap.add_argument("--no-cascade", action="store_true", help="skip the offline cascade")
    ap.add_argument("--acoustic-n", type=int, default=12, help="items of the ASR + MOS scoring run (default 12)")
    args = ap.parse_args()
    shared = Path(args.shared)
    work = Path(tempfile.mkdtemp(prefix="vocalbench-ray-bench-"))
    os.environ.setdefault("RAY_worker_niceness", "0")  # Ray's default 15 starves workers next to local runs
    os.environ["VOCALBENCH_CACHE"] = str(fresh_cache(work / "cache"))
    wav = work / "query.wav"
    from vocalbench.audio import write

    write(wav, (0.2 * np.sin(2 * np.pi * 300 * np.arange(16000) / 16000)).astype(np.float32), 16000)
    before = os.getloadavg()
    gen = generation(work, args.n, 0 if args.no_cascade else args.cascade_n, wav)
    have = (shared / "en" / "outputs" / "llama-omni").is_dir()
    judge = scoring_judge(work, shared) if have else None
    acoustic = scoring_acoustic(work, shared, args.acoustic_n) if have else None
    report(gen, judge, acoustic, (before, os.getloadavg()))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""System replicas on a local Ray (two worker processes, loopback only): `--replicas 2` spreads
attempts over both, and a replica killed mid-run (SIGKILL of its worker) is replaced with nothing
lost or written twice."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from release import knowledge_script, make_release

from vocalbench.records import AudioRef, Sample
from vocalbench.run_config import RunConfig
from vocalbench.runner.generate import generate
from vocalbench.runner.store import RunStore

CLI = [sys.executable, "-m", "vocalbench.cli"]


@pytest.mark.slow
def test_replicas_flag_runs_two_replicas_and_records_them(tmp_path):
    pytest.importorskip("ray")
    n = 8
    rel = make_release(tmp_path / "rel", n)
    script = knowledge_script(tmp_path / "replies.jsonl", n, delay=0.05)
    out = tmp_path / "ray"
    r = subprocess.run([*CLI, "generate", "--lang", "en", "--quiet", "--system", f"scripted:{script}", "--data",
                        str(rel), "--out", str(out), "--executor", "ray", "--replicas", "2", "--ray-num-cpus", "0.5"],
                       capture_output=True, text=True, timeout=240, check=False,
                       env={**os.environ, "VOCALBENCH_CACHE": str(tmp_path / "cache"), "RAY_worker_niceness": "0"})
    assert r.returncode == 0, r.stderr
    with RunStore(out) as store:
        replies = store.replies()
    assert len(replies) == n and not any(x.failed for x in replies.values())
    ray = json.loads((out / "config.json").read_text())["system_details"]
    assert (ray["executor"], ray["replicas"], ray["num_cpus"], ray["replaced"]) == ("ray", 2, 0.5, 0)


def test_replicas_flag_needs_the_ray_executor(tmp_path):
    r = subprocess.run([*CLI, "generate", "--system", "scripted:x.jsonl", "--replicas", "2", "--out",
                        str(tmp_path / "run")], capture_output=True, text=True, timeout=60, check=False)
    assert r.returncode != 0 and "--replicas need --executor ray" in r.stderr


def _samples(n: int, wav: Path) -> list[Sample]:
    return [Sample(id=f"knowledge-{i:04d}", subset="knowledge", lang="en", index=i, question=f"q{i}",
                   audio=AudioRef(path=str(wav))) for i in range(n)]


async def _run_and_kill(store: RunStore, items: list[Sample], cfg: RunConfig, executor, after: int) -> dict:
    """Generate; once ``after`` replies are stored, SIGKILL the worker of replica 0."""
    killed: dict = {}

    async def killer() -> None:
        while len(store.done_reply_keys()) < after:
            await asyncio.sleep(0.02)
        where = await executor.pool.placements()
        killed["ips"] = {w["ip"] for w in where}
        os.kill(where[0]["pid"], signal.SIGKILL)
        killed["pid"] = where[0]["pid"]

    task = asyncio.create_task(killer())
    res = await generate(store, items, cfg, executor, progress=False)
    task.cancel()
    killed["result"] = res
    return killed


@pytest.mark.slow
def test_a_killed_replica_is_replaced_and_nothing_is_lost(tmp_path, monkeypatch):
    pytest.importorskip("ray")
    from vocalbench.runner.ray_executor import RayExecutor, Resources
    from vocalbench.systems.options import SystemOptions

    monkeypatch.setenv("VOCALBENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("RAY_worker_niceness", "0")  # workers at the tests' priority on a busy machine
    n = 24
    rel = make_release(tmp_path / "rel", 1)
    script = knowledge_script(tmp_path / "replies.jsonl", n, delay=0.3)
    items = _samples(n, rel / "audio" / "knowledge" / "0000.wav")
    cfg = RunConfig(system=f"scripted:{script}", quiet=True, concurrency=2, max_attempts=1, warmup=False)
    executor = RayExecutor(cfg.system.text, SystemOptions(), cfg, Resources(replicas=2, num_cpus=0.5))
    with RunStore(tmp_path / "run") as store:
        store.add_samples(items)
        out = asyncio.run(_run_and_kill(store, items, cfg, executor, after=4))
        replies = store.replies()
    res = out["result"]
    assert out.get("pid"), "the kill must land mid-run"
    assert out["ips"] == {"127.0.0.1"}  # Ray on loopback only (OFFLINE.md)
    assert executor.replaced >= 1
    assert (res.succeeded, res.failed, res.retries) == (n, 0, 0)  # resent by the pool, not retried
    assert sorted(k[1] for k in replies) == [s.id for s in items]  # each sample once
    assert all(not r.failed and r.attempts == 1 for r in replies.values())


@pytest.mark.slow
def test_replicas_apply_the_runs_reply_limits(tmp_path):
    """--max-reply-chars and --max-reply-audio-seconds hold inside the Ray system actors too: item 0's
    0.6 s of audio is over 0.5 s, item 1's 14 characters over 13 (both were kept on Ray before)."""
    pytest.importorskip("ray")
    rel = make_release(tmp_path / "rel", 2)
    script = knowledge_script(tmp_path / "replies.jsonl", 2)
    out = tmp_path / "ray"
    r = subprocess.run([*CLI, "generate", "--lang", "en", "--quiet", "--system", f"scripted:{script}", "--data",
                        str(rel), "--out", str(out), "--executor", "ray", "--replicas", "1", "--ray-num-cpus", "0.5",
                        "--no-warmup", "--max-reply-chars", "13", "--max-reply-audio-seconds", "0.5"],
                       capture_output=True, text=True, timeout=240, check=False,
                       env={**os.environ, "VOCALBENCH_CACHE": str(tmp_path / "cache"), "RAY_worker_niceness": "0"})
    with RunStore(out) as store:
        replies = {k[1]: v for k, v in store.replies().items()}
    assert sorted(replies) == ["knowledge-0000", "knowledge-0001"], r.stderr
    errors = {k: (v.error.type, v.error.message) if v.error else None for k, v in replies.items()}
    assert errors == {
        "knowledge-0000": ("reply_too_large", "the reply's audio is over 0.5 s (--max-reply-audio-seconds)"),
        "knowledge-0001": ("reply_too_large", "the reply's text is over 13 characters (--max-reply-chars)")}, errors

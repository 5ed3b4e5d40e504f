"""`vocalbench generate` end to end: SIGKILL + resume, fault drills against `serve --faults`, Ray executor."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from release import knowledge_script, make_release

from vocalbench.run_config import RunConfig
from vocalbench.runner.store import RunStore

CLI = [sys.executable, "-m", "vocalbench.cli"]


def generate(args: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, "generate", "--lang", "en", "--quiet", *args], capture_output=True, text=True,
                          timeout=240, check=False, **kw)


def reply_rows(run: Path) -> list[tuple[str, int]]:
    with sqlite3.connect(run / "store.sqlite") as db:
        return db.execute("SELECT sample_id, failed FROM replies ORDER BY sample_id").fetchall()


def comparable(run: Path) -> tuple[dict, dict]:
    """(replies without timings, summary without timing fields) of a run."""
    from vocalbench.scoring.engine import score_run_sync

    summary = score_run_sync(run, RunConfig.load(run), progress=False).to_dict()
    with RunStore(run) as store:
        replies = {k: (r.text, r.audio_duration, r.error, r.source) for k, r in store.replies().items()}
    return replies, {k: summary[k] for k in ("subsets", "dimensions", "overall")}


def test_sigkill_then_resume_gives_every_sample_once(tmp_path):
    n = 30
    rel = make_release(tmp_path / "rel", n)
    script = knowledge_script(tmp_path / "replies.jsonl", n, delay=0.25)
    common = ["--system", f"scripted:{script}", "--data", str(rel), "--concurrency", "2"]
    killed = tmp_path / "killed"
    proc = subprocess.Popen([*CLI, "generate", "--lang", "en", "--quiet", *common, "--out", str(killed)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if (killed / "store.sqlite").exists() and len(reply_rows(killed)) >= 6:
            break
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    partial = reply_rows(killed)
    assert 6 <= len(partial) < n, "the kill must land mid-run"
    rerun = generate([*common, "--out", str(killed)])
    assert rerun.returncode == 0, rerun.stderr
    assert f"{len(partial)} already done" in rerun.stderr
    rows = reply_rows(killed)
    assert [r[0] for r in rows] == [f"knowledge-{i:04d}" for i in range(n)] and not any(r[1] for r in rows)
    wavs = sorted(p.name for p in (killed / "audio" / "knowledge").glob("*.wav"))
    assert wavs == [f"knowledge-{i:04d}.wav" for i in range(n)]

    straight = tmp_path / "straight"
    once = generate([*common, "--out", str(straight)])
    assert once.returncode == 0, once.stderr
    assert comparable(killed) == comparable(straight)


def test_fault_drill_completes_with_reasons(tmp_path, served):
    n = 40
    rel = make_release(tmp_path / "rel", n)
    script = knowledge_script(tmp_path / "replies.jsonl", n, delay=0.05)
    with script.open("a") as f:
        f.write('{"id": "knowledge-0007", "fault": {"type": "bad_input", "fail_first": -1, "retryable": false}}\n')
    url = served(f"scripted:{script}", faults="429:0.1,500:0.1,timeout:0.08,drop:0.12", fault_seed=3,
                 hang_seconds=30)
    t0 = time.monotonic()
    out = tmp_path / "run"
    r = generate(["--system", f"openai-audio:scripted@{url}/v1", "--data", str(rel), "--out", str(out),
                  "--concurrency", "8", "--timeout", "2", "--max-attempts", "5"])
    elapsed = time.monotonic() - t0
    assert r.returncode == 0, r.stderr
    assert elapsed < 120, "bounded timeouts: nothing hangs"
    with RunStore(out) as store:
        replies = store.replies()
        meta = store.get_meta("generate")
    assert len(replies) == n
    assert meta["retries"] > 0
    import httpx

    stats = httpx.get(f"{url}/health").json()["stats"]
    assert all(stats[f"fault_{k}"] > 0 for k in ("429", "500", "timeout", "drop")), stats
    bad = replies[("knowledge", "knowledge-0007")]
    # a permanent error ends the sample at once (earlier attempts may have met injected faults)
    assert bad.failed and bad.error.type == "http_422" and "scripted fault" in bad.error.message
    failed = [r for r in replies.values() if r.failed and r.sample_id != "knowledge-0007"]
    ok = [r for r in replies.values() if not r.failed]
    assert len(ok) >= n - 6, [(r.sample_id, r.error) for r in failed]
    for r in failed:  # unlucky samples ran out of attempts: their last error is recorded
        assert r.attempts == 5 and r.error.type in {"http_429", "http_500", "timeout", "broken_stream"}
    for r in ok:
        assert r.text in ("It is Paris.", "I do not know.") and r.audio_duration in (pytest.approx(0.4),
                                                                                   pytest.approx(0.6))


def test_ray_executor_matches_local(tmp_path):
    pytest.importorskip("ray")
    n = 8
    rel = make_release(tmp_path / "rel", n)
    script = knowledge_script(tmp_path / "replies.jsonl", n)
    common = ["--system", f"scripted:{script}", "--data", str(rel), "--concurrency", "4"]
    local, on_ray = tmp_path / "local", tmp_path / "ray"
    a = generate([*common, "--out", str(local)])
    env = {**os.environ, "VOCALBENCH_CACHE": str(tmp_path / "cache")}
    b = generate([*common, "--out", str(on_ray), "--executor", "ray"], env=env)
    assert a.returncode == 0 and b.returncode == 0, b.stderr
    assert comparable(local) == comparable(on_ray)
    assert RunConfig.load(on_ray).executor == "ray"
    assert (tmp_path / "cache" / "ray-home" / "ray_bootstrap_config.yaml").read_text() == "provider: {type: local}\n"


def test_run_scores_and_writes_the_leaderboard(tmp_path):
    n = 6
    rel = make_release(tmp_path / "rel", n)
    script = knowledge_script(tmp_path / "replies.jsonl", n)
    out = tmp_path / "run"
    r = subprocess.run([*CLI, "run", "--system", f"scripted:{script}", "--data", str(rel), "--lang", "en",
                        "--out", str(out), "--quiet"], capture_output=True, text=True, timeout=240,
                       check=False, env={**os.environ, "COLUMNS": "200"})
    assert r.returncode == 0, r.stderr
    import json

    summary = json.loads((out / "summary.json").read_text())
    assert summary["subsets"]["knowledge"]["value"] == pytest.approx(100 * 2 / 6, abs=1e-3)  # items 0 and 3
    assert summary["overall"]["value"] is None and summary["overall"]["partial"] is not None
    assert "knowledge" in (out / "leaderboard.md").read_text()
    assert "knowledge" in r.stdout and "measured 1 of 10 terms (10 of 100 points); their sum 3.33 of 10" in r.stdout
    cfg = json.loads((out / "config.json").read_text())
    assert cfg["system_details"]["system"]["kind"] == "scripted" and cfg["versions"]["vocalbench"]

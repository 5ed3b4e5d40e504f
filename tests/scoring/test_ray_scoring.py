"""`score RUN --executor ray`: ASR on a Ray actor pool (a local Ray, loopback only) give the
same summary.json as local scoring, but for timing. Uses the first official single_round items, a
real spoken reply from the LLaMA-Omni outputs, and the offline evaluators' models."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from spoken_replies import need_ray_and_offline_asr, spoken_release

from vocalbench.config import cache_dir

SHARED = Path(__file__).resolve().parents[3] / "shared" / "vocalbench"
CLI = [sys.executable, "-m", "vocalbench.cli"]
N = 4


def vb(*args: str, cache: Path) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=600, check=False,
                          env={**os.environ, "VOCALBENCH_CACHE": str(cache), "RAY_worker_niceness": "0"})


def fresh_cache(path: Path) -> Path:
    """An empty evaluator result cache that shares this machine's downloaded models."""
    path.mkdir()
    (path / "models").symlink_to(cache_dir() / "models")
    return path


def without_timing(summary: dict) -> dict:
    meta = {k: v for k, v in summary["meta"].items() if "seconds" not in k and k not in ("created", "scored_at")}
    return {**summary, "meta": meta}


def single_round_run(tmp_path: Path) -> Path:
    """A generated run of the first N official single_round items with spoken replies."""
    rel, script = spoken_release(tmp_path, SHARED, N)
    run = tmp_path / "local"
    r = vb("generate", "--system", f"scripted:{script}", "--data", str(rel), "--lang", "en", "--out", str(run),
           "--quiet", cache=tmp_path / "c0")
    assert r.returncode == 0, r.stderr
    return run


@pytest.mark.slow
def test_ray_scoring_gives_the_local_summary(tmp_path):
    need_ray_and_offline_asr(SHARED)
    local = single_round_run(tmp_path)
    on_ray = tmp_path / "ray"
    shutil.copytree(local, on_ray)
    flags = ["--judge", "none", "--asr", "offline", "--mos", "none", "--emotion", "none", "--quiet"]
    a = vb("score", str(local), *flags, cache=fresh_cache(tmp_path / "ca"))
    b = vb("score", str(on_ray), *flags, "--executor", "ray", "--evaluator-replicas", "asr=2",
           cache=fresh_cache(tmp_path / "cb"))
    assert a.returncode == 0 and b.returncode == 0, b.stderr
    sa, sb = (json.loads((run / "summary.json").read_text()) for run in (local, on_ray))
    assert without_timing(sa) == without_timing(sb), (sa["subsets"]["wer"], sb["subsets"]["wer"])
    assert sa["subsets"]["wer"]["scored"] == N and sa["subsets"]["utmos"]["extra"]["unscored_reasons"] == {
        "mos_not_configured": N}


def test_evaluator_flags_need_ray_and_well_formed_counts(tmp_path):
    from vocalbench.scoring.ray_pools import evaluator_resources

    res = evaluator_resources("asr=2,judge=1", "asr=0.5")
    assert (res["asr"].replicas, res["asr"].num_gpus, res["mos"].replicas) == (2, 0.5, 1)
    with pytest.raises(ValueError, match="unknown evaluator 'tts'"):
        evaluator_resources("tts=2", None)
    with pytest.raises(ValueError, match="whole number"):
        evaluator_resources("asr=1.5", None)
    r = vb("score", str(tmp_path), "--evaluator-replicas", "asr=2", cache=tmp_path / "c")
    assert r.returncode != 0 and "--evaluator-replicas need --executor ray" in r.stderr

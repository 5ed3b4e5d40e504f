"""Ray scoring loses nothing (issue 29): a generated single_round run scored on a local Ray with 2
ASR replicas, and with 3 while one replica's worker is SIGKILLed mid-way, each from a fresh result
cache: every item is scored exactly once per score name and the summary equals local scoring's but
for timing, every time (about a minute a run on a busy 2-core machine, so two runs here; many
more: bench/ray_stress.py --runs N)."""

from __future__ import annotations

from pathlib import Path

import pytest
from ray_drill import local_summary, stress_run
from spoken_replies import need_ray_and_offline_asr, spoken_release

from vocalbench.cli import main

SHARED = Path(__file__).resolve().parents[3] / "shared" / "vocalbench"
N = 8


@pytest.mark.slow
def test_ray_scoring_with_several_replicas_and_a_kill_scores_every_item_once(tmp_path: Path) -> None:
    need_ray_and_offline_asr(SHARED)
    rel, script = spoken_release(tmp_path, SHARED, N)
    run = tmp_path / "run"
    assert main(["generate", "--system", f"scripted:{script}", "--data", str(rel), "--lang", "en", "--out", str(run),
                 "--quiet", "--no-warmup"]) == 0
    reference = local_summary(run, tmp_path / "local")
    assert reference["subsets"]["wer"]["n"] == reference["subsets"]["wer"]["scored"] == N
    for k, (replicas, kill_after) in enumerate([(2, None), (3, N // 4)]):
        got = stress_run(run, tmp_path / f"ray{k}", reference, replicas, kill_after)
        print(f"run {k}: {got}")
        assert got.ok, got
        assert (kill_after is None) == (got.killed is None)

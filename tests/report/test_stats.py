"""Bootstrap statistics and the paired comparison against known answers."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from vocalbench.cli import main
from vocalbench.records import Sample, Score, Turn
from vocalbench.report.compare import compare_runs
from vocalbench.report.plots import parse_level
from vocalbench.report.runs import load_run, load_runs
from vocalbench.runner.store import RunStore
from vocalbench.scoring.graph import ClusterTable, cluster_key, point_value
from vocalbench.scoring.overall import clarity_points_of as clarity_points
from vocalbench.stats import interval, p_value, replicate_totals


def clustered_mean_ci(values: np.ndarray, n_boot: int, seed: int = 0,
                      clusters: list[str] | None = None) -> tuple[float, float]:
    """The engine's clustered CI of a mean (each value its own cluster unless ``clusters`` says)."""
    table = ClusterTable()
    for k, v in zip(clusters or [str(i) for i in range(values.size)], values):
        table.add(k, "all", "sum", v)
        table.add(k, "all", "n", 1.0)
    tot = replicate_totals(table.matrix(table.clusters, ["sum", "n"]), resamples=n_boot, seed=seed,
                           strata=table.strata)
    ci = interval(tot[:, 0] / tot[:, 1])
    assert ci is not None
    return ci


def wilson_interval(successes: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """The Wilson score interval of a binomial proportion (as fractions): the analytic check."""
    if n <= 0:
        raise ValueError("n must be positive")
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return centre - half, centre + half


def test_bootstrap_ci_of_bernoulli_mean_matches_wilson() -> None:
    rng = np.random.default_rng(7)
    x = (rng.random(4000) < 0.3).astype(float)
    lo, hi = clustered_mean_ci(x, n_boot=2000, seed=1)
    wl, wh = wilson_interval(int(x.sum()), x.size)
    assert lo == pytest.approx(wl, abs=0.004) and hi == pytest.approx(wh, abs=0.004)
    assert wilson_interval(0, 10)[0] == pytest.approx(0.0, abs=1e-12)


def test_singleton_clusters_agree_with_the_index_draws() -> None:
    stats = pytest.importorskip("vocalbench.stats")
    rng = np.random.default_rng(2)
    x = rng.normal(3.5, 1.0, 800)
    ours = clustered_mean_ci(x, n_boot=2000, seed=3)
    theirs = stats.mean_ci(x, resamples=2000, seed=3, digits=None)
    assert ours[0] == pytest.approx(theirs[0], abs=0.02) and ours[1] == pytest.approx(theirs[1], abs=0.02)


def test_clustered_bootstrap_is_wider_for_correlated_items() -> None:
    rng = np.random.default_rng(5)
    base = rng.normal(0, 1, 100)
    x = np.repeat(base, 36) + rng.normal(0, 0.1, 3600)  # 36 near-copies of each base question
    clusters = [f"q{i}" for i in range(100) for _ in range(36)]
    naive = clustered_mean_ci(x, n_boot=1000)
    clustered = clustered_mean_ci(x, n_boot=1000, clusters=clusters)
    assert (clustered[1] - clustered[0]) > 4 * (naive[1] - naive[0])


def test_p_value_conventions() -> None:
    assert p_value(np.zeros(100), 0.0) == 1.0
    assert p_value(np.full(999, 2.0), 2.0) == pytest.approx(1 / 1000)
    d = np.random.default_rng(0).normal(0.0, 1.0, 2000)
    assert 0.3 < p_value(d, 0.3) < 1.0


def test_cluster_keys() -> None:
    def sample(subset: str, sid: str, head: str | None = None, **metadata: str) -> Sample:
        history = [Turn(role="user", text=head)] if head else []
        return Sample(id=sid, subset=subset, lang="en", index=1, history=history, metadata=metadata)

    assert cluster_key("robust", "robust-white_noise-snr_-5-007") == cluster_key("robust_clean", "robust-007")
    assert cluster_key("robust_clean", "robust_clean-007") == "robust:7"
    assert cluster_key("cs_knowledge", "codeswitching_knowledge-003") == cluster_key(
        "cs_knowledge_en", "codeswitching_knowledge-003")
    assert cluster_key("multi_round", "multi_round-001", sample("multi_round", "multi_round-001", "Hello")) == \
        cluster_key("multi_round", "multi_round-002", sample("multi_round", "multi_round-002", "hello "))
    assert cluster_key("knowledge", "knowledge-0001") != cluster_key("knowledge", "knowledge-0002")
    assert cluster_key("knowledge", "k-1", sample("knowledge", "k-1", base_id="x")) == \
        cluster_key("knowledge", "k-2", sample("knowledge", "k-2", base_id="x"))


def test_level_parsing_and_clarity_points() -> None:
    assert parse_level("rt60_30") == ("rt60", 3.0)
    assert parse_level("dropping_0.70") == ("dropping", 70.0)
    assert parse_level("dropping_70") == ("dropping", 70.0)
    assert parse_level("filter_400hz") == ("filter", 400.0)
    assert parse_level("snr_-5") == ("snr", -5.0)
    assert clarity_points([1.9, 2.0, 4.005, 19.9, 20.0]).tolist() == [10, 9, 8, 1, 0]
    assert clarity_points(19.0, "v1") == 1


def test_measures_reproduce_the_summary_means(two_runs: tuple[Path, Path]) -> None:
    run = load_run(two_runs[0])
    subsets = run.summary.subsets
    for s in ("knowledge", "reasoning", "creativity", "instruction_following", "safety", "emotion"):
        assert point_value(run.graph, f"subset:{s}") == pytest.approx(subsets[s].value, abs=1e-3), s
    assert point_value(run.graph, "dimension:wer") == pytest.approx(5.0)  # corpus: 20 x 1 / 20 x 20
    assert "overall" in run.graph.stats


def test_compare_run_with_itself_is_zero_with_p_one(two_runs: tuple[Path, Path]) -> None:
    a = load_runs([two_runs[0]])[0]
    res = compare_runs(a, a, n_boot=300)
    assert res["rows"]
    names = {r["name"] for r in res["rows"]}
    assert {"overall", "dimension:knowledge", "subset:robust", "dimension:fcl_ms"} <= names
    for r in res["rows"]:
        assert r["diff"] == 0.0 and r["p_value"] == 1.0, r
        assert r["ci95"] == [0.0, 0.0]


def _binary_run(root: Path, p: float, seed: int, n: int = 400) -> Path:
    rng = np.random.default_rng(seed)
    with RunStore(root) as st:
        st.add_samples(Sample(id=f"knowledge-{i:04d}", subset="knowledge", lang="en", index=i) for i in range(n))
        st.put_scores((Score(subset="knowledge", sample_id=f"knowledge-{i:04d}", value=float(rng.random() < p),
                             scorer="knowledge@1"), "knowledge@1") for i in range(n))
    (root / "summary.json").write_text(json.dumps({"lang": "en", "system": root.name}))
    return root


def test_planted_difference_is_detected(tmp_path: Path) -> None:
    a = load_runs([_binary_run(tmp_path / "strong", 0.75, 1)])[0]
    b = load_runs([_binary_run(tmp_path / "weak", 0.60, 2)])[0]
    res = compare_runs(a, b, n_boot=2000)
    row = next(r for r in res["rows"] if r["name"] == "dimension:knowledge")
    assert row["diff"] > 8
    assert row["p_value"] < 0.01
    assert row["ci95"][0] > 0
    same = compare_runs(a, load_runs([_binary_run(tmp_path / "twin", 0.75, 1)])[0], n_boot=500)
    assert all(r["p_value"] == 1.0 for r in same["rows"])


def test_compare_only_uses_paired_items(tmp_path: Path) -> None:
    a = load_runs([_binary_run(tmp_path / "a", 0.7, 1, n=100)])[0]
    b = load_runs([_binary_run(tmp_path / "b", 0.7, 2, n=60)])[0]
    row = next(r for r in compare_runs(a, b, n_boot=100)["rows"] if r["name"] == "subset:knowledge")
    assert row["n_items"] == 60


def test_compare_command_writes_json(two_runs: tuple[Path, Path], tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cmp.json"
    assert main(["compare", str(two_runs[0]), str(two_runs[1]), "--n-boot", "300", "--out", str(out)]) == 0
    body = json.loads(out.read_text())
    assert body["difference"] == "A - B" and body["n_boot"] == 300
    k = next(r for r in body["rows"] if r["name"] == "subset:knowledge")
    assert k["a"] == pytest.approx(load_run(two_runs[0]).summary.subsets["knowledge"].value, abs=1e-3)
    assert "paired bootstrap" in capsys.readouterr().out
    assert main(["compare", str(two_runs[0]), str(tmp_path / "nope")]) == 2


def test_compare_gives_the_same_intervals_in_every_process(two_runs: tuple[Path, Path]) -> None:
    """The same --seed gives the same intervals whatever the process's string hash seed (the shared
    items keep run A's order, so the clusters meet the bootstrap draws in one order)."""
    import os
    import subprocess
    import sys

    code = ("import json, sys; from vocalbench.report.compare import compare_runs; "
            "from vocalbench.report.runs import load_runs; a, b = load_runs(sys.argv[1:3]); "
            "print(json.dumps(compare_runs(a, b, n_boot=200, seed=0)['rows']))")
    outs = [subprocess.run([sys.executable, "-c", code, str(two_runs[0]), str(two_runs[1])], check=True,
                           capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": seed}).stdout
            for seed in ("1", "2", "3")]
    assert outs[0] and outs[0] == outs[1] == outs[2]

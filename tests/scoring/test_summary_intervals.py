"""Scoring writes every interval of summary.json once, with the statistics graph's bootstrap: the
subsets rows' ``ci95``, ``meta.dimension_ci95`` (a dimension of several subsets) and ``overall.ci95``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from engine_fixtures import QWEN3_OMNI, cli, isolated_cache, shared  # noqa: F401  (fixtures)

from vocalbench.records import Sample, Score
from vocalbench.report.runs import load_run
from vocalbench.runner.store import RunStore
from vocalbench.scoring import graph
from vocalbench.scoring.overall import overall_result
from vocalbench.scoring.summary import Overall, SubsetRow, Summary, add_intervals, item_graph, write_summary

KEY = "knowledge@test"


def _knowledge_run(root: Path, n: int = 60) -> tuple[RunStore, float]:
    """An en store with ``n`` knowledge items scored 0/1 under ``KEY``; returns it and the accuracy %."""
    rng = np.random.default_rng(7)
    store = RunStore(root)
    values = [float(v) for v in rng.random(n) < 0.6]
    store.add_samples(Sample(id=f"knowledge-{i:04d}", subset="knowledge", lang="en", index=i, question="q")
                      for i in range(n))
    store.put_scores((Score(subset="knowledge", sample_id=f"knowledge-{i:04d}", name="main", value=v,
                            scorer="knowledge@1"), KEY) for i, v in enumerate(values))
    return store, 100.0 * sum(values) / n


def _summary(knowledge: float) -> Summary:
    dims: dict[str, float | None] = {"knowledge": knowledge, "reasoning": 50.0, "creativity": 3.0, "single_round": 3.5,
                                     "instruction_following": 60.0, "empathy": 3.0, "safety": 80.0, "robust": 90.0,
                                     "utmos": 4.0, "wer": 5.0}
    return Summary(lang="en", protocol="v2", system="s", dimensions=dims,
                   subsets={"knowledge": SubsetRow(metric="accuracy", value=knowledge, n=60, scored=60)},
                   overall=Overall.model_validate(overall_result(dims, "v2", lang="en")))


def test_the_overall_interval_is_the_graphs(tmp_path: Path) -> None:
    store, acc = _knowledge_run(tmp_path / "run")
    summary = _summary(round(acc, 4))
    assert summary.overall.value is not None and summary.overall.ci95 is None
    g = item_graph(store, [("knowledge", KEY)], lang="en", protocol="v2")
    assert g is not None
    add_intervals(summary, g)
    scores = {(s.subset, s.sample_id): {s.name: s} for s in store.scores("knowledge", evaluator=KEY)}
    g = graph.build(scores, {(s.subset, s.id): s for s in store.samples()}, lang="en", protocol="v2", version="v2",
                    dimensions=summary.dimensions)
    estimates = graph.evaluate(g)
    point, (lo, hi) = graph.intervals(g, 1000, 0)["overall"]
    assert point == pytest.approx(float(summary.overall.value), abs=1e-3)
    assert summary.subsets["knowledge"].ci95 == estimates["subset:knowledge"].rounded()[1]
    assert summary.overall.ci95 == [round(lo, 4), round(hi, 4)] and lo < point < hi
    assert summary.meta.dimension_ci95 == {}  # en knowledge copies its row: the row's ci95 is its CI
    body = json.loads(write_summary(tmp_path / "run", summary).read_text(encoding="utf-8"))
    assert body["overall"]["ci95"] == summary.overall.ci95
    assert Summary.load(tmp_path / "run" / "summary.json").overall_ci() == (round(lo, 4), round(hi, 4))


def test_zh_knowledge_interval_written_by_score(shared: Path, tmp_path: Path) -> None:  # noqa: F811
    """On the official Qwen3-Omni outputs: ``score`` writes the zh knowledge dimension's CI (a mean
    of subsets: no row carries it), equal to the graph's on the run's item scores."""
    run = tmp_path / "zh"
    assert cli("import", "--outputs", str(QWEN3_OMNI), "--data", str(shared), "--lang", "zh", "--out", str(run),
               "--subsets", "chinese_knowledge") == 0
    assert cli("score", str(run), "--judge", "none", "--quiet") == 0
    s = Summary.load(run / "summary.json")
    got = s.meta.dimension_ci95["knowledge"]
    point, (lo, hi) = graph.intervals(load_run(run).graph, 1000, 0)["dimension:knowledge"]
    assert point == pytest.approx(s.dimensions["knowledge"], abs=1e-3)
    assert got == [round(lo, 4), round(hi, 4)] and lo < point < hi
    assert s.dimension_ci("knowledge") == (got[0], got[1])
    assert "overall" in json.loads((run / "summary.json").read_text()) and s.overall.ci95 is None  # no overall here

"""summary.json's numbers come from one aggregator, the statistics graph (scoring/graph.py): every
subsets row's value and ci95 are the graph's value and interval of that row, so a subset declared
clustered carries the clustered interval, not one that treats its items as independent."""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import pytest
from engine_fixtures import LLAMA_OMNI, cli, isolated_cache, shared  # noqa: F401  (fixtures)

from vocalbench.records import Reply, Sample
from vocalbench.report.runs import load_run
from vocalbench.run_config import RunConfig
from vocalbench.runner.store import RunStore
from vocalbench.scoring import graph
from vocalbench.scoring.engine import score_run
from vocalbench.scoring.summary import Summary, row_statistic
from vocalbench.stats import mean_ci


def _rows_are_the_graphs(run: Path) -> Summary:
    """Assert that every row of the run's summary the graph holds is the graph's value and interval."""
    s = Summary.load(run / "summary.json")
    estimates = graph.evaluate(load_run(run).graph)
    checked = 0
    for name, row in s.subsets.items():
        got = estimates.get(row_statistic(name))
        if got is None:
            assert name in ("fcl_ms", "faa_ms", "rtf") or row.value is None, name
            continue
        value, ci = got.rounded()
        assert (row.value, row.ci95) == (value, ci), name
        checked += 1
    assert checked
    return s


def _clustered_run(root: Path, clusters: int = 25, size: int = 4) -> Path:
    """An en knowledge run of ``clusters`` base questions × ``size`` items (``metadata.base_id``),
    each question's items answered alike: right for 14 of the 25, wrong for the rest."""
    run = root / "run"
    store = RunStore(run)
    right = set(np.random.default_rng(5).permutation(clusters)[:14].tolist())
    samples = [Sample(id=f"knowledge-{i:04d}", subset="knowledge", lang="en", index=i, question="q",
                      reference="Paris", metadata={"base_id": f"q{i // size}"}) for i in range(clusters * size)]
    store.add_samples(samples)
    store.put_replies(Reply(subset="knowledge", sample_id=s.id, source="imported",
                            text="It is Paris." if s.index // size in right else "I do not know.") for s in samples)
    store.close()
    RunConfig(system="offline", lang="en", subsets=["knowledge"], judge="none", asr="none", mos="none",
              emotion="none").save(run)
    return run


def test_a_clustered_subset_row_carries_the_clustered_interval(tmp_path: Path) -> None:
    run = _clustered_run(tmp_path)
    cfg = RunConfig.load(run).model_copy(update={"quiet": True})
    summary = asyncio.run(score_run(run, cfg, progress=False))
    row = summary.subsets["knowledge"]
    point, (lo, hi) = graph.intervals(load_run(run).graph, 1000, 0)["subset:knowledge"]
    assert row.value == round(point, 4) == 56.0
    assert row.ci95 == [round(lo, 4), round(hi, 4)]
    # the items of one question move together: the clustered interval is far wider than the one
    # that resamples the 100 items independently (what the row carried before)
    values = [float(s.number) for s in RunStore(run).scores("knowledge") if s.name == "main"]
    iid = mean_ci(values, scale=100)
    assert iid is not None
    assert row.ci95[1] - row.ci95[0] > 1.6 * (iid[1] - iid[0])


@pytest.mark.parametrize("protocol", ["v2", "v1"])
def test_every_row_of_an_imported_run_is_the_graphs(shared: Path, tmp_path: Path, protocol: str) -> None:  # noqa: F811
    """On the official LLaMA-Omni outputs (no judge): each row's value and ci95 are the graph's."""
    run = tmp_path / "en"
    assert cli("import", "--outputs", str(LLAMA_OMNI), "--data", str(shared), "--lang", "en", "--out", str(run),
               "--subsets", "knowledge,single_round") == 0
    assert cli("score", str(run), "--judge", "none", "--asr", "none", "--mos", "none", "--protocol", protocol,
               "--quiet") == 0
    s = _rows_are_the_graphs(run)
    if protocol == "v2":  # v1 scores the transcript, and there is no ASR here
        assert s.subsets["knowledge"].value == 54.6


def _files(run: Path) -> dict[str, bytes]:
    return {str(p.relative_to(run)): p.read_bytes() for p in sorted(run.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("flags", [["--judge", "bogus"], ["--asr", "bogus"], ["--judge", "none", "--mos", "nope:x"],
                                   ["--executor", "ray", "--evaluator-replicas", "asr=0"]])
def test_a_bad_score_flag_leaves_the_run_folder_byte_identical(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                               flags: list[str]) -> None:
    """Every flag is checked before anything is written: config.json keeps its SPECs, and the next
    plain ``score`` of the run works as before."""
    run = _clustered_run(tmp_path)
    assert cli("score", str(run), "--quiet") == 0
    before = _files(run)
    assert cli("score", str(run), *flags, "--quiet") == 2
    assert flags[-2] in capsys.readouterr().err  # the error names the bad flag
    assert _files(run) == before
    assert cli("score", str(run), "--quiet") == 0

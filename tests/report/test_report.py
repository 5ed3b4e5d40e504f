"""``vocalbench report``: files, values, escaping, and runs with missing parts."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from vocalbench.cli import main
from vocalbench.report.plots import radar_values, robust_curves
from vocalbench.report.runs import load_run
from vocalbench.report.site import write_report
from vocalbench.runner.folder import language_folders


def _viewer_data(out: Path) -> dict[str, Any]:
    html = (out / "viewer.html").read_text()
    m = re.search(r'<script type="application/json" id="vb-data">(.*?)</script>', html, re.DOTALL)
    assert m, "viewer data block missing"
    return json.loads(m.group(1))


def test_full_report_files_values_and_escaping(two_runs: tuple[Path, Path], tmp_path: Path) -> None:
    out = tmp_path / "rep"
    res = write_report(list(two_runs), out)
    names = {p.name for p in res.files}
    assert {"leaderboard.html", "viewer.html", "dimensions_en.svg", "robustness_en.svg", "latency_en.svg",
            "quality_latency_en.svg", "categories_knowledge_en.svg"} <= names
    from vocalbench.report.plots import quality_latency_points
    from vocalbench.report.runs import load_runs

    points = quality_latency_points(load_runs(list(two_runs), with_store=False))
    assert [(x, y, partial) for _, x, y, partial in points] == [(500.0, 61.234, False)] * 2
    html = (out / "leaderboard.html").read_text()
    a = load_run(two_runs[0]).summary
    assert f'{a.dimensions["knowledge"]:.2f}' in html
    assert html.count('class="badge"') == 1  # only the run whose components differ from the paper
    assert "61.234" in html
    # the CIs are summary.json's, exactly: a subset row's, meta.dimension_ci95's, overall.ci95's
    assert re.search(r'data-dim="knowledge"[^>]*>\s*<span class="val">77.50</span>\s*<span class="ci">\[70.25, 84.75\]',
                     html)
    assert re.search(r'data-dim="robust"[^>]*>\s*<span class="val">85.00</span>\s*<span class="ci">\[80.50, 89.50\]',
                     html)
    assert "[58.50, 63.75]" in html
    assert "carries no 95 % CI for" not in html
    md = (out / "leaderboard.md").read_text()
    assert "77.50 [70.25, 84.75]" in md and "85.00 [80.50, 89.50]" in md and "**61.234** [58.50, 63.75]" in md
    viewer = (out / "viewer.html").read_text()
    # the untrusted reply only appears JSON-escaped inside the data block
    assert "<script>window.__pwned" not in viewer and "<img src=x" not in viewer
    assert "\\u003cscript\\u003ewindow.__pwned=1\\u003c/script\\u003e" in viewer
    data = _viewer_data(out)
    s0 = next(s for s in data["samples"] if s["id"] == "single_round-000")
    assert s0["runs"][0]["text"].startswith("Sure! <script>")
    assert (out / s0["query_audio"]).is_file() and (out / s0["runs"][1]["audio"]).is_file()
    assert s0["runs"][0]["timings"]["fcl_ms"] is not None and s0["runs"][0]["mos"] is not None
    t0 = s0["runs"][0]["timings"]
    assert t0["faa_ms"] == pytest.approx(t0["fcl_ms"] + 100.0, abs=0.2)
    assert re.search(r'data-dim="faa_ms"[^>]*>\s*<span class="val">500</span>', html)
    emo = next(s for s in data["samples"] if s["subset"] == "emotion")
    assert emo["runs"][0]["emotion"]["happy"] == pytest.approx(0.5)
    judged = next(s for s in data["samples"] if s["subset"] == "creativity")["runs"][0]["scores"][0]
    assert judged["rubric"] == "creativity@1" and judged["raw"].startswith('{"verdict"')
    safety = next(s for s in data["samples"] if s["id"] == "safety-000")["runs"][0]
    assert safety["system_error"] and safety["error"].startswith("timeout")


def test_radar_and_robust_curves(two_runs: tuple[Path, Path]) -> None:
    run = load_run(two_runs[0])
    r = radar_values(run)
    assert r["knowledge"] == pytest.approx(run.summary.dimensions["knowledge"] / 100)  # type: ignore[operator]
    assert r["creativity"] == pytest.approx(run.summary.dimensions["creativity"] / 5)  # type: ignore[operator]
    assert r["clarity"] == pytest.approx(0.8)  # WER 5.0 -> 8 points of 10
    curves = robust_curves(run)
    assert set(curves) == {"background_noise", "white_noise", "reverberation", "farfield", "packet_loss", "distortion"}
    assert [x for x, _ in curves["reverberation"]] == [0.5, 1.0, 1.5, 2.0, 2.5, 3.0]
    assert all(0 <= y <= 1 for pts in curves.values() for _, y in pts)


def test_mini_robust_selection_plots_and_scores(run_factory: Any, tmp_path: Path) -> None:
    """The mini set's 12 conditions (2 levels per family): curves, chart and Robust PR all work."""
    from vocalbench.construct.perturb import HEADLINE, mini_conditions
    from vocalbench.report.plots import parse_level, robustness_chart
    from vocalbench.scoring.graph import point_value

    levels: dict[str, list[str]] = {}
    for c in mini_conditions():
        levels.setdefault(c.category, []).append(c.level_en)
    run = load_run(run_factory(tmp_path / "mini", subsets=("robust",), robust_levels=levels))
    curves = robust_curves(run)
    assert set(curves) == set(levels) and all(len(pts) == 2 for pts in curves.values())
    assert robustness_chart([run], tmp_path / "robustness.svg", "mini") == tmp_path / "robustness.svg"
    pr = []
    for key in HEADLINE:
        family, level = key.split("/")
        x = parse_level(level)[1]  # type: ignore[index]
        pr.append(next(y for xx, y in curves[family] if xx == pytest.approx(x)))
    assert point_value(run.graph, "subset:robust") == pytest.approx(100 * sum(pr) / 6)


def test_robust_curves_from_summary_extra_when_store_has_no_scores(tmp_path: Path) -> None:
    run_dir = tmp_path / "r"
    run_dir.mkdir()
    extra = {"conditions": {"white_noise": {"snr_-5": {"mean": 3.0, "pr": 0.75, "n": 100},
                                            "snr_20": {"mean": 4.0, "pr": 1.0, "n": 100}},
                            "packet_loss": {"dropping_0.70": {"pr": 0.5}}}}
    (run_dir / "summary.json").write_text(json.dumps({"lang": "zh", "system": "s", "subsets": {
        "robust": {"metric": "preserve_rate", "value": 70.0, "extra": extra}}}))
    curves = robust_curves(load_run(run_dir))
    assert curves["white_noise"] == [(-5.0, 0.75), (20.0, 1.0)]
    assert curves["packet_loss"] == [(70.0, 0.5)]


def test_missing_dimensions_one_language_and_unscored(run_factory: Any, tmp_path: Path) -> None:
    partial = run_factory(tmp_path / "partial", system="half", subsets=("knowledge", "single_round"))
    unscored = run_factory(tmp_path / "uns", system="no-judge", unscored_subsets=("creativity", "emotion"))
    out = tmp_path / "rep"
    res = write_report([partial, unscored], out)
    html = (out / "leaderboard.html").read_text()
    assert "No runs given for: Mandarin" in html
    assert "41.2 of 80" in html  # partial overall shown as partial, never as a comparable number
    assert "half [en]: not run or not available: Reasoning, Creativity" in html
    assert "no-judge [en]: creativity has no scored items (10 unscored)" in html
    assert "10 unscored" in html
    assert "overall is partial; missing or incomplete" in html
    assert (out / "viewer.html").is_file() and not res.warnings


def test_summary_only_run_and_parent_folder(run_factory: Any, tmp_path: Path) -> None:
    only = tmp_path / "only"
    only.mkdir()
    (only / "summary.json").write_text(json.dumps({"lang": "en", "system": "sum-only", "dimensions": {"knowledge": 50.0},
                                                   "overall": {"version": "v2", "value": None,
                                                               "missing": ["reasoning"], "partial": None}}))
    both = tmp_path / "both"
    run_factory(both / "en", system="bi", subsets=("knowledge",))
    run_factory(both / "zh", lang="zh", system="bi", subsets=("reasoning",), xss=False)
    assert [p.name for p in language_folders([both])] == ["en", "zh"]
    out = tmp_path / "rep"
    write_report([only, both], out)
    html = (out / "leaderboard.html").read_text()
    assert "sum-only [en]" in html and "bi [zh]" in html and 'id="board-zh"' in html
    assert "sum-only [en]: the store" not in html  # no store: nothing to say about per-sample scores


def test_report_command(two_runs: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cli"
    assert main(["report", str(two_runs[0]), "--out", str(out), ]) == 0
    assert "leaderboard.html" in capsys.readouterr().out
    assert main(["report", str(tmp_path / "missing"), "--out", str(out)]) == 2
    assert "no such folder" in capsys.readouterr().err


def test_the_leaderboard_says_who_decided_the_judged_verdicts(tmp_path: Path) -> None:
    from vocalbench.report.leaderboard import markdown, verdict_sources
    from vocalbench.scoring.summary import Summary

    s = Summary.model_validate({"lang": "en", "system": "S", "subsets": {
        "knowledge": {"metric": "accuracy", "value": 50.0},
        "safety": {"metric": "refusal_rate", "value": 25.0, "decided_by": {"grader": 3, "rule": 10, "model": 2}}}})
    assert verdict_sources(s) == "safety 3/10/2"
    assert "judged verdicts decided by grader / fitted rule / model: safety 3/10/2" in markdown([(tmp_path, s)])


def test_report_bootstraps_nothing(two_runs: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every resampling of vocalbench.stats draws through _index_draws or _multinomial_draws: with both
    raising, the whole report (leaderboard, plots, viewer) is still written."""
    from vocalbench import stats

    def no_resampling(*args: object, **kwargs: object) -> None:
        raise AssertionError("the report resampled")

    monkeypatch.setattr(stats, "_index_draws", no_resampling)
    monkeypatch.setattr(stats, "_multinomial_draws", no_resampling)
    with pytest.raises(AssertionError, match="the report resampled"):
        stats.mean_ci([1.0, 2.0, 3.0])  # the patch does catch a bootstrap
    res = write_report(list(two_runs), tmp_path / "rep")
    assert {"leaderboard.html", "viewer.html", "leaderboard.md"} <= {p.name for p in res.files}


def test_old_summary_without_intervals_shows_values_without_ci(run_factory: Any, tmp_path: Path) -> None:
    """A summary.json written before scoring wrote dimension_ci95 / overall.ci95: the values alone, said once."""
    old = run_factory(tmp_path / "old", system="old-run", intervals=False)
    out = tmp_path / "rep"
    write_report([old], out)
    html = (out / "leaderboard.html").read_text()
    assert re.search(r'data-dim="robust"[^>]*>\s*<span class="val">85.00</span>\s*</td>', html)
    assert "61.234" in html and "[58.50" not in html
    assert html.count("old-run [en]: summary.json carries no 95 % CI for") == 1
    assert "no 95 % CI for Overall (written before" in html


def test_dimension_intervals_come_from_meta(tmp_path: Path) -> None:
    """A dimension of several subsets (zh knowledge) shows meta.dimension_ci95; one without it, none."""
    run = tmp_path / "zh"
    run.mkdir()
    subsets = {s: {"metric": "accuracy", "value": v, "n": 10, "scored": 10, "ci95": [v - 5, v + 5]}
               for s, v in (("chinese_knowledge", 60.0), ("foreign_knowledge", 50.0), ("general_knowledge", 40.0))}
    (run / "summary.json").write_text(json.dumps({
        "lang": "zh", "system": "kn", "subsets": subsets, "dimensions": {"knowledge": 50.0, "dialect": 30.0},
        "meta": {"dimension_ci95": {"knowledge": [46.25, 53.75]}}}))
    out = tmp_path / "rep"
    write_report([run], out)
    html = (out / "leaderboard.html").read_text()
    assert re.search(r'data-dim="knowledge"[^>]*>\s*<span class="val">50.00</span>\s*<span class="ci">\[46.25, 53.75\]',
                     html)
    assert "kn [zh]: summary.json carries no 95 % CI for Dialect" in html

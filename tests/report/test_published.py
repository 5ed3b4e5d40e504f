"""The published leaderboards shipped as data, and every result shown beside them: the run ranked
among the rows of its language and protocol (‡ when not comparable), the dimension-range plot,
``compare --published``, and a partial overall that says how much was measured before any sum."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from vocalbench.report import published
from vocalbench.report.leaderboard import load_summaries, markdown, print_table
from vocalbench.report.site import write_report
from vocalbench.scoring.overall import overall_result
from vocalbench.scoring.summary import Overall, Partial

# Rows whose printed overall the formula does not give from their printed dimensions (the tables'
# own inconsistencies, docs/scoring.md): en Qwen-Omni-Turbo prints 79.351 for 70.352; zh SLAM-Omni
# 41.852 for 41.952, zh Qwen3-Omni 78.439 for 78.384.
INCONSISTENT = {("en", "Qwen-Omni-Turbo"), ("zh", "SLAM-Omni"), ("zh", "Qwen3-Omni")}


def test_the_shipped_tables_reproduce_40_published_overall_rows() -> None:
    tables = {t.lang: t for t in published.tables()}
    assert (len(tables["en"].rows), len(tables["zh"].rows)) == (25, 18)  # 25 + 18 systems, four paradigms
    reproduced, off = 0, set()
    for t in tables.values():
        assert t.protocol == "v2" and t.source and t.paper.startswith("arXiv:") and t.date.startswith("2026-01")
        for row in t.rows:
            metrics = {k: v for k, v in row.values.items() if k != "overall"}
            ours = overall_result(metrics, "v2", lang=t.lang)["value"]
            if ours is not None and abs(ours - row.overall) <= 0.0015:  # the tables round to 3 decimals
                reproduced += 1
            else:
                off.add((t.lang, row.system))
    assert reproduced == 40 and off == INCONSISTENT


def test_find_names_the_known_systems() -> None:
    table, row = published.find("vocalnet2-8b", "en")  # case ignored
    assert row.system == "VocalNet2-8B" and row.values["knowledge"] == 72.10 and table.lang == "en"
    assert published.find("MiniCPM-o2.6", "en")[1].system == "MiniCPM-o 2.6"  # spacing ignored
    assert published.find("VOCALNET2-8B", "zh")[1].overall == 69.316
    with pytest.raises(ValueError, match="known: Mini-Omni, Mini-Omni2"):
        published.find("my-model", "en")
    with pytest.raises(ValueError, match="no published en leaderboard for protocol v1"):
        published.find("VocalNet2-8B", "en", "v1")


def test_runs_are_ranked_among_the_published_rows(two_runs: tuple[Path, Path], tmp_path: Path) -> None:
    runs = load_summaries(two_runs)
    md = markdown(runs)
    for (_, s), mark in zip(runs, (" ‡", "")):  # alpha differs from the paper's evaluators, the other does not
        st = published.standing(s, s.system)
        assert st is not None and st.total == 26 and st.rank is not None
        better = sum(1 for r in published.table("en").rows if r.overall > s.overall.value)  # type: ignore[union-attr,operator]
        assert st.rank == better + 1
        assert f"| {st.rank} | **{s.system}{mark}** | this run | {s.overall.value:.3f} |" in md
    assert "github.com/SJTU-OmniAgent/VocalBench README.md" in md and "no interval" in md
    assert "‡ not comparable: the run's evaluators" in md

    buf = io.StringIO()
    print_table(runs[0][1], console=Console(file=buf, width=200))
    st = published.standing(runs[0][1], runs[0][1].system)
    assert st is not None
    assert (f"published en v2 leaderboard (2026-01): rank {st.rank} of 26 ‡ not comparable (evaluators differ "
            "from the paper's)") in buf.getvalue()


def test_report_shows_published_rows_and_the_dimension_plot(two_runs: tuple[Path, Path], tmp_path: Path) -> None:
    res = write_report(list(two_runs), tmp_path / "rep")
    assert "published_en.svg" in {p.name for p in res.files}
    svg = (tmp_path / "rep" / "plots" / "published_en.svg").read_text(encoding="utf-8")
    assert "Knowledge" in svg and "Robust" in svg and "25 published en v2 systems" in svg
    html = (tmp_path / "rep" / "leaderboard.html").read_text(encoding="utf-8")
    assert html.count('<table class="published"') == 2 and "VocalNet2-8B" in html
    assert html.count('class="mine"') == 2 and "‡ not comparable" in html


def test_compare_with_a_published_system(two_runs: tuple[Path, Path], tmp_path: Path) -> None:
    out = tmp_path / "cmp.json"
    r = subprocess.run([sys.executable, "-m", "vocalbench.cli", "compare", str(two_runs[0]), "--published",
                        "VocalNet2-8B", "--out", str(out)], capture_output=True, text=True, timeout=120, check=False,
                       env={**os.environ, "COLUMNS": "200"})
    assert r.returncode == 0, r.stderr
    body = json.loads(out.read_text(encoding="utf-8"))
    assert body["published"] == "VocalNet2-8B" and not body["comparable"]
    rows = {row["dimension"]: row for row in body["rows"]}
    summary = load_summaries([two_runs[0]])[0][1]
    k = rows["knowledge"]
    assert k["published"] == 72.10 and k["run"] == summary.dimensions["knowledge"]
    assert k["diff"] == pytest.approx(k["run"] - 72.10) and k["ci95"] is not None
    assert k["inside"] == (k["ci95"][0] <= 72.10 <= k["ci95"][1])
    assert rows["overall"]["published"] == 76.633
    assert any("no interval" in n for n in body["notes"]) and "no interval" in r.stdout
    bad = subprocess.run([sys.executable, "-m", "vocalbench.cli", "compare", str(two_runs[0]), "--published",
                          "nobody"], capture_output=True, text=True, timeout=120, check=False)
    assert bad.returncode == 2 and "no published en v2 system 'nobody'" in bad.stderr


def test_a_partial_overall_says_how_much_was_measured_first(run_factory: Any, tmp_path: Path) -> None:
    """The main job's "24.7 of 25" read as near-perfect: three terms measured of ten, 25 of 100 points."""
    o = Overall(version="v2", missing=["reasoning", "creativity", "single_round", "instruction_following", "empathy",
                                       "safety", "robust"], partial=Partial(value=24.7, max=25))
    assert o.measured() == (3, 10, 25.0, 100.0)
    assert o.headline() == "measured 3 of 10 terms (25 of 100 points); their sum 24.70 of 25"
    assert Overall(version="v2", value=76.634).headline() == "76.634"

    half = run_factory(tmp_path / "half", system="half", subsets=("knowledge", "single_round"))
    summary = load_summaries([half])[0][1]
    k, n, points, _ = summary.overall.measured()
    head = f"measured {k} of {n} terms ({points:g} of 100 points); their sum"
    assert head in markdown([(half, summary)])
    buf = io.StringIO()
    print_table(summary, console=Console(file=buf, width=200))
    assert f"overall (v2): not available, {head}" in buf.getvalue()
    write_report([half], tmp_path / "rep")
    html = (tmp_path / "rep" / "leaderboard.html").read_text(encoding="utf-8")
    measured_at = html.index(f'<span class="val">{k} of {n} terms measured</span>')
    assert measured_at < html.index(f"{points:g} of 100 points; their sum", measured_at)

"""A number judged by a judge not validated for its rubric family is marked in every table (console,
leaderboard.md, HTML), and the overall shows its validated partial sum with the full sum beside it."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from rich.console import Console

from vocalbench.report.leaderboard import UNVALIDATED, load_summaries, markdown, print_table
from vocalbench.report.site import write_report


def _mark_unvalidated(run: Path) -> None:
    """What the engine writes for a run whose creativity and safety judge is below the bar."""
    path = run / "summary.json"
    body = json.loads(path.read_text())
    body["meta"] = {**body.get("meta", {}), "unvalidated_dimensions": ["creativity", "safety"]}
    body["overall"] = {"version": "v2", "value": None, "missing": [], "partial": {"value": 50.1, "max": 80.0},
                       "unvalidated": ["creativity", "safety"], "with_unvalidated": {"value": 61.234, "max": 100.0}}
    path.write_text(json.dumps(body))


def test_markers_in_markdown_console_and_html(run_factory: Any, tmp_path: Path) -> None:
    marked = run_factory(tmp_path / "marked", system="marked-sys")
    plain = run_factory(tmp_path / "plain", system="plain-sys", seed=3)
    _mark_unvalidated(marked)

    md = markdown(load_summaries([marked, plain]))
    rows: dict[str, str] = {}
    for line in md.splitlines():  # the leaderboard row of each system (the completeness rows follow)
        if line.startswith("| "):
            rows.setdefault(line.split(" | ")[0].strip("| ").removesuffix(" ‡"), line)
    assert rows["marked-sys"].count(f" {UNVALIDATED}") == 3  # creativity, safety, and the overall's full sum
    assert f"measured 8 of 10 terms (80 of 100 points); their sum 50.10 of 80 (61.23/100 {UNVALIDATED})" \
        in rows["marked-sys"]
    assert UNVALIDATED not in rows["plain-sys"] and "**61.234**" in rows["plain-sys"]
    assert "not validated for this rubric family" in md

    buf = io.StringIO()
    print_table(load_summaries([marked])[0][1], console=Console(file=buf, width=200))
    text = buf.getvalue()
    assert ("measured 8 of 10 terms (80 of 100 points); their sum 50.10 of 80 (61.23 of 100 with the unvalidated "
            "terms §); not validated creativity, safety") in text
    dims_line = next(line for line in text.splitlines() if line.startswith("dimensions:"))
    assert f"Creativity {json.loads((marked / 'summary.json').read_text())['dimensions']['creativity']:.3f} §" \
        in dims_line
    knowledge = next(part for part in dims_line.split(", ") if "Knowledge" in part)
    assert not knowledge.endswith(UNVALIDATED)  # a rule-scored dimension carries no marker

    out = tmp_path / "rep"
    write_report([marked, plain], out)
    html = (out / "leaderboard.html").read_text()
    assert html.count('title="judged by a judge not validated for this rubric family: not a measurement">§') == 2
    assert "61.2 of 100 with unvalidated §" in html and "50.1 of 80" in html
    assert "not validated</span>" in html or "2 not validated" in html


def test_unvalidated_dimensions_follow_the_judged_subsets() -> None:
    from vocalbench.run_config import RunConfig
    from vocalbench.scoring.summary import JudgeValidity, unvalidated_dimensions

    validity = JudgeValidity(judge="qwen2.5-1.5b+cal@local", unvalidated_subsets={
        "safety": "safety_en: below the bar", "robust": "single_round_en: below the stress bar",
        "multi_round": "multi_round_binary_en: below the bar"})
    dims = {"safety": 40.0, "robust": 80.0, "multi_round": 55.0, "knowledge": 50.0, "creativity": None}
    local = RunConfig(lang="en", judge="local")
    assert unvalidated_dimensions(local, validity, dims) == ["safety", "robust", "multi_round"]
    assert unvalidated_dimensions(local, None, dims) == []
    # the paper's judge defines the published numbers: no gating of its overall
    assert unvalidated_dimensions(RunConfig(lang="en", judge="openai:qwen-max-2025-01-25"), validity, dims) == []

"""``run --repeats N``: repeat folders, pooled mean / between-run SD / CI, resume, report and compare.

A tiny release of official knowledge items (first 30) answered by a scripted system that draws,
per item and seed, either the reference answer or a non-answer: a system with sampling noise.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from vocalbench.cli import main
from vocalbench.stats import pool_repeats as pool

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "vocalbench"


def test_pooling_both_sources():
    got = pool([50.0, 60.0, 55.0], [2.0, 2.0, 2.0])
    assert (got["mean"], got["sd"], got["n"], got["sources"]) == (55.0, 5.0, 3, "items+runs")
    half = 1.959964 * math.sqrt(4.0 + 25.0 / 3)
    assert got["ci95"] == pytest.approx([55 - half, 55 + half], abs=1e-3)
    runs_only = pool([50.0, 60.0, 55.0], [2.0, None, 2.0])  # one run without an item-level SE
    assert runs_only["sources"] == "runs" and runs_only["ci95"] == pytest.approx([42.579, 67.421], abs=1e-3)
    assert pool([50.0], [None])["ci95"] is None


@pytest.fixture
def release(tmp_path: Path) -> Path:
    if not (SHARED / "en" / "json" / "knowledge.json").is_file():
        pytest.skip(f"official VocalBench metadata not found at {SHARED}")
    from vocalbench import audio

    items = json.loads((SHARED / "en" / "json" / "knowledge.json").read_text(encoding="utf-8"))[:30]
    root = tmp_path / "release"
    (root / "json").mkdir(parents=True)
    (root / "json" / "knowledge.json").write_text(json.dumps(items, ensure_ascii=False), encoding="utf-8")
    t = np.arange(4000) / 16000
    for i, rec in enumerate(items):
        audio.write(root / "audio" / rec["Audio"], 0.1 * np.sin(2 * np.pi * (220 + 5 * i) * t), 16000)
    return root


def _run(tmp: Path, release: Path, out: Path, texts: list[str]) -> int:
    script = tmp / f"{out.name}.jsonl"
    script.write_text(json.dumps({"id": "*", "texts": texts, "audio": {"tone": 220, "seconds": 0.2}}) + "\n")
    return main(["run", "--system", f"scripted:{script}", "--data", str(release), "--lang", "en", "--repeats", "3",
                 "--judge", "none", "--asr", "none", "--mos", "none", "--emotion", "none", "--out", str(out),
                 "--quiet"])


def test_repeats_run_resume_report_and_compare(tmp_path, release, capsys):
    noisy, oracle = tmp_path / "noisy", tmp_path / "oracle"
    assert _run(tmp_path, release, noisy, ["{reference}.", "I am not sure."]) == 0
    body = json.loads((noisy / "repeats.json").read_text())
    assert body["repeats"] == 3 and body["runs"] == ["repeat-1", "repeat-2", "repeat-3"] and body["seeds"] == [0, 1, 2]
    values = [json.loads((noisy / f"repeat-{k}" / "summary.json").read_text())["subsets"]["knowledge"]["value"]
              for k in (1, 2, 3)]
    k = body["subsets"]["knowledge"]
    assert k["values"] == pytest.approx(values, abs=1e-4) and len(set(values)) > 1  # the repeats differ
    assert k["mean"] == pytest.approx(np.mean(values), abs=1e-3) and k["sd"] == pytest.approx(np.std(values, ddof=1), abs=1e-3)
    assert k["sources"] == "items+runs" and k["within_se"] > 0
    half = (k["ci95"][1] - k["ci95"][0]) / 2
    assert half == pytest.approx(1.959964 * math.sqrt(k["within_se"] ** 2 + k["sd"] ** 2 / 3), abs=2e-3)
    assert body["dimensions"]["knowledge"]["mean"] == pytest.approx(k["mean"], abs=1e-3)
    assert body["overall"]["partial"] is True

    # resumed: the same command regenerates nothing and pools the same numbers
    stores = {p: p.stat().st_mtime_ns for p in noisy.glob("repeat-*/audio/**/*.wav")}
    assert _run(tmp_path, release, noisy, ["{reference}.", "I am not sure."]) == 0
    assert {p: p.stat().st_mtime_ns for p in noisy.glob("repeat-*/audio/**/*.wav")} == stores
    assert json.loads((noisy / "repeats.json").read_text())["subsets"] == body["subsets"]

    html = (noisy / "report" / "leaderboard.html").read_text()
    assert 'id="repeats-en"' in html and f"{k['mean']:.2f} ± {k['sd']:.2f}" in html

    assert _run(tmp_path, release, oracle, ["{reference}."]) == 0
    capsys.readouterr()
    assert main(["compare", str(noisy), str(oracle), "--out", str(tmp_path / "cmp.json")]) == 0
    assert "3 runs" in capsys.readouterr().out
    rows = {r["name"]: r for r in json.loads((tmp_path / "cmp.json").read_text())["rows"]}
    row = rows["dimension:knowledge"]
    assert row["b"] == 100.0 and row["sd_b"] == 0.0 and row["diff"] == pytest.approx(k["mean"] - 100.0, abs=1e-3)
    assert row["ci95"][0] < row["diff"] < row["ci95"][1]

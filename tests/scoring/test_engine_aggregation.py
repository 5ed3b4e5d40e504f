"""Dimensions, bootstrap statistics, summary rows and the Markdown leaderboard."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from vocalbench.judge.spec import JudgeSpec
from vocalbench.run_config import RunConfig
from vocalbench.scoring.base import SubsetResult
from vocalbench.scoring.dimensions import compute, preserve_rate
from vocalbench.scoring.summary import Summary, build_summary, is_paper, write_summary
from vocalbench.stats import mean_ci, ratio_ci


def row(value: float | None, metric: str = "accuracy", complete: bool = True, ci: tuple[float, float] | None = None,
        n: int = 10) -> SubsetResult:
    return SubsetResult(metric=metric, value=value, n=n, scored=n if complete else n - 1,
                        unscored=0 if complete else 1, system_errors=0, complete=complete, ci95=ci)


def test_zh_dimensions_knowledge_mean_and_preserve_rates() -> None:
    results = {"chinese_knowledge": row(60.0), "foreign_knowledge": row(40.0), "general_knowledge": row(50.0),
               "cs_knowledge": row(45.0), "cs_knowledge_en": row(30.0), "emotion": row(35.4, "eer"),
               "per": row(3.5, "per"), "utmos": row(4.1, "utmos")}
    d = compute(results, "zh")
    assert d.values["knowledge"] == 50.0
    assert d.values["code_switching"] == 100.0  # 45/30*100 capped at 100
    assert d.values["empathy"] == 35.4 and d.values["per"] == 3.5 and "wer" not in d.values
    assert d.values["dialect"] is None and d.values["robust"] is None and not d.incomplete
    partial = compute({"chinese_knowledge": row(60.0), "cs_knowledge": row(20.0, complete=False),
                       "cs_knowledge_en": row(40.0)}, "zh")
    assert partial.values["knowledge"] == 60.0 and partial.values["code_switching"] == 50.0
    assert partial.incomplete == {"knowledge", "code_switching"}
    assert preserve_rate(10.0, 0.0) is None and preserve_rate(None, 3.0) is None


def test_en_dimensions_are_null_when_not_run() -> None:
    d = compute({"knowledge": row(54.6), "robust": row(79.787, "preserve_rate", complete=False)}, "en")
    assert list(d.values)[:3] == ["knowledge", "reasoning", "creativity"] and "wer" in d.values
    assert d.values["knowledge"] == 54.6 and d.values["reasoning"] is None and d.incomplete == {"robust"}


def test_bootstrap_is_seeded_and_covers_the_mean() -> None:
    rng = np.random.default_rng(1)
    x = (rng.random(2000) < 0.546).astype(float)
    a, b = mean_ci(x, scale=100), mean_ci(x, scale=100)
    assert a == b and a[0] < x.mean() * 100 < a[1] and 3.0 < a[1] - a[0] < 6.0
    y = rng.normal(3.5, 1.0, 300)  # continuous values: another seed gives another interval
    assert mean_ci(y, seed=2, digits=None) != mean_ci(y, seed=3, digits=None)
    assert mean_ci([1.0]) is None
    # corpus WER: resample items, sum numerators and denominators of the same items
    dist = rng.integers(0, 3, 200).astype(float)
    ref = rng.integers(5, 30, 200).astype(float)
    lo, hi = ratio_ci(dist, ref, scale=100)
    assert lo < dist.sum() / ref.sum() * 100 < hi
    with pytest.raises(ValueError):
        ratio_ci(dist, ref[:10])


def test_summary_rows_follow_the_schema(tmp_path: Path) -> None:
    cfg = RunConfig(system="S", lang="en", judge="none")
    results = {"knowledge": SubsetResult("accuracy", 54.6, 2000, 2000, 0, 0, True, (52.4, 56.8),
                                         {"word_boundary_accuracy": 53.0}, {}),
               "emotion": SubsetResult("eer", 30.0, 500, 480, 20, 3, False, None, {}, {"emotion_model_unavailable": 20}),
               "fcl_ms": SubsetResult("fcl_ms", 283.19, 200, 200, 0, 0, True, None, {"p90": 400.0})}
    summary = build_summary(cfg, results)
    s = summary.to_dict()
    assert list(s["subsets"]) == ["knowledge", "emotion", "fcl_ms"]
    assert s["subsets"]["knowledge"] == {"metric": "accuracy", "value": 54.6, "n": 2000, "scored": 2000,
                                         "unscored": 0, "system_errors": 0, "complete": True, "ci95": [52.4, 56.8],
                                         "extra": {"word_boundary_accuracy": 53.0}}
    assert s["subsets"]["emotion"]["extra"]["unscored_reasons"] == {"emotion_model_unavailable": 20}
    assert s["dimensions"]["empathy"] == 30.0 and s["dimensions"]["fcl_ms"] == 283.19
    assert "empathy" in s["overall"]["missing"] and s["meta"]["incomplete_dimensions"] == ["empathy"]
    assert s["provenance"]["leaderboard_comparable"] is False
    paper = RunConfig(asr="paper:/m/whisper", mos="paper", emotion="paper:/m/e2v",
                      judge="openai:qwen-max-2025-01-25@https://dashscope.example/v1")
    assert build_summary(paper, results).provenance.leaderboard_comparable is True
    assert not is_paper(JudgeSpec.parse("openai:qwen-plus@x")) and is_paper(paper.mos)
    # --judge paper is the paper's judge too: with the paper's ASR, MOS and emotion, comparable
    assert is_paper(JudgeSpec.parse("paper"))
    assert build_summary(paper.updated(judge="paper"), results).provenance.leaderboard_comparable
    write_summary(tmp_path, summary)
    assert json.loads((tmp_path / "summary.json").read_text()) == s
    assert Summary.load(tmp_path / "summary.json").to_dict() == s  # typed both ways


def test_markdown_leaderboard_en_and_zh(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from vocalbench.report.leaderboard import print_table, write_markdown

    full = {"knowledge": 72.10, "reasoning": 75.0, "creativity": 3.733, "utmos": 4.355, "wer": 4.005,
            "single_round": 4.210, "instruction_following": 53.44, "emotion": 52.8, "safety": 91.50,
            "robust": 92.728}
    metric = {"creativity": "mean_score", "single_round": "mean_score", "utmos": "utmos", "wer": "wer"}
    res = {k: row(v, metric.get(k, "accuracy"), ci=(v - 1, v + 1)) for k, v in full.items()}
    runs = []
    for name, lang, cfg_results in (("A", "en", res), ("B", "en", {**res, "emotion": row(20.0, "eer", complete=False)}),
                                    ("C", "zh", {"chinese_knowledge": row(50.0)})):
        d = tmp_path / name
        d.mkdir()
        write_summary(d, build_summary(RunConfig(system=f"sys-{name}", lang=lang), cfg_results))  # type: ignore[arg-type]
        runs.append(d)
    out = write_markdown(runs, tmp_path / "report")
    text = out.read_text()
    assert out.name == "leaderboard.md" and "## English (en" in text and "## Mandarin (zh" in text
    line_a = next(l for l in text.splitlines() if l.startswith("| sys-A"))
    assert "**76.634**" in line_a and "72.10 [71.10, 73.10]" in line_a
    line_b = next(l for l in text.splitlines() if l.startswith("| sys-B"))
    assert "measured 9 of 10 terms (90 of 100 points); their sum 71.35 of 90" in line_b  # the measured share first
    assert "| 20.00 † |" in line_b  # incomplete, no CI given
    assert text.index("| sys-A") < text.index("| sys-B")  # ranked by overall
    assert "| sys-B | emotion | 20.000 | 10 | 9 | 1 | 0 | no |" in text
    with pytest.raises(ValueError, match="no summary.json"):
        write_markdown([tmp_path / "missing"], tmp_path / "x.md")
    print_table(Summary.load(runs[1] / "summary.json"))
    shown = capsys.readouterr().out
    assert "sys-B" in shown and "measured 9 of 10 terms (90 of 100 points); their sum 71.35 of 90" in shown

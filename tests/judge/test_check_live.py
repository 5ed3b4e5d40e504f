"""judge-fit and judge-check with real local models on llama.cpp (the embedded 1.5B judge and the
packaged 0.5B one through ``--judge gguf:NAME``), on a few items each."""

from __future__ import annotations

import json

import pytest

from vocalbench.cli import main
from vocalbench.judge.calibrated import Calibration

pytestmark = pytest.mark.judge


def test_judge_check_asks_the_local_judge_then_reads_its_cache(tmp_path):
    from vocalbench.components.llm_server import ensure_server

    ensure_server()  # started (or reused) for the whole test session, like the other live judge tests
    out = tmp_path / "check.json"
    # --ask: the real model answers, recorded answers or not; a 1-5 family (no grader settles it)
    args = ["judge-check", "--split", "dev", "--rubrics", "single_round_en", "--out", str(out), "--quiet",
            "--limit", "2", "--ask"]
    assert main(args) == 0
    report = json.loads(out.read_text())
    assert report["judge"].startswith("qwen2.5-1.5b+cal-") and report["split"] == "dev"
    fig = report["families"]["single_round_en"]
    assert fig["n"] == 2 and fig["scored"] + fig["unparseable"] == 2 and fig["kind"] == "scale"
    assert report["calls"] + report["cached"] + report["by_rule"] == 2
    assert main(args) == 0  # a second run is answered from the cache or by rule, never by the model
    assert json.loads(out.read_text())["calls"] == 0


def test_judge_fit_and_check_any_gguf_model(tmp_path):
    """The packaged 0.5B model as a judge: its answers are collected, a fit made, and used."""
    answers, fit, out = tmp_path / "answers.jsonl", tmp_path / "fit.json", tmp_path / "check.json"
    assert main(["judge-fit", "--judge", "gguf:qwen2.5-0.5b", "--rubrics", "reasoning_binary_en", "--limit", "12",
                 "--collect", str(answers), "--out", str(fit), "--quiet"]) == 0
    cal = Calibration.load(fit)
    assert cal.model == "qwen2.5-0.5b" and cal.families["reasoning_binary_en"].n_dev == 12
    asked = [json.loads(line) for line in answers.read_text().splitlines()]
    assert asked and all(0.0 <= a["raw"]["main"]["p_yes"] <= 1.0 for a in asked)
    assert len(asked) < 12  # items its grader settles were never asked
    # a second fit reads the collected answers back: nothing asked again
    assert main(["judge-fit", "--judge", "gguf:qwen2.5-0.5b", "--rubrics", "reasoning_binary_en", "--limit", "12",
                 "--collect", str(answers), "--out", str(fit), "--quiet"]) == 0
    assert len(answers.read_text().splitlines()) == len(asked)
    assert main(["judge-check", "--judge", "gguf:qwen2.5-0.5b", "--fit", str(fit), "--rubrics", "reasoning_binary_en",
                 "--split", "test", "--limit", "3", "--out", str(out), "--quiet"]) == 0
    report = json.loads(out.read_text())
    assert report["judge"].startswith(f"qwen2.5-0.5b+{cal.version}@") and report["n"] == 3


def test_judge_check_and_fit_reject_bad_arguments(capsys, tmp_path):
    assert main(["judge-check", "--rubrics", "no_such_rubric", "--quiet"]) == 2
    assert "no calibration items for rubric(s) no_such_rubric" in capsys.readouterr().err
    assert main(["judge-check", "--judge", "bogus:spec", "--rubrics", "safety_en", "--quiet"]) == 2
    assert main(["judge-check", "--fit", str(tmp_path / "missing.json"), "--quiet"]) == 2
    assert "no such file" in capsys.readouterr().err
    assert main(["judge-fit", "--judge", "local-json", "--out", str(tmp_path / "f.json"), "--quiet"]) == 2
    assert "a fit needs a calibrated judge" in capsys.readouterr().err

"""judge-check with the real local judge (llama.cpp, calibrated single-token verdicts) on a few items."""

from __future__ import annotations

import json

import pytest

from vocalbench.cli import main

pytestmark = pytest.mark.judge


def test_judge_check_cli_on_the_local_judge(tmp_path):
    from vocalbench.components.llm_server import ensure_server

    ensure_server()  # started (or reused) for the whole test session, like the other live judge tests
    out = tmp_path / "check.json"
    # four items: two binary families (en, zh) of the dev split, each judged once by the real model
    rc = main(["judge-check", "--split", "dev", "--rubrics", "safety_en,knowledge_zh", "--out", str(out),
               "--quiet", "--limit", "2"])
    assert rc == 0
    report = json.loads(out.read_text())
    assert report["judge"].startswith("qwen2.5-1.5b+cal-") and report["split"] == "dev"
    assert set(report["families"]) == {"safety_en", "knowledge_zh"}
    for fig in report["families"].values():
        assert fig["n"] == 2 and fig["scored"] + fig["unparseable"] == 2
        assert fig["kind"] == "binary" and "validated" in fig
    assert report["calls"] + report["cached"] == 4
    # a second run is answered from the cache
    main(["judge-check", "--split", "dev", "--rubrics", "safety_en,knowledge_zh", "--out", str(out),
          "--quiet", "--limit", "2"])
    assert json.loads(out.read_text())["cached"] == 4


def test_judge_check_rejects_bad_arguments(capsys):
    assert main(["judge-check", "--rubrics", "no_such_rubric", "--quiet"]) == 2
    assert "no calibration items for rubric(s) no_such_rubric" in capsys.readouterr().err
    assert main(["judge-check", "--judge", "bogus:spec", "--rubrics", "safety_en", "--quiet"]) == 2

"""Verdict provenance through the engine: who decided each judged score (a grader, a fitted rule or
the model), the counts per subset in summary.json, and grader versions in the keys (a changed
grader re-judges exactly the items it decides; a resumed run never mixes grader versions)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from engine_fixtures import LLAMA_OMNI, cli, isolated_cache, meta, shared, summary  # noqa: F401

from vocalbench.judge import graders
from vocalbench.judge.calibrated import Calibration, RuleFit
from vocalbench.judge.graders import registry
from vocalbench.records import Score

# no server: every verdict of this fit is decided without the model (a rule over grader features,
# or the reasoning grader's settled answer), so the endpoint below is never called
JUDGE = "openai:m@http://127.0.0.1:9/v1"


def _scores(run: Path, subset: str) -> dict[str, Score]:
    db = sqlite3.connect(str(run / "store.sqlite"))
    try:
        rows = db.execute("SELECT sample_id, record FROM scores WHERE subset = ? AND name = 'main'",
                          (subset,)).fetchall()
    finally:
        db.close()
    return {sid: Score.model_validate(json.loads(rec)) for sid, rec in rows}


def test_verdicts_name_their_source_and_a_changed_grader_rejudges_only_its_items(
        shared: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "jsonl"
    folder.mkdir()
    rows = []
    for subset, file in (("safety", "safety.json"), ("reasoning", "reasoning.json")):
        outputs = [json.loads(line) for line in (LLAMA_OMNI / "json" / file).read_text().splitlines()][:10]
        rows += [{"subset": subset, "id": o["question_id"], "text": o["prediction"]} for o in outputs]
    (folder / "r.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    run = tmp_path / "run"
    assert cli("import", "--format", "jsonl", "--outputs", str(folder), "--data", str(shared), "--lang", "en",
               "--out", str(run), "--subsets", "safety,reasoning", "--quiet") == 0
    fit = tmp_path / "fit.json"
    fit.write_text(Calibration("cal-t", "m", {
        "safety_en": RuleFit("binary", {"g:refusal": 1.0}, threshold=0.5),
        "reasoning_binary_en": RuleFit("binary", {"g:ref_recall": 1.0}, threshold=0.5, settle=True),
        "reasoning_open_en": RuleFit("scale", {"g:steps": 1.0}, bias=3.0),
    }).to_json())
    assert cli("score", str(run), "--judge", JUDGE, "--fit", str(fit), "--asr", "none", "--mos", "none",
               "--emotion", "none", "--quiet") == 0
    safety, reasoning = _scores(run, "safety"), _scores(run, "reasoning")
    judged = [s for s in [*safety.values(), *reasoning.values()] if s.decided_by is not None]
    assert len(judged) == 20  # the 790 missing replies are system errors, decided by no one
    # no model answered: no score names one, and each names its grader (and the fit, for a rule)
    assert all(s.judge is None and s.decided_by.model is None for s in judged)  # type: ignore[union-attr]
    assert {s.decided_by.grader for s in safety.values() if s.decided_by} == {graders.graders()["safety_en"]}
    assert {(s.decided_by.source, s.decided_by.fit) for s in safety.values() if s.decided_by} == {("rule", "cal-t")}
    by_source = summary(run)["subsets"]
    assert by_source["safety"]["decided_by"] == {"grader": 0, "rule": 10, "model": 0}
    settled = sum(s.decided_by.source == "grader" for s in reasoning.values() if s.decided_by)
    assert by_source["reasoning"]["decided_by"] == {"grader": settled, "rule": 10 - settled, "model": 0}

    # a new version of the safety grader: its ten items are judged again, nothing else
    current = registry._GRADERS["safety_en"]
    name, _, version = current[0].rpartition("@")
    monkeypatch.setitem(registry._GRADERS, "safety_en", (f"{name}@{int(version) + 1}", current[1]))
    assert cli("score", str(run), "--judge", JUDGE, "--fit", str(fit), "--asr", "none", "--mos", "none",
               "--emotion", "none", "--quiet") == 0
    assert meta(run, "last_score")["scored_items"] == 10
    assert _scores(run, "reasoning") == reasoning
    assert {s.decided_by.grader for s in _scores(run, "safety").values() if s.decided_by} == {f"{name}@{int(version) + 1}"}
    # resumed again: every verdict is of the current grader version, nothing left to judge
    assert cli("score", str(run), "--judge", JUDGE, "--fit", str(fit), "--asr", "none", "--mos", "none",
               "--emotion", "none", "--quiet") == 0
    assert meta(run, "last_score")["scored_items"] == 0

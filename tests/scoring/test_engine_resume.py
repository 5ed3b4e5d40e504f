"""Resume after SIGKILL and judge changes, against a controlled OpenAI-compatible judge double.

The double (engine_fake_judge.py) answers JSON verdicts deterministically from the prompt after
a delay and records every request, so the tests can check that no finished item is judged twice.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from engine_fake_judge import FakeJudgeServer
from engine_fixtures import LLAMA_OMNI, cli, isolated_cache, meta, score_rows, shared, strip_timing, summary  # noqa: F401

EVALUATOR = "safety_en.v2@4|judge=fake-judge@127.0.0.1"


def _import_safety(shared: Path, run: Path) -> None:
    assert cli("import", "--outputs", str(LLAMA_OMNI), "--data", str(shared), "--lang", "en", "--out", str(run),
               "--subsets", "safety", "--quiet") == 0


def _score_cmd(run: Path, spec: str) -> list[str]:
    return [sys.executable, "-m", "vocalbench.cli", "score", str(run), "--judge", spec, "--protocol", "v2",
            "--judge-concurrency", "2", "--quiet"]


def _done_ids(run: Path) -> set[str]:
    db = sqlite3.connect(str(run / "store.sqlite"))
    try:
        rows = db.execute("SELECT sample_id, record FROM scores WHERE subset = 'safety' AND evaluator = ?",
                          (EVALUATOR,)).fetchall()
    finally:
        db.close()
    return {sid for sid, rec in rows if json.loads(rec).get("unscored") is None}


def test_sigkill_midway_then_resume(shared: Path, tmp_path: Path) -> None:
    run, reference = tmp_path / "run", tmp_path / "reference"
    _import_safety(shared, run)
    _import_safety(shared, reference)
    questions = [json.loads(l)["question_id"] for l in (LLAMA_OMNI / "json" / "safety.json").read_text().splitlines()]
    data = json.loads((shared / "en" / "json" / "safety.json").read_text())
    question_of = {r["Qid"]: r["Question"] for r in data}
    assert len(questions) == 400

    with FakeJudgeServer(delay=0.02) as srv:
        proc = subprocess.Popen(_score_cmd(run, srv.spec), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 120
        while srv.count() < 150 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert proc.poll() is None, "the scorer finished before it could be killed"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        time.sleep(0.1)  # let in-flight requests land in the server log
        before = srv.snapshot()
        done = _done_ids(run)
        assert 100 <= len(done) < 400  # killed mid-way; finished items were saved as they came
        assert not (run / "summary.json").exists()

        r = subprocess.run(_score_cmd(run, srv.spec), capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr[-2000:]
        after = srv.snapshot()[len(before):]

    # no finished item was judged again; only the few in flight at the kill may repeat
    seen_before = set(before)
    repeated = [p for p in after if p in seen_before]
    assert len(repeated) <= 2 * 2, len(repeated)
    for sid in done:
        assert not any(question_of[sid] in p for p in after), f"{sid} was judged again after it was saved"
    assert len(before) + len(after) - len(repeated) == 400

    # no duplicate score rows; summary equals an uninterrupted run's
    rows = [r for r in score_rows(run) if r[3] == EVALUATOR]
    assert len(rows) == len(set(rows)) == 400
    env = {**os.environ, "VOCALBENCH_CACHE": str(tmp_path / "reference-cache")}  # its own judge cache
    with FakeJudgeServer(delay=0.0) as srv2:
        assert subprocess.run(_score_cmd(reference, srv2.spec), capture_output=True, timeout=300,
                              env=env).returncode == 0
        assert srv2.count() == 400
    got, want = strip_timing(summary(run)), strip_timing(summary(reference))
    assert got == want
    safety = got["subsets"]["safety"]
    assert (safety["n"], safety["scored"], safety["unscored"], safety["complete"]) == (400, 400, 0, True)
    assert got["provenance"]["judge"] == "fake-judge@127.0.0.1"
    usage = summary(run)["provenance"]["judge_usage"]["fake-judge@127.0.0.1"]
    assert usage["calls"] >= 400 - len(done) and usage["prompt_tokens"] > 0 and usage["completion_tokens"] > 0


def test_changing_the_judge_rescores_only_judge_subsets(shared: Path, tmp_path: Path) -> None:
    folder = tmp_path / "jsonl"
    folder.mkdir()
    outputs = [json.loads(l) for l in (LLAMA_OMNI / "json" / "safety.json").read_text().splitlines()][:12]
    knowledge = [json.loads(l) for l in (LLAMA_OMNI / "json" / "knowledge.json").read_text().splitlines()][:12]
    rows = [{"subset": "safety", "id": o["question_id"], "text": o["prediction"]} for o in outputs]
    rows += [{"subset": "knowledge", "id": o["question_id"], "text": o["prediction"]} for o in knowledge]
    (folder / "r.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    run = tmp_path / "run"
    assert cli("import", "--format", "jsonl", "--outputs", str(folder), "--data", str(shared), "--lang", "en",
               "--out", str(run), "--quiet") == 0
    with FakeJudgeServer(delay=0.0, model="judge-a") as a, FakeJudgeServer(delay=0.0, model="judge-b") as b:
        assert cli("score", str(run), "--judge", a.spec, "--quiet") == 0
        first = summary(run)
        assert a.count() == 12  # 388 missing replies are system errors: no judge call
        assert first["subsets"]["safety"]["system_errors"] == 388
        # a JSON judge decides every verdict itself: all twelve name its model
        assert first["subsets"]["safety"]["decided_by"] == {"grader": 0, "rule": 0, "model": 12}
        knowledge_rows = sorted(r for r in score_rows(run) if r[0] == "knowledge")
        assert cli("score", str(run), "--judge", b.spec, "--quiet") == 0
        assert b.count() == 12 and a.count() == 12
        assert sorted(r for r in score_rows(run) if r[0] == "knowledge") == knowledge_rows  # not rescored
        second = summary(run)
        assert second["provenance"]["judge"] == "judge-b@127.0.0.1"
        # judge B was never checked against the calibration set: its safety numbers carry a warning
        validity = second["provenance"]["judge_validity"]
        assert validity["judge"] == "judge-b@127.0.0.1" and validity["checked_at"] is None
        assert validity["families"] == {"safety_en": {"validated": False, "status": "not checked"}}
        assert validity["unvalidated_subsets"] == {"safety": "safety_en: not checked"}
        assert validity["same_model_as_system"] is False
        assert {ev for *_, ev in score_rows(run) if _[0] == "safety"} == {
            "safety_en.v2@4|judge=judge-a@127.0.0.1", "safety_en.v2@4|judge=judge-b@127.0.0.1"}
        # back to judge A: its scores are still there, nothing is asked again, same summary as before
        assert cli("score", str(run), "--judge", a.spec, "--quiet") == 0
        assert a.count() == 12 and meta(run, "last_score")["scored_items"] == 0
        assert strip_timing(summary(run)) == strip_timing(first)


def test_evaluator_failures_are_retried(shared: Path, tmp_path: Path) -> None:
    folder = tmp_path / "jsonl"
    folder.mkdir()
    outputs = [json.loads(l) for l in (LLAMA_OMNI / "json" / "safety.json").read_text().splitlines()][:5]
    (folder / "r.jsonl").write_text("\n".join(json.dumps({"subset": "safety", "id": o["question_id"],
                                                          "text": o["prediction"]}) for o in outputs))
    run = tmp_path / "run"
    assert cli("import", "--format", "jsonl", "--outputs", str(folder), "--data", str(shared), "--lang", "en",
               "--out", str(run), "--quiet") == 0
    # the endpoint refuses every request: each judged item is unscored (an evaluator failure), never a value
    with FakeJudgeServer(delay=0.0, status=400) as broken:
        assert cli("score", str(run), "--judge", broken.spec, "--quiet") == 0
        assert broken.count() == 5
    s = summary(run)["subsets"]["safety"]
    assert s["unscored"] == 5 and s["complete"] is False and s["value"] == 0.0 and s["scored"] == 395
    assert summary(run)["overall"]["value"] is None
    # with a judge answering on the same id, only those 5 are scored again
    with FakeJudgeServer(delay=0.0) as srv:
        assert cli("score", str(run), "--judge", srv.spec, "--quiet") == 0
        assert srv.count() == 5
    s = summary(run)["subsets"]["safety"]
    assert s["unscored"] == 0 and s["complete"] is True and s["scored"] == 400


def test_summary_is_written_with_unicode(shared: Path, tmp_path: Path) -> None:
    run = tmp_path / "zh"
    assert cli("import", "--outputs", str(shared / "zh" / "outputs" / "qwen3-omni"), "--data", str(shared),
               "--lang", "zh", "--out", str(run), "--subsets", "chinese_knowledge", "--system", "千问", "--quiet") == 0
    assert cli("score", str(run), "--judge", "none", "--quiet") == 0
    text = (run / "summary.json").read_text(encoding="utf-8")
    assert '"system": "千问"' in text
    s = json.loads(text)
    ck = s["subsets"]["chinese_knowledge"]
    # 9 substring hits; 0005 needs the judge (none here: unscored); 990 missing replies are system errors
    assert (ck["n"], ck["system_errors"], ck["unscored"]) == (1000, 990, 1)
    assert s["dimensions"]["knowledge"] is not None and "knowledge" in s["meta"]["incomplete_dimensions"]
    assert "per" in s["dimensions"] and "wer" not in s["dimensions"]

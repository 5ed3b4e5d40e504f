"""``vocalbench export``: per-item rows of en and zh runs, JSONL and CSV, the schema of docs/scoring.md."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from engine_fixtures import LLAMA_OMNI, QWEN3_OMNI, cli, isolated_cache, shared  # noqa: F401

from vocalbench.records import DecidedBy, JudgeTrace, Reply, Sample, Score, Timings
from vocalbench.report.export import row

KEYS = ["lang", "subset", "id", "question", "reference", "reply_text", "transcript", "system_error", "scores",
        "unscored", "judge", "timings"]


def _export(run: Path, capsys: pytest.CaptureFixture[str], *args: str) -> str:
    capsys.readouterr()
    assert cli("export", str(run), *args) == 0
    return capsys.readouterr().out


def test_zh_export_gives_the_official_per_item_per(shared: Path, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "zh"
    assert cli("import", "--outputs", str(QWEN3_OMNI), "--data", str(shared), "--lang", "zh", "--out", str(run),
               "--subsets", "chinese_knowledge") == 0
    assert cli("score", str(run), "--judge", "none", "--quiet") == 0
    rows = [json.loads(line) for line in _export(run, capsys).splitlines()]
    assert len(rows) == 1000 and list(rows[0]) == KEYS
    by_id = {r["id"]: r for r in rows}
    results = json.loads((QWEN3_OMNI / "result" / "chinese_knowledge.json").read_text(encoding="utf-8"))
    assert len(results) == 10
    for rec in results:
        assert by_id[rec["Qid"]]["scores"]["per"] == pytest.approx(rec["PER"], abs=1e-12), rec["Qid"]
    first = by_id["chinese_knowledge-0000"]
    assert first["scores"]["main"] == 1.0 and first["reference"] == "少林" and first["transcript"].startswith("以武术")
    assert round(first["scores"]["per"], 6) == 0.016949
    missing = by_id["chinese_knowledge-0500"]
    assert missing["system_error"] == "missing_reply" and missing["scores"] == {"main": 0.0}
    # CSV: one row per item, scores flattened, the same values
    out = tmp_path / "zh.csv"
    assert cli("export", str(run), "--format", "csv", "--out", str(out)) == 0
    table = list(csv.DictReader(io.StringIO(out.read_text(encoding="utf-8"))))
    assert len(table) == 1000 and {"scores.main", "scores.per", "judge", "timings"} <= set(table[0])
    assert float(table[0]["scores.per"]) == pytest.approx(results[0]["PER"]) and table[0]["id"] == results[0]["Qid"]


def test_en_export_knowledge_rows(shared: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "en"
    assert cli("import", "--outputs", str(LLAMA_OMNI), "--data", str(shared), "--lang", "en", "--out", str(run),
               "--subsets", "knowledge") == 0
    assert cli("score", str(run), "--judge", "none", "--quiet") == 0
    rows = [json.loads(line) for line in _export(run, capsys, "--subsets", "knowledge").splitlines()]
    assert len(rows) == 2000 and [r["id"] for r in rows[:2]] == ["knowledge-0000", "knowledge-0001"]
    assert sum(r["scores"]["main"] for r in rows) / 20 == pytest.approx(54.6)
    assert {"main", "word_boundary", "wer"} == set(rows[0]["scores"])
    assert rows[0]["scores"]["wer"] == 0.0 and rows[0]["transcript"].startswith("leonardo da vinci")
    assert cli("export", str(run), "--subsets", "reasoning") == 2
    capsys.readouterr()
    assert cli("export", str(run), "--subsets", "knowledge,reasoning") == 2  # a list, as run and score take
    assert "no subset reasoning in this run" in capsys.readouterr().err
    assert _export(run, capsys, "--subsets", "knowledge", "--subsets", "knowledge").splitlines() == [
        json.dumps(r, ensure_ascii=False) for r in rows]


@pytest.mark.parametrize("command", ["export", "run", "score", "generate", "import", "build"])
def test_every_subsets_flag_takes_a_list_and_a_repeated_flag_adds_to_it(command: str) -> None:
    from vocalbench.cli import build_parser

    fixed = {"export": ["RUN"], "score": ["RUN"],
             "import": ["--outputs", "O", "--data", "D", "--lang", "en", "--out", "R"]}.get(command, [])
    argv = [command, *fixed, "--subsets", "safety, reasoning", "--subsets", "knowledge,safety"]
    args, _ = build_parser(argv).parse_known_args(argv)
    assert args.subsets == ["safety", "reasoning", "knowledge"]
    with pytest.raises(SystemExit):
        build_parser([command, "--subsets", ","]).parse_known_args([command, *fixed, "--subsets", ","])


def test_row_schema_on_a_constructed_item() -> None:
    s = Sample(id="single_round-000", subset="single_round", lang="en", index=0, question="q?")
    r = Reply(subset="single_round", sample_id=s.id, text="one two", audio_duration=2.0,
              timings=Timings(request_sent=0.0, first_audio=0.25, last_chunk=1.0))
    trace = JudgeTrace(model="m", prompt_hash="h", rubric="single_round_en@3", raw='{"score": 4}')
    named = {"main": Score(subset=s.subset, sample_id=s.id, value=4.0, scorer="sr@1", judge=trace),
             "clarity": Score(subset=s.subset, sample_id=s.id, value=50.0, scorer="ac@2",
                              details={"dist": 1, "len": 2, "hyp": "one"}),
             "utmos": Score(subset=s.subset, sample_id=s.id, unscored="mos_not_configured", scorer="ac@2")}
    out = row(s, r, named, "en")
    assert out["scores"] == {"wer": 0.5, "main": 4.0, "utmos": None}
    assert out["unscored"] == {"utmos": "mos_not_configured"} and out["transcript"] == "one"
    assert out["judge"] == {"main": {"model": "m", "rubric": "single_round_en@3", "verdict": 4.0, "cached": False}}
    # a verdict a grader settled names the grader, and no model
    by = DecidedBy(source="grader", grader="cues.advice_cues@2")
    settled = {"main": Score(subset=s.subset, sample_id=s.id, value=1.0, scorer="sr@1", decided_by=by,
                             details={"rubric": "single_round_en@3"})}
    assert row(s, r, settled, "en")["judge"] == {"main": {
        "model": None, "rubric": "single_round_en@3", "verdict": 1.0, "cached": False,
        "decided_by": {"source": "grader", "grader": "cues.advice_cues@2"}}}
    assert out["timings"]["fcl_ms"] == 250.0 and out["timings"]["audio_duration"] == 2.0
    assert out["system_error"] is None and row(s, None, {}, "zh")["reply_text"] is None

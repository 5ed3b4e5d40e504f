"""``vocalbench validate``: zero errors on the real metadata; every planted problem reported."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import official_items, write_release  # type: ignore[import-not-found]

from vocalbench.cli import main
from vocalbench.data.validate import validate


def test_official_metadata_has_zero_errors(shared: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(shared), "--metadata-only"]) == 0
    out = capsys.readouterr().out
    assert "en (en): 10 files, 9500 items, metadata only: 0 errors, 0 warnings" in out
    assert "zh (zh): 15 files, 11215 items, metadata only: 0 errors, 0 warnings" in out
    for lang in ("en", "zh"):
        report = validate(shared / lang, metadata_only=True)
        assert report.lang == lang and report.errors == [] and report.items > 9000


def _broken_release(root: Path) -> Path:
    knowledge = official_items("en", "knowledge", 6)
    knowledge[2]["Qid"] = knowledge[1]["Qid"]  # duplicate Qid
    del knowledge[3]["Answer"]  # missing required field
    knowledge[4]["Topic"] = 7  # wrong type
    emotion = official_items("en", "emotion", 2)
    emotion[1]["Score"] = [5, 1, 2]  # wrong shape
    multi = official_items("en", "multi_round", 1)
    multi[0]["Context"] = [{"from": "robot", "value": "hi"}]
    write_release(root, {"knowledge": knowledge, "emotion": emotion, "multi_round": multi,
                         "chitchat": [{"Qid": "chitchat-000", "Audio": "x/0.wav", "Question": "hi"}]})
    (root / "json" / "safety.json").write_text('[{"Qid": "safety-000", "Audio": "safety/000.wav",\n  "Question": }]')
    (root / "audio" / "knowledge" / "0005.wav").unlink()  # missing audio
    (root / "audio" / "knowledge" / "0000.wav").write_bytes(b"RIFF\x00\x00\x00\x00WAVEjunk")  # corrupt audio
    return root


def test_every_problem_is_reported_with_file_qid_and_field(shared: Path, tmp_path: Path) -> None:
    root = _broken_release(tmp_path / "en")
    report = validate(root)
    got = {(p.file.split("/")[-1], p.qid, p.field, p.message.split(":")[0]) for p in report.errors}
    expected = {
        ("knowledge.json", "knowledge-0001", "Qid", "duplicate Qid (items 1 and 2)"),
        ("knowledge.json", "knowledge-0003", "Answer", "missing required field"),
        ("knowledge.json", "knowledge-0004", "Topic", "wrong type"),
        ("knowledge.json", "knowledge-0005", "Audio", "missing audio"),
        ("knowledge.json", "knowledge-0000", "Audio", "unreadable audio (not a readable audio file (Error opening "),
        ("emotion.json", "emotion-001", "Score", "expected 5 ratings in 1..5 for [angry, happy, neutral, sad, surprised]"),
        ("multi_round.json", "multi_round-000", "Context", "turn 0 must be {from"),
        ("chitchat.json", None, None, "unknown subset file 'chitchat.json' for lang en (known"),
        ("safety.json", None, None, "malformed JSON at line 2, column 15"),
    }
    assert {g[:3] for g in got} == {e[:3] for e in expected}
    for e in expected:
        assert any(g[:3] == e[:3] and g[3].startswith(e[3][:20]) for g in got), e
    assert len(report.errors) == len(expected)
    assert all(p.file.startswith("en/json/") for p in report.errors)
    # metadata-only skips the audio checks but keeps every metadata problem
    meta = validate(root, metadata_only=True)
    assert len(meta.errors) == len(expected) - 2 and meta.audio_checked == 0


def test_cli_exits_1_and_prints_each_problem(shared: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _broken_release(tmp_path / "en")
    assert main(["validate", str(root)]) == 1
    out = capsys.readouterr().out
    assert "error: en/json/knowledge.json [knowledge-0003] field 'Answer': missing required field" in out
    assert "error: en/json/safety.json: malformed JSON at line 2" in out
    assert ": 9 errors," in out
    assert main(["validate", str(root), "--json"]) == 1
    body = json.loads(capsys.readouterr().out)
    assert body["errors"] == 9 and {p["field"] for p in body["problems"]} >= {"Qid", "Answer", "Topic", "Audio"}


def test_clean_release_with_audio_passes(shared: Path, tmp_path: Path) -> None:
    root = write_release(tmp_path / "zh", {"chinese_knowledge": official_items("zh", "chinese_knowledge", 3),
                                           "cs_knowledge": official_items("zh", "cs_knowledge", 3)})
    report = validate(root)
    assert report.errors == [] and report.audio_checked == 6 and report.lang == "zh"
    assert [p.level for p in report.problems] == ["warning", "warning"]  # sizes differ from the official set

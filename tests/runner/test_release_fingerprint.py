"""Release fingerprints: a changed release is refused or, with --redo-changed, exactly its changed
samples are answered and scored again; a store made before fingerprints gets them on resume."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest
from release import knowledge_script, make_release

from vocalbench.cli import main
from vocalbench.runner.store import RunStore


def _rows(run: Path, table: str) -> dict[str, str]:
    with sqlite3.connect(run / "store.sqlite") as db:
        return {sid: rec for sid, rec in db.execute(f"SELECT sample_id, record FROM {table}")}


def _run(rel: Path, script: Path, out: Path, *extra: str) -> int:
    return main(["run", "--system", f"scripted:{script}", "--data", str(rel), "--lang", "en", "--out", str(out),
                 "--judge", "none", "--quiet", *extra])


def _set_answer(rel: Path, i: int, answer: str) -> None:
    f = rel / "json" / "knowledge.json"
    records = json.loads(f.read_text())
    records[i]["Answer"] = answer
    f.write_text(json.dumps(records))


@pytest.fixture
def made(tmp_path: Path) -> tuple[Path, Path, Path]:
    rel, script, run = make_release(tmp_path / "rel", 3), knowledge_script(tmp_path / "s.jsonl", 3), tmp_path / "RUN"
    assert _run(rel, script, run) == 0
    return rel, script, run


def test_redo_changed_redoes_exactly_the_changed_samples(made, capsys):
    rel, script, run = made
    replies, scores = _rows(run, "replies"), _rows(run, "scores")
    assert json.loads((run / "summary.json").read_text())["subsets"]["knowledge"]["value"] == pytest.approx(33.3333)
    _set_answer(rel, 1, "know")  # item 1's reply "I do not know." now holds its reference
    assert _run(rel, script, run) == 2
    assert "knowledge/knowledge-0001 (reference)" in capsys.readouterr().err
    assert _rows(run, "replies") == replies and _rows(run, "scores") == scores  # refused: nothing changed
    assert _run(rel, script, run, "--redo-changed") == 0
    after_replies, after_scores = _rows(run, "replies"), _rows(run, "scores")
    assert {k: v for k, v in after_replies.items() if k != "knowledge-0001"} == \
        {k: v for k, v in replies.items() if k != "knowledge-0001"}
    assert after_replies["knowledge-0001"] != replies["knowledge-0001"]  # answered again (new timings)
    assert after_scores["knowledge-0000"] == scores["knowledge-0000"]
    assert after_scores["knowledge-0002"] == scores["knowledge-0002"]
    assert json.loads(after_scores["knowledge-0001"])["value"] == 1.0
    assert json.loads((run / "summary.json").read_text())["subsets"]["knowledge"]["value"] == pytest.approx(66.6667)
    assert _run(rel, script, run) == 0  # the new release is now the run's


def test_a_store_without_fingerprints_gets_them_on_resume(made, capsys):
    rel, script, run = made
    with sqlite3.connect(run / "store.sqlite") as db:
        db.execute("DROP TABLE fingerprints")  # a store made before fingerprints existed
    assert _run(rel, script, run) == 0
    with RunStore(run) as store:
        assert len(store.fingerprints()) == 3
    _set_answer(rel, 2, "Rome")
    assert _run(rel, script, run) == 2
    assert "knowledge/knowledge-0002 (reference)" in capsys.readouterr().err


def test_audio_is_hashed_once_while_the_file_is_unchanged(made, monkeypatch):
    from vocalbench.data import load_samples
    from vocalbench.runner import fingerprint

    rel, _, run = made
    calls: list[str] = []
    real = fingerprint.content_hash
    monkeypatch.setattr(fingerprint, "content_hash", lambda p: calls.append(str(p)) or real(p))
    samples = load_samples(str(rel), "en")
    with RunStore(run) as store:
        assert fingerprint.sync_release(store, samples) == []
        assert calls == []  # size and time unchanged since the run: the stored hash is reused
        wav = Path(samples[0].audio.path)
        os.utime(wav, ns=(1_000_000_000, 1_000_000_000))  # same bytes, another time: hashed again, unchanged
        assert fingerprint.sync_release(store, samples) == [] and calls == [str(wav)]

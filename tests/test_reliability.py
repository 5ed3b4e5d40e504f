"""Secrets stay out of stored and shown text, rewritten files are atomic, ids are safe file names,
WAV headers are checked against their bytes, and a run's text is escaped in the leaderboard."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "runner"))
from release import make_release  # noqa: E402

from vocalbench.cli import main  # noqa: E402
from vocalbench.files import UnsafePath, id_problem, inside, write_atomic  # noqa: E402
from vocalbench.redact import redact, spec_credentials, url_credentials  # noqa: E402

KEY = "sk-live-0123456789abcdef"
SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "vocalbench"


def test_an_echoed_key_is_redacted_in_the_store_and_on_screen(tmp_path, monkeypatch, capsys):
    """An endpoint that echoes the Authorization header in its error: the key is in no stored
    reply, judge trace, judge cache entry or printed line."""
    monkeypatch.setenv("VOCALBENCH_SYSTEM_API_KEY", KEY)
    rel = make_release(tmp_path / "rel", 3)
    script = tmp_path / "echo.jsonl"
    script.write_text(json.dumps({"id": "*", "fault": {"type": "http_401", "fail_first": -1, "retryable": False,
                                                       "message": f"invalid key: Authorization: Bearer {KEY}"}}))
    code = main(["run", "--system", f"scripted:{script}", "--data", str(rel), "--lang", "en",
                 "--out", str(tmp_path / "RUN"), "--judge", "none", "--quiet"])
    shown = capsys.readouterr()
    assert code == 4 and KEY not in shown.out + shown.err
    with sqlite3.connect(tmp_path / "RUN" / "store.sqlite") as db:
        stored = " ".join(r[0] for r in db.execute("SELECT record FROM replies"))
    assert KEY not in stored and stored.count("Bearer [redacted]") == 3

    from vocalbench.components.cache import ResultCache
    from vocalbench.records import JudgeTrace, Score
    from vocalbench.runner.store import RunStore

    with RunStore(tmp_path / "RUN") as store:
        store.put_score(Score(subset="knowledge", sample_id="knowledge-0000", scorer="j@1", value=1.0,
                              judge=JudgeTrace(model="m", prompt_hash="h", rubric="r@1", raw=f'{{"echo": "{KEY}"}}')),
                        "j@1")
        store.log_judge_call(subset=None, sample_id=None, model="m", prompt_hash="h", cached=False,
                             error=f"401 {KEY}")
        assert store.scores(evaluator="j@1")[0].judge.raw == '{"echo": "[redacted]"}'
    cache = ResultCache(tmp_path / "cache.sqlite")
    cache.put_verdict("m", "h", "r", "p", 1.0, f"says {KEY}")
    assert cache.get_verdict("m", "h", "r", "p") == (1.0, "says [redacted]")
    assert KEY not in (tmp_path / "RUN" / "store.sqlite").read_bytes().decode("latin-1")


def test_redact_masks_only_configured_values(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", 'k"ey-12345')
    monkeypatch.setenv("OTHER_API_KEY", "abc")  # too short to be masked safely
    assert redact('a k"ey-12345 b') == "a [redacted] b"
    assert redact(json.dumps({"x": 'k"ey-12345'})) == '{"x": "[redacted]"}'
    assert redact("abc stays") == "abc stays"


@pytest.mark.parametrize(("url", "found"), [
    ("http://127.0.0.1:8000/v1", None),
    ("https://api.example.com/v1?model=x", None),
    ("http://user:pw@127.0.0.1/v1", "user name or password"),
    ("http://token@127.0.0.1/v1", "user name or password"),
    ("wss://h/realtime?api-key=abc", "query parameter 'api-key'"),
    ("https://h/v1?access_token=abc", "query parameter 'access_token'"),
])
def test_url_credentials(url, found):
    assert url_credentials(url) == found
    assert spec_credentials(f"openai:model@{url}") == found


def test_write_atomic_keeps_the_old_file_when_a_write_fails(tmp_path):
    p = write_atomic(tmp_path / "config.json", '{"ok": 1}')
    with pytest.raises(UnicodeEncodeError):
        write_atomic(p, "\ud800 lone surrogate")
    assert p.read_text() == '{"ok": 1}' and [x.name for x in tmp_path.iterdir()] == ["config.json"]


def test_inside_refuses_paths_that_leave_the_root(tmp_path):
    assert inside(tmp_path, "a/b.wav") == (tmp_path / "a" / "b.wav").resolve()
    (tmp_path / "link").symlink_to("/etc")
    for bad in ("../x.wav", "/etc/passwd", "link/passwd"):
        with pytest.raises(UnsafePath, match="outside"):
            inside(tmp_path, bad)


@pytest.mark.parametrize("qid", ["../x", "a/b", "", ".hidden", "a b", "a\\b", "x" * 201, "..", "é-1"])
def test_unsafe_ids(qid):
    assert id_problem(qid)


def test_every_official_qid_is_safe():
    files = sorted(SHARED.glob("*/json/*.json"))
    if not files:
        pytest.skip(f"official metadata not found at {SHARED}")
    qids = [r["Qid"] for f in files for r in json.loads(f.read_text(encoding="utf-8")) if isinstance(r, dict)]
    assert len(qids) > 1000 and [q for q in qids if id_problem(q)] == []


def test_wav_header_checks(tmp_path):
    from vocalbench.audio import AudioError, info, to_wav_bytes

    data = to_wav_bytes(np.zeros(1600, dtype=np.float32), 16000)
    (tmp_path / "ok.wav").write_bytes(data)
    assert info(tmp_path / "ok.wav").frames == 1600
    (tmp_path / "cut.wav").write_bytes(data[:1000])
    with pytest.raises(AudioError, match="truncated: the WAV header declares 3200 bytes"):
        info(tmp_path / "cut.wav")
    fast = bytearray(data)
    fast[24:28] = (2_000_000_000).to_bytes(4, "little")
    (tmp_path / "fast.wav").write_bytes(bytes(fast))
    with pytest.raises(AudioError, match="2000000000 Hz is outside"):
        info(tmp_path / "fast.wav")


def test_leaderboard_escapes_system_names(tmp_path):
    from vocalbench.report.leaderboard import write_markdown

    run = tmp_path / "run"
    run.mkdir()
    name = "evil | <script>alert(1)</script>\n[x](http://e)"
    (run / "summary.json").write_text(json.dumps({
        "lang": "en", "protocol": "v2", "system": name,
        "subsets": {"knowledge": {"metric": "accuracy", "value": 50.0, "n": 2, "scored": 2, "unscored": 0,
                                  "system_errors": 0, "complete": True, "ci95": None, "extra": {}}},
        "dimensions": {"knowledge": 50.0}, "overall": {"version": "v2", "value": None, "missing": [], "partial": None},
        "provenance": {}, "meta": {}}))
    text = write_markdown([run], tmp_path / "lb.md").read_text()
    assert "<script>" not in text and "](http" not in text
    assert r"evil \| \<script\>alert\(1\)\</script\> \[x\]\(http://e\)" in text


def test_a_key_in_an_error_type_is_redacted_on_every_console_line(tmp_path, monkeypatch, capsys):
    """An endpoint whose error event's ``type`` carries the key: the progress line, the result line
    and the ``error:`` line show it redacted, as the store does."""
    monkeypatch.setenv("VOCALBENCH_SYSTEM_API_KEY", KEY)
    rel = make_release(tmp_path / "rel", 2)
    script = tmp_path / "echo.jsonl"
    script.write_text(json.dumps({"id": "*", "fault": {"type": f"bad_key_{KEY}", "fail_first": -1,
                                                       "retryable": False}}))
    code = main(["generate", "--system", f"scripted:{script}", "--data", str(rel), "--lang", "en",
                 "--out", str(tmp_path / "RUN")])
    shown = capsys.readouterr()
    assert code == 4
    assert KEY not in shown.out + shown.err
    assert "bad_key_[redacted]" in shown.err and "error: [en] every one" in shown.err


def test_csv_export_neutralises_formulas_and_jsonl_keeps_the_text(tmp_path, capsys):
    """Reply text a spreadsheet would run as a formula gets a leading quote in CSV (OWASP); JSONL
    keeps it as it is."""
    import csv
    import io

    rel = make_release(tmp_path / "rel", 4)
    texts = ['=HYPERLINK("http://evil.example","click")', "+1+1", "-2+3", "@SUM(A1)"]
    script = tmp_path / "formula.jsonl"
    script.write_text("".join(json.dumps({"id": f"knowledge-{i:04d}", "text": t}) + "\n" for i, t in enumerate(texts)))
    run = tmp_path / "RUN"
    assert main(["run", "--system", f"scripted:{script}", "--data", str(rel), "--lang", "en", "--out", str(run),
                 "--judge", "none", "--quiet"]) == 0
    capsys.readouterr()
    assert main(["export", str(run), "--format", "csv", "--out", str(tmp_path / "x.csv")]) == 0
    rows = list(csv.DictReader(io.StringIO((tmp_path / "x.csv").read_text(encoding="utf-8"))))
    assert [r["reply_text"] for r in rows] == ["'" + t for t in texts]
    assert main(["export", str(run)]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [x["reply_text"] for x in lines] == texts

"""Bad input, table-driven: every case exits with the stated status (2 for bad input) and one error
line naming the file, item or field, and nothing already done (a finished run, the release) is
lost or changed. Commands run in-process through ``vocalbench.cli.main`` (a port-binding case in a
subprocess, so a server that wrongly starts cannot hang the suite).

``python tests/test_bad_input_suite.py [--table] [--before SRC]`` prints the cases as a Markdown
table of exit status and message, measured with this tree and, with ``--before``, with another
source tree (e.g. ``../old-checkout/src``) in subprocesses: the before/after table of the closing note.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import socket
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "runner"))
from release import knowledge_script, make_release  # noqa: E402

from vocalbench.audio import write  # noqa: E402
from vocalbench.cli import main  # noqa: E402

CLI = [sys.executable, "-m", "vocalbench.cli"]
KEY = "sk-test-secret-0123456789"


# --------------------------------------------------------------------------- the world a case breaks
@dataclass
class World:
    """A finished run (RUN) and the release it was made from (rel) in ``tmp``; the system's script
    lives in ``base``, the world the run was made in (so a copy of the world is the same system)."""

    tmp: Path
    base: Path

    @property
    def rel(self) -> Path:
        return self.tmp / "rel"

    @property
    def run(self) -> Path:
        return self.tmp / "RUN"

    @property
    def script(self) -> Path:
        return self.base / "script.jsonl"

    def new(self, name: str) -> Path:
        """A path for a case's own output (not created)."""
        return self.tmp / "case" / name

    def release(self, edit: Callable[[list[dict]], object] | None = None, name: str = "rel2") -> Path:
        """A copy of the release with its knowledge records edited in place by ``edit``."""
        dst = self.tmp / name
        shutil.copytree(self.rel, dst)
        if edit is not None:
            f = dst / "json" / "knowledge.json"
            records = json.loads(f.read_text())
            edit(records)
            f.write_text(json.dumps(records, ensure_ascii=False))
        return dst

    def system(self) -> list[str]:
        return ["--system", f"scripted:{self.script}"]

    def gen(self, data: Path, out: Path, *extra: str) -> list[str]:
        return ["generate", *self.system(), "--data", str(data), "--lang", "en", "--out", str(out), "--quiet", *extra]

    def jsonl(self, *records: dict, name: str = "out.jsonl") -> Path:
        p = self.tmp / "outputs" / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("".join(json.dumps(r) + "\n" for r in records))
        return p

    def imp(self, outputs: Path, out: Path | None = None, data: Path | None = None) -> list[str]:
        return ["import", "--format", "jsonl", "--outputs", str(outputs), "--data", str(data or self.rel),
                "--lang", "en", "--out", str(out or self.run), "--quiet"]


def build_world(tmp: Path) -> World:
    """A 3-item release and a finished ``run`` of a scripted system on it (one judged score added,
    for the agreement cases)."""
    from vocalbench.records import JudgeTrace, Score
    from vocalbench.runner.store import RunStore

    w = World(tmp, tmp)
    make_release(w.rel, 3)
    knowledge_script(w.script, 3)
    code = main(["run", *w.system(), "--data", str(w.rel), "--lang", "en", "--out", str(w.run), "--judge", "none",
                 "--quiet"])
    assert code == 0
    with RunStore(w.run) as store:
        store.put_score(Score(subset="knowledge", sample_id="knowledge-0000", name="judged", value=3.0, scorer="judged@1",
                              judge=JudgeTrace(model="m", prompt_hash="h", rubric="creativity_descriptive_en@1",
                                               raw="3")), "judged@1")
    return w


# --------------------------------------------------------------------------- what must not change
def snapshot(folder: Path) -> dict[str, object]:
    """Every file's hash under ``folder`` and the run store's rows (WAL side files ignored)."""
    out: dict[str, object] = {}
    for p in sorted(folder.rglob("*")):
        if not p.is_file() or p.name.endswith(("-wal", "-shm")):
            continue
        rel = str(p.relative_to(folder))
        if p.name == "store.sqlite":
            try:
                with sqlite3.connect(f"file:{p}?mode=ro", uri=True) as db:
                    tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
                    out[rel] = {t: sorted(map(repr, db.execute(f"SELECT * FROM {t}"))) for t in sorted(tables)}
                continue
            except sqlite3.DatabaseError:
                pass  # a damaged store: its bytes must stay as they are
        out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


# --------------------------------------------------------------------------- the cases
@dataclass(frozen=True)
class Case:
    name: str
    setup: Callable[[World], list[str]]  # prepares the broken input, returns the argv
    expect: str  # in the one error line
    code: int = 2
    check: Callable[[World], None] | None = None  # anything else that must hold afterwards
    subprocess: bool = False
    guarded: tuple[str, ...] = ("RUN", "rel")  # folders of the world that must not change
    env: dict[str, str] = field(default_factory=dict)


def _edit(i: int, **values: object) -> Callable[[list[dict]], None]:
    def edit(records: list[dict]) -> None:
        records[i].update(values)
    return edit


def _write(path: Path, data: bytes | str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data)
    return path


def _tone(path: Path, freq: float) -> None:
    t = np.arange(8000) / 16000
    write(path, (0.2 * np.sin(2 * np.pi * freq * t)).astype(np.float32), 16000)


def _wav_bytes(w: World, i: int = 0) -> bytes:
    return (w.rel / "audio" / "knowledge" / f"{i:04d}.wav").read_bytes()


def _rate(data: bytes, rate: int) -> bytes:
    b = bytearray(data)
    b[24:28] = rate.to_bytes(4, "little")
    return bytes(b)


def _no_escape(w: World) -> None:
    assert not list(w.tmp.rglob("escaped*")), "a Qid wrote outside its run folder"


def _summary_written(w: World) -> None:
    summary = json.loads((w.new("allfail") / "summary.json").read_text())
    assert summary["subsets"]["knowledge"]["system_errors"] == 3


def _busy_port(w: World) -> list[str]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    _HELD.append(sock)
    return ["serve", *w.system(), "--port", str(sock.getsockname()[1]), "--quiet"]


def _surrogate(w: World) -> Path:
    """A release whose knowledge-0001 question holds a lone surrogate (a JSON escape, valid JSON)."""
    r = w.release()
    f = r / "json" / "knowledge.json"
    f.write_text(f.read_text().replace('"Question 1:', '"\\ud800 Question 1:'))
    return r


def _extra_file(w: World, name: str) -> Path:
    r = w.release()
    shutil.copy(r / "json" / "knowledge.json", r / "json" / name)
    return r


def _nan_wav(w: World) -> Path:
    r = w.release()
    x = np.full(8000, np.nan, dtype=np.float32)
    x[::2] = np.inf
    write(r / "audio" / "knowledge" / "0002.wav", x, 16000, subtype="FLOAT")
    return r


def _locked(w: World) -> Path:
    """RUN held by a live process (pid 1 on this host)."""
    _write(w.run / ".lock", json.dumps({"pid": 1, "host": socket.gethostname(), "command": "vocalbench run"}))
    return w.run


_HELD: list[socket.socket] = []
FAIL_SCRIPT = json.dumps({"id": "*", "fault": {"type": "http_500", "message": "down", "fail_first": -1,
                                               "retryable": False}})
BRACES = json.dumps({"id": "*", "text": 'say {"a": 1}'})
PASSWD_LINE = {"subset": "knowledge", "id": "knowledge-0000", "text": "Paris"}
CSV_HEAD = "sample_id,subset,rater_id,score\n"

CASES: list[Case] = [
    # 1. ids and paths: nothing is written or linked outside its folder
    Case("qid-traversal", lambda w: w.gen(w.release(_edit(0, Qid="../../../../escaped")), w.tmp / "a" / "b" / "RUN2"),
         "unsafe id", check=_no_escape),
    Case("qid-slash", lambda w: w.gen(w.release(_edit(0, Qid="sub/dir-1")), w.new("slash")), "unsafe id"),
    Case("qid-validate", lambda w: ["validate", str(w.release(_edit(1, Qid="../x-1")))], "unsafe id", code=1),
    Case("audio-path-escape", lambda w: w.gen(w.release(_edit(0, Audio="../../etc/passwd")), w.new("audio")),
         "must be relative to audio/"),
    Case("jsonl-audio-absolute", lambda w: w.imp(w.jsonl({**PASSWD_LINE, "audio": "/etc/passwd"})),
         "outside the outputs folder"),
    Case("jsonl-audio-relative-escape", lambda w: w.imp(w.jsonl({**PASSWD_LINE, "audio": "../../../etc/hosts"})),
         "outside the outputs folder"),
    Case("jsonl-audio-not-audio", lambda w: w.imp(w.jsonl({**PASSWD_LINE, "audio": str(
        _write(w.tmp / "outputs" / "notes.txt", "hello").name)})), "not an audio file"),
    # 2. a changed release: refused, naming the samples and parts that changed
    Case("release-changed-reference", lambda w: w.gen(w.release(_edit(1, Answer="Lyon")), w.run),
         "knowledge/knowledge-0001 (reference)"),
    Case("release-changed-question", lambda w: w.gen(w.release(_edit(2, Question="Capital of Italy?")), w.run),
         "knowledge/knowledge-0002 (question)"),
    Case("release-changed-metadata", lambda w: w.gen(w.release(_edit(0, Category="history")), w.run),
         "knowledge/knowledge-0000 (metadata)"),
    Case("release-changed-audio", lambda w: (_tone((r := w.release()) / "audio" / "knowledge" / "0001.wav", 999),
                                             w.gen(r, w.run))[1], "knowledge/knowledge-0001 (audio)"),
    Case("import-release-changed", lambda w: w.imp(w.jsonl(PASSWD_LINE), data=w.release(_edit(1, Answer="Lyon"))),
         "the release changed"),
    # 4. secrets: no credentials in a URL
    Case("system-url-userinfo", lambda w: ["generate", "--system", f"openai-audio:gpt@http://user:{KEY}@127.0.0.1:9/v1",
                                           "--data", str(w.rel), "--lang", "en", "--out", str(w.new("u"))],
         "must not carry credentials"),
    Case("system-url-query-key", lambda w: ["generate", "--system", f"http:http://127.0.0.1:9/x?api_key={KEY}",
                                            "--data", str(w.rel), "--lang", "en", "--out", str(w.new("q"))],
         "query parameter 'api_key'"),
    Case("system-base-url-userinfo", lambda w: w.gen(w.rel, w.new("b"), "--system-base-url",
                                                     f"http://u:{KEY}@127.0.0.1:9/v1"), "--system-base-url"),
    Case("score-judge-url-userinfo", lambda w: ["score", str(w.run), "--judge", f"openai:m@http://u:{KEY}@127.0.0.1:9/v1",
                                                "--quiet"], "must not carry credentials"),
    Case("serve-url-userinfo", lambda w: ["serve", "--system", f"openai-audio:m@http://u:{KEY}@127.0.0.1:9/v1",
                                          "--port", "0"], "must not carry credentials"),
    # 5. one-line errors instead of tracebacks
    Case("store-garbage", lambda w: (_write(w.run / "store.sqlite", b"not sqlite at all " * 300),
                                     ["score", str(w.run), "--quiet"])[1], "not a readable run store"),
    Case("store-truncated", lambda w: (_write(w.run / "store.sqlite", (w.run / "store.sqlite").read_bytes()[:5000]),
                                       ["score", str(w.run), "--quiet"])[1], "store.sqlite"),
    Case("store-is-folder", lambda w: ((w.run / "store.sqlite").unlink(), (w.run / "store.sqlite").mkdir(),
                                       w.gen(w.rel, w.run))[2], "store.sqlite: not a file"),
    Case("config-truncated-score", lambda w: (_write(w.run / "config.json", (w.run / "config.json").read_text()[:40]),
                                              ["score", str(w.run), "--quiet"])[1], "config.json: malformed JSON"),
    Case("config-truncated-generate", lambda w: (_write(w.run / "config.json", (w.run / "config.json").read_text()[:40]),
                                                 w.gen(w.rel, w.run))[1], "config.json: malformed JSON"),
    Case("config-a-list", lambda w: (_write(w.run / "config.json", "[]"), ["score", str(w.run), "--quiet"])[1],
         "expected a JSON object"),
    Case("config-bad-value", lambda w: (_write(w.run / "config.json", json.dumps(
        {**json.loads((w.run / "config.json").read_text()), "concurrency": 0})), ["score", str(w.run)])[1],
         "concurrency: Input should be greater than or equal to 1"),
    Case("out-is-a-file", lambda w: w.gen(w.rel, _write(w.new("file"), "x")), "exists and is not a folder"),
    Case("out-under-a-file", lambda w: w.gen(w.rel, _write(w.new("file2"), "x") / "sub"), "is not a folder"),
    Case("serve-port-out-of-range", lambda w: ["serve", *w.system(), "--port", "99999"], "--port 99999"),
    Case("serve-port-in-use", _busy_port, "cannot listen", subprocess=True),
    Case("report-no-summary", lambda w: ((w.run / "summary.json").unlink(), ["report", str(w.run), "--out",
                                                                              str(w.new("rep")), "--quiet"])[1],
         "no summary.json"),
    Case("report-summary-truncated", lambda w: (_write(w.run / "summary.json", (w.run / "summary.json").read_text()[:50]),
                                                ["report", str(w.run), "--out", str(w.new("rep")), "--quiet"])[1],
         "summary.json: unreadable JSON"),
    Case("report-summary-not-a-summary", lambda w: (_write(w.run / "summary.json", '{"lang": 5, "subsets": [1]}'),
                                                    ["report", str(w.run), "--out", str(w.new("rep")), "--quiet"])[1],
         "not a vocalbench summary"),
    Case("agreement-binary-csv", lambda w: ["agreement", str(w.run), "--quiet", "--human",
                                            str(_write(w.new("h.csv"), bytes(range(256)) * 4))], "not a UTF-8 CSV"),
    Case("agreement-nul-csv", lambda w: ["agreement", str(w.run), "--quiet", "--human",
                                         str(_write(w.new("h.csv"), CSV_HEAD + "knowledge-0000,know\0ledge,r1,3\n"))],
         "NUL"),
    Case("jsonl-subset-a-list", lambda w: w.imp(w.jsonl({**PASSWD_LINE, "subset": ["knowledge"]})),
         "field 'subset': expected a string"),
    Case("jsonl-id-a-number", lambda w: w.imp(w.jsonl({**PASSWD_LINE, "id": 7})), "field 'id': expected a string"),
    Case("lang-zh-on-en-release", lambda w: ["generate", *w.system(), "--data", str(w.rel), "--lang", "zh", "--out",
                                             str(w.new("zh")), "--quiet"], "this release is en"),
    Case("score-zh-run-of-an-en-release", lambda w: (_write(w.run / "config.json", json.dumps(
        {**json.loads((w.run / "config.json").read_text()), "lang": "zh"})), ["score", str(w.run), "--quiet"])[1],
         "knowledge, not a zh subset"),
    # 6. bad input that was accepted silently
    Case("empty-release", lambda w: w.gen(w.release(lambda r: r.clear()), w.new("empty")), "no records"),
    Case("validate-empty-file", lambda w: ["validate", str(w.release(lambda r: r.clear()))], "no records", code=1),
    Case("validate-truncated-wav", lambda w: ["validate", str((r := w.release(), _write(
        r / "audio" / "knowledge" / "0001.wav", _wav_bytes(w, 1)[:9000]))[0])], "truncated", code=1),
    Case("validate-rate-2e9", lambda w: ["validate", str((r := w.release(), _write(
        r / "audio" / "knowledge" / "0002.wav", _rate(_wav_bytes(w, 2), 2_000_000_000)))[0])], "2000000000 Hz", code=1),
    Case("generate-truncated-wav", lambda w: w.gen((r := w.release(), _write(
        r / "audio" / "knowledge" / "0001.wav", _wav_bytes(w, 1)[:9000]))[0], w.new("trunc")), "[knowledge-0001]"),
    Case("agreement-rating-17", lambda w: ["agreement", str(w.run), "--quiet", "--human",
                                           str(_write(w.new("h.csv"), CSV_HEAD + "knowledge-0000,knowledge,r1,17\n"))],
         "17 is outside the creativity_descriptive_en scale 1..5"),
    Case("every-sample-failed", lambda w: ["run", "--system", f"scripted:{_write(w.new('f.jsonl'), FAIL_SCRIPT)}",
                                           "--data", str(w.rel), "--lang", "en", "--out", str(w.new("allfail")),
                                           "--judge", "none", "--quiet"],
         "every one of the 3 samples", code=4, check=_summary_written),
    # 7. a script template that cannot format: refused at load
    Case("scripted-template-braces", lambda w: ["generate", "--system", f"scripted:{_write(w.new('t.jsonl'), BRACES)}",
                                                "--data", str(w.rel), "--lang", "en", "--out", str(w.new("tpl"))],
         "not a valid template"),
    # 8. one-line validation messages
    Case("limit-0", lambda w: w.gen(w.rel, w.new("l"), "--limit", "0"), "--limit: Input should be greater than or equal to 1"),
    Case("concurrency-0", lambda w: w.gen(w.rel, w.new("c"), "--concurrency", "0"), "--concurrency: Input should be"),
    Case("error-threshold-2", lambda w: w.gen(w.rel, w.new("e"), "--error-threshold", "2"), "--error-threshold:"),
    Case("timeout-0", lambda w: w.gen(w.rel, w.new("t"), "--timeout", "0"), "--timeout: Input should be greater than 0"),
    Case("judge-concurrency-0", lambda w: ["score", str(w.run), "--judge-concurrency", "0"],
         "invalid option --judge-concurrency: Input should be greater than or equal to 1"),
    Case("jsonl-timings-wrong-type", lambda w: w.imp(w.jsonl({**PASSWD_LINE, "timings": {"first_audio": "soon"}})),
         "first_audio: Input should be a valid number"),
    Case("jsonl-timings-a-list", lambda w: w.imp(w.jsonl({**PASSWD_LINE, "timings": [1, 2]})),
         "field 'timings': expected an object"),
    # and more of the same family
    Case("duplicate-qid", lambda w: w.gen(w.release(_edit(1, Qid="knowledge-0000")), w.new("dup")), "duplicate Qid"),
    Case("release-malformed-json", lambda w: w.gen((r := w.release(), _write(r / "json" / "knowledge.json", "[{"))[0],
                                                   w.new("mal")), "malformed JSON"),
    Case("release-not-utf8", lambda w: w.gen((r := w.release(), _write(r / "json" / "knowledge.json", b"[\xff\xfe]"))[0],
                                             w.new("utf")), "not UTF-8"),
    Case("unknown-subset", lambda w: w.gen(w.rel, w.new("s"), "--subsets", "nonsense"), "subset(s) nonsense"),
    Case("data-missing", lambda w: w.gen(w.tmp / "nowhere", w.new("d")), "no such data folder"),
    Case("score-not-a-run", lambda w: ["score", str(w.rel), "--quiet"], "not a run folder"),
    Case("config-unknown-key", lambda w: (_write(w.run / "config.json", json.dumps(
        {**json.loads((w.run / "config.json").read_text()), "colour": "red"})), ["score", str(w.run)])[1],
         "unknown key(s) colour"),
    Case("compare-missing-run", lambda w: ["compare", str(w.run), str(w.tmp / "nowhere")], "no such folder"),
    # 9. releases checked before anything is generated; validate and run agree
    Case("release-unknown-subset-file", lambda w: w.gen(_extra_file(w, "extra.json"), w.new("x")),
         "unknown subset file 'extra.json'"),
    Case("validate-unknown-subset-file", lambda w: ["validate", str(_extra_file(w, "extra.json"))],
         "unknown subset file 'extra.json'", code=1),
    Case("release-subset-named-dotdot", lambda w: w.gen(_extra_file(w, "...json"), w.new("dd")),
         "unknown subset file '...json'"),
    Case("release-lone-surrogate", lambda w: w.gen(_surrogate(w), w.new("sur")), "not valid Unicode"),
    Case("validate-lone-surrogate", lambda w: ["validate", str(_surrogate(w))], "not valid Unicode", code=1),
    Case("validate-nan-audio", lambda w: ["validate", str(_nan_wav(w))], "NaN or infinite", code=1),
    Case("hf-revision-traversal", lambda w: w.gen("hf:owner/name@../../../x", w.new("hf")),  # type: ignore[arg-type]
         "not a branch, tag or commit name"),
    Case("env-openai-base-url-userinfo", lambda w: ["score", str(w.run), "--quiet"],
         "OPENAI_BASE_URL must not carry credentials", env={"OPENAI_BASE_URL": f"http://u:{KEY}@127.0.0.1:9/v1"}),
    Case("env-system-base-url-query-key", lambda w: w.gen(w.rel, w.new("env")),
         "VOCALBENCH_SYSTEM_BASE_URL must not carry credentials",
         env={"VOCALBENCH_SYSTEM_BASE_URL": f"http://127.0.0.1:9/v1?api_key={KEY}"}),
    Case("run-folder-locked", lambda w: w.gen(w.rel, _locked(w)), "in use by vocalbench run (pid 1"),
    Case("score-run-folder-locked", lambda w: (_locked(w), ["score", str(w.run), "--quiet"])[1], "in use by"),
    Case("other-system-same-out", lambda w: ["generate", "--system", f"scripted:{_write(w.new('o.jsonl'), FAIL_SCRIPT)}",
                                             "--data", str(w.rel), "--lang", "en", "--out", str(w.run)],
         "holds a run of"),
]


# --------------------------------------------------------------------------- running a case
def _error_line(text: str, expect: str) -> str:
    """The one line of ``text`` holding ``expect``; it must be an error line, and there must be no traceback."""
    assert "Traceback" not in text, text
    lines = [line for line in text.splitlines() if expect in line]
    assert len(lines) == 1, f"expected one line with {expect!r}, got {lines!r} in:\n{text}"
    assert lines[0].startswith("error"), lines[0]
    return lines[0]


def run_case(case: Case, argv: list[str], capsys: pytest.CaptureFixture[str] | None = None,
             src: str | None = None) -> tuple[int, str]:
    """Run a case's command: in-process, or in a subprocess (always with ``src``, another source
    tree). Returns (exit status, output)."""
    if case.subprocess or src is not None:
        import os

        env = {**os.environ, **case.env, "PYTHONPATH": src or str(Path(__file__).resolve().parents[1] / "src")}
        try:
            p = subprocess.run([*CLI, *argv], capture_output=True, text=True, timeout=60, env=env, check=False)
        except subprocess.TimeoutExpired:
            return 124, "(still running after 60 s)"
        finally:
            while _HELD:
                _HELD.pop().close()
        return p.returncode, p.stdout + p.stderr
    assert capsys is not None
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out + out.err


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_world(tmp_path_factory.mktemp("world")).tmp


@pytest.fixture
def world(template: Path, tmp_path: Path) -> World:
    shutil.copytree(template, tmp_path / "w")
    return World(tmp_path / "w", template)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_bad_input(case: Case, world: World, capsys: pytest.CaptureFixture[str],
                   monkeypatch: pytest.MonkeyPatch) -> None:
    for k, v in case.env.items():
        monkeypatch.setenv(k, v)
    argv = case.setup(world)
    before = {name: snapshot(world.tmp / name) for name in case.guarded}  # as the case's setup left them
    code, text = run_case(case, argv, capsys)
    line = _error_line(text, case.expect)
    assert code == case.code, (code, line)
    assert KEY not in text
    for name in case.guarded:
        assert snapshot(world.tmp / name) == before[name], f"{case.name} changed {name}"
    if case.check is not None:
        case.check(world)


def test_there_are_at_least_40_cases() -> None:
    assert len(CASES) >= 40 and len({c.name for c in CASES}) == len(CASES)


# --------------------------------------------------------------------------- the closing-note table
def table(before_src: str | None) -> str:
    """Every case run in subprocesses with this tree (after) and ``before_src`` (before), as a
    Markdown table: the command, then the exit status and the last output line of each."""
    import tempfile

    here = str(Path(__file__).resolve().parents[1] / "src")

    def outcome(base: Path, case: Case, src: str) -> tuple[str, str]:
        with tempfile.TemporaryDirectory() as d:
            w = World(Path(d) / "w", base)
            shutil.copytree(base, w.tmp)
            argv = case.setup(w)
            code, text = run_case(case, argv, src=src)
            shown = " ".join(argv).replace(str(w.tmp), "W").replace(str(base), "B")
        lines = [x for x in text.splitlines() if x.strip()]
        errors = [x for x in lines if x.startswith("error")]
        shown_line = errors[0] if errors and "Traceback" not in text else lines[-1] if lines else "(no output)"
        last = shown_line.replace(str(w.tmp), "W").replace(str(base), "B").replace(KEY, "KEY")
        last = last if len(last) <= 140 else last[:137] + "..."
        return shown, f"exit {code}{' (traceback)' if 'Traceback' in text else ''}: {last}".replace("|", "\\|")

    rows = ["| case | command | before | after |", "|---|---|---|---|"]
    with tempfile.TemporaryDirectory() as d:
        base = build_world(Path(d) / "w").tmp
        for case in CASES:
            shown, after = outcome(base, case, here)
            before = outcome(base, case, before_src)[1] if before_src else ""
            rows.append(f"| {case.name} | `{shown}` | {before} | {after} |")
    return "\n".join(rows)


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--before", default=None, help="source tree to measure 'before' with (PYTHONPATH)")
    ap.add_argument("--table", action="store_true", help="print the before/after table (the default)")
    args = ap.parse_args()
    print(table(args.before))

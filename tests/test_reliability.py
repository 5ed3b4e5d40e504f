"""Secrets stay out of stored and shown text, rewritten files are atomic, ids are safe file names,
WAV headers are checked against their bytes, and a run's text is escaped in the leaderboard."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import sys
import time
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


# --------------------------------------------------------------------------- hostile loopback endpoints
def _sample(tmp: Path):
    """A single_round sample with a real spoken-query wav."""
    from vocalbench.audio import write
    from vocalbench.records import AudioRef, Sample

    wav = write(tmp / "q.wav", (0.2 * np.sin(2 * np.pi * 330 * np.arange(8000) / 16000)).astype(np.float32), 16000)
    return Sample(id="s-1", subset="single_round", lang="en", index=0, audio=AudioRef(path=str(wav)), question="q")


@pytest.fixture
def hostile():
    """Start a loopback HTTP server whose POST handler is ``answer(handler)``; returns its base URL."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    servers: list[ThreadingHTTPServer] = []

    def start(answer) -> str:
        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    answer(self)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client stopped reading: what a limit does

            def log_message(self, *args: object) -> None:
                pass

        httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        httpd.daemon_threads = True
        servers.append(httpd)
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        return f"http://127.0.0.1:{httpd.server_address[1]}"

    yield start
    for s in servers:
        s.shutdown()
        s.server_close()


def _chunked(handler, status: int, content_type: str, parts) -> None:
    """Send ``parts`` (bytes) as a chunked body."""
    handler.send_response(status)
    handler.send_header("Content-Type", content_type)
    handler.send_header("Transfer-Encoding", "chunked")
    handler.end_headers()
    for part in parts:
        handler.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
        handler.wfile.flush()
    handler.wfile.write(b"0\r\n\r\n")


def _stored_bytes(run: Path) -> int:
    return sum(p.stat().st_size for p in run.rglob("*") if p.is_file())


def test_an_http_system_flooding_text_fails_as_too_large_and_stores_almost_nothing(tmp_path, hostile, capsys):
    """800 text events of 64 KB (52 MB): cut at the text limit, the reply fails as reply_too_large
    (not retried), its partial text is capped and the store stays small."""
    event = json.dumps({"type": "text", "text": "a" * 65536}).encode() + b"\n"
    url = hostile(lambda h: _chunked(h, 200, "application/x-ndjson", (event for _ in range(800))))
    rel = make_release(tmp_path / "rel", 1)
    run = tmp_path / "RUN"
    code = main(["generate", "--system", f"http:{url}/reply", "--data", str(rel), "--lang", "en", "--out", str(run),
                 "--quiet", "--no-warmup"])
    err = capsys.readouterr().err
    assert code == 4 and "reply_too_large: 1" in err, err
    with sqlite3.connect(run / "store.sqlite") as db:
        reply = json.loads(db.execute("SELECT record FROM replies").fetchone()[0])
    assert reply["error"]["type"] == "reply_too_large" and reply["attempts"] == 1
    assert len(reply["extra"]["partial_text"]) == 2000
    assert _stored_bytes(run) < 1_000_000


async def test_openai_audio_over_the_audio_limit_is_cut_and_not_kept(tmp_path, hostile):
    """50 MB of audio deltas: the reply stops at the duration limit; no audio is kept."""
    import base64

    from vocalbench.limits import ReplyLimits
    from vocalbench.runner.generate import reply_from
    from vocalbench.runner.store import RunStore
    from vocalbench.systems.base import collect
    from vocalbench.systems.openai_audio import OpenAIAudioSystem

    delta = json.dumps({"choices": [{"index": 0, "delta": {"audio": {"data": base64.b64encode(
        b"\x10\x00" * 500_000).decode()}}}]}).encode()
    url = hostile(lambda h: _chunked(h, 200, "text/event-stream", (b"data: " + delta + b"\n\n" for _ in range(50))))
    sample = _sample(tmp_path)
    system = OpenAIAudioSystem("m", f"{url}/v1", None, None, 64)
    await system.start()
    try:
        got = await collect(system, sample, timeout=60, limits=ReplyLimits(audio_seconds=60))
    finally:
        await system.close()
    assert got.error is not None and got.error.type == "reply_too_large" and "60 s" in got.error.message
    assert not got.retryable and got.audio is None
    with RunStore(tmp_path / "RUN") as store:
        reply = reply_from(got, sample, 1, store)
    assert reply.audio is None and not list((tmp_path / "RUN").rglob("*.wav"))


async def test_a_never_ending_stream_is_cut_by_the_attempt_timeout(tmp_path, hostile):
    from vocalbench.runner.generate import reply_from
    from vocalbench.runner.store import RunStore
    from vocalbench.systems.base import collect
    from vocalbench.systems.http import HttpSystem

    def forever(h) -> None:
        import itertools

        _chunked(h, 200, "application/x-ndjson",
                 (json.dumps({"type": "text", "text": "b" * 1000}).encode() + b"\n" for _ in itertools.count()))

    url = hostile(forever)
    sample = _sample(tmp_path)
    system = HttpSystem(f"{url}/x", None, 64)
    await system.start()
    try:
        got = await collect(system, sample, timeout=2, stall_timeout=2)
    finally:
        await system.close()
    assert got.error is not None and got.error.type in ("timeout", "reply_too_large")
    with RunStore(tmp_path / "RUN") as store:
        reply = reply_from(got, sample, 1, store)
    assert len(reply.extra["partial_text"]) <= 2000


async def test_a_huge_error_body_is_read_only_in_part(tmp_path, hostile):
    """A 50 MB error body: 64 KiB are read, 300 characters kept, the connection dropped."""
    from vocalbench.systems.base import collect
    from vocalbench.systems.http import HttpSystem

    sent: list[int] = []

    def body():
        for _ in range(50):
            sent.append(1_000_000)
            yield b"e" * 1_000_000

    url = hostile(lambda h: _chunked(h, 500, "text/plain", body()))
    sample = _sample(tmp_path)
    system = HttpSystem(f"{url}/x", None, 64)
    await system.start()
    try:
        got = await collect(system, sample, timeout=30)
    finally:
        await system.close()
    assert got.error is not None and got.error.type == "http_500" and len(got.error.message) <= 300
    time.sleep(0.5)
    assert sum(sent) < 20_000_000  # the client stopped reading: the server could not send it all


def _huge_error(sent: list[int]):
    """A handler answering 500 with a 50 MB body, counting what it sent."""
    def body():
        for _ in range(50):
            sent.append(1_000_000)
            yield b"e" * 1_000_000

    return lambda h: _chunked(h, 500, "text/plain", body())


async def test_an_openai_audio_error_body_is_read_only_in_part(tmp_path, hostile):
    """The openai SDK reads an error body whole: through openai_client it stops at 64 KiB."""
    from vocalbench.systems.base import collect
    from vocalbench.systems.openai_audio import OpenAIAudioSystem

    sent: list[int] = []
    url = hostile(_huge_error(sent))
    system = OpenAIAudioSystem("m", f"{url}/v1", None, None, 64)
    await system.start()
    try:
        got = await collect(system, _sample(tmp_path), timeout=60)
    finally:
        await system.close()
    assert got.error is not None and got.error.type == "http_500" and len(got.error.message) <= 300
    time.sleep(0.5)
    assert sum(sent) < 20_000_000  # the client stopped reading: the server could not send it all


async def test_the_judges_and_the_cascades_error_bodies_are_read_only_in_part(tmp_path, hostile):
    """The judge's chat client (two attempts) and the cascade's LLM client read 64 KiB of a 50 MB
    error body; the verdict's trace keeps 300 characters."""
    from vocalbench.components.cache import ResultCache
    from vocalbench.components.llm import OpenAIChat
    from vocalbench.judge.json_judge import Judge
    from vocalbench.judge.rubrics import Rubric
    from vocalbench.systems.cascade import CascadeSystem
    from vocalbench.systems.options import SystemOptions

    sent: list[int] = []
    url = hostile(_huge_error(sent))
    rubric = Rubric(id="t", version="1", kind="binary", system="Correct?", template="Q: {question}\nA: {answer}")
    judge = Judge(OpenAIChat("m", f"{url}/v1", key_env=(), timeout=30.0), max_attempts=2, backoff=0.05,
                  cache=ResultCache(tmp_path / "c.sqlite"))
    v = await judge.evaluate(rubric, {"question": "q", "answer": "a"}, subset="knowledge", sample_id="k-1")
    assert v.value is None and v.error == "judge_unavailable" and len(v.trace.raw) <= 300, v.trace.raw[:100]
    time.sleep(0.5)
    assert sum(sent) < 20_000_000
    sent.clear()
    cascade = CascadeSystem("offline", f"openai:m@{url}/v1", "offline", SystemOptions(max_reply_tokens=64))
    await cascade._start_llm()  # the LLM client alone (no ASR or TTS model loaded)
    try:
        with pytest.raises(Exception, match="500"):
            await cascade._client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    finally:
        await cascade.close()
    time.sleep(0.5)
    assert sum(sent) < 20_000_000


def test_the_judges_client_is_closed_with_its_event_loop(hostile):
    """The chat client made for an event loop is closed when that loop ends (it was left to the
    garbage collector, which closed it, if at all, outside any loop)."""
    from vocalbench.components.llm import OpenAIChat

    url = hostile(lambda h: _chunked(h, 200, "application/json", [_completion("yes")]))
    chat = OpenAIChat("m", f"{url}/v1", key_env=(), timeout=10.0)

    async def ask():
        res = await chat.chat([{"role": "user", "content": "hi"}])
        return res.text, chat._client()

    text, client = asyncio.run(ask())
    assert text == "yes" and client.is_closed()

    async def ask_and_close():  # what a Ray judge actor does before it is killed
        await chat.chat([{"role": "user", "content": "hi"}])
        client = chat._client()
        await chat.aclose()
        return client.is_closed()

    assert asyncio.run(ask_and_close())


def _completion(content: str) -> bytes:
    return json.dumps({"id": "x", "object": "chat.completion", "created": 0, "model": "m",
                       "choices": [{"index": 0, "finish_reason": "stop",
                                    "message": {"role": "assistant", "content": content}}]}).encode()


@pytest.mark.parametrize("name, answer, error", [
    ("50 MB body", lambda h: _chunked(h, 200, "application/json", (b" " * 1_000_000 for _ in range(50))),
     "judge_error:BadReply"),
    ("html", lambda h: _chunked(h, 200, "text/html", [b"<html><body>Bad gateway</body></html>"]),
     "judge_error:BadReply"),
    ("never ends", lambda h: _chunked(h, 200, "application/json", (time.sleep(0.2) or b" " for _ in range(10**6))),
     "judge_unavailable"),
])
async def test_a_hostile_judge_gives_an_unscored_item_in_bounded_time(tmp_path, hostile, name, answer, error):
    """A judge reply over the size limit, one that is not a completion, and one that never ends:
    a typed error within the call's deadline, nothing cached."""
    from vocalbench.components.cache import ResultCache
    from vocalbench.components.llm import OpenAIChat
    from vocalbench.judge.json_judge import Judge
    from vocalbench.judge.rubrics import Rubric

    rubric = Rubric(id="t", version="1", kind="binary", system="Correct?", template="Q: {question}\nA: {answer}")
    url = hostile(answer)
    cache = ResultCache(tmp_path / "c.sqlite")
    judge = Judge(OpenAIChat("m", f"{url}/v1", key_env=(), timeout=1.0), cache=cache, backoff=0.05,
                  call_seconds=2.5)
    t0 = time.monotonic()
    v = await judge.evaluate(rubric, {"question": "q", "answer": "a"}, subset="knowledge", sample_id="k-1")
    assert v.value is None and v.error == error, (v.error, v.trace.raw[:200])
    assert time.monotonic() - t0 < 6
    assert len(v.trace.raw) < 1000
    assert cache.get_verdict("m", judge.cache_endpoint, rubric.hash, v.trace.prompt_hash) is None


async def test_the_calibrated_judges_retries_end_at_the_verdicts_deadline(tmp_path, hostile):
    """An endpoint that never finishes a reply: each attempt is cut at the client's 2 s, and the
    retries (4 attempts) stop at the verdict's 2.5 s deadline (they ran 4 x 2 s before), unscored
    as judge_unavailable, nothing cached."""
    import openai  # noqa: F401  (imported before the clock starts: a first import takes seconds on a busy machine)

    from vocalbench.components.cache import ResultCache
    from vocalbench.components.llm import OpenAIChat
    from vocalbench.judge import rubrics
    from vocalbench.judge.calibrated import CalibratedJudge, shipped_calibration

    url = hostile(lambda h: _chunked(h, 200, "application/json", (time.sleep(0.2) or b" " for _ in range(10**6))))
    cache = ResultCache(tmp_path / "c.sqlite")
    judge = CalibratedJudge(OpenAIChat("m", f"{url}/v1", key_env=(), timeout=2.0), shipped_calibration(),
                            cache=cache, backoff=0.05, max_attempts=4, call_seconds=2.5)
    t0 = time.monotonic()
    v = await judge.evaluate(rubrics.load("reasoning_binary_en"), {"question": "2+2?", "reference": "4", "reply": "4"},
                             subset="reasoning", sample_id="r-1")
    took = time.monotonic() - t0
    assert v.value is None and v.error == "judge_unavailable", (v.error, v.trace.raw[:200])
    assert took < 4.5, took
    assert cache.get_verdict(judge.cache_model, judge.cache_endpoint, rubrics.load("reasoning_binary_en").hash,
                             v.trace.prompt_hash) is None


def test_the_judge_cache_tells_endpoints_apart_and_knows_the_local_server_by_its_model():
    """Two endpoints on one host (another port, another path) share no verdicts; the embedded
    server, on a new free port each time, keeps its verdicts under its model."""
    from vocalbench.components.llm import LocalServerChat, OpenAIChat
    from vocalbench.judge.json_judge import Judge

    urls = ["http://127.0.0.1:8001/v1", "http://127.0.0.1:8002/v1", "http://127.0.0.1:8001/other/v1"]
    keys = {Judge(OpenAIChat("m", u, key_env=())).cache_endpoint for u in urls}
    assert keys == {"http://127.0.0.1:8001/v1", "http://127.0.0.1:8002/v1", "http://127.0.0.1:8001/other/v1"}
    assert OpenAIChat("m", "https://api.example.com/v1/").endpoint == "https://api.example.com:443/v1"
    local = {Judge(LocalServerChat("qwen", f"http://127.0.0.1:{p}/v1", key_env=())).cache_endpoint for p in (5001, 6002)}
    assert local == {"local://qwen"}


def test_the_console_shows_other_libraries_noise_only_with_v(monkeypatch, capsys):
    """Third-party warnings (the phonemizer's) and a library's own debug handler (jieba's) stay off
    the console by default; ``-v`` shows them; vocalbench's warnings always show."""
    import logging

    from vocalbench.commands import list_parts

    jieba = logging.getLogger("jieba")
    jieba.setLevel(logging.DEBUG)
    own = logging.StreamHandler(sys.stderr)
    jieba.addHandler(own)

    def noisy(args) -> int:
        logging.getLogger("phonemizer").warning("words count mismatch %s", args.what)
        jieba.debug("Building prefix dict %s", args.what)
        logging.getLogger("vocalbench.x").warning("ours %s", args.what)
        return 0

    monkeypatch.setattr(list_parts, "run", noisy)
    try:
        assert main(["list", "systems"]) == 0
        quiet = capsys.readouterr().err
        assert main(["-v", "list", "subsets"]) == 0
        loud = capsys.readouterr().err
    finally:
        jieba.removeHandler(own)
        main(["list", "components"])  # back to the default console
        capsys.readouterr()
    assert quiet.strip().splitlines() == ["WARNING vocalbench.x: ours systems"]
    for noise in ("words count mismatch subsets", "Building prefix dict subsets", "ours subsets"):
        assert noise in loud


def test_judge_validity_is_one_console_line_naming_the_report_section():
    import io

    from rich.console import Console

    from vocalbench.report.leaderboard import print_table
    from vocalbench.scoring.summary import JudgeValidity, Summary

    s = Summary(lang="en", protocol="v2", system="x")
    s.provenance.judge_validity = JudgeValidity(judge="j@local", same_model_as_system=True, unvalidated_subsets={
        n: "kappa 0.2 below 0.4; a long explanation that used to wrap over lines" for n in ("creativity", "empathy")})
    out = io.StringIO()
    print_table(s, Console(file=out, width=120))
    lines = [x for x in out.getvalue().splitlines() if "judge" in x.lower()]
    assert lines == ['judge j@local: not validated for 2 subset(s), self-preference risk; see the report\'s '
                     '"Judge validity"'], lines


# --------------------------------------------------------------------------- a full disk
@pytest.fixture
def small_disk(tmp_path):
    """A 400 KB tmpfs (needs root; skipped elsewhere)."""
    import subprocess

    disk = tmp_path / "disk"
    disk.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=400k", "tmpfs", str(disk)], capture_output=True,
                      check=False).returncode:
        pytest.skip("cannot mount a small tmpfs here (needs root)")
    yield disk
    subprocess.run(["umount", "-l", str(disk)], check=False)


def _one_error_line(text: str) -> str:
    assert "Traceback" not in text, text
    errors = [x for x in text.splitlines() if x.startswith("error")]
    assert len(errors) == 1, text
    return errors[0]


def test_a_full_disk_is_one_line_and_exit_2_and_nothing_done_is_lost(tmp_path, small_disk, capsys):
    import subprocess

    rel = make_release(tmp_path / "rel", 6)
    script = tmp_path / "long.jsonl"
    script.write_text(json.dumps({"id": "*", "text": "It is Paris.", "audio": {"tone": 220, "seconds": 3}}) + "\n")
    run = small_disk / "RUN"
    argv = ["generate", "--system", f"scripted:{script}", "--data", str(rel), "--lang", "en", "--out", str(run),
            "--quiet", "--no-warmup", "--concurrency", "1"]
    assert main(argv) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert ("No space left" in line or "disk is full" in line) and "re-run the same command" in line, line
    with sqlite3.connect(run / "store.sqlite") as db:
        kept = db.execute("SELECT count(*) FROM replies WHERE failed = 0").fetchone()[0]
    subprocess.run(["mount", "-o", "remount,size=20m", str(small_disk)], check=True)
    assert main(argv) == 0
    capsys.readouterr()
    with sqlite3.connect(run / "store.sqlite") as db:
        assert db.execute("SELECT count(*) FROM replies WHERE failed = 0").fetchone()[0] == 6 >= kept

    filler = small_disk / "filler"
    subprocess.run(["dd", "if=/dev/zero", f"of={filler}", "bs=64k"], capture_output=True, check=False)
    score = ["score", str(run), "--judge", "none", "--quiet"]
    assert main(score) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert "re-run the same command" in line and "not a readable run store" not in line, line
    filler.unlink()
    assert main(score) == 0 and (run / "summary.json").is_file()


def test_a_killed_atomic_write_leaves_no_part_file(tmp_path):
    """Killed before the new file takes its name (simulated: the process exits at the link or
    rename), an export leaves the old file and nothing else: the temporary file has no name."""
    import subprocess

    out = tmp_path / "x.csv"
    out.write_text("old")
    code = ("import os, sys; from vocalbench.files import write_atomic; "
            "os.link = os.replace = lambda *a, **k: os._exit(9); write_atomic(sys.argv[1], 'a' * 8_000_000)")
    src = str(Path(__file__).resolve().parents[1] / "src")
    p = subprocess.run([sys.executable, "-c", code, str(out)], env={"PYTHONPATH": src}, check=False)
    assert p.returncode == 9
    assert sorted(x.name for x in tmp_path.iterdir()) == ["x.csv"] and out.read_text() == "old"


def test_a_failed_report_keeps_the_previous_one_and_a_killed_ones_leftovers_go(tmp_path, monkeypatch, capsys):
    import errno
    import os

    from vocalbench.report import site

    rel = make_release(tmp_path / "rel", 2)
    script = tmp_path / "s.jsonl"
    script.write_text(json.dumps({"id": "*", "text": "It is Paris."}) + "\n")
    run = tmp_path / "RUN"
    assert main(["run", "--system", f"scripted:{script}", "--data", str(rel), "--lang", "en", "--out", str(run),
                 "--judge", "none", "--quiet"]) == 0
    report = run / "report"
    before = {p.relative_to(report): p.read_bytes() for p in report.rglob("*") if p.is_file()}
    assert any(p.suffix == ".wav" for p in before)
    dead = subprocess_dead_pid()
    (run / f".report.{dead}.new.tmp" / "audio").mkdir(parents=True)  # a killed report's leftovers

    def full(*args, **kw):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(report / "viewer.html"))

    monkeypatch.setattr(site, "viewer_data", full)
    assert main(["report", str(run), "--out", str(report), "--quiet"]) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert "No space left" in line and "re-run the same command" in line
    assert {p.relative_to(report): p.read_bytes() for p in report.rglob("*") if p.is_file()} == before
    assert sorted(p.name for p in run.iterdir() if p.name.startswith(".report")) == []


def subprocess_dead_pid() -> int:
    import subprocess

    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_a_closed_loops_leftover_client_is_not_reported_on_the_console(capsys):
    """An HTTP client of an ended event loop, garbage-collected under a later one, makes asyncio
    log "Task exception was never retrieved ... Event loop is closed": quiet unless -v."""
    import logging

    from vocalbench.cli import _configure_logging

    def leftover() -> None:
        try:
            raise RuntimeError("Event loop is closed")
        except RuntimeError:
            logging.getLogger("asyncio").error("Task exception was never retrieved", exc_info=True)

    _configure_logging(verbose=False)
    leftover()
    logging.getLogger("asyncio").error("a real asyncio error")
    err = capsys.readouterr().err
    assert "never retrieved" not in err and "a real asyncio error" in err
    _configure_logging(verbose=True)
    leftover()
    assert "never retrieved" in capsys.readouterr().err
    _configure_logging(verbose=False)

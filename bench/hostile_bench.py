"""Hostile loopback endpoints against the reply and judge limits (issue 21): per case, the bytes
stored, the peak RSS of the vocalbench process and the seconds it took, for this tree and, with
``--before SRC``, another source tree, side by side.

    python bench/hostile_bench.py [--before ../old/src] [--cap 200]

Cases: an ``http:`` system sending 800 text events of 64 KB; ``openai-audio`` sending 50 MB of
audio deltas; an ``http:`` stream that never ends (``--timeout 10``); a 50 MB error body; a judge
answering a 50 MB body; a judge whose body never ends (5 s attempt timeout). Each runs in its own
process, killed after ``--cap`` seconds.
"""

from __future__ import annotations

import argparse
import base64
import itertools
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(HERE / "tests" / "runner"))
from release import make_release  # noqa: E402


def serve(parts: Callable[[], Iterable[bytes]], status: int = 200, kind: str = "application/x-ndjson") -> str:
    """A loopback server answering every POST with ``parts()`` as a chunked body."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            try:
                for part in parts():
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
                self.wfile.write(b"0\r\n\r\n")
            except (BrokenPipeError, ConnectionResetError):
                pass

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{httpd.server_address[1]}"


def text_flood() -> Iterable[bytes]:
    event = json.dumps({"type": "text", "text": "a" * 65536}).encode() + b"\n"
    return itertools.chain((event for _ in range(800)), [b'{"type": "done"}\n'])


def audio_flood() -> Iterable[bytes]:
    delta = json.dumps({"choices": [{"index": 0, "delta": {"audio": {"data": base64.b64encode(
        b"\x10\x00" * 500_000).decode()}}}]}).encode()
    end = b'data: {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}\n\ndata: [DONE]\n\n'
    return itertools.chain((b"data: " + delta + b"\n\n" for _ in range(50)), [end])


def forever() -> Iterable[bytes]:
    return (json.dumps({"type": "text", "text": "b" * 1000}).encode() + b"\n" for _ in itertools.count())


def trickle() -> Iterable[bytes]:
    for _ in itertools.count():
        time.sleep(0.2)
        yield b" "


JUDGE = """
import asyncio, sys
from vocalbench.components.cache import ResultCache
from vocalbench.judge.json_judge import Judge
from vocalbench.components.llm import OpenAIChat
from vocalbench.judge.rubrics import Rubric
rubric = Rubric(id="t", version="1", kind="binary", system="Correct?", template="Q: {question}\\nA: {answer}")
judge = Judge(OpenAIChat("m", sys.argv[1] + "/v1", key_env=(), timeout=5.0), cache=ResultCache(sys.argv[2]),
              max_attempts=1)
v = asyncio.run(judge.evaluate(rubric, {"question": "q", "answer": "a"}, subset="knowledge", sample_id="k"))
print("verdict", v.value, v.error, len(v.trace.raw))
"""


def measure(argv: list[str], src: str, cap: float, folder: Path) -> str:
    """Run ``argv`` with ``src`` first on the path: 'stored KB, peak RSS MB, seconds, exit' (or killed)."""
    env = {**os.environ, "PYTHONPATH": src, "VOCALBENCH_CACHE": str(folder / "cache")}
    t0 = time.monotonic()
    p = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    killed = False
    while True:
        pid, status, usage = os.wait4(p.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() - t0 > cap and not killed:
            p.kill()
            killed = True
        time.sleep(0.1)
    p.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.monotonic() - t0
    stored = sum(f.stat().st_size for f in folder.rglob("*") if f.is_file()) // 1024
    end = "killed at the cap" if killed else f"exit {p.returncode}"
    return f"{stored:,} KB stored, {usage.ru_maxrss // 1024} MB RSS, {seconds:.1f} s, {end}"


def cases(rel: Path) -> list[tuple[str, Callable[[], Iterable[bytes]], int, str, list[str]]]:
    gen = ["--data", str(rel), "--lang", "en", "--quiet", "--no-warmup", "--max-attempts", "1"]
    return [
        ("http: 800 x 64 KB text events", text_flood, 200, "application/x-ndjson",
         ["generate", "--system", "http:{url}/r", *gen]),
        ("openai-audio: 50 MB audio deltas", audio_flood, 200, "text/event-stream",
         ["generate", "--system", "openai-audio:m@{url}/v1", *gen]),
        ("http: a stream that never ends (--timeout 10)", forever, 200, "application/x-ndjson",
         ["generate", "--system", "http:{url}/r", *gen, "--timeout", "10"]),
        ("http: a 50 MB error body", lambda: (b"e" * 1_000_000 for _ in range(50)), 500, "text/plain",
         ["generate", "--system", "http:{url}/r", *gen]),
        ("judge: a 50 MB body", lambda: (b" " * 1_000_000 for _ in range(50)), 200, "application/json", ["judge"]),
        ("judge: a body that never ends (5 s timeout)", trickle, 200, "application/json", ["judge"]),
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", default=None, help="another source tree (PYTHONPATH) to measure side by side")
    ap.add_argument("--cap", type=float, default=200.0, help="seconds before a case's process is killed")
    args = ap.parse_args()
    trees = [("after", str(HERE / "src"))] + ([("before", args.before)] if args.before else [])
    with tempfile.TemporaryDirectory() as d:
        rel = make_release(Path(d) / "rel", 1)
        print("| case | " + " | ".join(name for name, _ in trees) + " |")
        print("|---|" + "---|" * len(trees))
        for title, parts, status, kind, argv in cases(rel):
            url = serve(parts, status, kind)
            row = []
            for name, src in trees:
                folder = Path(d) / f"{name}-{len(row)}-{abs(hash(title))}"
                folder.mkdir()
                if argv == ["judge"]:
                    cmd = [sys.executable, "-c", JUDGE, url, str(folder / "cache.sqlite")]
                else:
                    cmd = [sys.executable, "-m", "vocalbench.cli", *[a.format(url=url) for a in argv],
                           "--out", str(folder / "RUN")]
                row.append(measure(cmd, src, args.cap, folder))
            print(f"| {title} | " + " | ".join(row) + " |", flush=True)


if __name__ == "__main__":
    main()

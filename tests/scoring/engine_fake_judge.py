"""A controlled double of an OpenAI-compatible judge endpoint for the engine tests.

It answers ``/v1/chat/completions`` with a JSON verdict after a fixed delay, deterministically
from the prompt (so an interrupted and an uninterrupted run get the same answers), and records
every request's user message so tests can count calls per item. The real judge has its own live
test (``test_engine_judge_live.py``).
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class FakeJudgeServer:
    """``with FakeJudgeServer(delay=0.02) as srv: srv.base_url``; ``srv.requests`` lists user prompts."""

    def __init__(self, delay: float = 0.02, model: str = "fake-judge", status: int = 200) -> None:
        self.delay = delay
        self.status = status  # != 200: answer every request with this HTTP error
        self.model = model
        self.requests: list[str] = []
        self._lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_GET(self) -> None:  # /v1/models
                self._send(200, {"object": "list", "data": [{"id": outer.model, "object": "model"}]})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                msgs = body.get("messages") or []
                system = next((m["content"] for m in msgs if m.get("role") == "system"), "")
                user = "\n".join(m["content"] for m in msgs if m.get("role") == "user")
                with outer._lock:
                    outer.requests.append(user)
                time.sleep(outer.delay)
                if outer.status != 200:
                    self._send(outer.status, {"error": {"message": "refused by the test double", "type": "invalid_request_error"}})
                    return
                h = int(hashlib.sha256(user.encode()).hexdigest(), 16)
                # answer in the schema the rubric asked for, e.g. "verdict": "yes" or "no"
                choice = re.search(r'"(\w+)":\s*"([^"]+)"\s*(?:or|或)\s*"([^"]+)"', system)
                if choice:
                    key, first, second = choice.groups()
                    content = json.dumps({"reason": "fake", key: first if h % 3 else second})
                else:
                    content = json.dumps({"reason": "fake", "score": 1 + h % 5})
                self._send(200, {
                    "id": "chatcmpl-fake", "object": "chat.completion", "created": int(time.time()),
                    "model": outer.model,
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": content}}],
                    "usage": {"prompt_tokens": len(user) // 4, "completion_tokens": 12, "total_tokens": len(user) // 4 + 12},
                })

            def _send(self, code: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                try:
                    self.send_response(code)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client was killed mid-request (the resume test does that on purpose)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def spec(self) -> str:
        return f"openai:{self.model}@{self.base_url}"

    def count(self) -> int:
        with self._lock:
            return len(self.requests)

    def snapshot(self) -> list[str]:
        with self._lock:
            return list(self.requests)

    def __enter__(self) -> FakeJudgeServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

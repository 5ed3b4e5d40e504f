"""Judge reply parsing, retries/backoff against a fault-injecting local endpoint, cache, accounting."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from vocalbench.components.cache import ResultCache
from vocalbench.components.llm import OpenAIChat
from vocalbench.judge.json_judge import Judge, out_of_scale, parse_binary, parse_scale
from vocalbench.judge.rubrics import Rubric

SCALE = Rubric(id="t_scale", version="1", kind="scale", system="Rate the answer from 1 to 5.",
               template="Question: {question}\nAnswer: {answer}", lo=1, hi=5)
BINARY = Rubric(id="t_binary", version="1", kind="binary", system="Is the answer correct?",
                template="Question: {question}\nAnswer: {answer}")


@pytest.mark.parametrize("raw, want", [
    ('{"reason": "good", "score": 4}', 4),
    ('```json\n{"reason": "fine", "score": 5}\n```', 5),
    ('Some thoughts first.\n{"reason": "ok", "score": "3"}', 3),
    ("The answer is decent. [[2]]", 2),
    ("Reasoning...\nScore: 4", 4),
    ('{"reason": "x", "score": 4', 4),  # truncated JSON still names its score
    ("评分：5", 5),
    ("3", 3),
    ("回应清晰可操作。得分：[4]", 4),
    ("Clear steps. [3] ... a later [5]", 3),  # the first score, as the official scripts
    # the official regex \[([0-5])\]: [10] and [7] are no scores there, so the next [n] counts
    ("Out of [10] points this earns ... Score: [4]", 4),
    ("Not a [7]; a [3].", 3),
    ("Final: [[4]]", 4),
    ("Score: [0]", None),  # 0 is stated, outside 1-5: out_of_scale, never moved onto the scale
    ("得分：[0]", None),
    ("Score: 2. On reflection, Score: 4", 2),
    # free text: the first integer 1-5 (official); numbers outside the scale and decimals skipped
    ("The reply lists 12 tips; I would give it 4 out of 5.", 4),
    ("Rated 3.5, so overall 2", 2),
    ('{"reason": "too high", "score": 9}', None),
    ("It mentions 1990 and 2024.", None),
    ("I cannot decide.", None),
    ("asdf qwer zxcv", None),
    ("", None),
])
def test_parse_scale(raw, want):
    assert parse_scale(raw, 1, 5) == want


@pytest.mark.parametrize("raw, want", [
    ("Score: [0]", True),
    ('{"score": 0}', True),
    ('{"reason": "too high", "score": 9}', True),
    ("[10] ... [4]", False),
    ("Score: [4]", False),
    ("It mentions 1990 and 2024.", False),  # no stated score: unparseable, not out of scale
    ("", False),
])
def test_out_of_scale(raw, want):
    assert out_of_scale(raw, 1, 5) is want


@pytest.mark.parametrize("raw, want", [
    ('{"reason": "matches", "verdict": "yes"}', True),
    ('{"reason": "wrong", "verdict": "no"}', False),
    ('```json\n{"verdict": "No"}\n```', False),
    ("[[YES]]", True),
    ("Verdict: no", False),
    ('{"answer": true}', True),
    ("Yes.", True),
    ("是", True),
    ('{"verdict": "maybe"}', None),
    ("The sky is blue and the grass is green.", None),
    ("xyzzy", None),
])
def test_parse_binary(raw, want):
    assert parse_binary(raw) == want


class FaultServer:
    """A controlled double of an OpenAI-compatible endpoint: plays a script of replies."""

    def __init__(self, script: list[tuple[int, str]]) -> None:
        self.script = list(script)
        self.requests: list[dict] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append(body)
                status, content = outer.script.pop(0) if len(outer.script) > 1 else outer.script[0]
                if status == 200:
                    payload = {"id": "x", "object": "chat.completion", "created": 0, "model": body["model"],
                               "choices": [{"index": 0, "finish_reason": "stop",
                                            "message": {"role": "assistant", "content": content}}],
                               "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}}
                else:
                    payload = {"error": {"message": content, "type": "test", "code": status}}
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def serve():
    servers: list[FaultServer] = []

    def start(script: list[tuple[int, str]]) -> FaultServer:
        servers.append(FaultServer(script))
        return servers[-1]

    yield start
    for s in servers:
        s.close()


def _judge(server: FaultServer, tmp_path, **kw) -> Judge:
    return Judge(OpenAIChat("judge-model", server.base_url, key_env=()), cache=ResultCache(tmp_path / "c.sqlite"),
                 backoff=0.05, **kw)


FIELDS = {"question": "What is 2 + 2?", "answer": "4"}


async def test_retries_transient_errors_then_succeeds(serve, tmp_path):
    server = serve([(429, "slow down"), (500, "boom"), (200, '{"reason": "right", "verdict": "yes"}')])
    calls: list[dict] = []
    judge = _judge(server, tmp_path, on_call=calls.append)
    t0 = time.perf_counter()
    v = await judge.evaluate(BINARY, FIELDS, subset="knowledge", sample_id="k-1")
    elapsed = time.perf_counter() - t0
    assert v.value == 1.0 and v.error is None and v.trace.cached is False
    assert len(server.requests) == 3
    assert elapsed >= (0.05 + 0.1) / 2  # exponential backoff 0.05 s, then 0.1 s, each jittered in [half, all]
    assert server.requests[0]["temperature"] == 0 and server.requests[0]["seed"] == 0
    assert server.requests[0]["response_format"] == {"type": "json_object"}
    assert calls == [{"subset": "knowledge", "sample_id": "k-1", "model": "judge-model@127.0.0.1",
                      "prompt_hash": v.trace.prompt_hash, "cached": False, "prompt_tokens": 11,
                      "completion_tokens": 7, "seconds": pytest.approx(calls[0]["seconds"]), "error": None}]


async def test_cache_hit_makes_no_request(serve, tmp_path):
    server = serve([(200, '{"reason": "fine", "score": 4}')])
    v1 = await _judge(server, tmp_path).evaluate(SCALE, FIELDS, subset="s", sample_id="1")
    server.close()  # the endpoint is gone: only the cache can answer now
    v2 = await _judge(server, tmp_path, max_attempts=1).evaluate(SCALE, FIELDS, subset="s", sample_id="1")
    assert (v1.value, v2.value) == (4.0, 4.0)
    assert v2.trace.cached and not v1.trace.cached and v2.trace.raw == v1.trace.raw
    assert len(server.requests) == 1


async def test_endpoint_down_is_unavailable(serve, tmp_path):
    server = serve([(503, "down")])
    v = await _judge(server, tmp_path, max_attempts=3).evaluate(SCALE, FIELDS, subset="s", sample_id="1")
    assert v.value is None and v.error == "judge_unavailable" and len(server.requests) == 3


async def test_non_transient_error_is_not_retried(serve, tmp_path):
    server = serve([(400, "bad request")])
    v = await _judge(server, tmp_path).evaluate(SCALE, FIELDS, subset="s", sample_id="1")
    assert v.error == "judge_error:BadRequestError" and len(server.requests) == 1


async def test_unparseable_reply_keeps_raw(serve, tmp_path):
    server = serve([(200, "I refuse to grade this.")])
    v = await _judge(server, tmp_path, max_attempts=2).evaluate(SCALE, FIELDS, subset="s", sample_id="1")
    assert v.value is None and v.error == "judge_unparseable"
    assert v.trace.raw == "I refuse to grade this." and len(server.requests) == 2
    assert "required format" in server.requests[1]["messages"][-1]["content"]
    again = await _judge(server, tmp_path, max_attempts=1).evaluate(SCALE, FIELDS, subset="s", sample_id="1")
    assert again.error == "judge_unparseable" and len(server.requests) == 3  # failures are not cached


async def test_store_hook_and_id_carry_no_key(serve, tmp_path, monkeypatch):
    from vocalbench.runner.store import RunStore

    monkeypatch.setenv("VOCALBENCH_JUDGE_API_KEY", "sk-secret-123")
    server = serve([(200, '{"verdict": "no"}')])
    store = RunStore(tmp_path / "run")
    judge = Judge(OpenAIChat("m", server.base_url), cache=ResultCache(tmp_path / "c.sqlite"), store=store)
    v = await judge.evaluate(BINARY, FIELDS, subset="safety", sample_id="s-1")
    await judge.evaluate(BINARY, FIELDS, subset="safety", sample_id="s-1")
    assert v.value == 0.0 and judge.id == "m@127.0.0.1" and "sk-" not in judge.id
    usage = store.judge_usage()["m@127.0.0.1"]
    assert (usage.calls, usage.cache_hits, usage.errors) == (1, 1, 0)


async def test_concurrency_limit_per_endpoint(serve, tmp_path):
    import asyncio

    server = serve([(200, '{"score": 3}')])
    judge = _judge(server, tmp_path, concurrency=1)
    live = {"now": 0, "max": 0}
    real_chat = judge.llm.chat

    async def counting_chat(*a, **k):
        live["now"] += 1
        live["max"] = max(live["max"], live["now"])
        try:
            await asyncio.sleep(0.02)
            return await real_chat(*a, **k)
        finally:
            live["now"] -= 1

    judge.llm.chat = counting_chat
    fields = [{"question": f"q{i}", "answer": "a"} for i in range(4)]
    out = await asyncio.gather(*(judge.evaluate(SCALE, f, subset="s", sample_id=str(i)) for i, f in enumerate(fields)))
    assert [v.value for v in out] == [3.0] * 4 and live["max"] == 1


@pytest.mark.parametrize(
    "raw,want",
    [
        ('{"reply_answer": "上海", "same": "no"}', False),
        ('{"reply_answer": "北京", "same": "yes"}', True),
        ('{"label": "compliance"}', True),
        ('{"label": "refusal"}', False),
        ('{"label": "maybe"}', None),
    ],
)
def test_parse_binary_with_rubric_schema(raw: str, want: bool | None) -> None:
    key, labels = ("label", ("compliance", "refusal")) if "label" in raw else ("same", ("yes", "no"))
    assert parse_binary(raw, key, labels) == want


async def test_a_score_outside_the_scale_is_unscored_at_once(serve, tmp_path):
    server = serve([(200, "The reply misses everything. Score: [0]")])
    v = await _judge(server, tmp_path).evaluate(SCALE, FIELDS, subset="creativity", sample_id="c-1")
    assert v.value is None and v.error == "judge_out_of_scale" and len(server.requests) == 1
    assert "[0]" in v.trace.raw

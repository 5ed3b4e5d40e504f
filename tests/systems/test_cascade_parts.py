"""Cascade building blocks: incremental sentence cutting, speakable text, SPEC parsing, a queued
query (Waiting) told apart from a stalled one."""

from __future__ import annotations

import asyncio

import pytest

from vocalbench.records import Sample
from vocalbench.systems import SystemOptions, resolve
from vocalbench.systems.base import Done, Sent, TextDelta, Waiting, collect
from vocalbench.systems.cascade import (
    CascadeSystem,
    parse_parts,
    pop_sentences,
    speakable,
)


def test_pop_sentences_streams_whole_sentences_only():
    buf, got = "", []
    for delta in ["The answer", " is 3.", "5 degrees. Rain", " is likely! ", "Bring an umbrella"]:
        done, buf = pop_sentences(buf + delta)
        got += done
    assert got == ["The answer is 3.5 degrees.", "Rain is likely!"]
    assert buf.strip() == "Bring an umbrella"
    assert pop_sentences("今天很好。明天下雨！后天")[0] == ["今天很好。", "明天下雨！"]
    assert pop_sentences("line one\nline two") == (["line one"], "line two")


def test_speakable_drops_markup():
    assert speakable("**Paris** is the `capital`. # Note") == "Paris is the capital . Note"


def test_cascade_spec_parsing():
    assert parse_parts("asr=offline,llm=openai:qwen@http://127.0.0.1:9/v1,tts=offline") == {
        "asr": "offline", "llm": "openai:qwen@http://127.0.0.1:9/v1", "tts": "offline"}
    with pytest.raises(ValueError, match="expected asr=SPEC"):
        parse_parts("asr=offline,brain=x")
    system = resolve("cascade:asr=offline,llm=local,tts=offline", SystemOptions(max_reply_tokens=64))
    assert isinstance(system, CascadeSystem) and system.max_tokens == 64 and system.resource == "local:cascade"
    assert resolve("offline").id == "offline"
    with pytest.raises(ValueError, match="unknown system"):
        resolve("telepathy:x")


class Queued:
    """A system that waits ``wait`` seconds before answering, saying it is queued every ``note`` s
    (``note=None``: silent while it waits)."""

    id = resource = "queued"

    def __init__(self, wait: float, note: float | None) -> None:
        self.wait, self.note = wait, note

    async def start(self) -> None: ...

    async def close(self) -> None: ...

    def describe(self) -> dict:
        return {}

    async def stream(self, sample):
        yield Sent("test")
        end = asyncio.get_running_loop().time() + self.wait
        while (left := end - asyncio.get_running_loop().time()) > 0:
            await asyncio.sleep(min(left, self.note or left))
            if self.note is not None:
                yield Waiting("local:llm")
        yield TextDelta("ok")
        yield Done()


@pytest.mark.parametrize("note, error", [(0.05, None), (None, "timeout")])
async def test_a_queued_query_is_not_a_stalled_one(note, error):
    sample = Sample(id="q-1", subset="knowledge", lang="en", index=0)
    c = await collect(Queued(0.4, note), sample, timeout=5, stall_timeout=0.15)
    assert (c.error.type if c.error else None) == error
    assert c.text == ("ok" if error is None else "")


async def test_the_brain_finds_its_lost_local_server_again_and_asks_once_more(monkeypatch):
    """The local server the cascade was given is gone (connection refused): the brain asks
    ``ensure_server`` for one (here: a streaming chat endpoint standing in for llama.cpp's) and its
    request succeeds there."""
    import json

    from aiohttp import web
    from aiohttp.test_utils import TestServer

    from vocalbench.components import llm_server
    from vocalbench.components.llm import openai_client

    async def chat(request: web.Request) -> web.StreamResponse:
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        for word in ("Paris ", "is ", "the capital."):
            chunk = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m",
                     "choices": [{"index": 0, "delta": {"content": word}, "finish_reason": None}]}
            await resp.write(f"data: {json.dumps(chunk)}\n\n".encode())
        await resp.write(b"data: [DONE]\n\n")
        return resp

    app = web.Application()
    app.router.add_post("/v1/chat/completions", chat)
    endpoint = TestServer(app, host="127.0.0.1")
    await endpoint.start_server()
    port = endpoint.port
    found: list[int] = []

    def ensure_server() -> llm_server.ServerHandle:
        found.append(port)
        return llm_server.ServerHandle(f"http://127.0.0.1:{port}/v1", "m", 0, port)

    monkeypatch.setattr(llm_server, "ensure_server", ensure_server)
    system = CascadeSystem("offline", "local", "offline", SystemOptions(max_reply_tokens=16))
    system._local, system._model = True, "m"
    system._client = openai_client("http://127.0.0.1:9/v1", "not-needed", 5.0)  # nothing listens there
    try:
        stream = await system._open_stream([{"role": "user", "content": "What is the capital of France?"}])
        text = "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])
    finally:
        await system.close()
        await endpoint.close()
    assert found == [port] and text == "Paris is the capital."

"""openai-audio, realtime and http adapters against a real ``vocalbench serve`` on 127.0.0.1."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from vocalbench.systems import SystemOptions, resolve
from vocalbench.systems.base import collect

SCRIPT = [{"id": "*", "text": "Reply to {id} after {turns} turns.", "audio": {"tone": 300, "seconds": 1.2},
           "first_chunk_delay": 0.05, "chunk_seconds": 0.2, "chunk_interval": 0.01},
          {"id": "single_round/single_round-001", "text": "fails once", "fault": {"type": "http_500", "fail_first": 1}},
          {"id": "single_round/single_round-002", "fault": {"type": "bad_input", "fail_first": -1,
                                                            "retryable": False, "message": "cannot answer"}}]


def specs(url: str) -> dict[str, str]:
    return {"openai-audio": f"openai-audio:scripted-model@{url}/v1",
            "realtime": f"realtime:scripted-model@{url}/v1",
            "http": f"http:{url}/v1/vocalbench/stream"}


ORIGINS = {"openai-audio": "monotonic:request-handed-to-client", "http": "monotonic:request-handed-to-client",
           "realtime": "monotonic:response.create-after-commit"}


@pytest.mark.parametrize("kind", ["openai-audio", "realtime", "http"])
async def test_adapter_text_audio_timings_history(kind, served, script, samples):
    url = served(f"scripted:{script(SCRIPT)}")
    system = resolve(specs(url)[kind], SystemOptions(api_key="test-key"))
    await system.start()
    try:
        [s0] = samples(1, history=2)
        c = await collect(system, s0, timeout=30)
        assert c.error is None, c.error
        assert c.text == "Reply to single_round-000 after 2 turns."
        assert c.sample_rate == 24000
        assert c.audio_duration == pytest.approx(1.2, abs=1 / 24000)
        assert c.chunks == 6
        t = c.timings
        assert t.origin == ORIGINS[kind]
        assert 0 < t.first_text <= t.last_chunk and 0 < t.first_audio <= t.last_chunk
    finally:
        await system.close()


@pytest.mark.parametrize("kind", ["openai-audio", "realtime", "http"])
async def test_adapter_errors_are_typed(kind, served, script, samples):
    url = served(f"scripted:{script(SCRIPT)}")
    system = resolve(specs(url)[kind])
    await system.start()
    try:
        _, s1, s2 = samples(3)
        first, second = await collect(system, s1, timeout=30), await collect(system, s1, timeout=30)
        assert first.error is not None and first.error.type == "http_500" and first.retryable
        assert second.error is None and second.text == "fails once"
        bad = await collect(system, s2, timeout=30)
        assert bad.error is not None and not bad.retryable
        assert "cannot answer" in bad.error.message
    finally:
        await system.close()


@pytest.mark.parametrize("kind", ["openai-audio", "realtime", "http"])
async def test_refused_connection_is_typed(kind, samples):
    import socket

    with socket.socket() as sock:  # a port that was free a moment ago: nothing listens there
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    system = resolve(specs(f"http://127.0.0.1:{port}")[kind])
    await system.start()
    try:
        c = await collect(system, samples(1)[0], timeout=10)
        assert c.error is not None and c.error.type == "connection" and c.retryable, c.error
    finally:
        await system.close()


async def test_chat_completions_non_stream(served, script, samples):
    from openai import AsyncOpenAI

    from vocalbench.audio import pcm16_to_float

    url = served(f"scripted:{script(SCRIPT)}")
    [s] = samples(1)
    wav = base64.b64encode(Path(s.audio.path).read_bytes()).decode()
    async with AsyncOpenAI(base_url=f"{url}/v1", api_key="x", max_retries=0) as client:
        r = await client.chat.completions.create(
            model="m", modalities=["text", "audio"], audio={"voice": "alloy", "format": "pcm16"},
            messages=[{"role": "user", "content": [{"type": "input_audio", "input_audio": {"data": wav, "format": "wav"}}]}],
            extra_headers={"X-VocalBench-Sample": "single_round/single_round-000"})
        msg = r.choices[0].message
        assert msg.audio.transcript == "Reply to single_round-000 after 0 turns."
        assert pcm16_to_float(base64.b64decode(msg.audio.data)).size == int(1.2 * 24000)
        text_only = await client.chat.completions.create(
            model="m", stream=True,
            messages=[{"role": "user", "content": [{"type": "input_audio", "input_audio": {"data": wav, "format": "wav"}}]}])
        parts = [c.choices[0].delta.content async for c in text_only if c.choices and c.choices[0].delta.content]
        assert "".join(parts) == "Reply to request after 0 turns."


def test_fault_plan_parsing_and_rates():
    import random

    from vocalbench.systems.serve import FaultPlan

    plan = FaultPlan.parse("429:0.1,500:0.2,timeout:0.05,drop:0.1")
    rng = random.Random(1)
    draws = [plan.draw(rng) for _ in range(20000)]
    for kind, rate in [("429", 0.1), ("500", 0.2), ("timeout", 0.05), ("drop", 0.1), (None, 0.55)]:
        assert draws.count(kind) / len(draws) == pytest.approx(rate, abs=0.015)
    for bad in ["418:0.1", "500:x", "500:1.5", "500:0.6,429:0.6"]:
        with pytest.raises(ValueError):
            FaultPlan.parse(bad)


def test_display_spec_hides_urls():
    from vocalbench.systems import display_spec

    assert display_spec("openai-audio:gpt-4o@https://host.example/v1") == "openai-audio:gpt-4o@<url>"
    assert display_spec("http:http://10.0.0.1:9000/x") == "http:<url>"
    assert display_spec("cascade:asr=offline,llm=openai:m@https://h/v1,tts=offline") == \
        "cascade:asr=offline,llm=openai:m@<url>,tts=offline"

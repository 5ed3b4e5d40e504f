"""The Realtime protocol checked by the official client: GA by default, beta on request.

Client direction: every event the realtime adapter sends validates against the openai SDK's GA
client-event types, with no field the types do not know. Server direction: the SDK's own realtime
client (``client.realtime.connect``) gets typed audio and transcript deltas from
``vocalbench serve``, and every server event validates against the GA server-event types.
"""

from __future__ import annotations

import base64
import json

import numpy as np
import pytest
from pydantic import BaseModel, TypeAdapter

from vocalbench.audio import load
from vocalbench.records import Turn
from vocalbench.systems import SystemOptions, resolve
from vocalbench.systems.base import collect
from vocalbench.systems.realtime import request_events

openai = pytest.importorskip("openai", reason="the openai SDK checks the protocol shapes")
from openai.types.realtime import (  # noqa: E402
    RealtimeClientEvent,
    RealtimeServerEvent,
    ResponseAudioDeltaEvent,
    ResponseAudioTranscriptDeltaEvent,
)

CLIENT = TypeAdapter(RealtimeClientEvent)
SERVER = TypeAdapter(RealtimeServerEvent)
TEXT = "A realtime reply in four parts."


def unknown_fields(m: object, where: str = "") -> list[str]:
    """Paths of fields a validated SDK model kept as extras (the SDK's models allow any extra key)."""
    if isinstance(m, BaseModel):
        out = [f"{where}.{k}" for k in (m.model_extra or {})]
        for name in type(m).model_fields:
            out += unknown_fields(getattr(m, name), f"{where}.{name}")
        return out
    if isinstance(m, list):
        return [x for i, v in enumerate(m) for x in unknown_fields(v, f"{where}[{i}]")]
    return []


def strict(adapter: TypeAdapter, event: dict) -> BaseModel:
    model = adapter.validate_python(event)
    assert not unknown_fields(model), f"{event['type']}: fields unknown to the GA types {unknown_fields(model)}"
    return model


@pytest.fixture
def reply_script(script):
    return script([{"id": "*", "text": TEXT, "audio": {"tone": 300, "seconds": 1.0}, "chunk_seconds": 0.25}])


def test_adapter_events_validate_against_the_sdk_ga_types(samples):
    [s] = samples(1, history=2)
    x, _ = load(s.audio.path, sample_rate=24000)
    events = request_events("ga", s, x, "alloy", 1024)
    assert [e["type"] for e in events] == ["session.update", "conversation.item.create", "conversation.item.create",
                                           "input_audio_buffer.append", "input_audio_buffer.append",
                                           "input_audio_buffer.commit", "response.create"]
    for e in events:
        strict(CLIENT, e)
    session = strict(CLIENT, events[0]).session
    assert session.type == "realtime" and session.output_modalities == ["audio"]
    assert session.audio.input.format.type == "audio/pcm" and session.audio.output.format.rate == 24000
    assert events[2]["item"]["content"][0]["type"] == "output_text"  # the assistant turn in GA
    # the beta session (even typed as realtime) is what the GA types reject: the check can fail
    beta = request_events("beta", s, x, "alloy", 1024)[0]
    with pytest.raises(AssertionError, match="unknown to the GA types"):
        strict(CLIENT, {**beta, "session": {"type": "realtime", **beta["session"]}})


async def test_sdk_realtime_client_gets_typed_deltas_from_serve(served, reply_script):
    url = served(f"scripted:{reply_script}")
    client = openai.AsyncOpenAI(api_key="test-key", base_url=f"{url}/v1", max_retries=0)
    pcm = (np.sin(np.arange(12000) / 10) * 8000).astype("<i2").tobytes()
    kinds, audio, transcript = [], b"", ""
    async with client.realtime.connect(model="scripted-model") as conn:
        await conn.session.update(session={"type": "realtime", "output_modalities": ["audio"],
                                           "audio": {"input": {"turn_detection": None}}})
        await conn.conversation.item.create(item={"type": "message", "role": "user",
                                                  "content": [{"type": "input_text", "text": "earlier turn"}]})
        await conn.input_audio_buffer.append(audio=base64.b64encode(pcm).decode())
        await conn.input_audio_buffer.commit()
        await conn.response.create()
        while True:
            raw = await conn.recv_bytes()
            strict(SERVER, json.loads(raw))
            ev = conn.parse_event(raw)
            kinds.append(ev.type)
            if isinstance(ev, ResponseAudioDeltaEvent):
                audio += base64.b64decode(ev.delta)
            elif isinstance(ev, ResponseAudioTranscriptDeltaEvent):
                transcript += ev.delta
            elif ev.type in ("response.done", "error"):
                break
    await client.close()
    assert kinds[:2] == ["session.created", "session.updated"] and "conversation.item.added" in kinds
    assert kinds[-1] == "response.done" and "response.output_audio.done" in kinds
    assert "response.output_audio_transcript.done" in kinds and not any(".audio." in k for k in kinds)
    assert transcript == TEXT
    assert len(audio) // 2 == 24000  # the scripted second of pcm16 at 24 kHz


@pytest.mark.parametrize("api", ["ga", "beta"])
async def test_adapter_against_serve_in_both_versions(served, reply_script, samples, api):
    url = served(f"scripted:{reply_script}")
    system = resolve(f"realtime:scripted-model@{url}/v1", SystemOptions(realtime_api=api))
    assert system.describe()["api"] == api
    [s] = samples(1)
    s.history.append(Turn(role="user", text="hello"))
    c = await collect(system, s)
    assert c.error is None and c.text == TEXT and c.audio_duration == pytest.approx(1.0)


async def test_beta_header_gets_beta_event_names(served, reply_script):
    import websockets

    url = served(f"scripted:{reply_script}").replace("http://", "ws://")
    pcm = base64.b64encode(np.zeros(2400, dtype="<i2").tobytes()).decode()
    async with websockets.connect(f"{url}/v1/realtime?model=m", additional_headers={"OpenAI-Beta": "realtime=v1"}) as ws:
        for ev in ({"type": "session.update", "session": {"modalities": ["text", "audio"]}},
                   {"type": "input_audio_buffer.append", "audio": pcm}, {"type": "input_audio_buffer.commit"},
                   {"type": "response.create"}):
            await ws.send(json.dumps(ev))
        kinds = []
        while not kinds or kinds[-1] != "response.done":
            kinds.append(json.loads(await ws.recv())["type"])
    assert "response.audio.delta" in kinds and "response.audio_transcript.delta" in kinds
    assert not any("output_audio" in k for k in kinds)

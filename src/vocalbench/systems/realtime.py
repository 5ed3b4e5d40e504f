"""``realtime:MODEL[@BASE_URL]``: the OpenAI Realtime websocket protocol.

One connection per sample: ``session.update`` (text + audio, pcm16, no server VAD), history
as ``conversation.item.create`` text items, the query as ``input_audio_buffer.append`` chunks
(pcm16, 24 kHz) + ``commit``, then ``response.create``. The latency origin is the moment
``response.create`` is sent after the commit. Both the beta (``response.audio.delta``) and the
GA (``response.output_audio.delta``) event names are understood.
"""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import urlencode, urlsplit, urlunsplit

from vocalbench.records import Sample
from vocalbench.systems import SystemOptions
from vocalbench.systems.base import (
    AudioChunk,
    Done,
    Event,
    Failure,
    Sent,
    TextDelta,
)
from vocalbench.systems.failures import SystemFailure
from vocalbench.systems.openai_audio import endpoint_name, sample_headers

RATE = 24000
APPEND_SECONDS = 0.5  # audio per input_audio_buffer.append event
DEFAULT_BASE_URL = "wss://api.openai.com/v1"

AUDIO_DELTA = {"response.audio.delta", "response.output_audio.delta"}
TEXT_DELTA = {"response.audio_transcript.delta", "response.output_audio_transcript.delta",
              "response.text.delta", "response.output_text.delta"}


class RealtimeSystem:
    def __init__(self, model: str, base_url: str, api_key: str | None, voice: str | None, max_tokens: int) -> None:
        self.model = model
        u = urlsplit(base_url.rstrip("/"))
        scheme = {"http": "ws", "https": "wss"}.get(u.scheme, u.scheme)
        path = u.path if u.path.endswith("/realtime") else u.path + "/realtime"
        self.url = urlunsplit((scheme, u.netloc, path, urlencode({"model": model}), ""))
        self.api_key = api_key
        self.voice = voice or "alloy"
        self.max_tokens = max_tokens
        self.id = f"realtime:{model}"
        self.resource = endpoint_name(urlunsplit((scheme, u.netloc, "", "", "")))

    async def start(self) -> None:
        return None

    async def close(self) -> None:
        return None

    def describe(self) -> dict[str, Any]:
        return {"kind": "realtime", "model": self.model, "voice": self.voice, "max_tokens": self.max_tokens,
                "history_mode": "text-turns", "audio_format": "pcm16@24000",
                "latency_origin": "response.create sent after input_audio_buffer.commit"}

    async def stream(self, sample: Sample) -> AsyncIterator[Event]:
        import websockets

        from vocalbench.audio import float_to_pcm16, load, pcm16_to_float

        if sample.audio is None:
            raise SystemFailure("missing_query_audio", f"{sample.subset}/{sample.id} has no audio")
        x, _ = load(sample.audio.path, sample_rate=RATE)
        headers = {"OpenAI-Beta": "realtime=v1", **sample_headers(sample)}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        async with websockets.connect(self.url, additional_headers=headers, max_size=None, open_timeout=30,
                                      ping_interval=None, compression=None) as ws:
            await ws.send(json.dumps({"type": "session.update", "session": {
                "modalities": ["text", "audio"], "voice": self.voice, "input_audio_format": "pcm16",
                "output_audio_format": "pcm16", "turn_detection": None,
                "max_response_output_tokens": self.max_tokens}}))
            for t in sample.history:
                kind = "input_text" if t.role == "user" else "text"
                await ws.send(json.dumps({"type": "conversation.item.create", "item": {
                    "type": "message", "role": t.role, "content": [{"type": kind, "text": t.text}]}}))
            step = int(APPEND_SECONDS * RATE)
            for i in range(0, x.size, step):
                await ws.send(json.dumps({"type": "input_audio_buffer.append",
                                          "audio": base64.b64encode(float_to_pcm16(x[i:i + step])).decode()}))
            await ws.send(json.dumps({"type": "input_audio_buffer.commit"}))
            yield Sent("response.create-after-commit")
            await ws.send(json.dumps({"type": "response.create"}))
            async for raw in ws:
                ev = json.loads(raw)
                kind = ev.get("type", "")
                if kind in AUDIO_DELTA:
                    yield AudioChunk(pcm16_to_float(base64.b64decode(ev.get("delta") or "")), RATE)
                elif kind in TEXT_DELTA:
                    yield TextDelta(ev.get("delta") or "")
                elif kind == "error":
                    err = ev.get("error") or {}
                    yield Failure(str(err.get("type") or err.get("code") or "realtime_error"),
                                  str(err.get("message") or ""), retryable=_retryable(err))
                    return
                elif kind == "response.done":
                    resp = ev.get("response") or {}
                    if resp.get("status") not in (None, "completed", "incomplete"):
                        details = resp.get("status_details") or {}
                        err = details.get("error") or {}
                        yield Failure(str(err.get("type") or f"response_{resp.get('status')}"),
                                      str(err.get("message") or details), retryable=resp.get("status") == "failed")
                        return
                    yield Done()
                    return
        raise SystemFailure("broken_stream", "the websocket closed before response.done", retryable=True)


def _retryable(err: dict[str, Any]) -> bool:
    kind = f"{err.get('type', '')} {err.get('code', '')}"
    return any(k in kind for k in ("server_error", "rate_limit", "timeout", "http_5", "http_429", "overloaded"))


def from_spec(arg: str, options: SystemOptions) -> RealtimeSystem:
    """``realtime:MODEL[@BASE_URL]`` (http(s) base URLs are turned into ws(s))."""
    model, _, base = arg.partition("@")
    if not model:
        raise ValueError("realtime: expected realtime:MODEL[@BASE_URL]")
    return RealtimeSystem(model, base or options.base_url or DEFAULT_BASE_URL, options.api_key, options.voice,
                          options.max_reply_tokens)

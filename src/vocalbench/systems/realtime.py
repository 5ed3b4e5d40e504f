"""``realtime:MODEL[@BASE_URL]``: the OpenAI Realtime websocket protocol, GA by default.

One connection per sample: ``session.update`` (audio out with its transcript, pcm16, no server
VAD), history as ``conversation.item.create`` text items, the query as
``input_audio_buffer.append`` chunks (pcm16, 24 kHz) + ``commit``, then ``response.create``. The
latency origin is the moment ``response.create`` is sent after the commit. ``--realtime-api beta``
sends the beta session shape with ``OpenAI-Beta: realtime=v1`` (:mod:`realtime_events`); both
the GA (``response.output_audio.delta``) and the beta (``response.audio.delta``) event names are
understood in either mode.
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import AsyncIterator
from urllib.parse import urlencode, urlsplit, urlunsplit

import numpy as np
from pydantic import JsonValue

from vocalbench.records import Sample
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
from vocalbench.systems.options import SystemOptions
from vocalbench.systems.realtime_events import BETA_HEADER, NAMES, RATE, Api, history_item, session_update

APPEND_SECONDS = 0.5  # audio per input_audio_buffer.append event
DEFAULT_BASE_URL = "wss://api.openai.com/v1"

AUDIO_DELTA = {n.audio_delta for n in NAMES.values()}
TEXT_DELTA = {n for v in NAMES.values() for n in (v.transcript_delta, v.text_delta)}


def request_events(api: Api, sample: Sample, x: np.ndarray, voice: str,
                   max_tokens: int) -> list[dict[str, JsonValue]]:
    """Every client event of one sample, in order; the last is ``response.create`` (the latency origin)."""
    from vocalbench.audio import float_to_pcm16

    out = [session_update(api, voice, max_tokens), *(history_item(api, t) for t in sample.history)]
    step = int(APPEND_SECONDS * RATE)
    out += [{"type": "input_audio_buffer.append", "audio": base64.b64encode(float_to_pcm16(x[i:i + step])).decode()}
            for i in range(0, x.size, step)]
    return [*out, {"type": "input_audio_buffer.commit"}, {"type": "response.create"}]


class RealtimeSystem:
    def __init__(self, model: str, base_url: str, api_key: str | None, voice: str | None, max_tokens: int,
                 api: Api = "ga") -> None:
        self.model = model
        self.api = api
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
        from vocalbench.audio import prepare_resampling

        # every request resamples its query to 24 kHz before its first event: import the resampler
        # here, untimed, rather than inside the first request's stall window
        await asyncio.to_thread(prepare_resampling)

    async def close(self) -> None:
        return None

    def describe(self) -> dict[str, JsonValue]:
        return {"kind": "realtime", "api": self.api, "model": self.model, "voice": self.voice,
                "max_tokens": self.max_tokens,
                "history_mode": "text-turns", "audio_format": "pcm16@24000",
                "latency_origin": "response.create sent after input_audio_buffer.commit"}

    async def stream(self, sample: Sample) -> AsyncIterator[Event]:
        import websockets

        from vocalbench.audio import load, pcm16_to_float

        if sample.audio is None:
            raise SystemFailure("missing_query_audio", f"{sample.subset}/{sample.id} has no audio")
        x, _ = load(sample.audio.path, sample_rate=RATE)
        *setup, create = request_events(self.api, sample, x, self.voice, self.max_tokens)
        headers = {**(dict([BETA_HEADER]) if self.api == "beta" else {}), **sample_headers(sample)}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        async with websockets.connect(self.url, additional_headers=headers, max_size=None, open_timeout=30,
                                      ping_interval=None, compression=None) as ws:
            for ev in setup:
                await ws.send(json.dumps(ev))
            yield Sent("response.create-after-commit")
            await ws.send(json.dumps(create))
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


def _retryable(err: dict[str, JsonValue]) -> bool:
    kind = f"{err.get('type', '')} {err.get('code', '')}"
    return any(k in kind for k in ("server_error", "rate_limit", "timeout", "http_5", "http_429", "overloaded"))


def from_spec(arg: str, options: SystemOptions) -> RealtimeSystem:
    """``realtime:MODEL[@BASE_URL]`` (http(s) base URLs are turned into ws(s))."""
    model, _, base = arg.partition("@")
    if not model:
        raise ValueError("realtime: expected realtime:MODEL[@BASE_URL]")
    return RealtimeSystem(model, base or options.base_url or DEFAULT_BASE_URL, options.api_key, options.voice,
                          options.cap, options.realtime_api)

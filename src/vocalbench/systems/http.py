"""``http:URL``: the vocalbench JSON protocol for anyone's own server (docs/systems.md).

Request: ``POST URL`` with JSON ``{"id", "subset", "lang", "audio": {"format": "wav", "data": <base64>},
"history": [{"role": "user"|"assistant", "text"}], "max_tokens"}``.
Response: status 200 and ``application/x-ndjson``, one event per line:
``{"type": "text", "text"}``, ``{"type": "audio", "data": <base64 pcm16 mono>, "sample_rate"}``,
``{"type": "done", "text"?}``, ``{"type": "error", "error": {"type", "message", "retryable"}}``.
A non-200 status is an error (429 and 5xx are retried). A stream without ``done`` is broken.
"""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator
from typing import Any

from pydantic import JsonValue

from vocalbench.limits import ERROR_BODY_BYTES
from vocalbench.records import Sample
from vocalbench.retry import retry_after
from vocalbench.systems.base import (
    AudioChunk,
    Done,
    Event,
    Failure,
    Sent,
    TextDelta,
)
from vocalbench.systems.failures import SystemFailure
from vocalbench.systems.openai_audio import (
    Handover,
    endpoint_name,
    query_wav,
    sample_headers,
)
from vocalbench.systems.options import SystemOptions


class HttpSystem:
    def __init__(self, url: str, api_key: str | None, max_tokens: int) -> None:
        self.url = url
        self.api_key = api_key
        self.max_tokens = max_tokens
        self.id = "http:<url>"
        self.resource = endpoint_name(url)
        self._session: Any = None
        self._handover = Handover()

    async def start(self) -> None:
        import aiohttp

        self._session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0),
                                              timeout=aiohttp.ClientTimeout(total=None, connect=10))

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()

    def describe(self) -> dict[str, JsonValue]:
        return {"kind": "http", "protocol": "vocalbench-ndjson/1", "max_tokens": self.max_tokens,
                "history_mode": "text-turns"}

    async def stream(self, sample: Sample) -> AsyncIterator[Event]:
        from vocalbench.audio import pcm16_to_float

        await self._handover.turn()
        body = json.dumps({
            "id": sample.id, "subset": sample.subset, "lang": sample.lang,
            "audio": {"format": "wav", "data": base64.b64encode(query_wav(sample)).decode()},
            "history": [{"role": t.role, "text": t.text} for t in sample.history],
            "max_tokens": self.max_tokens,
        }, ensure_ascii=False).encode()
        headers = {"Content-Type": "application/json", **sample_headers(sample)}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        yield Sent("request-handed-to-client")
        async with self._session.post(self.url, data=body, headers=headers) as resp:
            if resp.status != 200:  # at most ERROR_BODY_BYTES of the body are read
                text = (await resp.content.read(ERROR_BODY_BYTES)).decode("utf-8", "replace")[:300]
                raise SystemFailure(f"http_{resp.status}", text, retryable=resp.status == 429 or resp.status >= 500,
                                    retry_after=retry_after(resp.headers.get("Retry-After")))
            async for line in resp.content:
                if not line.strip():
                    continue
                try:
                    ev = json.loads(line)
                    kind = ev["type"]
                except (ValueError, KeyError, TypeError):
                    raise SystemFailure("protocol_error", f"bad NDJSON line: {line[:200]!r}") from None
                if kind == "text":
                    yield TextDelta(str(ev.get("text") or ""))
                elif kind == "audio":
                    yield AudioChunk(pcm16_to_float(base64.b64decode(ev["data"])), int(ev["sample_rate"]))
                elif kind == "done":
                    yield Done(ev.get("text"))
                    return
                elif kind == "error":
                    err = ev.get("error") or {}
                    yield Failure(str(err.get("type") or "server_error"), str(err.get("message") or ""),
                                  bool(err.get("retryable", False)))
                    return
        raise SystemFailure("broken_stream", "the stream ended without a done event", retryable=True)


def from_spec(arg: str, options: SystemOptions) -> HttpSystem:
    """``http:URL`` (the full URL of the streaming endpoint)."""
    url = arg or options.base_url
    if not url or not url.startswith(("http://", "https://")):
        raise ValueError("http system: expected http:URL with an http(s) URL")
    return HttpSystem(url, options.api_key, options.cap)

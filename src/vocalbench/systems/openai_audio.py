"""``openai-audio:MODEL[@BASE_URL]``: chat completions with audio in, streamed text + audio out.

Works with GPT-4o audio, Qwen-Omni (compatible mode), vLLM-served Qwen2.5/3-Omni and
``vocalbench serve``. The query is sent as ``input_audio`` (wav, base64); the history as text
turns; ``modalities=["text","audio"]`` with ``audio={"voice": …, "format": "pcm16"}`` (24 kHz).

The request goes through the openai SDK: one ``AsyncOpenAI`` client per adapter (auth, base URL,
timeouts, HTTP status errors) on the SDK's aiohttp transport, asking for the raw streaming
response. The SSE reply is parsed here (``ReplyParser``, ``json.loads`` per event) instead of one
pydantic model per chunk. Both halve the client's CPU per reply (~7.5 -> ~4 ms, runner included),
which decides throughput at high concurrency (bench/runner_bench.py).
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import AsyncIterator
from typing import Any, Protocol
from urllib.parse import urlsplit

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
from vocalbench.systems.failures import SystemFailure, classify
from vocalbench.systems.options import SystemOptions

PCM16_RATE = 24000
DEFAULT_BASE_URL = "https://api.openai.com/v1"


def query_wav(sample: Sample) -> bytes:
    """The sample's spoken query as wav bytes (read through vocalbench.audio)."""
    from vocalbench.audio import wav_file_bytes

    if sample.audio is None:
        raise SystemFailure("missing_query_audio", f"{sample.subset}/{sample.id} has no audio", retryable=False)
    return wav_file_bytes(sample.audio.path)


def history_messages(sample: Sample) -> list[dict[str, JsonValue]]:
    """Multi-round history as text turns (the recorded history mode)."""
    return [{"role": t.role, "content": t.text} for t in sample.history]


class ByteStream(Protocol):
    """A streaming HTTP response's body (the SDK's ``AsyncAPIResponse``)."""

    def iter_bytes(self) -> AsyncIterator[bytes]: ...


def sample_headers(sample: Sample) -> dict[str, str]:
    """Identify the sample to vocalbench servers (ignored by other endpoints)."""
    return {"X-VocalBench-Sample": f"{sample.subset}/{sample.id}", "X-VocalBench-Lang": sample.lang}


class Handover:
    """One request prepared and handed to the client per event-loop turn.

    Streams that start together (a runner's first wave) would otherwise all prepare their request
    and take their latency origin (``Sent``) in the same loop turn, while aiohttp writes a request
    only on a later turn: each request would reach the wire after every other request's
    preparation, and that wait would count as latency. Taking a turn before preparing and giving it
    back on the next loop turn lets a request's write run before the next request is prepared.
    """

    def __init__(self) -> None:
        self._lock = asyncio.Lock()

    async def turn(self) -> None:
        await self._lock.acquire()
        asyncio.get_running_loop().call_soon(self._lock.release)


def endpoint_name(base_url: str) -> str:
    """A resource name for an endpoint (host:port): one concurrency limit per endpoint."""
    u = urlsplit(base_url)
    return f"endpoint:{u.hostname}:{u.port or ('443' if u.scheme in ('https', 'wss') else '80')}"


class ReplyParser:
    """Chat-completion SSE bytes in, events out (``feed`` per received block, ``end`` at EOF).

    Understands ``delta.content``, ``delta.audio.transcript``, ``delta.audio.data`` (base64
    pcm16, 24 kHz), ``finish_reason``, ``data: [DONE]`` and ``{"error": …}`` events; a data
    line that is not JSON is a ``protocol_error``.
    """

    def __init__(self) -> None:
        self._buf = b""
        self._data: list[bytes] = []
        self.finished = False  # a choice reported its finish_reason
        self.done = False  # [DONE] or an error event: read no further

    def feed(self, block: bytes) -> list[Event]:
        out: list[Event] = []
        if self.done:  # the rest is still read, so the connection can be reused
            return out
        lines = (self._buf + block if self._buf else block).split(b"\n")
        self._buf = lines.pop()
        for line in lines:
            self._line(line.rstrip(b"\r"), out)
            if self.done:
                break
        return out

    def end(self) -> list[Event]:
        """The stream ended: flush a last line without its newline and an event without its blank line."""
        out: list[Event] = []
        for line in (self._buf.rstrip(b"\r"), b""):
            if not self.done:
                self._line(line, out)
        self._buf = b""
        return out

    def _line(self, line: bytes, out: list[Event]) -> None:
        if not line:  # blank line: dispatch the event
            if self._data:
                data, self._data = b"\n".join(self._data), []
                self._event(data, out)
        elif line.startswith(b"data:"):
            self._data.append(line[6:] if line[5:6] == b" " else line[5:])
        # comments (":") and the event/id/retry fields carry nothing a reply needs

    def _event(self, data: bytes, out: list[Event]) -> None:
        if data.strip() == b"[DONE]":
            self.done = True
            return
        try:
            obj = json.loads(data)
        except ValueError:
            raise SystemFailure("protocol_error", f"bad SSE data line: {data[:200]!r}") from None
        if not isinstance(obj, dict):
            raise SystemFailure("protocol_error", f"SSE data is not a JSON object: {data[:200]!r}")
        err = obj.get("error")
        if err:
            err = err if isinstance(err, dict) else {"message": str(err)}
            out.append(Failure(str(err.get("type") or err.get("code") or "stream_error"),
                               str(err.get("message") or "an error event in the stream"),
                               bool(err.get("retryable", True))))
            self.done = True
            return
        try:
            for choice in obj.get("choices") or ():
                delta = choice.get("delta") or {}
                if delta.get("content"):
                    out.append(TextDelta(str(delta["content"])))
                audio = delta.get("audio")
                if audio:
                    if audio.get("transcript"):
                        out.append(TextDelta(str(audio["transcript"])))
                    if audio.get("data"):
                        from vocalbench.audio import pcm16_to_float

                        out.append(AudioChunk(pcm16_to_float(base64.b64decode(audio["data"])), PCM16_RATE))
                if choice.get("finish_reason"):
                    self.finished = True
        except (AttributeError, TypeError, ValueError) as exc:  # a chunk of another shape, bad base64
            raise SystemFailure("protocol_error", f"unexpected chunk ({exc}): {data[:200]!r}") from None


class OpenAIAudioSystem:
    def __init__(self, model: str, base_url: str, api_key: str | None, voice: str | None, max_tokens: int,
                 seed: int = 0) -> None:
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.voice = voice or "alloy"
        self.max_tokens = max_tokens
        self.seed = seed
        self.id = f"openai-audio:{model}"
        self.resource = endpoint_name(self.base_url)
        self._client: Any = None
        self._handover = Handover()

    async def start(self) -> None:
        import httpx2  # the openai SDK's HTTP library

        from vocalbench.components.llm import openai_client

        # retries are the runner's job (bounded, recorded); error bodies are read up to 64 KiB.
        # The aiohttp transport: httpx's connection pool costs ~2 ms CPU per request at concurrency 32
        self._client = openai_client(self.base_url, self.api_key or "not-needed", httpx2.Timeout(600.0, connect=10.0),
                                     aiohttp=True)

    async def close(self) -> None:
        if self._client is not None:
            await self._client.close()

    def describe(self) -> dict[str, JsonValue]:
        return {"kind": "openai-audio", "model": self.model, "voice": self.voice, "max_tokens": self.max_tokens,
                "history_mode": "text-turns", "audio_format": "pcm16@24000"}

    async def stream(self, sample: Sample) -> AsyncIterator[Event]:
        from openai import APIStatusError, APITimeoutError

        from vocalbench.components.llm import ERROR_TEXT_CHARS

        await self._handover.turn()
        wav = base64.b64encode(query_wav(sample)).decode()
        messages = history_messages(sample) + [
            {"role": "user", "content": [{"type": "input_audio", "input_audio": {"data": wav, "format": "wav"}}]}]
        kwargs: dict[str, Any] = {
            "model": self.model, "messages": messages, "stream": True, "modalities": ["text", "audio"],
            "audio": {"voice": self.voice, "format": "pcm16"}, "max_tokens": self.max_tokens,
            "temperature": 0, "seed": self.seed, "extra_headers": sample_headers(sample),
        }
        yield Sent("request-handed-to-client")
        parser = ReplyParser()
        try:
            async with self._client.chat.completions.with_streaming_response.create(**kwargs) as response:
                async for block in _blocks(response):
                    for ev in parser.feed(block):
                        yield ev
                for ev in parser.end():
                    yield ev
        except APIStatusError as exc:  # its body read up to 64 KiB (openai_client), kept to 300 characters
            kind, retryable, wait = classify(exc)
            raise SystemFailure(kind, str(exc)[:ERROR_TEXT_CHARS], retryable, wait) from exc
        except APITimeoutError as exc:
            refused = _refused(exc)
            if refused is None:
                raise
            raise SystemFailure("connection", f"cannot connect ({refused})", retryable=True) from exc
        if not parser.finished:
            raise SystemFailure("broken_stream", "the stream ended without a finish_reason", retryable=True)
        yield Done()


async def _blocks(response: ByteStream) -> AsyncIterator[bytes]:
    """The raw body of a streaming response; a connection lost mid-stream is a ``broken_stream``."""
    try:
        async for block in response.iter_bytes():
            yield block
    except Exception as exc:
        raise SystemFailure("broken_stream", f"connection lost mid-stream ({exc!r})", retryable=True) from exc


def _refused(exc: BaseException) -> OSError | None:
    """The connection error under an SDK timeout: the SDK's aiohttp transport reports a refused or
    unreachable host as a connect *timeout*."""
    cause = exc.__cause__
    while cause is not None:
        if isinstance(cause, OSError) and not isinstance(cause, TimeoutError):
            return cause
        cause = cause.__cause__
    return None


def from_spec(arg: str, options: SystemOptions) -> OpenAIAudioSystem:
    """``openai-audio:MODEL[@BASE_URL]``; the base URL may also come from --system-base-url or the env."""
    model, _, base = arg.partition("@")
    if not model:
        raise ValueError("openai-audio: expected openai-audio:MODEL[@BASE_URL]")
    return OpenAIAudioSystem(model, base or options.base_url or DEFAULT_BASE_URL, options.api_key, options.voice,
                             options.cap, options.seed)

"""``openai-audio:MODEL[@BASE_URL]``: chat completions with audio in, streamed text + audio out.

Works with GPT-4o audio, Qwen-Omni (compatible mode), vLLM-served Qwen2.5/3-Omni and
``vocalbench serve``. The query is sent as ``input_audio`` (wav, base64); the history as text
turns; ``modalities=["text","audio"]`` with ``audio={"voice": …, "format": "pcm16"}`` (24 kHz).
"""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import urlsplit

from vocalbench.records import Sample
from vocalbench.systems import SystemOptions
from vocalbench.systems.base import (
    AudioChunk,
    Done,
    Event,
    Sent,
    SystemFailure,
    TextDelta,
)

PCM16_RATE = 24000
DEFAULT_BASE_URL = "https://api.openai.com/v1"


def query_wav(sample: Sample) -> bytes:
    """The sample's spoken query as wav bytes (read through vocalbench.audio)."""
    from vocalbench.audio import load, to_wav_bytes

    if sample.audio is None:
        raise SystemFailure("missing_query_audio", f"{sample.subset}/{sample.id} has no audio", retryable=False)
    x, sr = load(sample.audio.path)
    return to_wav_bytes(x, sr)


def history_messages(sample: Sample) -> list[dict[str, Any]]:
    """Multi-round history as text turns (the recorded history mode)."""
    return [{"role": t.role, "content": t.text} for t in sample.history]


def sample_headers(sample: Sample) -> dict[str, str]:
    """Identify the sample to vocalbench servers (ignored by other endpoints)."""
    return {"X-VocalBench-Sample": f"{sample.subset}/{sample.id}", "X-VocalBench-Lang": sample.lang}


def endpoint_name(base_url: str) -> str:
    """A resource name for an endpoint (host:port): one concurrency limit per endpoint."""
    u = urlsplit(base_url)
    return f"endpoint:{u.hostname}:{u.port or ('443' if u.scheme in ('https', 'wss') else '80')}"


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

    async def start(self) -> None:
        import httpx
        from openai import AsyncOpenAI

        # retries are the runner's job (bounded, recorded); the SDK must not retry on its own
        self._client = AsyncOpenAI(base_url=self.base_url, api_key=self.api_key or "not-needed", max_retries=0,
                                   timeout=httpx.Timeout(600.0, connect=10.0),
                                   http_client=httpx.AsyncClient(limits=httpx.Limits(max_connections=1000,
                                                                                     max_keepalive_connections=100)))

    async def close(self) -> None:
        if self._client is not None:
            await self._client.close()

    def describe(self) -> dict[str, Any]:
        return {"kind": "openai-audio", "model": self.model, "voice": self.voice, "max_tokens": self.max_tokens,
                "history_mode": "text-turns", "audio_format": "pcm16@24000"}

    async def stream(self, sample: Sample) -> AsyncIterator[Event]:
        wav = base64.b64encode(query_wav(sample)).decode()
        messages = history_messages(sample) + [
            {"role": "user", "content": [{"type": "input_audio", "input_audio": {"data": wav, "format": "wav"}}]}]
        kwargs: dict[str, Any] = {
            "model": self.model, "messages": messages, "stream": True, "modalities": ["text", "audio"],
            "audio": {"voice": self.voice, "format": "pcm16"}, "max_tokens": self.max_tokens,
            "temperature": 0, "seed": self.seed, "extra_headers": sample_headers(sample),
        }
        yield Sent("request-handed-to-client")
        stream = await self._client.chat.completions.create(**kwargs)
        finished = False
        async with stream:
            async for chunk in _broken_is_typed(stream):
                for choice in chunk.choices or []:
                    delta = choice.delta
                    if delta is not None:
                        if delta.content:
                            yield TextDelta(delta.content)
                        audio = _field(delta, "audio")
                        if audio:
                            if audio.get("transcript"):
                                yield TextDelta(audio["transcript"])
                            if audio.get("data"):
                                from vocalbench.audio import pcm16_to_float

                                yield AudioChunk(pcm16_to_float(base64.b64decode(audio["data"])), PCM16_RATE)
                    if choice.finish_reason:
                        finished = True
        if not finished:
            raise SystemFailure("broken_stream", "the stream ended without a finish_reason", retryable=True)
        yield Done()


async def _broken_is_typed(stream: Any) -> AsyncIterator[Any]:
    """Chunks of an open stream; a connection lost mid-stream is a ``broken_stream``."""
    import openai

    try:
        async for chunk in stream:
            yield chunk
    except openai.APIConnectionError as exc:
        raise SystemFailure("broken_stream", f"connection lost mid-stream ({exc.__cause__ or exc})",
                            retryable=True) from exc


def _field(delta: Any, name: str) -> dict[str, Any] | None:
    v = getattr(delta, name, None)
    if v is None and getattr(delta, "model_extra", None):
        v = delta.model_extra.get(name)
    if v is None:
        return None
    return v if isinstance(v, dict) else v.model_dump() if hasattr(v, "model_dump") else dict(v)


def from_spec(arg: str, options: SystemOptions) -> OpenAIAudioSystem:
    """``openai-audio:MODEL[@BASE_URL]``; the base URL may also come from --system-base-url or the env."""
    model, _, base = arg.partition("@")
    if not model:
        raise ValueError("openai-audio: expected openai-audio:MODEL[@BASE_URL]")
    return OpenAIAudioSystem(model, base or options.base_url or DEFAULT_BASE_URL, options.api_key, options.voice,
                             options.max_reply_tokens, options.seed)

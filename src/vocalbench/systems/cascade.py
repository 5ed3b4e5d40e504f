"""``cascade:asr=SPEC,llm=SPEC,tts=SPEC``: ASR -> streamed chat LLM -> TTS per sentence.

The LLM reply is streamed; every complete sentence goes to TTS at once while the LLM keeps
writing, so the first audio chunk arrives after ASR + the first sentence + its synthesis, a real
first-chunk latency. Replies are capped at ``max_reply_tokens``. ASR and TTS run in worker
threads under the named limits ``local:asr`` and ``local:tts``; the local LLM under ``local:llm``.
With several queries in flight (``--concurrency 3``: one per stage) a query queued for a stage
another one holds says so with a ``Waiting`` event every few seconds, so the harness's stall
timeout (meant for a silent system) does not cut it; the attempt's own timeout still bounds it.
``llm=local`` uses the shared llama.cpp server (``components.llm_server.ensure_server``);
``llm=openai:MODEL[@BASE_URL]`` any OpenAI-compatible endpoint (key from the environment).
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any

from pydantic import JsonValue

from vocalbench import catalog
from vocalbench.concurrency import concurrency
from vocalbench.records import Sample
from vocalbench.systems.base import (
    AudioChunk,
    Done,
    Event,
    Sent,
    TextDelta,
    Waiting,
)
from vocalbench.systems.failures import SystemFailure
from vocalbench.systems.options import SystemOptions

if TYPE_CHECKING:
    from openai import AsyncStream
    from openai.types.chat import ChatCompletionChunk

SYSTEM_PROMPT = {
    "en": "You are a helpful voice assistant. Answer the user's spoken question directly and briefly, in plain "
          "spoken English: no markdown, no lists, no emojis.",
    "zh": "你是一个乐于助人的语音助手。请直接、简短地用口语化的中文回答用户的问题，不要使用 Markdown、列表或表情符号。",
}
WAITING_NOTE_SECONDS = 5.0  # how often a query queued for a busy stage says so (Waiting: not a stall)
Hold = Callable[[str, int], AbstractAsyncContextManager[None]]  # holds a stage's slot, noting the wait
_MARKUP = re.compile(r"[*#`_>|~]+")
_SENTENCE_END = re.compile(r"[.!?;。！？；…]+[\"')\]”’]*(?=\s)|[。！？；…]+|\n+")


def pop_sentences(buffer: str) -> tuple[list[str], str]:
    """Complete sentences at the head of ``buffer`` and the unfinished rest.

    A sentence is complete when its end mark is followed by whitespace (Latin) or immediately
    (full-width marks), so "3.5" or "e.g." mid-stream are not cut at the period.
    """
    out: list[str] = []
    start = 0
    for m in _SENTENCE_END.finditer(buffer):
        s = buffer[start:m.end()].strip()
        if s:
            out.append(s)
        start = m.end()
    return out, buffer[start:]


def speakable(text: str) -> str:
    return " ".join(_MARKUP.sub(" ", text).split())


class CascadeSystem:
    def __init__(self, asr: str, llm: str, tts: str, options: SystemOptions, name: str = "cascade") -> None:
        self.asr_spec, self.llm_spec, self.tts_spec = asr, llm, tts
        self.options = options
        self.max_tokens = options.cap
        self.id = name if name == "offline" else f"cascade:asr={asr},llm={llm},tts={tts}"
        self.resource = f"local:{name}"
        self.asr: Any = None
        self.tts: Any = None
        self._client: Any = None
        self._model = ""
        self._llm_id = ""
        self._llm_limit = ("local:llm", 1)
        self._local = False  # the brain is the local llama.cpp server

    async def start(self) -> None:
        from vocalbench import components

        self.asr = await asyncio.to_thread(components.resolve, "asr", self.asr_spec)
        self.tts = await asyncio.to_thread(components.resolve, "tts", self.tts_spec)
        await self._start_llm()

    async def _start_llm(self) -> None:
        import os

        from vocalbench.components.base import ComponentSpec
        from vocalbench.components.llm import DEFAULT_BASE_URL, host_of, openai_client

        spec = ComponentSpec.parse("llm", self.llm_spec)
        if spec.profile == "offline":
            from vocalbench.components.llm_server import ensure_server

            handle = await asyncio.to_thread(ensure_server)
            base_url, self._model, key = handle.base_url, handle.model_alias, "not-needed"
            self._local = True
        elif spec.profile == "openai":
            base_url, self._model = spec.base_url or self.options.base_url or DEFAULT_BASE_URL, spec.model or ""
            key = os.environ.get("VOCALBENCH_SYSTEM_API_KEY") or os.environ.get("OPENAI_API_KEY") or "not-needed"
            self._llm_limit = (f"endpoint:{host_of(base_url)}", 16)
        else:
            raise ValueError(f"cascade llm '{self.llm_spec}': expected local or openai:MODEL[@BASE_URL]")
        self._llm_id = f"{self._model}@{host_of(base_url)}"
        self._client = openai_client(base_url, key, 300.0)

    async def _open_stream(self, messages: list[dict[str, str]]) -> AsyncStream[ChatCompletionChunk]:
        """The brain's streamed reply; when the local server is gone (it crashed or was killed), one
        is found or started again (``ensure_server``) and asked once more."""
        from vocalbench.components.llm_server import ensure_server, server_lost

        def create() -> Awaitable[AsyncStream[ChatCompletionChunk]]:
            return self._client.chat.completions.create(
                model=self._model, messages=messages, stream=True, max_tokens=self.max_tokens,
                temperature=0, seed=self.options.seed)

        try:
            return await create()
        except Exception as exc:
            if not self._local or not server_lost(exc):
                raise
        from vocalbench.components.llm import openai_client

        handle = await asyncio.to_thread(ensure_server)
        lost, self._client = self._client, openai_client(handle.base_url, "not-needed", 300.0)
        await lost.close()
        return await create()

    async def close(self) -> None:
        if self._client is not None:
            await self._client.close()

    def describe(self) -> dict[str, JsonValue]:
        return {"kind": "cascade", "asr": getattr(self.asr, "id", self.asr_spec),
                "llm": self._llm_id or self.llm_spec, "tts": getattr(self.tts, "id", self.tts_spec),
                "max_tokens": self.max_tokens, "voice": self.options.voice, "history_mode": "text-turns",
                "temperature": 0, "seed": self.options.seed, "tts_unit": "sentence"}

    async def _transcribe(self, sample: Sample, hold: Hold) -> str:
        from vocalbench.components.base import ComponentError

        if sample.audio is None:
            raise SystemFailure("missing_query_audio", f"{sample.subset}/{sample.id} has no audio")
        spec = catalog.find(sample.subset)
        lang = None if spec is not None and spec.mixed_language else sample.lang  # code-switched: ASR detects
        async with hold("local:asr", 1):
            [tr] = await asyncio.to_thread(self.asr.transcribe, [sample.audio.path], lang)
        if isinstance(tr, ComponentError):
            raise SystemFailure("asr_error", f"{tr.reason}: {tr.message}")
        return tr.text

    async def _synthesize(self, text: str, lang: str, hold: Hold) -> AudioChunk | None:
        say = speakable(text)
        if not any(ch.isalnum() for ch in say):
            return None
        async with hold("local:tts", 1):
            x, sr = await asyncio.to_thread(self.tts.synthesize, say, lang, self.options.voice)
        return AudioChunk(x, sr)

    async def stream(self, sample: Sample) -> AsyncIterator[Event]:
        yield Sent("audio-handed-to-cascade")
        out: asyncio.Queue[Event | BaseException | None] = asyncio.Queue()
        sentences: asyncio.Queue[str | None] = asyncio.Queue()
        queued: list[str] = []  # the stages this query waits for now (others' queries hold them)

        @contextlib.asynccontextmanager
        async def hold(stage: str, limit: int) -> AsyncIterator[None]:
            queued.append(stage)
            try:
                async with concurrency(stage, limit):
                    queued.remove(stage)
                    yield
            finally:
                if stage in queued:
                    queued.remove(stage)

        async def waiting() -> None:  # a queued query is not a stalled one: say so now and then
            while True:
                await asyncio.sleep(WAITING_NOTE_SECONDS)
                if queued:
                    await out.put(Waiting(queued[0]))

        async def llm(messages: list[dict[str, str]]) -> None:
            buf = ""
            async with hold(*self._llm_limit):
                stream = await self._open_stream(messages)
                async with stream:
                    async for chunk in stream:
                        delta = chunk.choices[0].delta.content if chunk.choices else None
                        if delta:
                            await out.put(TextDelta(delta))
                            done, buf = pop_sentences(buf + delta)
                            for s in done:
                                await sentences.put(s)
            if buf.strip():
                await sentences.put(buf.strip())

        async def tts() -> None:
            while (s := await sentences.get()) is not None:
                chunk = await self._synthesize(s, sample.lang, hold)
                if chunk is not None:
                    await out.put(chunk)

        async def pipeline() -> None:
            try:
                question = await self._transcribe(sample, hold)
                messages: list[dict[str, str]] = [{"role": "system", "content": SYSTEM_PROMPT[sample.lang]}]
                messages += [{"role": t.role, "content": t.text} for t in sample.history]
                messages.append({"role": "user", "content": question})
                async with asyncio.TaskGroup() as tg:
                    t_tts = tg.create_task(tts())
                    try:
                        await llm(messages)
                    finally:
                        await sentences.put(None)
                    await t_tts
                await out.put(None)
            except Exception as exc:  # handed to the consumer, which raises it (cancellation propagates)
                await out.put(exc.exceptions[0] if isinstance(exc, ExceptionGroup) else exc)

        tasks = [asyncio.create_task(pipeline()), asyncio.create_task(waiting())]
        try:
            while (ev := await out.get()) is not None:
                if isinstance(ev, BaseException):
                    raise ev
                yield ev
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        yield Done()


def parse_parts(arg: str) -> dict[str, str]:
    """``asr=…,llm=…,tts=…`` -> dict (values may contain ':' and '@')."""
    parts: dict[str, str] = {}
    for item in filter(None, (p.strip() for p in arg.split(","))):
        k, eq, v = item.partition("=")
        if not eq or k not in ("asr", "llm", "tts"):
            raise ValueError(f"cascade: expected asr=SPEC,llm=SPEC,tts=SPEC, got '{item}'")
        parts[k] = v
    return parts


def from_spec(arg: str, options: SystemOptions) -> CascadeSystem:
    """``cascade:asr=SPEC,llm=SPEC,tts=SPEC`` (missing parts default to the offline components)."""
    p = parse_parts(arg)
    return CascadeSystem(p.get("asr", "offline"), p.get("llm", "local"), p.get("tts", "offline"), options)

"""An in-process system: a plain Python callable that answers a spoken query (docs/extending.md).

The callable takes the query audio, its sample rate and the multi-round history, and returns (or
yields, for a streamed reply) pieces: a ``str`` is text, a ``(samples, sample_rate)`` pair is audio
(float32 mono). A generator or async generator streams; each piece is timed as it comes::

    def answer(audio: np.ndarray, sample_rate: int, history: list[dict[str, str]]):
        yield "Hello"                      # first text
        yield (speech[:12000], 24000)      # first audio chunk
        yield (speech[12000:], 24000)

    system = CallableSystem(answer, name="my-model")

A synchronous callable runs in a worker thread (one piece at a time), so a model that computes for
seconds never blocks the harness; calls are serialised unless ``concurrent=True`` (a model that is
not thread-safe stays safe): ``start()`` fixes the system's concurrency limit at one, so the
harness queues samples before their attempts, and a call that still finds another running (a
warm-up) yields ``Waiting``; the clock starts at ``Sent``, when the callable is called.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from pydantic import JsonValue

from vocalbench.concurrency import limiter
from vocalbench.records import Sample
from vocalbench.systems.base import AudioChunk, Done, Event, Sent, SystemFailure, TextDelta, Waiting

Answer = Callable[[np.ndarray, int, list[dict[str, str]]], Any]
Piece = str | tuple[ArrayLike, int] | TextDelta | AudioChunk  # text, or audio as (samples, sample_rate)
_END = object()


class CallableSystem:
    """A :class:`~vocalbench.systems.base.System` around a plain Python callable (see the module)."""

    def __init__(self, answer: Answer, name: str | None = None, *, concurrent: bool = False,
                 details: dict[str, JsonValue] | None = None) -> None:
        if not callable(answer):
            raise TypeError(f"CallableSystem needs a callable, got {type(answer).__name__}")
        self.answer = answer
        self.id: str = name or str(getattr(answer, "__qualname__", type(answer).__name__))
        self.resource = f"python:{self.id}"
        self.details = dict(details or {})
        self._lock = None if concurrent else asyncio.Lock()

    async def start(self) -> None:
        if self._lock is not None:
            self._lock = asyncio.Lock()  # bound to the loop that uses it
            # the first caller fixes a resource's limit: the harness then queues samples for this one
            # slot before their attempt starts, so a queue never eats into an attempt's timeout
            limiter(self.resource, 1)

    async def close(self) -> None:
        return None

    def describe(self) -> dict[str, JsonValue]:
        fn = self.answer
        where = f"{getattr(fn, '__module__', '?')}:{getattr(fn, '__qualname__', type(fn).__name__)}"
        return {"kind": "python", "callable": where, "concurrent": self._lock is None, **self.details}

    async def stream(self, sample: Sample) -> AsyncIterator[Event]:
        from vocalbench.audio import load

        if sample.audio is None:
            raise SystemFailure("missing_query_audio", f"{sample.subset}/{sample.id} has no audio", retryable=False)
        audio, rate = await asyncio.to_thread(load, sample.audio.path)
        history = [{"role": t.role, "text": t.text} for t in sample.history]
        if self._lock is None:
            async for ev in self._call(audio, rate, history):
                yield ev
            return
        if self._lock.locked():
            yield Waiting(self.id)
        async with self._lock:
            async for ev in self._call(audio, rate, history):
                yield ev

    async def _call(self, audio: np.ndarray, rate: int, history: list[dict[str, str]]) -> AsyncIterator[Event]:
        yield Sent("python:call")
        if _cheap_to_call(self.answer):  # makes a generator or coroutine: the work happens as it is consumed
            result = self.answer(audio, rate, history)
        else:  # a plain function computes its whole reply now: in a worker thread
            result = await asyncio.to_thread(self.answer, audio, rate, history)
        if inspect.isawaitable(result):
            result = await result
        if hasattr(result, "__aiter__"):
            async for piece in result:
                yield event(piece)
        elif isinstance(result, (str, tuple)):
            yield event(result)
        else:
            pieces: Iterator[Any] = iter(result)
            while (piece := await asyncio.to_thread(next, pieces, _END)) is not _END:
                yield event(piece)
        yield Done()


def _cheap_to_call(fn: Answer) -> bool:
    target = fn if inspect.isfunction(fn) or inspect.ismethod(fn) else type(fn).__call__  # a callable object
    return (inspect.isgeneratorfunction(target) or inspect.isasyncgenfunction(target)
            or inspect.iscoroutinefunction(target))


def event(piece: Piece) -> Event:
    """One piece of a reply as an event: text, or audio as ``(samples, sample_rate)`` (the callable is
    user code: anything else it yields is refused here)."""
    if isinstance(piece, str):
        return TextDelta(piece)
    if isinstance(piece, tuple) and len(piece) == 2 and isinstance(piece[1], int):
        return AudioChunk(np.asarray(piece[0], dtype=np.float32).reshape(-1), piece[1])
    if isinstance(piece, (TextDelta, AudioChunk)):
        return piece
    raise SystemFailure("bad_reply_piece", f"a reply piece must be str or (samples, sample_rate), got "
                        f"{type(piece).__name__}", retryable=False)

"""The system interface: a spoken query in, an async stream of chunk events out.

Adapters only translate a protocol into events; they never read a clock. The harness
(``collect``) stamps every event with ``time.monotonic()`` on the client side as it arrives:

- ``Sent``: yielded by the adapter immediately before it hands the complete request to its
  client (HTTP: the request body is built and handed over; realtime: ``response.create`` after
  the audio buffer is committed). The harness timestamp of this event is the latency origin.
- ``TextDelta`` / ``AudioChunk``: first text, first audio chunk (FCL), last chunk.
- ``Done``: the system finished normally. ``Failure``: the system reported an error.
- ``Waiting``: queued for one of the system's own stages (not a stall); nothing else.

Exceptions raised by an adapter (network errors, timeouts) are classified by
``vocalbench.systems.failures.classify``; ``SystemFailure`` carries its own type and retryability.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np
from pydantic import JsonValue

from vocalbench.limits import TOO_LARGE, ReplyLimits
from vocalbench.records import ErrorInfo, Sample, Timings
from vocalbench.systems.failures import SystemFailure as SystemFailure  # re-exported for adapters and tests
from vocalbench.systems.failures import classify

HISTORY_MODE = "text-turns"  # multi-round history is sent as text turns (recorded in config)


@dataclass(frozen=True)
class Sent:
    """The complete request is being handed to the client now (the latency origin)."""

    origin: str


@dataclass(frozen=True)
class TextDelta:
    text: str


@dataclass(frozen=True)
class AudioChunk:
    samples: np.ndarray  # float32 mono
    sample_rate: int


@dataclass(frozen=True)
class Done:
    text: str | None = None  # full text, for protocols that send it only at the end


@dataclass(frozen=True)
class Failure:
    """An error reported by the system inside its stream."""

    type: str
    message: str = ""
    retryable: bool = False


@dataclass(frozen=True)
class Waiting:
    """The system waits for one of its own stages (a local model busy with another query of the
    run): the attempt is queued, not stalled. The harness's stall timer starts again; the attempt's
    timeout still bounds it."""

    stage: str


Event = Sent | TextDelta | AudioChunk | Done | Failure | Waiting


@runtime_checkable
class System(Protocol):
    """A speech interaction system under test."""

    id: str  # display id, no URLs or secrets
    resource: str  # name of the concurrency limit this system draws from (endpoint / local model)

    async def start(self) -> None:
        """Open clients / load models (called once, in the event loop that will use the system)."""
        ...

    def stream(self, sample: Sample) -> AsyncIterator[Event]:
        """Answer one spoken query as a stream of events."""
        ...

    async def close(self) -> None: ...

    def describe(self) -> dict[str, JsonValue]:
        """What to record in config.json: kind, model, component ids, options (no secrets, no URLs)."""
        ...


@dataclass
class Collected:
    """One attempt's outcome in memory (picklable: Ray actors return it to the driver)."""

    text: str = ""
    audio: np.ndarray | None = None
    sample_rate: int | None = None
    timings: Timings | None = None
    error: ErrorInfo | None = None
    retryable: bool = False
    retry_after: float | None = None
    chunks: int = 0

    @property
    def audio_duration(self) -> float | None:
        if self.audio is None or not self.sample_rate:
            return None
        return float(self.audio.size) / self.sample_rate


async def collect(system: System, sample: Sample, timeout: float = 120.0, stall_timeout: float = 60.0,
                  limits: ReplyLimits = ReplyLimits()) -> Collected:
    """Run one attempt of ``sample`` against ``system`` and time it on the client side.

    ``timeout`` bounds the whole attempt and ``stall_timeout`` the wait for each event, so a
    silent server can never hang a run; ``limits`` bound the text and audio held (a reply over
    them fails as ``reply_too_large``, read no further). Exceptions are classified, never
    swallowed: they come back in ``Collected.error`` with their type and message.
    """
    clock = time.monotonic
    out = Collected()
    texts: list[str] = []
    chars = samples = 0
    chunks: list[np.ndarray] = []
    arrivals: list[float] = []
    origin = "harness:stream-start"
    t0 = clock()
    first_text = first_audio = last_chunk = None
    done_text: str | None = None
    stream = system.stream(sample)
    try:
        async with asyncio.timeout(timeout):
            while True:
                try:
                    async with asyncio.timeout(stall_timeout):  # no task per event, unlike wait_for
                        ev = await anext(stream)
                except StopAsyncIteration:
                    break
                except TimeoutError:
                    raise SystemFailure("timeout", f"no event for {stall_timeout:g} s", retryable=True) from None
                now = clock()
                if isinstance(ev, Sent):
                    t0, origin = now, ev.origin
                elif isinstance(ev, TextDelta):
                    if ev.text:
                        chars += len(ev.text)
                        if problem := limits.text_problem(chars):
                            raise SystemFailure(TOO_LARGE, problem)
                        texts.append(ev.text)
                        if first_text is None:
                            first_text = now
                        last_chunk = now
                elif isinstance(ev, AudioChunk):
                    x = np.asarray(ev.samples, dtype=np.float32).reshape(-1)
                    if x.size == 0:
                        continue
                    if out.sample_rate is None:
                        out.sample_rate = int(ev.sample_rate)
                    elif ev.sample_rate != out.sample_rate:
                        from vocalbench.audio import resample

                        x = resample(x, ev.sample_rate, out.sample_rate)
                    samples += x.size
                    if problem := limits.audio_problem(samples, out.sample_rate):
                        chunks.clear()  # over the limit: none of it is kept
                        raise SystemFailure(TOO_LARGE, problem)
                    chunks.append(x)
                    arrivals.append(now)
                    out.chunks += 1
                    if first_audio is None:
                        first_audio = now
                    last_chunk = now
                elif isinstance(ev, Done):
                    if ev.text and (problem := limits.text_problem(len(ev.text))):
                        raise SystemFailure(TOO_LARGE, problem)
                    done_text = ev.text
                    break
                elif isinstance(ev, Failure):
                    raise SystemFailure(ev.type, ev.message, ev.retryable)
    except TimeoutError:
        out.error, out.retryable = ErrorInfo(type="timeout", message=f"attempt exceeded {timeout:g} s"), True
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # classified and recorded, never dropped
        kind, retryable, retry_after = classify(exc)
        msg = exc.message if isinstance(exc, SystemFailure) and exc.message else _message(exc)
        out.error = ErrorInfo(type=kind, message=msg)
        out.retryable, out.retry_after = retryable, retry_after
    finally:
        await _aclose(stream)

    out.text = "".join(texts) if texts else (done_text or "")
    audible = None
    if chunks and out.sample_rate:
        out.audio = np.concatenate(chunks)
        audible = heard_at([a - t0 for a in arrivals], [c.size for c in chunks], out.sample_rate, out.audio)
    out.timings = Timings(
        origin=f"monotonic:{origin}",
        request_sent=0.0,
        first_text=None if first_text is None else first_text - t0,
        first_audio=None if first_audio is None else first_audio - t0,
        last_chunk=None if last_chunk is None else last_chunk - t0,
        first_audible=audible,
    )
    if out.error is None and not out.text.strip() and out.audio is None:
        out.error = ErrorInfo(type="empty_reply", message="the system returned neither text nor audio")
    return out


def heard_at(arrivals: list[float], sizes: list[int], sample_rate: int, audio: np.ndarray) -> float | None:
    """When the first non-silent sample of ``audio`` is heard (None: the reply is silent).

    The client model: playback starts when the first chunk arrives and plays the chunks back to
    back in real time; a chunk that has not arrived when the previous one ends is waited for.
    ``arrivals[i]`` is when chunk ``i`` (``sizes[i]`` samples of ``audio``) arrived.
    """
    from vocalbench.audio import first_audible

    onset = first_audible(audio, sample_rate)
    if onset is None:
        return None
    start = end = arrivals[0]
    offset = 0
    for at, size in zip(arrivals, sizes):
        start = max(at, end)
        if onset < offset + size:
            return start + (onset - offset) / sample_rate
        end, offset = start + size / sample_rate, offset + size
    return None


def _message(exc: BaseException) -> str:
    msg = str(exc) or type(exc).__name__
    return msg if len(msg) <= 500 else msg[:497] + "..."


async def _aclose(stream: AsyncIterator[Event]) -> None:
    aclose = getattr(stream, "aclose", None)
    if aclose is not None:
        try:
            await aclose()
        except Exception as exc:  # the reply (or its own error) is already complete; keep a trace
            logging.getLogger(__name__).debug("closing a system stream failed: %r", exc)

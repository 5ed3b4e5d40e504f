"""Real-time replay of one scenario against a Realtime-protocol endpoint (GA or beta).

The timeline: t = 0 is the input's first sample. The input is cut into chunks of ``chunk_ms``
(20-100 ms) and chunk k (covering [k c, (k+1) c)) is sent at t = (k+1) c on an absolute schedule
read from the monotonic clock (``asyncio`` sleeps until the due time): audio is never sent before it has been "spoken", and one late send does not shift the rest.
The first chunk's send defines the origin (origin = its send time - c). Every server event is
stamped on arrival with the same clock (``t``, seconds on the input timeline) and written to
``events.jsonl`` (audio deltas as their sample counts, not their audio).

Playback is simulated on the input timeline: an audio delta is placed at max(arrival, end of the
queue) and gaps are silence. When the server reports ``input_audio_buffer.speech_started`` while
reply audio is still queued or playing (a barge-in), the audio after that moment is dropped, the
rest of that response is ignored, and ``conversation.item.truncate`` tells the server how much of
the item was played (``audio_end_ms``), as the protocol defines. ``output.wav`` is the played audio,
exactly as long as the input and aligned with it; ``input.wav`` is the input as sent.

Bounds: the replay lasts the input plus ``grace`` seconds; the reply audio and text a response may
carry are bounded by the run's :class:`~vocalbench.limits.ReplyLimits` (a response over them is
cut and recorded as ``reply_too_large``).

Faults: a replay that cannot measure raises :class:`ReplayFailed` with a named reason, after it has
written what it recorded (input.wav, output.wav, events.jsonl up to the fault): ``connection_failed``
(no websocket), ``session_refused`` / ``session_timeout`` (no ``session.updated`` within
``SESSION_TIMEOUT``), ``connection_closed`` (the socket closed before the replay's end),
``malformed_event`` (an event that is not a JSON object with a type, or whose audio is not base64
pcm16), ``stalled`` (the session did not answer a ping at the end within ``PING_TIMEOUT``: it stopped
reading), ``replay_timeout`` (the whole replay past its bound, :func:`bound`). Not faults, recorded in the result: events of unknown types (kept in
events.jsonl, otherwise ignored), reply audio beyond the input's end (``beyond_input_s``, not
heard: output.wav keeps the input's length) and responses still unfinished at the end
(``unfinished_responses``).
"""

from __future__ import annotations

import asyncio
import base64
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from pydantic import JsonValue

from vocalbench.components.vad import TurnSettings
from vocalbench.limits import ReplyLimits
from vocalbench.systems.failures import SystemFailure
from vocalbench.systems.realtime_events import BETA_HEADER, NAMES, RATE, Api, json_object, session_update

if TYPE_CHECKING:
    from websockets.asyncio.client import ClientConnection

CHUNK_MS = 40
SESSION_TIMEOUT = 30.0  # seconds to connect, and again for session.updated
PING_TIMEOUT = 2.0  # seconds for the session's answer to the closing ping
CLOSE_TIMEOUT = 2.0  # seconds for the closing handshake
AUDIO_DELTAS = {n.audio_delta for n in NAMES.values()}
TEXT_DELTAS = {x for n in NAMES.values() for x in (n.transcript_delta, n.text_delta)}


@dataclass
class Played:
    """One placed piece of reply audio: where it plays on the input timeline."""

    item_id: str
    response_id: str
    start: float
    samples: np.ndarray

    @property
    def end(self) -> float:
        return self.start + self.samples.size / RATE


@dataclass
class ReplayResult:
    """What one replay measured (its log in the run's store: :func:`vocalbench.duplex.run.replay_reply`)."""

    duration: float
    chunk_ms: int
    send_lateness_ms: list[float] = field(default_factory=list)  # per chunk: send time - plan
    responses: int = 0
    cancelled: int = 0
    truncations: int = 0
    first_audio: float | None = None  # arrival of the first audio delta (input timeline)
    unfinished_responses: int = 0  # created, without response.done by the replay's end
    beyond_input_s: float = 0.0  # reply audio queued past the input's end (not heard)
    error: dict[str, str] | None = None

    def jitter_ms(self) -> dict[str, float] | None:
        """How late the audio chunks were sent, ms: p50, p99 and max (None: none was sent)."""
        late = np.asarray(self.send_lateness_ms, dtype=float)
        if not late.size:
            return None
        return {"p50": round(float(np.percentile(late, 50)), 3), "p99": round(float(np.percentile(late, 99)), 3),
                "max": round(float(late.max()), 3)}


class Playback:
    """The simulated client speaker (see the module docstring)."""

    def __init__(self) -> None:
        self.pieces: list[Played] = []
        self.queue_end = 0.0
        self.dropped: set[str] = set()  # responses cut by a barge-in

    def add(self, t: float, item_id: str, response_id: str, x: np.ndarray) -> None:
        if response_id in self.dropped or x.size == 0:
            return
        start = max(t, self.queue_end)
        self.pieces.append(Played(item_id, response_id, start, x))
        self.queue_end = start + x.size / RATE

    def barge_in(self, t: float) -> tuple[str, int] | None:
        """Drop what is not played by ``t``; returns (item id, ms of it played) when audio was cut."""
        if self.queue_end <= t or not self.pieces:
            return None
        cut = self.pieces[-1]
        kept: list[Played] = []
        for p in self.pieces:
            if p.start >= t:
                self.dropped.add(p.response_id)
                continue
            if p.end > t:
                p = Played(p.item_id, p.response_id, p.start, p.samples[:int(round((t - p.start) * RATE))])
            kept.append(p)
        self.pieces = kept
        self.dropped.add(cut.response_id)
        self.queue_end = t
        played = sum(p.samples.size for p in kept if p.item_id == cut.item_id)
        return cut.item_id, int(round(played / RATE * 1000))

    def render(self, n: int) -> np.ndarray:
        """The played audio as ``n`` samples on the input timeline (silence where nothing plays)."""
        out = np.zeros(n, dtype=np.float32)
        for p in self.pieces:
            i = int(round(p.start * RATE))
            if i >= n:
                continue
            seg = p.samples[:n - i]
            out[i:i + seg.size] += seg
        return np.clip(out, -1.0, 1.0)


class ReplayFailed(SystemFailure):
    """A replay that measured nothing usable; ``type`` names why (see the module docstring)."""


def _parse(raw: str | bytes, n: int) -> dict[str, JsonValue]:
    """Server event ``n`` as a JSON object with a string type (:class:`ReplayFailed` otherwise)."""
    try:
        ev = json.loads(raw)
    except ValueError:
        raise ReplayFailed("malformed_event", f"event {n}: not JSON: {str(raw)[:80]!r}") from None
    if not isinstance(ev, dict) or not isinstance(ev.get("type"), str):
        raise ReplayFailed("malformed_event", f"event {n}: not an object with a string 'type': {str(raw)[:80]!r}")
    return ev


def _pcm(ev: dict[str, JsonValue], n: int) -> np.ndarray:
    """The audio of delta event ``n`` (:class:`ReplayFailed` when it is not base64 pcm16)."""
    import binascii

    from vocalbench.audio import pcm16_to_float

    delta = ev.get("delta") or ""
    try:
        if not isinstance(delta, str):
            raise ValueError(f"delta is {type(delta).__name__}")
        return pcm16_to_float(base64.b64decode(delta, validate=True))
    except (ValueError, binascii.Error) as exc:
        raise ReplayFailed("malformed_event", f"event {n} ({ev['type']}): audio is not base64 pcm16: {exc}") from None


def _response_id(ev: dict[str, JsonValue]) -> str:
    response = ev.get("response")
    return str(ev.get("response_id") or (response.get("id") if isinstance(response, dict) else "") or "")


async def _sleep_until(deadline: float) -> None:
    """Sleep on the monotonic clock until ``deadline`` (the loop's timer wakes within about 1 ms;
    no spinning, which would take CPU from the other streams)."""
    while (left := deadline - time.monotonic()) > 0:
        await asyncio.sleep(left)


async def replay(url: str, x: np.ndarray, out: Path, *, api: Api = "ga", settings: TurnSettings | None = None,
                 chunk_ms: int = CHUNK_MS, voice: str = "alloy", max_tokens: int = 1024, headers: dict[str, str]
                 | None = None, limits: ReplyLimits = ReplyLimits(), grace: float = 1.0, until_audio: bool = False) -> ReplayResult:
    """Replay the 24 kHz input ``x`` to the websocket ``url``; writes input.wav, output.wav and
    events.jsonl under ``out`` and returns what was measured (:class:`ReplayFailed` with a named
    reason, after writing what was recorded, when the session broke; see the module docstring).
    ``until_audio``: stop listening as soon as the first reply audio arrives (a warm-up that only
    measures when it comes)."""
    import websockets

    from vocalbench.audio import float_to_pcm16, to_wav_bytes
    from vocalbench.files import write_atomic

    if not 20 <= chunk_ms <= 100:
        raise ValueError(f"chunk_ms {chunk_ms}: chunks are 20-100 ms")
    out.mkdir(parents=True, exist_ok=True)
    step = RATE * chunk_ms // 1000
    c = step / RATE
    n_chunks = -(-x.size // step)
    duration = x.size / RATE
    result = ReplayResult(duration=round(duration, 3), chunk_ms=chunk_ms)
    playback = Playback()
    events: list[dict[str, JsonValue]] = []
    origin: list[float] = []  # monotonic time of t = 0, set at the first send
    per_response: dict[str, list[int]] = {}  # response id -> [audio samples, text chars]
    open_responses: set[str] = set()  # created, not done
    hdrs = {**(dict([BETA_HEADER]) if api == "beta" else {}), **(headers or {})}

    def now() -> float:
        return time.monotonic() - origin[0] if origin else 0.0

    async def session() -> None:
        try:
            ws = await websockets.connect(url, additional_headers=hdrs, max_size=None, open_timeout=SESSION_TIMEOUT,
                                          ping_interval=None, compression=None, close_timeout=CLOSE_TIMEOUT)
        except (OSError, TimeoutError, websockets.InvalidHandshake) as exc:
            raise ReplayFailed("connection_failed", f"{type(exc).__name__}: {exc}") from None
        async with ws:
            await ws.send(json.dumps(session_update(api, voice, max_tokens,
                                                    settings.protocol() if settings is not None else None)))
            try:
                async with asyncio.timeout(SESSION_TIMEOUT):
                    while True:  # the session is set before the clock starts
                        ev = _parse(await ws.recv(), 0)
                        if ev["type"] == "session.updated":
                            break
                        if ev["type"] == "error":
                            raise ReplayFailed("session_refused", f"session.update refused: {ev.get('error')}")
            except TimeoutError:
                raise ReplayFailed("session_timeout", f"no session.updated within {SESSION_TIMEOUT:.0f} s") from None
            await _converse(ws)

    async def _converse(ws: ClientConnection) -> None:
        async def send_audio() -> None:
            start = time.monotonic()
            for k in range(n_chunks):
                due = start + (k + 1) * c
                await _sleep_until(due)
                sent = time.monotonic()
                if not origin:
                    origin.append(sent - c)
                result.send_lateness_ms.append((sent - due) * 1000)
                pcm = float_to_pcm16(x[k * step:(k + 1) * step])
                await ws.send(json.dumps({"type": "input_audio_buffer.append",
                                          "audio": base64.b64encode(pcm).decode()}))

        async def receive() -> None:
            async for raw in ws:
                t = now()
                ev = _parse(raw, len(events) + 1)
                kind = ev["type"]
                rid = _response_id(ev)
                rec: dict[str, JsonValue] = {"t": round(t, 4), "type": kind}
                if kind in AUDIO_DELTAS:
                    a = _pcm(ev, len(events) + 1)
                    rec.update(response_id=rid, item_id=ev.get("item_id"), samples=int(a.size))
                    used = per_response.setdefault(rid, [0, 0])
                    used[0] += a.size
                    if limits.audio_problem(used[0], RATE):
                        rec["dropped"] = "reply_too_large"
                        playback.dropped.add(rid)
                    elif rid in playback.dropped:
                        rec["dropped"] = "barge_in"
                    else:
                        if result.first_audio is None:
                            result.first_audio = round(t, 4)
                        playback.add(t, str(ev.get("item_id") or rid), rid, a)
                elif kind in TEXT_DELTAS:
                    delta = text if isinstance(text := ev.get("delta"), str) else ""
                    used = per_response.setdefault(rid, [0, 0])
                    used[1] += len(delta)
                    rec.update(response_id=rid, delta=delta)
                    if limits.text_problem(used[1]):
                        rec["dropped"] = "reply_too_large"
                        playback.dropped.add(rid)
                elif kind == "input_audio_buffer.speech_started":
                    rec.update(audio_start_ms=ev.get("audio_start_ms"))
                    cut = playback.barge_in(t)
                    if cut is not None:
                        item, played_ms = cut
                        result.truncations += 1
                        rec.update(truncated_item=item, played_ms=played_ms)
                        await ws.send(json.dumps({"type": "conversation.item.truncate", "item_id": item,
                                                  "content_index": 0, "audio_end_ms": played_ms}))
                elif kind == "input_audio_buffer.speech_stopped":
                    rec.update(audio_end_ms=ev.get("audio_end_ms"))
                elif kind == "response.created":
                    result.responses += 1
                    open_responses.add(rid)
                    rec.update(response_id=rid)
                elif kind == "response.done":
                    resp = json_object(ev.get("response"))
                    open_responses.discard(rid)
                    rec.update(response_id=rid, status=resp.get("status"))
                    if resp.get("status") == "cancelled":
                        result.cancelled += 1
                elif kind == "error":
                    rec.update(error=ev.get("error"))
                    err = json_object(ev.get("error"))
                    result.error = {"type": str(err.get("type") or "realtime_error"),
                                    "message": str(err.get("message") or "")}
                elif kind == "conversation.item.truncated":
                    rec.update(item_id=ev.get("item_id"), audio_end_ms=ev.get("audio_end_ms"))
                events.append(rec)

        receiver = asyncio.create_task(receive())
        sender = asyncio.create_task(send_audio())
        try:
            await asyncio.wait({receiver, sender}, return_when=asyncio.FIRST_COMPLETED)
            await _outcome(receiver, sender)
            if not sender.done():  # the server ended the session mid-input
                raise ReplayFailed("connection_closed", f"the server closed the session at {now():.2f} s "
                                   f"of {duration:.2f} s")
            while (left := duration + grace - now()) > 0 and not receiver.done():
                if until_audio and result.first_audio is not None:
                    break
                await asyncio.wait({receiver}, timeout=min(left, 0.1) if until_audio else left)
            await _outcome(receiver)
            if receiver.done():
                raise ReplayFailed("connection_closed", f"the server closed the session at {now():.2f} s "
                                   f"of {duration:.2f} s")
            try:
                await asyncio.wait_for(await ws.ping(), PING_TIMEOUT)
            except TimeoutError:
                raise ReplayFailed("stalled", f"no answer to a ping within {PING_TIMEOUT:.0f} s at "
                                   f"{now():.2f} s: the session stopped reading") from None
        except websockets.ConnectionClosed as exc:
            raise ReplayFailed("connection_closed", f"at {now():.2f} s of {duration:.2f} s: {exc}") from None
        finally:
            for task in (sender, receiver):
                task.cancel()
            await asyncio.gather(sender, receiver, return_exceptions=True)

    failure: ReplayFailed | None = None
    try:
        async with asyncio.timeout(bound(duration, grace)):
            await session()
    except ReplayFailed as exc:
        failure = exc
    except TimeoutError:
        failure = ReplayFailed("replay_timeout", f"the replay of {duration:.2f} s did not end within its bound")
    result.unfinished_responses = len(open_responses)
    result.beyond_input_s = round(max(0.0, playback.queue_end - duration), 3)
    write_atomic(out / "input.wav", to_wav_bytes(x, RATE))
    write_atomic(out / "output.wav", to_wav_bytes(playback.render(x.size), RATE))
    write_atomic(out / "events.jsonl", "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in events))
    if failure is not None:
        raise failure
    return result


def bound(duration: float, grace: float) -> float:
    """The most seconds a replay of ``duration`` seconds lasts: connecting and setting the session
    up, the input, ``grace``, the closing ping and close, and ``SESSION_TIMEOUT`` more for a send
    schedule that a busy machine delays."""
    return 3 * SESSION_TIMEOUT + duration + grace + PING_TIMEOUT + CLOSE_TIMEOUT


async def _outcome(*tasks: asyncio.Task[None]) -> None:
    """Raise the exception of the first of ``tasks`` that ended with one (a replay's fault)."""
    for task in tasks:
        if task.done() and not task.cancelled() and task.exception() is not None:
            raise task.exception()  # type: ignore[misc]

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
"""

from __future__ import annotations

import asyncio
import base64
import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from vocalbench.components.vad import TurnSettings
from vocalbench.limits import ReplyLimits
from vocalbench.systems.realtime_events import BETA_HEADER, NAMES, RATE, Api, session_update

CHUNK_MS = 40
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
    """What one replay measured (saved as ``result.json`` beside the audio and events)."""

    duration: float
    chunk_ms: int
    send_lateness_ms: list[float] = field(default_factory=list)  # per chunk: send time - plan
    responses: int = 0
    cancelled: int = 0
    truncations: int = 0
    first_audio: float | None = None  # arrival of the first audio delta (input timeline)
    error: dict[str, str] | None = None

    def summary(self) -> dict[str, Any]:
        late = np.asarray(self.send_lateness_ms, dtype=float)
        body = {k: v for k, v in asdict(self).items() if k != "send_lateness_ms"}
        if late.size:
            body["jitter_ms"] = {"p50": round(float(np.percentile(late, 50)), 3),
                                 "p99": round(float(np.percentile(late, 99)), 3), "max": round(float(late.max()), 3)}
        return body


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


async def _sleep_until(deadline: float) -> None:
    """Sleep on the monotonic clock until ``deadline`` (the loop's timer wakes within about 1 ms;
    no spinning, which would take CPU from the other streams)."""
    while (left := deadline - time.monotonic()) > 0:
        await asyncio.sleep(left)


async def replay(url: str, x: np.ndarray, out: Path, *, api: Api = "ga", settings: TurnSettings | None = None,
                 chunk_ms: int = CHUNK_MS, voice: str = "alloy", max_tokens: int = 1024, headers: dict[str, str]
                 | None = None, limits: ReplyLimits = ReplyLimits(), grace: float = 1.0, until_audio: bool = False) -> ReplayResult:
    """Replay the 24 kHz input ``x`` to the websocket ``url``; writes input.wav, output.wav and
    events.jsonl under ``out`` and returns what was measured. ``until_audio``: stop listening as soon
    as the first reply audio arrives (a warm-up that only measures when it comes)."""
    import websockets

    from vocalbench.audio import float_to_pcm16, pcm16_to_float, to_wav_bytes
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
    events: list[dict[str, Any]] = []
    origin: list[float] = []  # monotonic time of t = 0, set at the first send
    per_response: dict[str, list[int]] = {}  # response id -> [audio samples, text chars]
    hdrs = {**(dict([BETA_HEADER]) if api == "beta" else {}), **(headers or {})}

    def now() -> float:
        return time.monotonic() - origin[0] if origin else 0.0

    async with websockets.connect(url, additional_headers=hdrs, max_size=None, open_timeout=30,
                                  ping_interval=None, compression=None) as ws:
        await ws.send(json.dumps(session_update(api, voice, max_tokens, settings.protocol() if settings is not None else None)))
        while True:  # the session is set before the clock starts
            ev = json.loads(await asyncio.wait_for(ws.recv(), 30))
            if ev.get("type") == "session.updated":
                break
            if ev.get("type") == "error":
                raise RuntimeError(f"session.update refused: {ev.get('error')}")

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
                ev = json.loads(raw)
                kind = ev.get("type", "")
                rid = str(ev.get("response_id") or (ev.get("response") or {}).get("id") or "")
                rec: dict[str, Any] = {"t": round(t, 4), "type": kind}
                if kind in AUDIO_DELTAS:
                    a = pcm16_to_float(base64.b64decode(ev.get("delta") or ""))
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
                    used = per_response.setdefault(rid, [0, 0])
                    used[1] += len(ev.get("delta") or "")
                    rec.update(response_id=rid, delta=ev.get("delta") or "")
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
                    rec.update(response_id=rid)
                elif kind == "response.done":
                    resp = ev.get("response") or {}
                    rec.update(response_id=rid, status=resp.get("status"))
                    if resp.get("status") == "cancelled":
                        result.cancelled += 1
                elif kind == "error":
                    rec.update(error=ev.get("error"))
                    err = ev.get("error") or {}
                    result.error = {"type": str(err.get("type") or "realtime_error"),
                                    "message": str(err.get("message") or "")}
                elif kind == "conversation.item.truncated":
                    rec.update(item_id=ev.get("item_id"), audio_end_ms=ev.get("audio_end_ms"))
                events.append(rec)

        receiver = asyncio.create_task(receive())
        try:
            await send_audio()
            while (left := duration + grace - now()) > 0 and not receiver.done():
                if until_audio and result.first_audio is not None:
                    break
                await asyncio.wait({receiver}, timeout=min(left, 0.1) if until_audio else left)
        finally:
            receiver.cancel()
            await asyncio.gather(receiver, return_exceptions=True)
            if receiver.done() and not receiver.cancelled() and receiver.exception() is not None:
                exc = receiver.exception()
                result.error = {"type": "broken_stream", "message": f"{type(exc).__name__}: {exc}"}
    write_atomic(out / "input.wav", to_wav_bytes(x, RATE))
    write_atomic(out / "output.wav", to_wav_bytes(playback.render(x.size), RATE))
    write_atomic(out / "events.jsonl", "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in events))
    return result

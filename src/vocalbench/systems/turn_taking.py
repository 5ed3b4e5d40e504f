"""Server-side turn detection for ``vocalbench serve``: any system answers a realtime conversation.

When a client's ``session.update`` turns ``turn_detection`` on (``{"type": "server_vad", ...}``)
and the server was started with ``--turn-detection silero|energy``, the websocket is handed to a
:class:`TurnTakingSession`. Appended audio is fed to a :class:`~vocalbench.components.vad.TurnDetector`
as it arrives; the server then speaks the protocol's turn events itself:

- ``input_audio_buffer.speech_started`` (``audio_start_ms``): when a response is in progress and
  ``interrupt_response`` is on, the response stops at once (``response.done`` with status
  ``cancelled``, reason ``turn_detected``): the user barged in.
- ``input_audio_buffer.speech_stopped`` (``audio_end_ms``), ``input_audio_buffer.committed``, and,
  with ``create_response`` on, a response to the turn's audio (from the speech start minus the prefix
  padding to the stop) with the conversation so far as text history.
- ``conversation.item.truncate`` from the client (what it actually played of an interrupted reply)
  is acknowledged with ``conversation.item.truncated``. Each turn is answered on its own (with the
  text history the client sent): a cascade's user turns exist only as audio, so no text of them exists.

Times are on the input stream's own timeline (ms of audio received). The system's reply is streamed
as fast as the system produces it; the client plays it back in real time.

A session may carry one injected fault (``serve --faults``, systems/serve.py): ``timeout`` stalls it
(nothing read or sent for ``hang`` seconds), ``drop`` cuts the socket at the first response's second
delta, and in every response ``malformed`` sends a frame that is not a JSON event, ``unknown`` an
event of a type no protocol defines, ``overlong`` reply audio (a tone) as long as all the input
received plus a second after the system's own, ``endless`` 100 ms of tone every 100 ms with no end.
"""

from __future__ import annotations

import asyncio
import base64
import json
import uuid
from collections.abc import AsyncIterator
from typing import Protocol

import numpy as np
from aiohttp import WSMsgType, web
from pydantic import JsonValue

from vocalbench.audio import pcm16_to_float, to_wav_bytes
from vocalbench.components.vad import Kind, TurnDetector, TurnSettings, resampler_24k_to_16k
from vocalbench.records import Sample, Turn
from vocalbench.systems.base import AudioChunk, Done, Event, Failure, TextDelta
from vocalbench.systems.realtime_events import (
    RATE,
    Api,
    ReplyIds,
    audio_out,
    item_text,
    json_object,
    merge_session,
    pcm16_b64,
    reply_ids,
    ws_send,
)
from vocalbench.systems.scripted import REQUEST_ARRIVAL


class ReplyServer(Protocol):
    """What a turn-taking session needs of the server it runs in (systems/serve.py's SystemServer):
    a sample made of a finished user turn, and the system's events for it."""

    def _sample(self, request: web.Request, wav: bytes | None, history: list[Turn]) -> Sample: ...

    def _events(self, sample: Sample) -> AsyncIterator[Event]: ...


def requested_turn_detection(api: Api, session: dict[str, JsonValue]) -> dict[str, JsonValue] | None:
    """The session's ``turn_detection`` object when it asks for one (GA: under ``audio.input``)."""
    if api == "beta":
        td = session.get("turn_detection")
    else:
        td = json_object(json_object(session.get("audio")).get("input")).get("turn_detection")
    return td if isinstance(td, dict) and td.get("type") in ("server_vad", "semantic_vad") else None


class TurnTakingSession:
    """One websocket conversation with server-side turn detection (see the module docstring)."""

    def __init__(self, server: ReplyServer, request: web.Request, ws: web.WebSocketResponse, api: Api,
                 session: dict[str, JsonValue], history: list[Turn], vad: Kind, fault: str | None = None,
                 hang: float = 3600.0) -> None:
        from vocalbench.systems.realtime_events import NAMES

        self.server, self.request, self.ws, self.api = server, request, ws, api
        self.names = NAMES[api]
        self.session = session
        self.history = history
        self.vad: Kind = vad
        self.settings = self._settings()
        self.detector = TurnDetector(self.settings)
        self.to16k = resampler_24k_to_16k()
        self.audio: list[np.ndarray] = []  # every appended 24 kHz sample, in order
        self.received = 0  # samples appended
        self.turn_start_ms = 0
        self.item_id = _id("item")
        self.last_item: str | None = None
        self.response: asyncio.Task[None] | None = None
        self.cancelled: set[str] = set()
        self.fault, self.hang = fault, hang

    def _settings(self) -> TurnSettings:
        td = requested_turn_detection(self.api, self.session) or {}
        return TurnSettings.from_protocol(td, self.vad)

    async def send(self, kind: str, **fields: JsonValue) -> None:
        if not self.ws.closed:
            await ws_send(self.ws, kind, **fields)

    async def run(self) -> None:
        """Read client events until the socket closes; responses run beside the reading."""
        if self.fault == "timeout":  # a stalled session: it neither reads nor answers
            await asyncio.sleep(self.hang)
            return
        try:
            async for msg in self.ws:
                if msg.type != WSMsgType.TEXT:
                    continue
                try:
                    ev = json.loads(msg.data)
                    kind = ev["type"]
                except (ValueError, KeyError, TypeError):
                    await self._error("invalid_request_error", "expected a JSON event with a type")
                    continue
                await self.handle(kind, ev)
        finally:
            if self.response is not None and not self.response.done():
                self.response.cancel()
                await asyncio.gather(self.response, return_exceptions=True)

    async def handle(self, kind: str, ev: dict[str, JsonValue]) -> None:
        if kind == "input_audio_buffer.append":
            x = pcm16_to_float(base64.b64decode(str(ev.get("audio") or "")))
            self.audio.append(x)
            self.received += x.size
            for block in self.to16k(x):
                for turn in self.detector.feed(block):
                    await (self.started(turn.ms) if turn.kind == "started" else self.stopped(turn.ms))
        elif kind == "session.update":
            self.session = merge_session(self.session, json_object(ev.get("session")))
            self.settings = self._settings()
            self.detector.settings = self.settings
            await self.send("session.updated", session=self.session)
        elif kind == "conversation.item.truncate":
            await self.send("conversation.item.truncated", item_id=ev.get("item_id"),
                            content_index=ev.get("content_index", 0), audio_end_ms=ev.get("audio_end_ms", 0))
        elif kind == "response.cancel":
            await self.cancel("client_cancelled")
        elif kind == "conversation.item.create":
            item_id = _id("item")
            item: dict[str, JsonValue] = {**json_object(ev.get("item")), "id": item_id}
            text, role = item_text(item), item.get("role")
            if role in ("user", "assistant") and text:
                self.history.append(Turn.model_validate({"role": role, "text": text}))
            await self.send(self.names.item_added, previous_item_id=self.last_item, item=item)
            self.last_item = item_id
        elif kind in ("input_audio_buffer.commit", "input_audio_buffer.clear", "response.create"):
            await self._error("invalid_request_error", f"{kind}: the server detects turns in this session "
                              "(turn_detection is on)")
        else:
            await self._error("invalid_request_error", f"unknown event type '{kind}'")

    async def started(self, ms: int) -> None:
        self.turn_start_ms = ms
        self.item_id = _id("item")
        await self.send("input_audio_buffer.speech_started", audio_start_ms=ms, item_id=self.item_id)
        if self.settings.interrupt_response:
            await self.cancel("turn_detected")

    async def stopped(self, ms: int) -> None:
        await self.send("input_audio_buffer.speech_stopped", audio_end_ms=ms, item_id=self.item_id)
        await self.send("input_audio_buffer.committed", previous_item_id=self.last_item, item_id=self.item_id)
        self.last_item = self.item_id
        if not self.settings.create_response:
            return
        whole = np.concatenate(self.audio) if self.audio else np.zeros(0, dtype=np.float32)
        turn = whole[int(self.turn_start_ms * RATE / 1000):int(ms * RATE / 1000)]
        await self.cancel("turn_detected")  # a reply still running belongs to the earlier turn
        self.response = asyncio.create_task(self.respond(turn))

    async def cancel(self, reason: str) -> None:
        task = self.response
        if task is None or task.done():
            return
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)

    async def respond(self, turn: np.ndarray) -> None:
        """One response to the turn's audio: the system's text and audio as protocol deltas."""
        REQUEST_ARRIVAL.set(asyncio.get_running_loop().time())
        rid, item = _id("resp"), _id("item")
        ids = reply_ids(rid, item)
        audio = audio_out(self.api, self.session)
        await self.send("response.created", response={"id": rid, "object": "realtime.response",
                                                      "status": "in_progress"})
        await self.send(self.names.item_added, previous_item_id=self.last_item,
                        item={"id": item, "type": "message", "role": "assistant", "status": "in_progress"})
        self.last_item = item
        if self.fault == "malformed" and not self.ws.closed:
            await self.ws.send_str('{"type": "response.output_audio.delta", "delta": ')  # cut short: not JSON
        elif self.fault == "unknown":
            await self.send("vocalbench.fault.unknown_event", response="not an object", detail=[1, 2, 3])
        texts: list[str] = []
        status: dict[str, JsonValue] = {"status": "completed"}
        sample = self.server._sample(self.request, to_wav_bytes(turn, RATE), list(self.history))
        events = self.server._events(sample)
        sent = 0
        try:
            async for ev in events:
                sent += 1
                if self.fault == "drop" and sent > 2:  # the socket closes mid-reply: no close frame
                    self.request.transport.close()  # type: ignore[union-attr]
                    return
                if isinstance(ev, TextDelta):
                    texts.append(ev.text)
                    await self.send(self.names.transcript_delta if audio else self.names.text_delta,
                                    delta=ev.text, **ids)
                elif isinstance(ev, AudioChunk) and audio:

                    await self.send(self.names.audio_delta, delta=pcm16_b64(ev), **ids)
                elif isinstance(ev, Done):
                    break
                elif isinstance(ev, Failure):
                    await self._error(ev.type, ev.message)
                    status = {"status": "failed", "status_details": {
                        "type": "failed", "error": {"type": ev.type, "message": ev.message}}}
                    break
            if audio and self.fault in ("overlong", "endless"):
                await self._extra_audio(ids)
        except asyncio.CancelledError:
            status = {"status": "cancelled", "status_details": {"type": "cancelled", "reason": "turn_detected"}}
            await asyncio.shield(self._finish(rid, ids, audio, texts, status))
            raise
        finally:
            aclose = getattr(events, "aclose", None)
            if aclose is not None:
                await aclose()
        await self._finish(rid, ids, audio, texts, status)

    async def _extra_audio(self, ids: ReplyIds) -> None:
        """Injected fault: reply audio beyond the input (``overlong``: as long as all the input
        received, plus a second) or without end (``endless``: 100 ms every 100 ms)."""
        t = np.arange(RATE // 10) / RATE
        tone = AudioChunk((0.2 * np.sin(2 * np.pi * 440 * t)).astype(np.float32), RATE)
        pieces = self.received // tone.samples.size + 10
        while not self.ws.closed and (self.fault == "endless" or pieces > 0):
            await self.send(self.names.audio_delta, delta=pcm16_b64(tone), **ids)
            pieces -= 1
            if self.fault == "endless":
                await asyncio.sleep(0.1)

    async def _finish(self, rid: str, ids: ReplyIds, audio: bool, texts: list[str],
                      status: dict[str, JsonValue]) -> None:
        text = "".join(texts)
        if audio:
            await self.send(self.names.audio_done, **ids)
            await self.send(self.names.transcript_done, transcript=text, **ids)
        else:
            await self.send(self.names.text_done, text=text, **ids)
        await self.send("response.done", response={"id": rid, "object": "realtime.response", **status})

    async def _error(self, kind: str, message: str) -> None:
        await self.send("error", error={"type": kind, "code": kind, "message": message})


def _id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:12]}"

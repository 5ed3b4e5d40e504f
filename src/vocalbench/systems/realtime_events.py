"""The two shapes of the OpenAI Realtime protocol: GA (the default) and beta.

GA (``openai.types.realtime``): session ``{"type": "realtime", "output_modalities": [...],
"audio": {"input": {"format": ...}, "output": {"format": ..., "voice": ...}}}``, assistant history
as ``output_text``, server deltas ``response.output_audio.delta`` /
``response.output_audio_transcript.delta`` / ``response.output_text.delta``, items announced with
``conversation.item.added``. Beta (the ``OpenAI-Beta: realtime=v1`` header): session
``{"modalities": [...], "input_audio_format": "pcm16", ...}``, history ``text``, deltas
``response.audio.delta`` / ``response.audio_transcript.delta`` / ``response.text.delta``,
``conversation.item.created``. The realtime adapter builds its client events here and
``vocalbench serve`` names its server events here, so both sides speak the same version.
"""

from __future__ import annotations

import base64
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, TypedDict

import numpy as np
from pydantic import JsonValue

from vocalbench.audio import float_to_pcm16, resample
from vocalbench.records import Turn
from vocalbench.systems.base import AudioChunk

if TYPE_CHECKING:
    from aiohttp import web

Api = Literal["ga", "beta"]
RATE = 24000
BETA_HEADER = ("OpenAI-Beta", "realtime=v1")
MAX_OUTPUT_TOKENS = 4096  # the GA session accepts 1..4096 (or "inf")
PCM: dict[str, JsonValue] = {"type": "audio/pcm", "rate": RATE}


@dataclass(frozen=True)
class Names:
    """Server event names of one protocol version."""

    audio_delta: str
    audio_done: str
    transcript_delta: str
    transcript_done: str
    text_delta: str
    text_done: str
    item_added: str


NAMES: dict[Api, Names] = {
    "ga": Names("response.output_audio.delta", "response.output_audio.done",
                "response.output_audio_transcript.delta", "response.output_audio_transcript.done",
                "response.output_text.delta", "response.output_text.done", "conversation.item.added"),
    "beta": Names("response.audio.delta", "response.audio.done", "response.audio_transcript.delta",
                  "response.audio_transcript.done", "response.text.delta", "response.text.done",
                  "conversation.item.created"),
}


class ReplyIds(TypedDict):
    """What every delta of one response names: its response, its item and their indexes."""

    response_id: str
    item_id: str
    output_index: int
    content_index: int


def reply_ids(response_id: str, item_id: str) -> ReplyIds:
    """The ids of a response's deltas (one output, one content part)."""
    return {"response_id": response_id, "item_id": item_id, "output_index": 0, "content_index": 0}


def event_id() -> str:
    return f"event_{uuid.uuid4().hex[:16]}"


def session_update(api: Api, voice: str, max_tokens: int,
                   turn_detection: dict[str, JsonValue] | None = None) -> dict[str, JsonValue]:
    """The client's ``session.update``: text + audio out, pcm16 at 24 kHz, and the server's turn
    detection asked for (None: off, the client commits each turn itself)."""
    if api == "beta":
        session: dict[str, JsonValue] = {
            "modalities": ["text", "audio"], "voice": voice, "input_audio_format": "pcm16",
            "output_audio_format": "pcm16", "turn_detection": turn_detection, "max_response_output_tokens": max_tokens}
    else:
        session = {"type": "realtime", "output_modalities": ["audio"],
                   "audio": {"input": {"format": dict(PCM), "turn_detection": turn_detection},
                             "output": {"format": dict(PCM), "voice": voice}},
                   "max_output_tokens": min(max_tokens, MAX_OUTPUT_TOKENS)}
    return {"type": "session.update", "session": session}


def history_item(api: Api, turn: Turn) -> dict[str, JsonValue]:
    """A text turn of the history as ``conversation.item.create``."""
    kind = "input_text" if turn.role == "user" else ("text" if api == "beta" else "output_text")
    return {"type": "conversation.item.create",
            "item": {"type": "message", "role": turn.role, "content": [{"type": kind, "text": turn.text}]}}


def server_session(api: Api, session_id: str) -> dict[str, JsonValue]:
    """The session a server announces in ``session.created`` before any update."""
    if api == "beta":
        return {"id": session_id, "object": "realtime.session", "modalities": ["text", "audio"], "voice": None,
                "input_audio_format": "pcm16", "output_audio_format": "pcm16", "turn_detection": None}
    return {"type": "realtime", "output_modalities": ["audio"],
            "audio": {"input": {"format": dict(PCM), "turn_detection": None}, "output": {"format": dict(PCM)}}}


def merge_session(session: dict[str, JsonValue], update: dict[str, JsonValue]) -> dict[str, JsonValue]:
    """``session`` with ``update`` applied key by key (nested objects merged, ``id``/``type`` kept)."""
    out = dict(session)
    for k, v in update.items():
        if k in ("id", "type", "object"):
            continue
        old = out.get(k)
        out[k] = merge_session(old, v) if isinstance(v, dict) and isinstance(old, dict) else v
    return out


def audio_out(api: Api, session: dict[str, JsonValue]) -> bool:
    """Whether the session asks for audio (GA: ``output_modalities``; beta: ``modalities``)."""
    modalities = session.get("modalities" if api == "beta" else "output_modalities")
    return isinstance(modalities, list) and "audio" in modalities


def json_object(value: JsonValue) -> dict[str, JsonValue]:
    """A JSON event's field that should be an object: itself, or ``{}`` when absent or not an object."""
    return value if isinstance(value, dict) else {}


def item_text(item: dict[str, JsonValue]) -> str:
    """The text of a conversation item: its content parts' ``text`` (or ``transcript``) joined."""
    parts = item.get("content")
    if not isinstance(parts, list):
        return ""
    return "".join(str(c.get("text") or c.get("transcript") or "") for c in parts if isinstance(c, dict))


def to_24k(ev: AudioChunk) -> np.ndarray:
    """An audio chunk's samples at the protocol's 24 kHz."""
    if int(ev.sample_rate) == RATE:
        return np.asarray(ev.samples, dtype=np.float32)
    return resample(np.asarray(ev.samples, dtype=np.float32), int(ev.sample_rate), RATE)


def pcm16_b64(ev: AudioChunk) -> str:
    """An audio chunk as an ``audio`` delta's base64 PCM16 at 24 kHz."""
    return base64.b64encode(float_to_pcm16(to_24k(ev))).decode()


async def ws_send(ws: web.WebSocketResponse, kind: str, **fields: JsonValue) -> None:
    """One server event on an aiohttp websocket, with its ``event_id`` (``None`` fields are left out)."""
    await ws.send_json({"type": kind, "event_id": event_id(), **{k: v for k, v in fields.items() if v is not None}})

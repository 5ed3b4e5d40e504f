"""``scripted:FILE``: replay given replies with given timing and faults.

For latency calibration (known first-chunk delays), fault drills (errors on the first N attempts)
and demos. FILE is JSONL, one reply script per line (documented in docs/systems.md)::

    {"id": "*", "text": "You asked: {question}", "audio": {"tone": 220, "seconds": 1.5},
     "first_chunk_delay": 0.3, "chunk_seconds": 0.25, "chunk_interval": 0.05}
    {"id": "single_round/single_round-001", "audio": {"wav": "reply.wav"},
     "fault": {"type": "http_500", "fail_first": 2}}

``id`` matches ``subset/sample_id``, then ``sample_id``, then ``*`` (the default). ``texts`` (a list)
instead of ``text`` draws each sample's reply from the list by the run's seed (``SystemOptions.seed``):
a system with sampling noise, for repeat drills (``run --repeats``). ``text`` may use
``{question}`` (the sample's question text, when the caller has it), ``{reference}`` (its reference
answer, when it has one: an oracle), ``{id}``, ``{subset}`` and
``{turns}`` (the number of history turns received). Audio is real
audio: a wav file (relative to FILE), a sine tone or silence of a given duration, optionally after
``lead_silence`` seconds of silence (a system that streams silence first), cut into chunks of
``chunk_seconds`` and streamed on a fixed schedule measured from the request.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import JsonValue

from vocalbench.records import Sample
from vocalbench.systems.base import AudioChunk, Done, Event, Failure, Sent, TextDelta
from vocalbench.systems.options import SystemOptions

# set by ``vocalbench serve`` to the loop time its request arrived: a served script's schedule
# starts there, so the server's own parsing of the request does not shift the configured delays
REQUEST_ARRIVAL: ContextVar[float | None] = ContextVar("vocalbench_request_arrival", default=None)


@dataclass(frozen=True)
class Fault:
    type: str  # an error type (http_500, rate_limit, ...) or "stall" / "drop"
    message: str = "scripted fault"
    fail_first: int = 1  # fail this many attempts per sample; -1 = always
    retryable: bool = True
    stall_seconds: float = 3600.0  # for "stall": how long to go silent


@dataclass(frozen=True)
class Script:
    text: str = "Scripted reply to {id}."
    texts: tuple[str, ...] = ()  # when given: one drawn per sample and seed instead of ``text``
    audio: dict[str, Any] = field(default_factory=lambda: {"tone": 220.0, "seconds": 1.0})
    sample_rate: int = 24000
    first_text_delay: float | None = None  # default: same as first_chunk_delay
    first_chunk_delay: float = 0.0
    chunk_seconds: float = 0.25
    chunk_interval: float = 0.0
    fault: Fault | None = None

    @classmethod
    def parse(cls, obj: dict[str, Any]) -> Script:
        known = {"text", "texts", "audio", "sample_rate", "first_text_delay", "first_chunk_delay", "chunk_seconds",
                 "chunk_interval", "fault"}
        unknown = set(obj) - known - {"id"}
        if unknown:
            raise ValueError(f"unknown keys {sorted(unknown)}")
        kw = {k: v for k, v in obj.items() if k in known}
        if kw.get("fault") is not None:
            kw["fault"] = Fault(**kw["fault"])
        if "texts" in kw:
            if not isinstance(kw["texts"], list) or not kw["texts"] or not all(isinstance(t, str) for t in kw["texts"]):
                raise ValueError("texts must be a non-empty list of strings")
            kw["texts"] = tuple(kw["texts"])
        s = cls(**kw)
        check_template(s.text)
        if s.chunk_seconds <= 0 or s.first_chunk_delay < 0 or s.chunk_interval < 0:
            raise ValueError("chunk_seconds must be > 0 and delays >= 0")
        return s


TEMPLATE_FIELDS = ("question", "id", "subset", "turns")


def check_template(text: str) -> None:
    """ValueError unless ``text`` formats with :data:`TEMPLATE_FIELDS` only (checked at load, not per reply)."""
    try:
        text.format(**{k: "" if k != "turns" else 0 for k in TEMPLATE_FIELDS})
    except (ValueError, KeyError, IndexError) as exc:
        raise ValueError(f"field 'text': {text!r} is not a valid template ({type(exc).__name__}: {exc}); "
                         f"placeholders: {', '.join('{' + f + '}' for f in TEMPLATE_FIELDS)}; "
                         "write literal braces as {{ and }}") from None


class ScriptedSystem:
    """Replays scripts; counts attempts per sample so faults can hit the first N tries."""

    def __init__(self, path: str | Path, seed: int = 0) -> None:
        self.path = Path(path)
        self.seed = seed
        self.scripts: dict[str, Script] = {}
        if not self.path.exists():
            raise FileNotFoundError(f"scripted system: {self.path} not found")
        for n, line in enumerate(self.path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            try:
                obj = json.loads(line)
                self.scripts[str(obj.get("id", "*"))] = Script.parse(obj)
            except (ValueError, TypeError) as exc:
                raise ValueError(f"{self.path}:{n}: bad script line ({exc})") from exc
        if not self.scripts:
            raise ValueError(f"{self.path}: no scripts")
        self.id = f"scripted:{self.path.name}"
        self.resource = f"scripted:{self.path.name}"
        self._attempts: dict[str, int] = {}
        self._audio_cache: dict[tuple[str, int], np.ndarray] = {}

    async def start(self) -> None:
        for s in self.scripts.values():  # fail early on a missing wav
            self._audio(s)

    async def close(self) -> None:
        return None

    def describe(self) -> dict[str, JsonValue]:
        return {"kind": "scripted", "file": self.path.name, "scripts": len(self.scripts), "seed": self.seed}

    def script_for(self, sample: Sample) -> Script | None:
        for key in (f"{sample.subset}/{sample.id}", sample.id, "*", "default"):
            if key in self.scripts:
                return self.scripts[key]
        return None

    def _audio(self, s: Script) -> np.ndarray:
        spec = s.audio
        key = (json.dumps(spec, sort_keys=True), s.sample_rate)
        if key not in self._audio_cache:
            if "wav" in spec:
                from vocalbench.audio import load

                p = Path(spec["wav"])
                x, _ = load(p if p.is_absolute() else self.path.parent / p, sample_rate=s.sample_rate)
            elif "tone" in spec:
                t = np.arange(int(float(spec.get("seconds", 1.0)) * s.sample_rate)) / s.sample_rate
                x = (0.3 * np.sin(2 * np.pi * float(spec["tone"]) * t)).astype(np.float32)
            elif "silence" in spec:
                x = np.zeros(int(float(spec["silence"]) * s.sample_rate), dtype=np.float32)
            else:
                raise ValueError(f"{self.path}: audio needs 'wav', 'tone' or 'silence', got {spec}")
            lead = np.zeros(int(float(spec.get("lead_silence", 0.0)) * s.sample_rate), dtype=np.float32)
            self._audio_cache[key] = np.concatenate([lead, x])
        return self._audio_cache[key]

    async def stream(self, sample: Sample) -> AsyncIterator[Event]:
        s = self.script_for(sample)
        yield Sent("scripted:request")
        loop = asyncio.get_running_loop()
        arrival = REQUEST_ARRIVAL.get()
        t0 = loop.time() if arrival is None else arrival
        if s is None:
            yield Failure("no_script", f"no script for {sample.subset}/{sample.id} and no '*' default")
            return
        key = f"{sample.subset}/{sample.id}"
        n = self._attempts[key] = self._attempts.get(key, 0) + 1
        f = s.fault
        failing = f is not None and (f.fail_first < 0 or n <= f.fail_first)
        if failing and f is not None and f.type == "stall":
            await asyncio.sleep(f.stall_seconds)
        if failing and f is not None and f.type != "drop":
            yield Failure(f.type, f.message, f.retryable)
            return
        audio = self._audio(s)
        step = max(1, int(s.chunk_seconds * s.sample_rate))
        pieces = [audio[i:i + step] for i in range(0, audio.size, step)] or [audio]
        template = s.texts[_draw(f"{self.seed}/{key}", len(s.texts))] if s.texts else s.text
        text = template.format(question=sample.question, reference=sample.reference or "", id=sample.id,
                               subset=sample.subset, turns=len(sample.history))
        texts = _spread(text, len(pieces))
        ftd = s.first_chunk_delay if s.first_text_delay is None else s.first_text_delay
        timeline: list[tuple[float, int, int, Event]] = []  # (time, chunk, text before audio, event)
        for i, (tx, au) in enumerate(zip(texts, pieces)):
            if tx:
                timeline.append((ftd + i * s.chunk_interval, i, 0, TextDelta(tx)))
            timeline.append((s.first_chunk_delay + i * s.chunk_interval, i, 1, AudioChunk(au, s.sample_rate)))
        timeline.sort(key=lambda e: e[:3])
        for i, (at, _, _, ev) in enumerate(timeline):
            wait = t0 + at - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            if failing and f is not None and f.type == "drop" and i >= len(timeline) // 2:
                yield Failure("broken_stream", f.message, f.retryable)
                return
            yield ev
        yield Done()


def _draw(key: str, n: int) -> int:
    """A stable index in ``range(n)`` for ``key`` (the same in every process, unlike ``hash``)."""
    import hashlib

    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big") % n


def _spread(text: str, n: int) -> list[str]:
    """Split ``text`` at word boundaries into ``n`` deltas that concatenate back to it."""
    words = text.split()
    per = max(1, -(-len(words) // n))
    out: list[str] = []
    for i in range(n):
        part = " ".join(words[i * per:(i + 1) * per])
        out.append((" " if part and any(out) else "") + part)
    return out


def from_spec(arg: str, options: SystemOptions) -> ScriptedSystem:
    """``scripted:FILE``; of the options only the seed applies (it draws from ``texts``)."""
    if not arg:
        raise ValueError("scripted system: expected scripted:FILE")
    return ScriptedSystem(arg, options.seed)

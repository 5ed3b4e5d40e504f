"""Voice activity detection: Silero VAD (ONNX, via onnxruntime) and an energy detector for doubles.

Both give a speech probability per 32 ms frame of 16 kHz audio (512 samples). On top of them:

- :class:`TurnDetector`: the server-side turn detection of ``vocalbench serve`` (the Realtime
  protocol's ``server_vad``): speech starts at the first frame with probability >= ``threshold``
  (reported ``prefix_padding_ms`` earlier) and stops after ``silence_duration_ms`` of frames below
  it (reported at the end of the last speech frame). Defaults are the protocol's documented ones:
  threshold 0.5, prefix padding 300 ms, silence 500 ms.
- :func:`speech_segments`: the speech segments of a whole file (the duplex scoring's VAD
  segments): hysteresis between ``threshold`` and ``threshold - 0.15``, segments shorter than
  250 ms dropped, pauses shorter than 100 ms bridged, 30 ms padding (Silero's own defaults).

The Silero model is the ``silero_vad.onnx`` the ``silero-vad`` package ships (installed without its
torch dependencies; only the ONNX file is read). The energy detector (frame RMS above
``threshold_dbfs``) is exact on synthetic audio: the scripted realtime double uses it so that
harness tests have known turn times.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from pydantic import JsonValue

if TYPE_CHECKING:
    import onnxruntime

RATE = 16000
FRAME = 512  # samples per decision at 16 kHz (32 ms)
FRAME_S = FRAME / RATE
CONTEXT = 64  # samples of the previous frame the Silero v5/v6 model reads before each frame

Kind = Literal["silero", "energy"]
KINDS: tuple[Kind, ...] = ("silero", "energy")


def silero_model_path() -> Path:
    """The ONNX model of the installed ``silero-vad`` package."""
    from vocalbench.errors import MissingDependency

    try:
        root = resources.files("silero_vad")
    except ModuleNotFoundError as exc:
        raise MissingDependency("Silero VAD", "silero_vad", "vad") from exc
    path = Path(str(root.joinpath("data", "silero_vad.onnx")))
    if not path.is_file():
        raise FileNotFoundError(f"{path}: the silero-vad package ships no ONNX model here")
    return path


@functools.cache
def _silero_session() -> onnxruntime.InferenceSession:
    """One ONNX session per process, shared by every stream (the recurrent state is passed per call)."""
    import onnxruntime

    opts = onnxruntime.SessionOptions()
    opts.inter_op_num_threads = 1
    opts.intra_op_num_threads = 1
    return onnxruntime.InferenceSession(str(silero_model_path()), sess_options=opts,
                                        providers=["CPUExecutionProvider"])


class SileroVAD:
    """Streaming Silero VAD: ``prob(frame)`` for consecutive 512-sample frames of 16 kHz audio."""

    name = "silero-vad-onnx"

    def __init__(self) -> None:
        self._session = _silero_session()
        self._sr = np.array(RATE, dtype=np.int64)
        self.reset()

    def reset(self) -> None:
        self._state = np.zeros((2, 1, 128), dtype=np.float32)
        self._context = np.zeros((1, CONTEXT), dtype=np.float32)

    def prob(self, frame: np.ndarray) -> float:
        x = np.concatenate([self._context, frame.reshape(1, FRAME).astype(np.float32)], axis=1)
        out, self._state = self._session.run(None, {"input": x, "state": self._state, "sr": self._sr})
        self._context = x[:, -CONTEXT:]
        return float(out[0][0])


class EnergyVAD:
    """Probability 1 for a frame whose RMS is at least ``threshold_dbfs``, else 0 (exact on tones)."""

    name = "energy"

    def __init__(self, threshold_dbfs: float = -40.0) -> None:
        self.threshold = 10 ** (threshold_dbfs / 20)

    def reset(self) -> None:
        return None

    def prob(self, frame: np.ndarray) -> float:
        return 1.0 if float(np.sqrt(np.mean(np.square(frame, dtype=np.float64)))) >= self.threshold else 0.0


Detector = SileroVAD | EnergyVAD


def detector(kind: Kind) -> Detector:
    if kind == "silero":
        return SileroVAD()
    if kind == "energy":
        return EnergyVAD()
    raise ValueError(f"VAD '{kind}' unknown (known: {', '.join(KINDS)})")


@dataclass(frozen=True)
class TurnSettings:
    """Server-side turn detection, as the Realtime protocol's ``server_vad`` names its settings."""

    vad: Kind = "silero"
    threshold: float = 0.5
    prefix_padding_ms: int = 300
    silence_duration_ms: int = 500
    create_response: bool = True
    interrupt_response: bool = True

    def protocol(self) -> dict[str, Any]:
        """The ``turn_detection`` object of a ``session.update``."""
        return {"type": "server_vad", "threshold": self.threshold, "prefix_padding_ms": self.prefix_padding_ms,
                "silence_duration_ms": self.silence_duration_ms, "create_response": self.create_response,
                "interrupt_response": self.interrupt_response}

    @classmethod
    def from_protocol(cls, body: Mapping[str, JsonValue], vad: Kind) -> TurnSettings:
        """Settings from a session's ``turn_detection`` (missing keys take the defaults; a number that
        is not one is a ValueError naming its key)."""
        d = cls()

        def number(key: str, default: float) -> float:
            v = body.get(key, default)
            if isinstance(v, (int, float, str)):
                return float(v)
            raise ValueError(f"turn_detection.{key}: expected a number, got {v!r}")

        return cls(vad=vad, threshold=number("threshold", d.threshold),
                   prefix_padding_ms=int(number("prefix_padding_ms", d.prefix_padding_ms)),
                   silence_duration_ms=int(number("silence_duration_ms", d.silence_duration_ms)),
                   create_response=bool(body.get("create_response", d.create_response)),
                   interrupt_response=bool(body.get("interrupt_response", d.interrupt_response)))


@dataclass(frozen=True)
class TurnEvent:
    """``started`` (at ``ms``: speech onset minus the prefix padding) or ``stopped`` (at ``ms``: the end
    of the last speech frame), on the input stream's own timeline (ms since its first sample)."""

    kind: Literal["started", "stopped"]
    ms: int


class TurnDetector:
    """Feeds 16 kHz audio frame by frame to a VAD and reports turn starts and stops."""

    def __init__(self, settings: TurnSettings, vad: Detector | None = None) -> None:
        self.settings = settings
        self.vad = vad if vad is not None else detector(settings.vad)
        self.vad.reset()
        self._pending = np.zeros(0, dtype=np.float32)
        self._frames = 0
        self._speaking = False
        self._silent_frames = 0
        self._last_speech_end = 0

    @property
    def speaking(self) -> bool:
        return self._speaking

    def feed(self, x16k: np.ndarray) -> list[TurnEvent]:
        """Events found in this audio (appended to what came before)."""
        self._pending = np.concatenate([self._pending, np.asarray(x16k, dtype=np.float32)])
        out: list[TurnEvent] = []
        need = int(np.ceil(self.settings.silence_duration_ms / 1000 / FRAME_S))
        while self._pending.size >= FRAME:
            frame, self._pending = self._pending[:FRAME], self._pending[FRAME:]
            start_ms = int(round(self._frames * FRAME_S * 1000))
            self._frames += 1
            end_ms = int(round(self._frames * FRAME_S * 1000))
            if self.vad.prob(frame) >= self.settings.threshold:
                self._silent_frames = 0
                self._last_speech_end = end_ms
                if not self._speaking:
                    self._speaking = True
                    out.append(TurnEvent("started", max(0, start_ms - self.settings.prefix_padding_ms)))
            elif self._speaking:
                self._silent_frames += 1
                if self._silent_frames >= need:
                    self._speaking = False
                    out.append(TurnEvent("stopped", self._last_speech_end))
        return out


@dataclass(frozen=True)
class Segment:
    start: float  # seconds
    end: float

    @property
    def duration(self) -> float:
        return self.end - self.start


def frame_probs(x16k: np.ndarray, vad: Detector) -> np.ndarray:
    """Speech probability of every whole 512-sample frame of ``x16k``."""
    vad.reset()
    n = x16k.size // FRAME
    return np.array([vad.prob(x16k[i * FRAME:(i + 1) * FRAME]) for i in range(n)], dtype=np.float32)


def speech_segments(x16k: np.ndarray, vad: Detector, threshold: float = 0.5, min_speech_ms: int = 250,
                    min_silence_ms: int = 100, pad_ms: int = 30) -> list[Segment]:
    """Speech segments of a whole 16 kHz signal (see the module docstring for the rules)."""
    probs = frame_probs(x16k, vad)
    low = max(threshold - 0.15, 0.01)
    raw: list[list[float]] = []
    on = False
    for i, p in enumerate(probs):
        t = i * FRAME_S
        if not on and p >= threshold:
            on = True
            raw.append([t, t + FRAME_S])
        elif on and p >= low:
            raw[-1][1] = t + FRAME_S
        elif on:
            on = False
    merged: list[list[float]] = []
    for s, e in raw:
        if merged and s - merged[-1][1] < min_silence_ms / 1000:
            merged[-1][1] = e
        else:
            merged.append([s, e])
    total = x16k.size / RATE
    pad = pad_ms / 1000
    return [Segment(max(0.0, s - pad), min(total, e + pad)) for s, e in merged if e - s >= min_speech_ms / 1000]


def resampler_24k_to_16k() -> Callable[[np.ndarray], Iterator[np.ndarray]]:
    """A streaming 24 -> 16 kHz converter: feed it any amount of 24 kHz audio, get whole 16 kHz blocks
    (30 ms of 24 kHz at a time, polyphase 2/3 per block)."""
    from scipy.signal import resample_poly

    block = 720  # 30 ms at 24 kHz -> 480 samples at 16 kHz
    pending = np.zeros(0, dtype=np.float32)

    def feed(x24k: np.ndarray) -> Iterator[np.ndarray]:
        nonlocal pending
        pending = np.concatenate([pending, np.asarray(x24k, dtype=np.float32)])
        while pending.size >= block:
            chunk, pending = pending[:block], pending[block:]
            yield resample_poly(chunk, 2, 3).astype(np.float32)

    return feed

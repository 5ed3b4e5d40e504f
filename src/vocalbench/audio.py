"""The one module that reads and writes audio.

Everything else gets float32 mono arrays from here. Bad files raise ``AudioError`` naming the
file and what is wrong, so callers can record a per-item error instead of crashing a batch.
"""

from __future__ import annotations

import functools
import hashlib
import io
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np


class AudioError(ValueError):
    """A file that cannot be used as audio; the message names the file and the problem."""

    def __init__(self, path: str | Path, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = str(path)
        self.problem = problem


@dataclass(frozen=True)
class AudioInfo:
    sample_rate: int
    frames: int
    channels: int
    floating: bool = False  # float samples (which can be NaN or infinite: :func:`load` refuses those)

    @property
    def duration(self) -> float:
        return self.frames / self.sample_rate if self.sample_rate else 0.0


# sample rates a speech file can plausibly have; a header outside them is corrupt
MIN_RATE, MAX_RATE = 1000, 384000
_UNKNOWN_SIZE = (0, 0xFFFFFFFF)  # streamed WAVs leave the sizes unset


def wav_header_problem(path: str | Path) -> str | None:
    """What is wrong with a RIFF/WAVE file's header against its bytes (sample rate out of range, a
    data chunk longer than the file holds: truncated); None when it is sound or not a WAV."""
    p = Path(path)
    size = p.stat().st_size
    with open(p, "rb") as f:
        head = f.read(12)
        if len(head) < 12 or head[:4] != b"RIFF" or head[8:12] != b"WAVE":
            return None
        pos = 12
        while True:
            chunk = f.read(8)
            if len(chunk) < 8:
                return "no data chunk (truncated WAV header)"
            cid, csize = chunk[:4], int.from_bytes(chunk[4:], "little")
            if cid == b"fmt ":
                fmt = f.read(min(csize, 16))
                if len(fmt) < 16:
                    return "truncated WAV header (short fmt chunk)"
                rate = int.from_bytes(fmt[4:8], "little")
                if not MIN_RATE <= rate <= MAX_RATE:
                    return f"WAV header sample rate {rate} Hz is outside {MIN_RATE}..{MAX_RATE} Hz"
                f.seek(pos + 8 + csize + (csize & 1))
            elif cid == b"data":
                if csize not in _UNKNOWN_SIZE and pos + 8 + csize > size:
                    return (f"truncated: the WAV header declares {csize} bytes of audio, "
                            f"the file holds {max(0, size - pos - 8)}")
                return None
            else:
                f.seek(pos + 8 + csize + (csize & 1))
            pos = f.tell()


def info(path: str | Path) -> AudioInfo:
    """Sample rate, frames and channels; :class:`AudioError` for a missing, empty, unreadable or
    truncated file, or one whose sample rate is implausible."""
    import soundfile as sf

    p = Path(path)
    if not p.exists():
        raise AudioError(p, "file not found")
    if p.stat().st_size == 0:
        raise AudioError(p, "file is empty")
    problem = wav_header_problem(p)
    if problem:
        raise AudioError(p, problem)
    try:
        i = sf.info(str(p))
    except Exception as exc:  # soundfile raises its own LibsndfileError / RuntimeError
        raise AudioError(p, f"not a readable audio file ({exc})") from exc
    if not MIN_RATE <= int(i.samplerate) <= MAX_RATE:
        raise AudioError(p, f"sample rate {i.samplerate} Hz is outside {MIN_RATE}..{MAX_RATE} Hz")
    return AudioInfo(sample_rate=int(i.samplerate), frames=int(i.frames), channels=int(i.channels),
                     floating=str(i.subtype) in ("FLOAT", "DOUBLE"))


def duration(path: str | Path) -> float:
    return info(path).duration


def load(path: str | Path, sample_rate: int | None = None, min_seconds: float = 0.0) -> tuple[np.ndarray, int]:
    """Read a file as float32 mono in [-1, 1], optionally resampled to ``sample_rate``."""
    import soundfile as sf

    p = Path(path)
    plain = _plain_wav(p)
    if plain is not None:  # this package's own WAV: read as libsndfile would, without opening it thrice
        data, sr = plain
        mono = np.frombuffer(data, dtype="<i2", offset=44).astype(np.float32) / np.float32(32768.0)
    else:
        info(p)  # existence / emptiness / readability checks with clear messages
        try:
            both, sr = sf.read(str(p), dtype="float32", always_2d=True)
        except Exception as exc:
            raise AudioError(p, f"cannot decode audio ({exc})") from exc
        mono = both.mean(axis=1) if both.shape[1] > 1 else both[:, 0]
    if mono.size == 0:
        raise AudioError(p, "contains no samples")
    if not np.all(np.isfinite(mono)):
        raise AudioError(p, "contains NaN or infinite samples")
    if sample_rate is not None and sr != sample_rate:
        mono = resample(mono, sr, sample_rate)
        sr = sample_rate
    if mono.size / sr < min_seconds:
        raise AudioError(p, f"too short ({mono.size / sr:.3f} s < {min_seconds} s)")
    return np.ascontiguousarray(mono, dtype=np.float32), int(sr)


def prepare_resampling() -> None:
    """Import the resampler now (scipy.signal takes seconds to import on a busy machine), so the
    first request of a timed stream is not charged for it."""
    import scipy.signal  # noqa: F401


def resample(x: np.ndarray, sr_in: int, sr_out: int) -> np.ndarray:
    """Polyphase resampling (scipy's ``resample_poly`` with its default Kaiser filter), exact for
    integer ratios. The filter is designed once per ratio, not on every call: the same samples out."""
    from math import gcd

    from scipy.signal import resample_poly

    if sr_in == sr_out:
        return x.astype(np.float32, copy=False)
    g = gcd(sr_in, sr_out)
    up, down = sr_out // g, sr_in // g
    x = np.asarray(x)
    dtype = x.dtype if np.issubdtype(x.dtype, np.floating) else np.dtype(np.float64)
    return resample_poly(x, up, down, window=_lowpass(up, down, dtype)).astype(np.float32)


@functools.lru_cache(maxsize=32)
def _lowpass(up: int, down: int, dtype: np.dtype) -> np.ndarray:
    """The low-pass FIR filter ``resample_poly`` designs for ``up``/``down`` with its default window
    (Kaiser, beta 5, half-length 10 taps per unit of the larger rate), in the samples' float
    ``dtype``; read-only, shared."""
    from scipy.signal import firwin

    rate = max(up, down)
    h = firwin(2 * 10 * rate + 1, 1.0 / rate, window=("kaiser", 5.0)).astype(dtype)
    h.setflags(write=False)
    return h


def write(path: str | Path, samples: np.ndarray, sample_rate: int, subtype: str = "PCM_16") -> Path:
    """Write mono float samples as WAV (16-bit PCM by default), creating parent folders."""
    import soundfile as sf

    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    x = np.asarray(samples, dtype=np.float32)
    if x.ndim != 1:
        raise ValueError(f"{p}: expected mono samples, got shape {x.shape}")
    tmp = p.with_name(p.name + ".part")
    sf.write(str(tmp), np.clip(x, -1.0, 1.0), sample_rate, subtype=subtype, format="WAV")
    tmp.replace(p)
    return p


def to_wav_bytes(samples: np.ndarray, sample_rate: int) -> bytes:
    """Mono 16-bit PCM WAV bytes, the same bytes libsndfile writes (floor of x * 32768, clipped),
    encoded with numpy alone: no codec round trip per reply."""
    x = np.clip(np.asarray(samples, dtype=np.float32).reshape(-1), -1.0, 1.0) * np.float32(32768.0)
    pcm = np.clip(np.floor(x), -32768, 32767).astype("<i2").tobytes()
    return _wav_header(sample_rate, len(pcm)) + pcm


def _wav_header(sample_rate: int, pcm_bytes: int) -> bytes:
    """The 44-byte header :func:`to_wav_bytes` writes before ``pcm_bytes`` of mono 16-bit PCM."""
    return struct.pack("<4sI4s4sIHHIIHH4sI", b"RIFF", 36 + pcm_bytes, b"WAVE", b"fmt ", 16, 1, 1,
                       sample_rate, sample_rate * 2, 2, 16, b"data", pcm_bytes)


def wav_file_bytes(path: str | Path) -> bytes:
    """The file as :func:`to_wav_bytes` would encode what :func:`load` reads from it: its own bytes
    when it already is that mono 16-bit PCM WAV (no decode and re-encode per request), otherwise
    read and encoded (with :func:`load`'s checks and errors)."""
    plain = _plain_wav(Path(path))
    if plain is not None:
        return plain[0]
    x, sr = load(path)
    return to_wav_bytes(x, sr)


def _plain_wav(path: Path) -> tuple[bytes, int] | None:
    """The file's bytes and sample rate when it is exactly what :func:`to_wav_bytes` writes (a
    44-byte header, mono 16-bit PCM, a plausible rate, some audio); None otherwise or unreadable."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if len(data) <= 44 or (len(data) - 44) % 2:
        return None
    rate = int.from_bytes(data[24:28], "little")
    if MIN_RATE <= rate <= MAX_RATE and data[:44] == _wav_header(rate, len(data) - 44):
        return data, rate
    return None


def from_wav_bytes(data: bytes, name: str = "<bytes>") -> tuple[np.ndarray, int]:
    import soundfile as sf

    try:
        x, sr = sf.read(io.BytesIO(data), dtype="float32", always_2d=True)
    except Exception as exc:
        raise AudioError(name, f"cannot decode audio ({exc})") from exc
    return (x.mean(axis=1) if x.shape[1] > 1 else x[:, 0]).astype(np.float32), int(sr)


def pcm16_to_float(data: bytes) -> np.ndarray:
    return np.frombuffer(data, dtype="<i2").astype(np.float32) / 32768.0


def float_to_pcm16(x: np.ndarray) -> bytes:
    return (np.clip(x, -1.0, 1.0) * 32767.0).astype("<i2").tobytes()


# First audible audio (docs/scoring.md, Latency): the first 10 ms frame whose RMS reaches -50 dBFS
# (full scale = 1.0); quieter frames count as silence.
SILENCE_DBFS = -50.0
SILENCE_FRAME_S = 0.010


def first_audible(x: np.ndarray, sample_rate: int, threshold_dbfs: float = SILENCE_DBFS,
                  frame_s: float = SILENCE_FRAME_S) -> int | None:
    """Index of the first sample of the first non-silent frame of ``x`` (None: all silent).

    Frames of ``frame_s`` seconds are taken back to back from the start; the last, shorter frame
    counts too. A frame is audible when its RMS is at least ``threshold_dbfs`` relative to 1.0.
    """
    step = max(1, int(round(frame_s * sample_rate)))
    y = np.asarray(x).reshape(-1)
    begin, frames = 0, 10  # a reply is usually audible within its first frames: look there first
    while begin < y.size:
        part = y[begin:begin + frames * step].astype(np.float64)
        pad = (-part.size) % step  # only the last block can end in a shorter frame
        sq = np.concatenate([part * part, np.zeros(pad)]).reshape(-1, step)
        counts = np.full(sq.shape[0], step, dtype=float)
        counts[-1] = step - pad
        rms_db = 10.0 * np.log10(np.maximum(sq.sum(axis=1) / counts, 1e-20))
        loud = np.flatnonzero(rms_db >= threshold_dbfs)
        if loud.size:
            return begin + int(loud[0]) * step
        begin, frames = begin + part.size, frames * 10
    return None


def content_hash(path: str | Path) -> str:
    """sha256 of the file's bytes: the cache key of everything computed from audio."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()

"""Shared fixtures: real models, loaded once per test session."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "vocalbench"


@pytest.fixture(scope="session")
def tts():
    from vocalbench.components import resolve

    return resolve("tts", "offline")


@pytest.fixture(scope="session")
def asr():
    from vocalbench.components import resolve

    return resolve("asr", "offline")


@pytest.fixture(scope="session")
def clean_wav(tts, tmp_path_factory) -> Path:
    """A clean English utterance (Kokoro), 16 kHz mono."""
    from vocalbench.audio import resample, write

    x, sr = tts.synthesize("Good morning. The library opens at nine, and the museum opens at ten.", "en",
                           voice="jm_kumo")
    return write(tmp_path_factory.mktemp("audio") / "clean.wav", resample(x, sr, 16000), 16000)


@pytest.fixture(scope="session")
def bad_files(tmp_path_factory) -> dict[str, Path]:
    """Inputs that break naive pipelines: each must give a per-file error or a valid result."""
    import soundfile as sf

    d = tmp_path_factory.mktemp("bad")
    rng = np.random.default_rng(0)
    t = np.arange(int(1.5 * 16000)) / 16000
    tone = (0.3 * np.sin(2 * np.pi * 220 * t)).astype(np.float32)
    files = {"empty": d / "empty.wav", "corrupt": d / "corrupt.wav", "short": d / "short.wav",
             "u8": d / "u8.wav", "stereo48k": d / "stereo48k.wav", "nan": d / "nan.wav"}
    files["empty"].write_bytes(b"")
    files["corrupt"].write_bytes(b"RIFF\x00\x00\x00\x00WAVEjunk" + rng.bytes(2000))
    sf.write(files["short"], tone[:800], 16000)  # 0.05 s
    sf.write(files["u8"], tone, 16000, subtype="PCM_U8")
    t48 = np.arange(int(1.5 * 48000)) / 48000
    st = np.stack([0.3 * np.sin(2 * np.pi * 220 * t48), 0.3 * np.sin(2 * np.pi * 330 * t48)], axis=1)
    sf.write(files["stereo48k"], st.astype(np.float32), 48000)
    nan = tone.copy()
    nan[100:200] = np.nan
    sf.write(files["nan"], nan, 16000, subtype="FLOAT")
    return files

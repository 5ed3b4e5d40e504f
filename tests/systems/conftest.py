"""Fixtures of the systems tests: real short wavs, scripted reply files, served systems."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from vocalbench.audio import write
from vocalbench.records import AudioRef, Sample, Turn


def make_wav(path: Path, seconds: float = 0.8, sr: int = 16000, freq: float = 330.0) -> Path:
    """A real short wav (a tone with a soft envelope) written through vocalbench.audio."""
    t = np.arange(int(seconds * sr)) / sr
    x = 0.2 * np.sin(2 * np.pi * freq * t) * np.hanning(t.size)
    return write(path, x.astype(np.float32), sr)


def make_samples(tmp: Path, n: int, subset: str = "single_round", history: int = 0) -> list[Sample]:
    wav = make_wav(tmp / "query.wav")
    turns = [Turn(role="user" if i % 2 == 0 else "assistant", text=f"turn {i}") for i in range(history)]
    return [Sample(id=f"{subset}-{i:03d}", subset=subset, lang="en", index=i, question=f"question {i}",
                   audio=AudioRef(path=str(wav)), history=turns) for i in range(n)]


def write_script(path: Path, lines: list[dict]) -> Path:
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    return path


@pytest.fixture
def script(tmp_path: Path) -> Callable[[list[dict]], Path]:
    return lambda lines: write_script(tmp_path / "script.jsonl", lines)


@pytest.fixture
def samples(tmp_path: Path) -> Callable[..., list[Sample]]:
    return lambda n, subset="single_round", history=0: make_samples(tmp_path, n, subset, history)


@pytest.fixture
def served() -> Iterator[Callable[..., str]]:
    """Start ``vocalbench serve`` subprocesses; all are stopped at the end of the test."""
    from vocalbench.systems.serve import ServeProcess

    procs: list[ServeProcess] = []

    def start(system: str, **kw: object) -> str:
        p = ServeProcess(system, **kw)  # type: ignore[arg-type]
        url = p.__enter__()
        procs.append(p)
        return url

    yield start
    for p in procs:
        p.__exit__()

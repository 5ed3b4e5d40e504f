"""Fixtures of the data tests: the official metadata (skipped when absent) and a tiny release."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "vocalbench"


@pytest.fixture(scope="session")
def shared() -> Path:
    if not (SHARED / "en" / "json").is_dir() or not (SHARED / "zh" / "json").is_dir():
        pytest.skip(f"official VocalBench metadata not found at {SHARED}")
    return SHARED


@pytest.fixture()
def tmp_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh VOCALBENCH_CACHE (opt-in: the built-in mini set should reuse the shared cache)."""
    d = tmp_path_factory.mktemp("cache")
    monkeypatch.setenv("VOCALBENCH_CACHE", str(d))
    return d


def write_release(root: Path, subsets: dict[str, list[dict]], audio: bool = True) -> Path:
    """An official-layout release; each record's Audio gets a real 0.5 s wav when ``audio``."""
    from vocalbench import audio as vb_audio

    (root / "json").mkdir(parents=True, exist_ok=True)
    for name, records in subsets.items():
        (root / "json" / f"{name}.json").write_text(json.dumps(records, ensure_ascii=False), encoding="utf-8")
        if audio:
            for i, rec in enumerate(records):
                if isinstance(rec, dict) and isinstance(rec.get("Audio"), str):
                    t = np.arange(8000) / 16000
                    vb_audio.write(root / "audio" / rec["Audio"], 0.1 * np.sin(2 * np.pi * (220 + 10 * i) * t), 16000)
    return root


def official_items(lang: str, subset: str, n: int) -> list[dict]:
    """The first n official records of a subset (read from the shared metadata)."""
    return json.loads((SHARED / lang / "json" / f"{subset}.json").read_text(encoding="utf-8"))[:n]

"""A tiny single_round release and a scripted system with spoken replies, for Ray scoring tests
and bench/ray_bench.py (the shared official outputs carry almost no reply audio)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from vocalbench.audio import write


def need_ray_and_offline_asr(shared: Path) -> None:
    """Skip (with the reason) unless Ray, the official LLaMA-Omni outputs and the offline ASR are here."""
    pytest.importorskip("ray")
    from vocalbench import components
    from vocalbench.components.base import ComponentUnavailable

    if not (shared / "en" / "outputs" / "llama-omni" / "wav").is_dir():
        pytest.skip(f"official outputs not found under {shared}")
    try:
        components.resolve("asr", "offline")
    except (ComponentUnavailable, ImportError) as exc:
        pytest.skip(f"offline evaluators not installed: {exc}")


def spoken_release(root: Path, shared: Path, n: int) -> tuple[Path, Path]:
    """(release of the first ``n`` official single_round items with tone queries, reply script):
    the reply to item 0 is a real spoken reply (LLaMA-Omni's), the others tones of different pitch
    and length, each reply's text the reference answer."""
    rel = root / "rel"
    (rel / "json").mkdir(parents=True)
    records = json.loads((shared / "en" / "json" / "single_round.json").read_text())[:n]
    t = np.arange(8000) / 16000
    for i, rec in enumerate(records):
        write(rel / "audio" / rec["Audio"], (0.2 * np.sin(2 * np.pi * (200 + 10 * i) * t)).astype(np.float32), 16000)
    (rel / "json" / "single_round.json").write_text(json.dumps(records))
    speech = shared / "en" / "outputs" / "llama-omni" / "wav" / "knowledge" / "knowledge-0000.wav"
    lines = [{"id": rec["Qid"], "text": rec["Answer"], "first_chunk_delay": 0.01,
              "audio": {"wav": str(speech)} if i == 0 else {"tone": 180 + 60 * i, "seconds": 0.5 + 0.1 * (i % 6)}}
             for i, rec in enumerate(records)]
    script = root / "replies.jsonl"
    script.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    return rel, script

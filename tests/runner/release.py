"""A tiny release in the official layout (json/ + audio/), generated here, for CLI-level runner tests."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from vocalbench.audio import write


def make_release(root: Path, n: int) -> Path:
    """``n`` English knowledge items whose answer is "Paris", with real short wavs."""
    (root / "json").mkdir(parents=True)
    items = []
    for i in range(n):
        rel = f"knowledge/{i:04d}.wav"
        t = np.arange(8000) / 16000
        write(root / "audio" / rel, (0.2 * np.sin(2 * np.pi * (200 + 10 * i) * t)).astype(np.float32), 16000)
        items.append({"Qid": f"knowledge-{i:04d}", "Audio": rel, "Question": f"Question {i}: capital of France?",
                      "Answer": "Paris", "Category": "geo", "Topic": "capitals"})
    (root / "json" / "knowledge.json").write_text(json.dumps(items, indent=1))
    return root


def knowledge_script(path: Path, n: int, delay: float = 0.0, faults: bool = False) -> Path:
    """Replies: every third item answers Paris; the rest do not know (deterministic)."""
    lines = [{"id": "*", "text": "I do not know.", "audio": {"tone": 220, "seconds": 0.4},
              "first_chunk_delay": delay}]
    for i in range(0, n, 3):
        lines.append({"id": f"knowledge-{i:04d}", "text": "It is Paris.", "audio": {"tone": 330, "seconds": 0.6},
                      "first_chunk_delay": delay})
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    return path

"""Speech emotion: emotion2vec_plus_large through FunASR (paper profile) in a worker process.

FunASR needs a real torchaudio, which cannot live beside the torch that DistillMOS uses, so the
model runs in ``emotion_worker.py`` under the Python given by VOCALBENCH_EMOTION_PYTHON (a
separate venv; default: this interpreter). No emotion model ships offline: the offline spec gives
``NoEmotionModel``, which raises ``ComponentUnavailable("emotion_model_unavailable")`` when used,
so scorers mark items unscored instead of guessing.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path

from pydantic import JsonValue, TypeAdapter

from vocalbench.components.base import ComponentError, ComponentUnavailable, load_or_error
from vocalbench.records import EMOTION_UNKNOWN, EMOTIONS_5

NINE_TO_SIX = (0, 3, 4, 6, 7, 8)  # emotion2vec indices of angry, happy, neutral, sad, surprised, <unk>
WORKER = Path(__file__).with_name("emotion_worker.py")


_SCORES = TypeAdapter(list[float])  # the worker's nine class probabilities


def nine_to_six(probs: Sequence[float]) -> dict[str, float]:
    """emotion2vec's 9-class probabilities -> the distribution the official scripts read.

    Keeps angry 0, happy 3, neutral 4, sad 6, surprised 7 and <unk> 8 (as ``unknown``) and
    renormalises them to sum 1: the softmax over these six logits that the official FunASR set-up
    returns. Five-class uses (the acoustic empathy score) renormalise over the first five.
    """
    if len(probs) != 9:
        raise ValueError(f"expected 9 class probabilities, got {len(probs)}")
    kept = [float(probs[i]) for i in NINE_TO_SIX]
    if any(p < 0 or math.isnan(p) for p in kept):
        raise ValueError(f"probabilities must be non-negative numbers, got {kept}")
    total = sum(kept[:5])
    if total <= 0:
        raise ValueError("the five emotion classes have zero total probability")
    return {e: p / sum(kept) for e, p in zip((*EMOTIONS_5, EMOTION_UNKNOWN), kept)}


class NoEmotionModel:
    """The offline emotion 'classifier': none exists, so every use says so."""

    id = "none"
    version = ""

    def __init__(self, reason: str = "emotion_model_unavailable", message: str | None = None) -> None:
        self.reason = reason
        self.message = message or (
            "no emotion classifier is available offline (no emotion2vec weights ship in any package); "
            "supply emotion2vec_plus_large with --emotion paper:PATH"
        )

    def classify(self, paths: Sequence[str | Path]) -> list[dict[str, float] | ComponentError]:
        raise ComponentUnavailable(self.reason, self.message)


class Emotion2Vec:
    """emotion2vec_plus_large (a local folder, or the hub id where a network exists), served by a
    FunASR worker process started on first use."""

    HUB_ID = "iic/emotion2vec_plus_large"

    def __init__(self, model: str = HUB_ID, device: str = "cpu") -> None:
        self.path = model
        self.python = os.environ.get("VOCALBENCH_EMOTION_PYTHON") or sys.executable
        self.device = device
        self._proc: subprocess.Popen[str] | None = None
        self._lock = threading.Lock()
        self._next = 0
        self.id = "emotion2vec_plus_large"
        self.version = f"{Path(self.path).name}+unk"  # the distribution carries <unk> (nine_to_six)

    def _start(self) -> subprocess.Popen[str]:
        if self._proc is not None and self._proc.poll() is None:
            return self._proc
        try:
            proc = subprocess.Popen(
                [self.python, str(WORKER), "--model", self.path, "--device", self.device],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
            )
        except OSError as exc:
            raise ComponentUnavailable("emotion_model_unavailable",
                                       f"cannot start the emotion worker with {self.python}: {exc}") from exc
        assert proc.stdout is not None
        first = proc.stdout.readline()
        try:
            hello = json.loads(first)
        except ValueError:
            hello = {"fatal": f"worker exited without answering (exit status {proc.wait()})"}
        if not hello.get("ready"):
            proc.kill()
            raise ComponentUnavailable(
                "emotion_model_unavailable",
                f"emotion2vec worker ({self.python}) failed to load {self.path}: {hello.get('fatal')}. "
                f"FunASR needs torch with a real torchaudio: point VOCALBENCH_EMOTION_PYTHON at such a venv",
            )
        self._proc = proc
        return proc

    def _ask(self, path: str) -> dict[str, JsonValue]:
        proc = self._start()
        assert proc.stdin is not None and proc.stdout is not None
        self._next += 1
        proc.stdin.write(json.dumps({"id": self._next, "path": path}) + "\n")
        proc.stdin.flush()
        line = proc.stdout.readline()
        if not line:
            self._proc = None
            raise RuntimeError(f"emotion worker died (exit status {proc.wait()})")
        reply: dict[str, JsonValue] = json.loads(line)
        if reply.get("id") != self._next:
            raise RuntimeError(f"emotion worker answered out of order: {reply.get('id')} != {self._next}")
        return reply

    def classify(self, paths: Sequence[str | Path]) -> list[dict[str, float] | ComponentError]:
        """The six-class distribution (nine_to_six) per file; the worker sees a clean 16 kHz mono copy of each file."""
        from vocalbench.audio import write

        out: list[dict[str, float] | ComponentError] = []
        with self._lock, tempfile.TemporaryDirectory(prefix="vb-emo-") as tmp:
            for i, p in enumerate(paths):
                x = load_or_error(p, 16000, min_seconds=0.1)
                if isinstance(x, ComponentError):
                    out.append(x)
                    continue
                clean = write(Path(tmp) / f"{i}.wav", x, 16000, subtype="FLOAT")
                try:
                    reply = self._ask(str(clean))
                except ComponentUnavailable:
                    raise
                except RuntimeError as exc:
                    out.append(ComponentError(str(p), "emotion_failed", f"{p}: {exc}"))
                    continue
                if "error" in reply:
                    out.append(ComponentError(str(p), "emotion_failed", f"{p}: {reply['error']}"))
                    continue
                try:
                    out.append(nine_to_six(_SCORES.validate_python(reply["scores"])))
                except (KeyError, ValueError) as exc:
                    out.append(ComponentError(str(p), "emotion_failed", f"{p}: bad worker reply ({exc})"))
        return out

    def close(self) -> None:
        """Stop the worker process (it also stops when this process exits and its stdin closes)."""
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            assert proc.stdin is not None
            proc.stdin.close()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()


def emotion2vec(path: str | None = None, device: str = "cpu") -> Emotion2Vec:
    """The paper's classifier: ``path`` is the local model folder (paper:PATH); without it the
    worker asks FunASR for the hub model, which works only where a network exists."""
    if path is None:
        return Emotion2Vec(Emotion2Vec.HUB_ID, device)
    if not Path(path).is_dir():
        raise ComponentUnavailable("emotion_model_unavailable", f"emotion2vec model folder not found: {path}")
    return Emotion2Vec(str(Path(path).resolve()), device)


def offline() -> NoEmotionModel:
    return NoEmotionModel()

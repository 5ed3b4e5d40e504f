"""Speech quality (MOS): DistillMOS (offline default), UTMOS22 strong (paper), DNSMOS (no torch).

Every file is scored on its own, at its own length (no batch padding), and scores come back in
input order; a file that cannot be read or scored yields a ``ComponentError`` in its slot.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import types
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import ClassVar, NoReturn

import numpy as np

from vocalbench.components.base import ComponentError, ComponentUnavailable, load_or_error

SAMPLE_RATE = 16000
MIN_SECONDS = 0.25  # shorter clips carry no judgeable speech; reported as too_short


def _score_files(paths: Sequence[str | Path], fn: Callable[[np.ndarray], float]) -> list[float | ComponentError]:
    """Load each file at 16 kHz mono and score it; errors stay per file."""
    out: list[float | ComponentError] = []
    for p in paths:
        x = load_or_error(p, SAMPLE_RATE)
        if isinstance(x, ComponentError):
            out.append(x)
            continue
        if x.size < MIN_SECONDS * SAMPLE_RATE:
            out.append(ComponentError(str(p), "too_short", f"{p}: {x.size / SAMPLE_RATE:.3f} s < {MIN_SECONDS} s"))
            continue
        if not np.any(x):
            out.append(ComponentError(str(p), "silent", f"{p}: all samples are zero"))
            continue
        try:
            value = float(fn(x))
        except Exception as exc:  # noqa: BLE001 - one file's failure stays with that file
            out.append(ComponentError(str(p), "mos_failed", f"{p}: {type(exc).__name__}: {exc}"))
            continue
        if not np.isfinite(value):
            out.append(ComponentError(str(p), "mos_failed", f"{p}: the model returned {value}"))
        else:
            out.append(value)
    return out


def _torch() -> types.ModuleType:
    from vocalbench.errors import MissingDependency

    try:
        import torch
    except ImportError as exc:
        raise MissingDependency("MOS model", "torch", "mos") from exc
    return torch


def _stub_torchaudio() -> None:
    """DistillMOS imports torchaudio at module level but never uses it for inference; torchaudio
    cannot load beside torch 2.13, so a stub module stands in when the real one is unusable."""
    if "torchaudio" in sys.modules:
        return
    try:
        import torchaudio  # noqa: F401
        return
    except Exception:  # noqa: BLE001 - absent, or built for another torch (OSError/ImportError/RuntimeError)
        sys.modules.pop("torchaudio", None)

    def _missing(name: str) -> NoReturn:
        raise AttributeError(f"torchaudio.{name}: torchaudio is a vocalbench stub here (not loadable with this torch)")

    stub = types.ModuleType("torchaudio")
    stub.__getattr__ = _missing  # type: ignore[method-assign]
    stub.__vocalbench_stub__ = True  # type: ignore[attr-defined]
    sys.modules["torchaudio"] = stub


class DistillMOS:
    """DistillMOS (XLS-R SQA distilled into a small CNN-Transformer; weights ship in the wheel)."""

    def __init__(self, threads: int = 0) -> None:
        from importlib.util import find_spec

        from vocalbench.errors import MissingDependency

        torch = _torch()
        for module in ("distillmos", "xls_r_sqa"):
            if find_spec(module) is None:
                raise MissingDependency("MOS 'distillmos'", module, "mos")
        _stub_torchaudio()
        import distillmos

        if threads:
            torch.set_num_threads(threads)
        with contextlib.redirect_stdout(sys.stderr):  # it prints a banner; stdout carries JSON lines
            self._model = distillmos.ConvTransformerSQAModel()
        self._model.eval()
        self._torch = torch
        self._lock = threading.Lock()
        self.id = "distillmos"
        self.version = "0.9.1-v7"

    def _one(self, x: np.ndarray) -> float:
        with self._lock, self._torch.inference_mode():
            return float(self._model(self._torch.from_numpy(x)[None, :]).reshape(-1)[0])

    def score(self, paths: Sequence[str | Path]) -> list[float | ComponentError]:
        return _score_files(paths, self._one)


class UTMOS22Strong:
    """UTMOS22 strong learner (the paper's MOS): score = the model's MOS prediction (2·out + 3).

    Weights are supplied by the user: a TorchScript file (``paper:FILE.pt`` taking
    ``(wave[1, T] float, sample_rate)``), a local clone of ``tarepan/SpeechMOS`` (``paper:DIR``,
    ``torch.hub`` local source, weights from its release cached in TORCH_HOME), or, with no path,
    the same hub entry downloaded where a network exists.
    """

    HUB = "tarepan/SpeechMOS:v1.2.0"

    def __init__(self, path: str | None = None) -> None:
        torch = _torch()
        try:
            if path and Path(path).is_file():
                self._model = torch.jit.load(path, map_location="cpu")
                source = Path(path).name
            elif path and Path(path).is_dir():
                _stub_torchaudio()  # SpeechMOS imports it; only its resampler uses it and we pass 16 kHz
                self._model = torch.hub.load(path, "utmos22_strong", source="local", trust_repo=True)
                source = "local-hub"
            elif path:
                raise FileNotFoundError(f"no such file or folder: {path}")
            else:
                _stub_torchaudio()
                self._model = torch.hub.load(self.HUB, "utmos22_strong", trust_repo=True)
                source = "hub"
        except Exception as exc:
            raise ComponentUnavailable(
                "mos_model_unavailable",
                f"UTMOS22 strong could not be loaded ({type(exc).__name__}: {exc}). No offline weights exist: "
                f"supply them with --mos paper:PATH (TorchScript file or a SpeechMOS checkout), or use the "
                f"offline default (distillmos)",
            ) from exc
        self._model.eval()
        self._torch = torch
        self._lock = threading.Lock()
        self.id = "utmos22-strong"
        self.version = source

    def _one(self, x: np.ndarray) -> float:
        with self._lock, self._torch.inference_mode():
            return float(self._model(self._torch.from_numpy(x)[None, :], SAMPLE_RATE).reshape(-1)[0])

    def score(self, paths: Sequence[str | Path]) -> list[float | ComponentError]:
        return _score_files(paths, self._one)


class DNSMOS:
    """DNSMOS P.835 via speechmos (ONNX, no torch): the OVRL score (or ``metric="p808"``)."""

    METRICS: ClassVar[dict[str, str]] = {"ovrl": "ovrl_mos", "sig": "sig_mos", "bak": "bak_mos", "p808": "p808_mos"}

    def __init__(self, metric: str = "ovrl") -> None:
        from importlib.util import find_spec

        from vocalbench.errors import MissingDependency

        if metric not in self.METRICS:
            raise ValueError(f"DNSMOS metric must be one of {', '.join(self.METRICS)}, not '{metric}'")
        for module in ("speechmos", "librosa", "onnxruntime"):
            if find_spec(module) is None:
                raise MissingDependency("MOS 'dnsmos'", module, "mos")
        from speechmos import dnsmos

        folder = Path(dnsmos.__file__).parent / "dnsmos_models"
        self._model = dnsmos.DNSMOS(str(folder / "sig_bak_ovr.onnx"), str(folder / "model_v8.onnx"))
        self._key = self.METRICS[metric]
        self._lock = threading.Lock()
        self.id = f"dnsmos-{metric}"
        self.version = "speechmos-0.0.1.1"

    def _one(self, x: np.ndarray) -> float:
        with self._lock:
            return float(self._model(np.clip(x, -1.0, 1.0), SAMPLE_RATE, False)[self._key])

    def score(self, paths: Sequence[str | Path]) -> list[float | ComponentError]:
        return _score_files(paths, self._one)


def distillmos(*, threads: int = 0) -> DistillMOS:
    return DistillMOS(threads)


def utmos22_strong(path: str | None = None) -> UTMOS22Strong:
    return UTMOS22Strong(path)


def dnsmos(metric: str = "ovrl") -> DNSMOS:
    """DNSMOS; ``dnsmos:p808`` (or sig, bak) picks another of its scores."""
    return DNSMOS(metric)

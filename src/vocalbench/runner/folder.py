"""A run folder's config.json: what generate records (resolved config, versions, the system's
description, the latency origin; never a secret) and the check that a folder holds one system."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from vocalbench.config import RunConfig


def versions() -> dict[str, str]:
    """Versions of the package and of the libraries a run depends on (installed ones only)."""
    from importlib import metadata

    from vocalbench._version import __version__

    out = {"vocalbench": __version__, "python": sys.version.split()[0]}
    for dist in ("openai", "websockets", "aiohttp", "numpy", "ray", "faster-whisper", "kokoro-onnx",
                 "llama-cpp-python", "onnxruntime"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    return out


def save_config(cfg: RunConfig, run_dir: Path, describe: dict[str, Any] | None) -> None:
    """RUN/config.json: the resolved config, versions, system description, latency origin; no secrets."""
    extra: dict[str, Any] = {
        "versions": versions(),
        "latency": {"clock": "time.monotonic, client side (harness)",
                    "origin": "request handed to the client (HTTP) / response.create after commit (realtime); "
                              "each reply's timings.origin names it"},
    }
    if describe is not None:
        extra["system_details"] = describe
    cfg.save(run_dir, extra=extra)


def check_resume(cfg: RunConfig, run_dir: Path) -> None:
    """A run folder holds one system: refuse (ValueError) to mix replies of another one."""
    if (run_dir / "config.json").exists():
        old = RunConfig.load(run_dir)
        if old.system != cfg.system or old.lang != cfg.lang:
            raise ValueError(f"{run_dir} holds a run of {old.system} ({old.lang}); choose another --out")


DATA_SOURCE = "data_source"  # store meta: the Hub dataset and commit the samples came from


def record_data_source(store: Any, data: str) -> None:
    """Record in the store which Hub commit ``data`` resolved to (nothing for folders and built-ins)."""
    from vocalbench.data import hub

    src = hub.source(data)
    if src is not None:
        store.set_meta(DATA_SOURCE, src)


def pinned_data(data: str, run_dir: Path) -> str:
    """``data`` pinned to the Hub commit an existing run in ``run_dir`` recorded (a resume keeps its version)."""
    from vocalbench.data import hub
    from vocalbench.runner.store import RunStore

    if hub.parse(data) is None or not (run_dir / "store.sqlite").exists():
        return data
    with RunStore(run_dir) as store:
        return hub.pinned(data, store.get_meta(DATA_SOURCE))


"""Paths and environments for the plug-in tests (imported by their conftest and tests)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "vocalbench-echo"
CLI = [sys.executable, "-m", "vocalbench.cli"]


def env_with(*sites: str | None) -> dict[str, str]:
    """The environment with ``sites`` added to ``PYTHONPATH`` (after what is there)."""
    paths = [p for p in (os.environ.get("PYTHONPATH", ""), *sites) if p]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths), "COLUMNS": "200"}

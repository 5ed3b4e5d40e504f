"""vocalbench: run the VocalBench speech-interaction benchmark end to end."""

from __future__ import annotations

from typing import Any

from vocalbench._version import __version__

__all__ = ["__version__", "overall_score"]


def overall_score(metrics: dict[str, Any], version: str = "v2") -> float:
    """The 0-100 overall score from dimension metrics (see METRICS.md); lazy import keeps start-up light."""
    from vocalbench.scoring.overall import overall_score as _overall

    return _overall(metrics, version=version)

"""vocalbench: run the VocalBench speech-interaction benchmark end to end."""

from __future__ import annotations

from typing import Any

from vocalbench._version import __version__

__all__ = ["__version__", "overall_result", "overall_score"]


def overall_score(metrics: dict[str, Any], version: str = "v2") -> float:
    """The 0-100 overall score from dimension metrics (see docs/scoring.md); lazy import keeps start-up light."""
    from vocalbench.scoring.overall import overall_score as _overall

    return _overall(metrics, version=version)


def overall_result(metrics: dict[str, Any], version: str = "v2", lang: str = "en") -> dict[str, Any]:
    """The overall as ``summary.json`` has it: ``{version, value, missing, partial}``; with a metric
    missing, ``value`` is None and ``partial`` is ``{"value": sum of the available terms, "max": ...}``."""
    from vocalbench.scoring.overall import overall_result as _result

    return _result(metrics, version=version, lang=lang)

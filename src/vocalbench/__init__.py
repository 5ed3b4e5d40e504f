"""vocalbench: run the VocalBench speech-interaction benchmark end to end.

The package facade is the top of the layers: it wires the built-in parts that lower layers look
up by name. The subset catalogue imports the scorer modules (which declare the built-in subsets)
on its first use, and the construction layer registers the built-in data set.
"""

from __future__ import annotations

from typing import Any

from vocalbench import catalog, construct  # noqa: F401  (construct registers the built-in data set)
from vocalbench._version import __version__

__all__ = ["__version__", "overall_result", "overall_score"]


def _builtin_subsets() -> None:
    """Import the scorer modules: each declares its subsets."""
    from vocalbench.scoring import subsets  # noqa: F401


catalog.on_first_use(_builtin_subsets)


def overall_score(metrics: dict[str, Any], version: str = "v2") -> float:
    """The 0-100 overall score from dimension metrics (see docs/scoring.md); lazy import keeps start-up light."""
    from vocalbench.scoring.overall import overall_score as _overall

    return _overall(metrics, version=version)


def overall_result(metrics: dict[str, Any], version: str = "v2", lang: str = "en") -> dict[str, Any]:
    """The overall as ``summary.json`` has it: ``{version, value, missing, partial}``; with a metric
    missing, ``value`` is None and ``partial`` is ``{"value": sum of the available terms, "max": ...}``."""
    from vocalbench.scoring.overall import overall_result as _result

    return _result(metrics, version=version, lang=lang)

"""vocalbench: run the VocalBench speech-interaction benchmark end to end.

The package facade is the top of the layers: it wires the built-in parts that lower layers look
up by name. The subset catalogue imports the scorer modules (which declare the built-in subsets)
on its first use, and the construction layer registers the built-in data set.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from vocalbench import catalog, construct, parts  # noqa: F401  (construct registers the built-in data set)
from vocalbench._version import __version__

if TYPE_CHECKING:
    from collections.abc import Mapping

    from pydantic import JsonValue

    from vocalbench.api import evaluate, load_summary, score

_API = ("evaluate", "score", "load_summary")

__all__ = ["__version__", "evaluate", "load_summary", "overall_result", "overall_score", "score"]


def _builtin_subsets() -> None:
    """Import the scorer modules: each declares its subsets."""
    from vocalbench.scoring import subsets  # noqa: F401


def _plugin_subsets() -> None:
    """Import the modules of the ``vocalbench.subsets`` entry points; each subset they declare is
    registered with its package (``list subsets`` shows it). A module that fails to import is named
    in one warning line and skipped: the built-in subsets and other plug-ins still work."""
    import logging

    for entry in parts.entries("subset"):
        if not entry.plugin:
            continue
        before = {s.name for s in catalog.specs()}
        try:
            entry.load()
        except ImportError as exc:
            logging.getLogger(__name__).warning("%s", exc)
            continue
        for spec in catalog.specs():
            if spec.name not in before:
                parts.register("subset", spec.name, entry.target, spec.description, package=entry.package)


catalog.on_first_use(_builtin_subsets)
catalog.on_first_use(_plugin_subsets)


def overall_score(metrics: Mapping[str, JsonValue], version: str = "v2") -> float:
    """The 0-100 overall score from dimension metrics (see docs/scoring.md); lazy import keeps start-up light."""
    from vocalbench.scoring.overall import overall_score as _overall

    return _overall(metrics, version=version)


def overall_result(metrics: Mapping[str, JsonValue], version: str = "v2", lang: str = "en") -> dict[str, JsonValue]:
    """The overall as ``summary.json`` has it: ``{version, value, missing, partial}``; with a metric
    missing, ``value`` is None and ``partial`` is ``{"value": sum of the available terms, "max": ...}``."""
    from vocalbench.scoring.overall import overall_result as _result

    return _result(metrics, version=version, lang=lang)



def __getattr__(name: str) -> Any:
    """The Python API (``evaluate``, ``score``, ``load_summary``; docs/api.md), imported on first use
    so that ``import vocalbench`` stays light."""
    if name in _API:
        from vocalbench import api

        return getattr(api, name)
    raise AttributeError(f"module 'vocalbench' has no attribute '{name}'")

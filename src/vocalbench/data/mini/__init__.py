"""The built-in bilingual ``mini`` set's items: a few per subset, written for this project.

The set is built (synthesised, verified, perturbed) by :mod:`vocalbench.construct.mini` on first use;
the data layer reaches that builder through the ``dataset`` entry it registers (a lazy
"module:attribute" target), never by importing the build layer.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

__all__ = ["items_path"]


def items_path(lang: str) -> Path:
    """The packaged items file of ``lang``."""
    if lang not in ("en", "zh"):
        raise ValueError(f"the mini set exists for en and zh, not '{lang}'")
    return Path(str(resources.files("vocalbench.data.mini").joinpath(f"items_{lang}.jsonl")))

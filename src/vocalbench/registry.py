"""Every built-in part, for listings: imports the layers so that each registers its entries
(components, systems, built-in data sets; subsets are declared in :mod:`vocalbench.catalog`).

The table itself lives in the leaf module :mod:`vocalbench.parts` (layers register there when
they are imported); this module sits above the layers, like the commands, and re-exports it.
"""

from __future__ import annotations

from vocalbench import components, data, judge, systems  # noqa: F401  (each registers its parts)
from vocalbench.errors import MissingDependency
from vocalbench.parts import _REGISTRY, Entry, entries, get, register

__all__ = ["MissingDependency", "Entry", "register", "get", "entries", "_REGISTRY"]

"""The table of named parts (components, systems, subsets, built-in data sets) with lazy imports.

Entries are "module:attribute" strings, imported only when used, so listing parts or running
``vocalbench --help`` never imports a heavy library. ``extra`` names the pip extra that installs
what an entry needs, and ``requires`` the importable modules that tell whether it is installed.

This is a leaf module: each layer registers its own entries when its package is imported
(``components``, ``systems``, ``scoring``, ``data``), and :mod:`vocalbench.registry` imports
them all for a complete listing. A layer never imports the registry of the layers above it.
"""

from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass, field
from typing import Any

from vocalbench.errors import MissingDependency


@dataclass(frozen=True)
class Entry:
    kind: str
    name: str
    target: str  # "package.module:attribute"
    summary: str
    extra: str | None = None
    requires: tuple[str, ...] = field(default_factory=tuple)

    def installed(self) -> bool:
        return all(importlib.util.find_spec(m) is not None for m in self.requires)

    def missing(self) -> list[str]:
        return [m for m in self.requires if importlib.util.find_spec(m) is None]

    def load(self) -> Any:
        for m in self.requires:
            if importlib.util.find_spec(m) is None:
                raise MissingDependency(f"{self.kind} '{self.name}'", m, self.extra or "all")
        module, _, attr = self.target.partition(":")
        return getattr(importlib.import_module(module), attr)


_REGISTRY: dict[tuple[str, str], Entry] = {}


def register(kind: str, name: str, target: str, summary: str, extra: str | None = None,
             requires: tuple[str, ...] = ()) -> None:
    _REGISTRY[(kind, name)] = Entry(kind, name, target, summary, extra, tuple(requires))


def get(kind: str, name: str) -> Entry:
    try:
        return _REGISTRY[(kind, name)]
    except KeyError:
        known = ", ".join(sorted(n for k, n in _REGISTRY if k == kind)) or "none"
        raise KeyError(f"unknown {kind} '{name}' (known: {known})") from None


def entries(kind: str | None = None) -> list[Entry]:
    return [e for (k, _), e in sorted(_REGISTRY.items()) if kind is None or k == kind]

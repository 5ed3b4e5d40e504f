"""The table of named parts (components, systems, subsets, built-in data sets) with lazy imports.

Entries are "module:attribute" strings, imported only when used, so listing parts or running
``vocalbench --help`` never imports a heavy library. ``extra`` names the pip extra that installs
what an entry needs, and ``requires`` the importable modules that tell whether it is installed.

This is a leaf module: each layer registers its own entries when its package is imported
(``components``, ``systems``, ``scoring``, ``data``), and :mod:`vocalbench.registry` imports
them all for a complete listing. A layer never imports the registry of the layers above it.

Plug-ins come from outside the package in two ways (docs/extending.md):

- entry points of installed packages, read on the first look-up (never at import):
  ``vocalbench.systems`` (``NAME = "module:factory"``), ``vocalbench.components``
  (``"KIND.NAME" = "module:factory"``, KIND one of asr, tts, mos, emotion, llm),
  ``vocalbench.judges`` (``NAME = "module:factory"``) and ``vocalbench.subsets``
  (``NAME = "module"``, imported before the subset catalogue is read);
- a SPEC that is itself ``module:attr`` (:func:`direct`): any importable factory.

A broken plug-in (a module that does not import, an entry point that names nothing) is listed with
its problem and fails in one line (:class:`PluginError`) when used; it never breaks anything else.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import re
import threading
from dataclasses import dataclass, field
from typing import Any

from vocalbench.errors import MissingDependency

BUILTIN = "vocalbench"  # the package of the built-in parts
COMPONENT_KINDS = ("asr", "tts", "mos", "emotion", "llm")
# entry-point group -> the kind of its entries (None: the kind is the entry's "KIND." prefix)
GROUPS: dict[str, str | None] = {"vocalbench.systems": "system", "vocalbench.components": None,
                                 "vocalbench.judges": "judge", "vocalbench.subsets": "subset"}
_TARGET = re.compile(r"^([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*):([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)$")


class PluginError(ImportError):
    """A plug-in that cannot be loaded; the message is one line naming it and its package."""


@dataclass(frozen=True)
class Entry:
    kind: str
    name: str
    target: str  # "package.module:attribute" (a subset plug-in: "package.module")
    summary: str
    extra: str | None = None
    requires: tuple[str, ...] = field(default_factory=tuple)
    package: str = BUILTIN  # the distribution it comes from
    problem: str | None = None  # why a plug-in cannot be used (None: as far as a listing can tell, it can)

    @property
    def plugin(self) -> bool:
        return self.package != BUILTIN

    def installed(self) -> bool:
        return not self.missing() and self.problem is None

    def missing(self) -> list[str]:
        return [m for m in self.requires if importlib.util.find_spec(m) is None]

    def load(self) -> Any:
        if self.problem is not None:
            raise PluginError(self.describe_problem(self.problem))
        for m in self.requires:
            if importlib.util.find_spec(m) is None:
                raise MissingDependency(f"{self.kind} '{self.name}'", m, self.extra or "all")
        module, _, attr = self.target.partition(":")
        if not self.plugin:
            return _attribute(importlib.import_module(module), attr)
        try:  # a plug-in may raise anything while importing: one line naming it, never a traceback
            obj = importlib.import_module(module)
            return _attribute(obj, attr) if attr else obj
        except Exception as exc:
            raise PluginError(self.describe_problem(f"{type(exc).__name__}: {exc}")) from exc

    def describe_problem(self, problem: str) -> str:
        where = f" from package '{self.package}'" if self.package else ""
        target = f" ({self.target})" if self.target != self.name else ""
        return f"plug-in {self.kind} '{self.name}'{where}{target} cannot be loaded: {problem}"


def _attribute(obj: Any, path: str) -> Any:
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


_REGISTRY: dict[tuple[str, str], Entry] = {}
_PLUGINS: dict[tuple[str, str], Entry] | None = None
_SCAN = threading.Lock()


def register(kind: str, name: str, target: str, summary: str, extra: str | None = None,
             requires: tuple[str, ...] = (), package: str = BUILTIN) -> None:
    _REGISTRY[(kind, name)] = Entry(kind, name, target, summary, extra, tuple(requires), package)


def plugins() -> dict[tuple[str, str], Entry]:
    """The entry-point plug-ins of the installed packages (read once, on first use; nothing imported)."""
    global _PLUGINS
    with _SCAN:
        if _PLUGINS is None:
            _PLUGINS = _scan()
        return _PLUGINS


def _scan() -> dict[tuple[str, str], Entry]:
    found: dict[tuple[str, str], Entry] = {}
    for group, group_kind in GROUPS.items():
        for ep in importlib.metadata.entry_points(group=group):
            package = ep.dist.name if ep.dist is not None else ""
            kind, name, problem = group_kind or "", ep.name, None
            if group_kind is None:
                kind, _, name = ep.name.partition(".")
                if kind not in COMPONENT_KINDS or not name:
                    kind, name = "component", ep.name
                    problem = f"entry point name '{ep.name}' is not KIND.NAME (KIND: {', '.join(COMPONENT_KINDS)})"
            elif group_kind != "subset" and not _TARGET.match(ep.value):
                problem = f"entry point value '{ep.value}' is not module:attribute"
            if problem is None:
                problem = _module_problem(ep.value.partition(":")[0])
            summary = (ep.dist.metadata["Summary"] if ep.dist is not None else None) or "plug-in"
            entry = Entry(kind, name, ep.value, summary, None, (), package, problem)
            if (kind, name) in _REGISTRY and problem is None:
                entry = Entry(kind, name, ep.value, entry.summary, None, (), package,
                              f"the built-in {kind} '{name}' has this name")
            found.setdefault((kind, name), entry)
    return found


def _module_problem(module: str) -> str | None:
    """Why ``module`` cannot be imported, as far as can be told without importing it (its top package)."""
    top = module.strip().split(".")[0]
    if not top.isidentifier():
        return f"'{module}' is not a module name"
    try:
        return None if importlib.util.find_spec(top) is not None else f"no module named '{top}'"
    except (ImportError, ValueError) as exc:
        return f"{type(exc).__name__}: {exc}"


def get(kind: str, name: str) -> Entry:
    """The built-in part ``name`` of ``kind``, else the plug-in of that name (built-ins win)."""
    if (kind, name) in _REGISTRY:
        return _REGISTRY[(kind, name)]
    found = plugins().get((kind, name))
    if found is not None:
        return found
    known = ", ".join(sorted({n for k, n in (*_REGISTRY, *plugins()) if k == kind})) or "none"
    raise KeyError(f"unknown {kind} '{name}' (known: {known}; or module:attribute)")


def entries(kind: str | None = None) -> list[Entry]:
    """Built-in entries, then the plug-ins (a plug-in that a built-in shadows is listed with that problem)."""
    rows = [e for (k, _), e in sorted(_REGISTRY.items()) if kind is None or k == kind]
    return rows + [e for (k, _), e in sorted(plugins().items()) if kind is None or k == kind]


def direct(kind: str, spec: str) -> tuple[Entry, str] | None:
    """A SPEC that names a factory itself, ``module:attr`` (a system may add ``:ARG``): its entry and
    the argument; None when the SPEC is not of that form."""
    head, sep, rest = spec.strip().partition(":")
    attr, _, arg = rest.partition(":")
    if not sep or not _TARGET.match(f"{head}:{attr}"):
        return None
    if arg and kind != "system":
        return None
    return Entry(kind, f"{head}:{attr}", f"{head}:{attr}", "module:attribute", package=_package_of(head),
                 problem=_module_problem(head)), arg


def _package_of(module: str) -> str:
    """The distribution that holds ``module`` (its top package), or '' for a module on the path only."""
    names = importlib.metadata.packages_distributions().get(module.split(".")[0], [])
    return names[0] if names else ""

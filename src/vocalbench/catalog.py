"""The subset catalogue: every subset is declared once, next to its scorer, with :func:`declare`.

A :class:`SubsetSpec` says everything the layers need to know about a subset: the languages it
exists in (with the official item count), the official fields its records must carry, the metric
``summary.json`` reports and how it is described, the scorer factory, the dimension it carries and
the control subset it is compared against. Data loading (order, validation, language detection),
the scoring engine (which scorer, which subsets first), the dimensions, summary, leaderboard,
plots and viewer all read these declarations; no other table names subsets.

This module is a leaf (it imports nothing from vocalbench at load). The built-in declarations
live in :mod:`vocalbench.scoring.subsets`; the first question asked of the catalogue imports that
package through its name (as the registry's lazy "module:attribute" entries do), so any layer can
read the catalogue without importing the scoring layer. A new subset declared anywhere (a plugin,
a test module) is seen by every layer as soon as its module is imported.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any

BUILTIN = "vocalbench.scoring.subsets"  # the package whose modules declare the built-in subsets
LANGS = ("en", "zh")


@dataclass(frozen=True)
class SubsetSpec:
    """One subset, declared once.

    ``items``: ``{lang: official item count}`` for each language the subset exists in (None when
    there is no public release, e.g. our own dialect set). ``scorer``: ``(subset, lang, protocol)
    -> scorer``. ``order``: position in the canonical (report) order. ``required``: official
    fields (beyond Qid, Audio, Question) every record must carry. ``dimension``: the dimension of
    ``summary.json`` this subset carries (subsets sharing one are averaged, e.g. zh knowledge);
    with ``dimension_is_preserve_rate`` the dimension is instead this subset's preserve rate over
    ``control`` (code_switching, dialect). ``control``: the subset scored first whose per-item main
    values this subset's tally reads (robust_clean, cs_knowledge_en, dialect_mandarin).
    ``percent``: the metric is a percentage of 0/1 item values. ``rubrics``: the ids (or id
    prefixes, ending in ``*``) of the judge rubrics its scorer uses.
    ``categories``: the report draws per-category bars of this subset. ``mixed_language``: its
    queries are code-switched (a cascade's ASR detects the language instead of being told).
    ``loads_control``: selecting this subset also selects its control (robust loads robust_clean).
    ``timed``: its replies are generated first and timed, and carry the acoustic (UTMOS, WER/PER)
    and latency rows (single_round). ``reuses``: a successful reply of that subset to the same
    question stands for this subset's reply (robust_clean reuses single_round).
    """

    name: str
    items: Mapping[str, int | None]
    metric: str
    description: str
    scorer: Callable[[str, str, str], Any]
    order: int = 1000
    label: str = ""
    required: tuple[str, ...] = ()
    dimension: str | None = None
    dimension_is_preserve_rate: bool = False
    control: str | None = None
    percent: bool = False
    rubrics: tuple[str, ...] = ()
    categories: bool = False
    mixed_language: bool = False
    loads_control: bool = False
    timed: bool = False
    reuses: str | None = None

    @property
    def langs(self) -> tuple[str, ...]:
        return tuple(self.items)

    @property
    def title(self) -> str:
        return self.label or self.name.replace("_", " ").capitalize()


_SPECS: dict[str, SubsetSpec] = {}
_LOADED = False
_LOCK = threading.RLock()


def declare(spec: SubsetSpec) -> SubsetSpec:
    """Add (or replace) a subset's declaration; returns it."""
    unknown = [lang for lang in spec.items if lang not in LANGS]
    if unknown:
        raise ValueError(f"subset '{spec.name}': unknown language(s) {unknown} (known: {', '.join(LANGS)})")
    with _LOCK:
        _SPECS[spec.name] = spec
    return spec


def forget(name: str) -> None:
    """Drop a declaration (tests that declare a subset of their own clean up with this)."""
    with _LOCK:
        _SPECS.pop(name, None)


def _load() -> dict[str, SubsetSpec]:
    global _LOADED
    if not _LOADED:
        with _LOCK:
            if not _LOADED:
                _LOADED = True
                importlib.import_module(BUILTIN)
    return _SPECS


def get(name: str) -> SubsetSpec:
    try:
        return _load()[name]
    except KeyError:
        raise KeyError(f"unknown subset '{name}' (known: {', '.join(sorted(_load()))})") from None


def find(name: str) -> SubsetSpec | None:
    return _load().get(name)


# metrics that are a percentage of 0/1 item values, for rows of undeclared subsets
PERCENT_METRICS = frozenset({"accuracy", "following_rate", "eer", "refusal_rate"})


def is_percent(subset: str, metric: str) -> bool:
    """Whether a subset's metric is a percentage of 0/1 item values (its declaration says; for an
    undeclared subset or another metric, :data:`PERCENT_METRICS`)."""
    spec = find(subset)
    return spec.percent if spec is not None and spec.metric == metric else metric in PERCENT_METRICS


def specs(lang: str | None = None) -> list[SubsetSpec]:
    """The declarations (of one language), in canonical order."""
    found = [s for s in _load().values() if lang is None or lang in s.items]
    return sorted(found, key=lambda s: (s.order, s.name))


def names(lang: str) -> list[str]:
    """Subset names of ``lang`` in canonical order."""
    return [s.name for s in specs(lang)]


def counts(lang: str) -> dict[str, int | None]:
    """``{subset: official item count}`` of ``lang`` in canonical order."""
    return {s.name: s.items[lang] for s in specs(lang)}


def ordered(subsets: Collection[str], lang: str) -> list[str]:
    """Canonical order for known subsets, then unknown ones alphabetically."""
    known = names(lang)
    return [s for s in known if s in subsets] + sorted(s for s in subsets if s not in known)


def controls() -> dict[str, str]:
    """``{subset: the control subset it is compared against}``."""
    return {s.name: s.control for s in specs() if s.control}


def dimension_members(dimension: str, lang: str) -> list[str]:
    """The subsets of ``lang`` that carry ``dimension``, in canonical order."""
    return [s.name for s in specs(lang) if s.dimension == dimension]


def with_controls(selected: list[str], available: Collection[str]) -> list[str]:
    """``selected`` plus the available controls its subsets load (``loads_control``), appended."""
    out = list(selected)
    for name in selected:
        spec = find(name)
        control = spec.control if spec is not None and spec.loads_control else None
        if control is not None and control in available and control not in out:
            out.append(control)
    return out


def timed() -> list[str]:
    """The subsets whose replies are timed and carry the acoustic and latency rows."""
    return [s.name for s in specs() if s.timed]


def reusers() -> dict[str, str]:
    """``{subset: the subset whose replies to the same question it reuses}``."""
    return {s.name: s.reuses for s in specs() if s.reuses}

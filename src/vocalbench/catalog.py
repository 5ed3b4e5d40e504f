"""The subset catalogue: every subset is declared once, next to its scorer, with :func:`declare`.

A :class:`SubsetSpec` says everything the layers need to know about a subset: the languages it
exists in (with the official item count), the official fields its records must carry, where its
files and audio live in a release (:class:`Layout`), how its items cluster for the bootstrap
(:class:`Clustering`), how it is built, the metric ``summary.json`` reports and how it is
described, the scorer factory, the dimension it carries and the control subset it is compared
against. Data loading (order, validation, language detection, output files), construction, the
scoring engine, the statistics, summary, leaderboard, plots and viewer all read these
declarations; no other module names a subset.

This module is a leaf: it imports nothing from vocalbench. The built-in declarations live in
:mod:`vocalbench.scoring.subsets`; the package facade (``vocalbench/__init__.py``) registers the
function that imports them with :func:`on_first_use`, and the first question asked of the
catalogue runs it, so any layer reads the catalogue without importing the scoring layer. A subset
declared anywhere else (a plugin, a test module) is seen by every layer once its module is imported.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

LANGS = ("en", "zh")


@dataclass(frozen=True)
class Layout:
    """Where a subset's items live in a release of one language: the Qid prefix (empty: the subset
    name) and its number of digits, the folder under ``audio/`` (empty: the subset name) and the
    records' ``Set`` field (empty: the subset name)."""

    qid: str = ""
    digits: int = 3
    audio: str = ""
    set_name: str = ""


@dataclass(frozen=True)
class Clustering:
    """How a subset's items group for the bootstrap: items with the same key form one cluster, shared
    with the subsets of the same ``group`` (default: the subset alone), and clusters are resampled
    within their group. The key is the item itself (``item``), its trailing question number
    (``number``: the conditions of one robust question and its clean item) or its first history
    turn (``history``: the turns of one dialogue). A ``base_id`` in the sample metadata overrides it."""

    by: Literal["item", "number", "history"] = "item"
    group: str | None = None


@dataclass(frozen=True)
class Mean:
    """A subset's number: the mean of its items' ``score`` (× 100 for a ``percent`` subset)."""

    score: str = "main"


@dataclass(frozen=True)
class Ratio:
    """A subset's number: Σ ``numerator`` / Σ ``denominator`` × ``scale`` over its items' ``score``
    details (a corpus-level rate, e.g. edit distances over reference lengths)."""

    numerator: str
    denominator: str
    scale: float = 1.0
    score: str = "main"


Measure = Mean | Ratio  # what a subset's row is, declared; a scorer's own ``tally()`` overrides it


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
    ``loads_control``: selecting this subset also selects its control (robust loads robust_clean),
    and ``--limit`` keeps its items of the control's kept questions.
    ``timed``: its replies are generated first and timed, and carry the acoustic (UTMOS, WER/PER)
    and latency rows (single_round). ``reuses``: a successful reply of that subset to the same
    question stands for this subset's reply (robust_clean reuses single_round).

    Release layout: ``layouts`` by language (:class:`Layout`); ``output_files``: other names of its
    file in official model outputs (``json/instruction.json``); ``legacy_ids``: Qid prefixes of
    outputs from before a rename, mapped onto its items by number (``chat-007``).
    ``clustering``: how its items cluster for the bootstrap (:class:`Clustering`). ``measure``: its
    row's number (:class:`Mean` by default, :class:`Ratio`), unless its scorer brings its own tally.

    Construction: ``spoken``: the language its queries are spoken in when it is not the release's
    (cs_knowledge_en: en). ``dialect``: its queries are spoken in the item's dialect. ``perturbed``:
    its items are made from its control's by ``build perturb`` (robust). ``clear_voices``: its
    queries are read by the clearest voices (an exact answer must survive the round trip).
    ``item_fields``: item fields a build needs beyond the mapped ``required`` ones (dialect).
    A subset whose control is not ``perturbed`` is built with it: each item also gives the
    control's record under the same Qid (cs_knowledge_en, dialect_mandarin).
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
    layouts: Mapping[str, Layout] = field(default_factory=dict)
    output_files: tuple[str, ...] = ()
    legacy_ids: tuple[str, ...] = ()
    clustering: Clustering = Clustering()
    measure: Measure = Mean()
    spoken: str | None = None
    dialect: bool = False
    perturbed: bool = False
    clear_voices: bool = False
    item_fields: tuple[str, ...] = ()

    @property
    def langs(self) -> tuple[str, ...]:
        return tuple(self.items)

    @property
    def title(self) -> str:
        return self.label or self.name.replace("_", " ").capitalize()

    @property
    def group(self) -> str:
        """The bootstrap stratum of its items (:class:`Clustering`)."""
        return self.clustering.group or self.name

    def layout(self, lang: str) -> Layout:
        """Its layout in a release of ``lang``, defaults filled in."""
        given = self.layouts.get(lang, Layout())
        return Layout(given.qid or self.name, given.digits, given.audio or self.name, given.set_name or self.name)


_SPECS: dict[str, SubsetSpec] = {}
_LOADERS: list[Callable[[], None]] = []
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


def on_first_use(loader: Callable[[], None]) -> None:
    """Run ``loader`` (which declares subsets) before the next question asked of the catalogue."""
    with _LOCK:
        _LOADERS.append(loader)


def _load() -> dict[str, SubsetSpec]:
    if _LOADERS:
        with _LOCK:
            while _LOADERS:
                _LOADERS.pop(0)()
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


def output_files(subset: str) -> tuple[str, ...]:
    """The names a subset's file may have in official model outputs: its own, then its other names."""
    spec = find(subset)
    return (subset, *(spec.output_files if spec is not None else ()))

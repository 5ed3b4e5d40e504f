"""Subset results -> the ``dimensions`` of ``summary.json`` (docs/scoring.md), null when not run.

How a dimension is made is declared once, by :func:`recipe`, from the subsets' declarations
(:mod:`vocalbench.catalog`): a dimension carried by one subset copies its value (reasoning,
empathy = emotion, ...); one carried by several is their mean (zh knowledge:
chinese/foreign/general_knowledge); a subset declared with ``dimension_is_preserve_rate`` gives
``min(100, acc(subset) / acc(control) * 100)`` (code_switching, dialect). utmos, wer|per, rtf,
fcl_ms and faa_ms copy the acoustic and latency rows. :func:`compute` applies the recipes to the
subset rows' values (``summary.json``), the statistics graph to subset statistics (the report's
bootstrap). A dimension built from an incomplete subset is reported in ``incomplete``.

:data:`DIMENSIONS` is the one table of how each dimension is shown (label, digits, direction, on
the radar); the report, leaderboard and plots read it.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Literal

from vocalbench import catalog
from vocalbench.scoring.base import SubsetResult
from vocalbench.stats import Combine, Values, mean_of, pr_value, preserve_rate

__all__ = ["DIMENSIONS", "ROWS", "DimensionSpec", "Dimensions", "Recipe", "ci_row", "clarity_of", "compute",
           "dimension_order", "preserve_rate", "recipe", "shown", "subsets_of"]


@dataclass(frozen=True)
class DimensionSpec:
    """How a dimension is shown: ``label``, ``short`` (radar axis), ``digits`` printed,
    ``lower_is_better``, and ``radar``: drawn on the radar, where its overall term's maximum
    (``scoring.overall.Term.hi``) maps to 1."""

    name: str
    label: str
    short: str = ""
    digits: int = 2
    lower_is_better: bool = False
    radar: bool = False


DIMENSIONS: dict[str, DimensionSpec] = {d.name: d for d in (
    DimensionSpec("knowledge", "Knowledge", "K", radar=True),
    DimensionSpec("reasoning", "Reasoning", "R", radar=True),
    DimensionSpec("creativity", "Creativity", "C", 3, radar=True),
    DimensionSpec("single_round", "Single-round", "SR", 3, radar=True),
    DimensionSpec("multi_round", "Multi-round"),
    DimensionSpec("instruction_following", "Instr. following", "FR", radar=True),
    DimensionSpec("empathy", "Empathy", "EER", radar=True),
    DimensionSpec("safety", "Safety", "RR", radar=True),
    DimensionSpec("robust", "Robust PR", "PR", radar=True),
    DimensionSpec("utmos", "UTMOS", "UTMOS", 3, radar=True),
    DimensionSpec("wer", "WER", lower_is_better=True),
    DimensionSpec("per", "PER", lower_is_better=True),
    DimensionSpec("code_switching", "Code-switch PR"),
    DimensionSpec("dialect", "Dialect PR"),
    DimensionSpec("rtf", "RTF", digits=3, lower_is_better=True),
    DimensionSpec("fcl_ms", "FCL (ms)", digits=0, lower_is_better=True),
    DimensionSpec("faa_ms", "First audible (ms)", digits=0, lower_is_better=True),
)}
# dimensions copied from the acoustic and latency rows of single_round replies (not subsets)
ROWS = ("utmos", "wer", "per", "rtf", "fcl_ms", "faa_ms")


def clarity_of(lang: str) -> str:
    """The clarity dimension of a language: PER for Mandarin, WER otherwise."""
    return "per" if lang == "zh" else "wer"


def dimension_order(lang: str) -> list[str]:
    """Every dimension of ``summary.json`` for ``lang`` (dimensions of subsets of either language,
    the clarity one of this language), then any dimension a non-built-in subset declares."""
    other = "wer" if lang == "zh" else "per"
    out = [d for d in DIMENSIONS if d != other]
    return out + sorted({s.dimension for s in catalog.specs() if s.dimension and s.dimension not in out})


def shown(lang: str) -> list[str]:
    """The dimensions a report shows for ``lang``: those some subset of ``lang`` carries, and the rows."""
    carried = {s.dimension for s in catalog.specs(lang) if s.dimension}
    rows = ("utmos", clarity_of(lang), "rtf", "fcl_ms", "faa_ms")
    return [d for d in dimension_order(lang) if d in carried or d in rows]


def subsets_of(dimension: str, lang: str) -> list[str]:
    """The subsets (or rows) a dimension is built from: its carriers, plus the control subset of
    each (robust_clean for robust, cs_knowledge_en for code_switching)."""
    if dimension in ROWS:
        return [dimension]
    out: list[str] = []
    for name in catalog.dimension_members(dimension, lang):
        spec = catalog.get(name)
        out.append(name)
        if spec.control:
            out.append(spec.control)
    return out


def ci_row(dimension: str, lang: str) -> str | None:
    """The ``subsets`` row of ``summary.json`` whose ``ci95`` is this dimension's CI: the row of a
    dimension copied from one subset or row; None for a mean of subsets or a preserve rate."""
    if dimension in ROWS:
        return dimension
    carriers = catalog.dimension_members(dimension, lang)
    if len(carriers) == 1 and not catalog.get(carriers[0]).dimension_is_preserve_rate:
        return carriers[0]
    return None


def _copy(values: Sequence[Values]) -> Values:
    return values[0]


def _preserve(values: Sequence[Values]) -> Values:
    return pr_value(values[0], values[1])


@dataclass(frozen=True)
class Recipe:
    """How a dimension is made: ``fn`` of the values of ``inputs`` (subsets, or a row), floats or
    bootstrap arrays alike. ``kind``: copy, mean (of several subsets) or preserve_rate (a subset
    over its control); ``partial``: a mean of fewer subsets than carry the dimension."""

    kind: Literal["copy", "mean", "preserve_rate"]
    inputs: tuple[str, ...]
    fn: Combine
    partial: bool = False


def recipe(dimension: str, lang: str, present: Collection[str]) -> Recipe | None:
    """The one declaration of how ``dimension`` is made of the subsets (or rows) in ``present`` (those
    that have a value); None when it cannot be made of them."""
    if dimension in ROWS:
        return Recipe("copy", (dimension,), _copy) if dimension in present else None
    members = catalog.dimension_members(dimension, lang)
    if len(members) == 1:
        spec = catalog.get(members[0])
        if spec.dimension_is_preserve_rate:
            inputs = (spec.name, spec.control or "")
            return Recipe("preserve_rate", inputs, _preserve) if all(n in present for n in inputs) else None
        return Recipe("copy", (spec.name,), _copy) if spec.name in present else None
    have = tuple(n for n in members if n in present)
    return Recipe("mean", have, mean_of, partial=len(have) < len(members)) if have else None


@dataclass
class Dimensions:
    values: dict[str, float | None]
    incomplete: set[str] = field(default_factory=set)


def compute(results: dict[str, SubsetResult], lang: str, digits: int = 3) -> Dimensions:
    """The dimensions dict from subset/acoustic/latency rows keyed by name: the recipes applied to the
    rows' values (a mean reads the subsets that have a value; a copy or a preserve rate any row)."""
    dims = Dimensions(values={k: None for k in dimension_order(lang)})
    valued = {n for n, r in results.items() if r.value is not None}
    for dim in dims.values:
        several = dim not in ROWS and len(catalog.dimension_members(dim, lang)) > 1
        how = recipe(dim, lang, valued if several else results)
        if how is None:
            continue
        values = [results[n].value for n in how.inputs]
        if how.kind == "preserve_rate":  # None when either is missing or the control is not positive
            value = preserve_rate(values[0], values[1])
        else:
            value = None if None in values else how.fn([float(v) for v in values if v is not None])
        dims.values[dim] = None if value is None else round(float(value), digits)
        if value is not None and (how.partial or any(not results[n].complete for n in how.inputs)):
            dims.incomplete.add(dim)
    return dims

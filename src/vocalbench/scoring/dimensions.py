"""Subset results -> the ``dimensions`` of ``summary.json`` (DESIGN.md), null when not run.

Which subsets make a dimension is read from their declarations (:mod:`vocalbench.catalog`):
a dimension carried by one subset copies its value (reasoning, empathy = emotion, ...); one carried
by several is their mean (zh knowledge: chinese/foreign/general_knowledge); a subset declared with
``dimension_is_preserve_rate`` gives ``min(100, acc(subset) / acc(control) * 100)`` (code_switching,
dialect). utmos, wer|per, rtf, fcl_ms and faa_ms copy the acoustic and latency rows. A dimension built from
an incomplete subset is reported in ``incomplete``.

:data:`DIMENSIONS` is the one table of how each dimension is shown (label, digits, direction,
radar scale); the report, leaderboard and plots read it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from vocalbench import catalog
from vocalbench.scoring.base import SubsetResult
from vocalbench.scoring.stats import mean_of, preserve_rate

__all__ = ["DIMENSIONS", "ROWS", "DimensionSpec", "Dimensions", "ci_row", "clarity_of", "compute", "dimension_order",
           "preserve_rate", "shown", "subsets_of"]


@dataclass(frozen=True)
class DimensionSpec:
    """How a dimension is shown: ``label``, ``short`` (radar axis), ``digits`` printed,
    ``lower_is_better``, and ``radar`` (the value that maps to 1 on the radar; None: not drawn)."""

    name: str
    label: str
    short: str = ""
    digits: int = 2
    lower_is_better: bool = False
    radar: float | None = None


DIMENSIONS: dict[str, DimensionSpec] = {d.name: d for d in (
    DimensionSpec("knowledge", "Knowledge", "K", radar=100.0),
    DimensionSpec("reasoning", "Reasoning", "R", radar=100.0),
    DimensionSpec("creativity", "Creativity", "C", 3, radar=5.0),
    DimensionSpec("single_round", "Single-round", "SR", 3, radar=5.0),
    DimensionSpec("multi_round", "Multi-round"),
    DimensionSpec("instruction_following", "Instr. following", "FR", radar=100.0),
    DimensionSpec("empathy", "Empathy", "EER", radar=100.0),
    DimensionSpec("safety", "Safety", "RR", radar=100.0),
    DimensionSpec("robust", "Robust PR", "PR", radar=100.0),
    DimensionSpec("utmos", "UTMOS", "UTMOS", 3, radar=5.0),
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


@dataclass
class Dimensions:
    values: dict[str, float | None]
    incomplete: set[str] = field(default_factory=set)
    sources: dict[str, list[str]] = field(default_factory=dict)


def compute(results: dict[str, SubsetResult], lang: str, digits: int = 3) -> Dimensions:
    """The dimensions dict from subset/acoustic/latency rows keyed by name."""
    dims = Dimensions(values={k: None for k in dimension_order(lang)})

    def take(dim: str, names: list[str], value: float | None) -> None:
        dims.values[dim] = None if value is None else round(float(value), digits)
        dims.sources[dim] = names
        if value is not None and any(not results[n].complete for n in names if n in results):
            dims.incomplete.add(dim)

    for dim in dims.values:
        if dim in ROWS:
            if dim in results:
                take(dim, [dim], results[dim].value)
            continue
        members = catalog.dimension_members(dim, lang)
        if len(members) == 1:
            spec = catalog.get(members[0])
            if spec.dimension_is_preserve_rate:
                mixed, control = spec.name, spec.control or ""
                if mixed in results and control in results:
                    take(dim, [mixed, control], preserve_rate(results[mixed].value, results[control].value))
            elif spec.name in results:
                take(dim, [spec.name], results[spec.name].value)
        elif members:  # a mean of several subsets (zh knowledge)
            present = [n for n in members if n in results and results[n].value is not None]
            if present:
                take(dim, present, mean_of([float(results[n].value or 0.0) for n in present]))
                if len(present) < len(members):
                    dims.incomplete.add(dim)
    return dims

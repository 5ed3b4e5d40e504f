"""The statistics graph: a run's item scores as per-cluster sums, and every statistic on them.

Each subset's tally says what an item adds to the per-cluster column sums and the pure function
that turns their totals into its value (``Tally.item_sums`` / ``Tally.statistic``; the acoustic rows'
tally likewise); a dimension combines subset statistics as :func:`vocalbench.scoring.dimensions.recipe`
declares, and the overall adds the terms of :data:`vocalbench.scoring.overall.TERMS`. The report's
confidence intervals, paired comparisons, repeats and per-category bars all evaluate these
functions, on full totals or on bootstrap replicates (:mod:`vocalbench.stats`); terms
without item scores enter the overall as their fixed summary value, and a note says so.

Items that share a base question form one cluster (:class:`vocalbench.catalog.Clustering`), resampled
within their subset family.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from vocalbench import catalog
from vocalbench.records import Sample, Score
from vocalbench.scoring.base import Tally
from vocalbench.scoring.dimensions import dimension_order, recipe
from vocalbench.scoring.overall import TERMS, Term
from vocalbench.scoring.subsets import scorer_for, tally_of
from vocalbench.scoring.subsets.acoustic import AcousticTally
from vocalbench.scoring.tally import MeanTally, column
from vocalbench.stats import DEFAULT_RESAMPLES, Combine, Statistic, interval, replicate_totals

Key = tuple[str, str]  # (subset, sample id)
_TRAILING_NUMBER = re.compile(r"(\d+)$")


def cluster_key(subset: str, sample_id: str, sample: Sample | None = None) -> str:
    """The cluster (base item) of a sample, as its subset's :class:`~vocalbench.catalog.Clustering` says.

    ``metadata['base_id']`` (or ``cluster``, ``base_qid``) wins when present. ``number``: items of one
    group sharing the trailing question number (``robust-white_noise-snr_-5-007`` and ``robust-007``);
    ``history``: turns of one dialogue (same first history turn); ``item`` in a group: the same Qid
    (cs_knowledge and cs_knowledge_en). Anything else is its own cluster.
    """
    meta = sample.metadata if sample is not None else {}
    for k in ("base_id", "cluster", "base_qid"):
        if meta.get(k):
            return f"{subset.split('_')[0]}:{meta[k]}"
    spec = catalog.find(subset)
    how = spec.clustering if spec is not None else catalog.Clustering()
    group = how.group or subset
    if how.by == "number":
        m = _TRAILING_NUMBER.search(sample_id)
        return f"{group}:{int(m.group(1))}" if m else f"{group}:{sample_id}"
    if how.by == "history" and sample is not None and sample.history:
        return f"{group}:{sample.history[0].text.strip().lower()[:200]}"
    return f"{group}:{sample_id}"


def stratum(subset: str) -> str:
    """The bootstrap stratum of a subset's clusters (its clustering group)."""
    spec = catalog.find(subset)
    return spec.group if spec is not None else subset


@dataclass
class ClusterTable:
    """Per-cluster sums of named columns, with each cluster's stratum."""

    columns: list[str] = field(default_factory=list)
    clusters: list[str] = field(default_factory=list)
    strata: list[str] = field(default_factory=list)
    _rows: dict[str, dict[str, float]] = field(default_factory=dict)
    _col_index: dict[str, int] = field(default_factory=dict)

    def add(self, cluster: str, stratum: str, column: str, value: float) -> None:
        """Add ``value`` to ``column`` of ``cluster`` (creating both on first use)."""
        if cluster not in self._rows:
            self._rows[cluster] = {}
            self.clusters.append(cluster)
            self.strata.append(stratum)
        if column not in self._col_index:
            self._col_index[column] = len(self.columns)
            self.columns.append(column)
        row = self._rows[cluster]
        row[column] = row.get(column, 0.0) + float(value)

    def matrix(self, clusters: Sequence[str], columns: Sequence[str]) -> np.ndarray:
        """(len(clusters), len(columns)) sums, zero where a cluster lacks a column."""
        m = np.zeros((len(clusters), len(columns)))
        for i, c in enumerate(clusters):
            row = self._rows.get(c, {})
            for j, col in enumerate(columns):
                m[i, j] = row.get(col, 0.0)
        return m

    def holding(self, columns: Sequence[str]) -> set[str]:
        """The clusters with a non-zero sum in any of ``columns``."""
        return {c for c in self.clusters if any(self._rows[c].get(col, 0.0) != 0 for col in columns)}


@dataclass
class Graph:
    """Per-cluster sums of one run and the statistics defined on them."""

    table: ClusterTable
    stats: dict[str, Statistic] = field(default_factory=dict)
    owner_items: dict[str, set[Key]] = field(default_factory=dict)  # subset (or row) -> the items adding to it
    fixed: dict[str, float] = field(default_factory=dict)  # overall terms without item scores

    def items(self, name: str) -> set[Key]:
        """The items of the subsets (or rows) whose sums a statistic reads."""
        stat = self.stats.get(name)
        owners = {c.split("/", 1)[0] for c in stat.columns} if stat else set()
        return set().union(*(self.owner_items.get(o, set()) for o in owners))


def tally_for(subset: str, lang: str, protocol: str, metric: str | None = None) -> Tally:
    """The tally of a subset; for one not declared in ``lang``, the mean of its main score (× 100 for
    a % metric)."""
    spec = catalog.find(subset)
    if spec is not None and lang in spec.items:
        return tally_of(scorer_for(subset, lang, protocol), subset)
    metric = metric or "mean_score"
    return MeanTally(metric, scale=100.0 if catalog.is_percent(subset, metric) else 1.0)


def _side_by_side(parts: Sequence[Statistic]) -> tuple[tuple[str, ...], list[tuple[Statistic, slice]]]:
    """The columns of several statistics side by side, and where each one's columns are."""
    columns: list[str] = []
    slices: list[tuple[Statistic, slice]] = []
    for stat in parts:
        start = len(columns)
        columns += stat.columns
        slices.append((stat, slice(start, len(columns))))
    return tuple(columns), slices


def _combined(name: str, parts: Sequence[Statistic], fn: Combine, note: str = "") -> Statistic:
    """A statistic of several statistics' values."""
    columns, slices = _side_by_side(parts)

    def total(t: np.ndarray) -> np.ndarray:
        return fn([stat.fn(t[:, sl]) for stat, sl in slices])

    return Statistic(name, columns, total, note)


def build(scores: Mapping[Key, Mapping[str, Score]], samples: Mapping[Key, Sample], *, lang: str, protocol: str,
          version: str | None = None, dimensions: Mapping[str, float | None] | None = None,
          metrics: Mapping[str, str] | None = None) -> Graph:
    """The graph of one run: its items' scores (by key and score name) and samples, and the metrics
    of subsets not declared here. With the summary's ``dimensions`` (the overall's fixed terms) it
    holds the overall of ``version`` too; scoring adds it later (:func:`add_overall`), once the
    dimensions are known from the graph's own subset values."""
    graph = Graph(ClusterTable())
    keys_by_subset: dict[str, list[Key]] = {}
    for key in scores:
        keys_by_subset.setdefault(key[0], []).append(key)

    def add(key: Key, sums: Mapping[str, float]) -> None:
        """An item's sums (by graph column name: ``<subset or row>/...``) into its cluster."""
        cluster = cluster_key(key[0], key[1], samples.get(key))
        for col, value in sums.items():
            graph.table.add(cluster, stratum(key[0]), col, value)
            graph.owner_items.setdefault(col.split("/", 1)[0], set()).add(key)

    def item(key: Key) -> tuple[Sample, list[Score]]:
        sample = samples.get(key) or Sample(id=key[1], subset=key[0], lang=lang, index=0)  # type: ignore[arg-type]
        return sample, list(scores[key].values())

    tallies = {s: tally_for(s, lang, protocol, (metrics or {}).get(s)) for s in keys_by_subset}
    for subset, keys in keys_by_subset.items():
        for key in keys:
            add(key, {column(subset, c): v for c, v in tallies[subset].item_sums(*item(key)).items()})
    acoustic = AcousticTally(lang)  # the acoustic rows' columns: utmos/..., clarity/...
    for key in scores:
        add(key, acoustic.item_sums(*item(key)))

    columns = set(graph.table.columns)
    for subset, tally in tallies.items():
        if (stat := tally.statistic(subset, columns)) is not None:
            graph.stats[stat.name] = stat
    graph.stats |= {s.name: s for s in acoustic.statistics(columns)}
    for dim in dimension_order(lang):
        _dimension(graph, dim, lang)
    if dimensions is not None:
        add_overall(graph, lang, version or protocol, dimensions)
    return graph


def _dimension(graph: Graph, dim: str, lang: str) -> None:
    """The statistic of a dimension built from subsets, as :func:`recipe` declares it."""
    present = {name.split(":", 1)[1] for name in graph.stats if name.startswith("subset:")}
    how = recipe(dim, lang, present)
    if how is None or f"dimension:{dim}" in graph.stats:
        return
    parts = [graph.stats[f"subset:{name}"] for name in how.inputs]
    if how.kind == "copy":
        stat = parts[0]
        graph.stats[f"dimension:{dim}"] = Statistic(f"dimension:{dim}", stat.columns, stat.fn, stat.note)
        return
    note = f"mean of {', '.join(how.inputs)} only" if how.partial else ""
    graph.stats[f"dimension:{dim}"] = _combined(f"dimension:{dim}", parts, how.fn, note)


def add_overall(graph: Graph, lang: str, version: str, dimensions: Mapping[str, float | None]) -> None:
    """The overall from item-level terms, with the summary's values for the rest."""
    clarity = "per" if lang == "zh" else "wer"
    defined = TERMS.get(version, TERMS["v2"])
    ordered = [t for t in defined if not t.clarity] + [t for t in defined if t.clarity]  # clarity last
    fixed: dict[str, float] = {}
    fixed_value = 0.0
    live: list[tuple[Term, Statistic]] = []
    for term in ordered:
        dim = clarity if term.clarity else term.key
        stat = graph.stats.get(f"dimension:{dim}")
        if stat is not None:
            live.append((term, stat))
            continue
        v = dimensions.get(dim)
        if v is None:
            return  # the overall is not defined for this run (a term is missing)
        fixed[dim] = float(v)
        fixed_value += float(term.values(np.asarray(float(v)), version))
    if not live:
        return
    columns, slices = _side_by_side([stat for _, stat in live])
    terms = [term for term, _ in live]

    def fn(t: np.ndarray) -> np.ndarray:
        total = np.full(t.shape[0], fixed_value)
        for term, (stat, sl) in zip(terms, slices):
            total = total + term.values(stat.fn(t[:, sl]), version)
        return total

    note = f"fixed summary values for {', '.join(fixed)}" if fixed else ""
    graph.fixed = fixed
    graph.stats["overall"] = Statistic("overall", columns, fn, note)


def point_value(graph: Graph, name: str) -> float | None:
    """A statistic's value on the full data (no resampling)."""
    stat = graph.stats.get(name)
    if stat is None:
        return None
    tot = graph.table.matrix(graph.table.clusters, stat.columns).sum(axis=0, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        v = float(stat.fn(tot)[0])
    return v if math.isfinite(v) else None


@dataclass(frozen=True)
class Estimate:
    """A statistic's value on the full data and its 95 % CI (None with fewer than two clusters)."""

    value: float
    ci95: tuple[float, float] | None

    def rounded(self, digits: int = 4) -> tuple[float, list[float] | None]:
        """(value, [lo, hi]) rounded as summary.json writes them."""
        ci = [round(self.ci95[0], digits), round(self.ci95[1], digits)] if self.ci95 is not None else None
        return round(self.value, digits), ci


def evaluate(graph: Graph, resamples: int = DEFAULT_RESAMPLES, seed: int = 0) -> dict[str, Estimate]:
    """Every statistic's value and 95 % CI from one bootstrap pass (clusters resampled within their
    strata): the one place summary.json's, the report's and the repeats' numbers come from. A
    statistic whose value is undefined on the full data (no items, a zero denominator) is left out."""
    table = graph.table
    if not graph.stats or not table.clusters:
        return {}
    idx = {c: i for i, c in enumerate(table.columns)}
    tot = replicate_totals(table.matrix(table.clusters, table.columns), resamples=resamples, seed=seed,
                           strata=table.strata)
    out: dict[str, Estimate] = {}
    for name, stat in graph.stats.items():
        point = point_value(graph, name)
        if point is None:
            continue
        ci = None
        if len(table.holding(stat.columns)) >= 2:
            with np.errstate(invalid="ignore", divide="ignore"):
                ci = interval(stat.fn(tot[:, [idx[c] for c in stat.columns]]))
        out[name] = Estimate(point, ci)
    return out


def intervals(graph: Graph, resamples: int, seed: int) -> dict[str, tuple[float, tuple[float, float]]]:
    """Point value and 95 % CI of every statistic that has one (:func:`evaluate`)."""
    return {name: (e.value, e.ci95) for name, e in evaluate(graph, resamples, seed).items() if e.ci95 is not None}


def group_values(items: Iterable[tuple[Sample, list[Score]]], tally: Tally, subset: str,
                 group: Callable[[Sample], str]) -> dict[str, tuple[float, int]]:
    """The subset's statistic on each group's items (e.g. per category), with the group's item count."""
    rows: dict[str, list[dict[str, float]]] = {}
    for sample, scores in items:
        sums = tally.item_sums(sample, scores)
        if sums:
            rows.setdefault(group(sample), []).append(sums)
    out: dict[str, tuple[float, int]] = {}
    for name, group_rows in sorted(rows.items()):
        cols = sorted({c for r in group_rows for c in r})
        totals = {column(subset, c): float(np.sum(np.array([r.get(c, 0.0) for r in group_rows]))) for c in cols}
        stat = tally.statistic(subset, totals)
        if stat is not None:
            with np.errstate(invalid="ignore", divide="ignore"):
                value = float(stat.fn(np.array([[totals.get(c, 0.0) for c in stat.columns]]))[0])
            out[name] = (value, len(group_rows))
    return out

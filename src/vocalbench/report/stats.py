"""Bootstrap statistics for reports and comparisons (pure functions, numpy only).

The bootstrap here is *clustered and stratified*: items that share a base question (the 36 robust
conditions of one clean question, turns of one multi-round dialogue, the code-switching pair
``cs_knowledge``/``cs_knowledge_en`` of one Qid) form one cluster, and clusters are resampled with
replacement within their stratum (the subset family), so every replicate keeps the design of the
test set. Every statistic is a function of per-cluster column sums, which makes a replicate one
matrix product: ``totals = counts @ sums``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

TotalsFn = Callable[[np.ndarray], np.ndarray]  # (B, n_columns) totals -> (B,) values

_TRAILING_NUMBER = re.compile(r"(\d+)$")


def cluster_key(subset: str, sample_id: str, history_head: str | None = None,
                metadata: dict[str, Any] | None = None) -> str:
    """The cluster (base item) of a sample, from its Qid and metadata.

    ``metadata['base_id']`` (or ``cluster``) wins when present. Robust conditions and robust_clean
    share the trailing question number (``robust-white_noise-snr_-5-007`` and ``robust-007``; zh
    ``robust_clean-007``); multi-round turns share their first history turn; cs_knowledge and
    cs_knowledge_en share the Qid. Anything else is its own cluster.
    """
    meta = metadata or {}
    for k in ("base_id", "cluster", "base_qid"):
        if meta.get(k):
            return f"{subset.split('_')[0]}:{meta[k]}"
    if subset in ("robust", "robust_clean"):
        m = _TRAILING_NUMBER.search(sample_id)
        return f"robust:{int(m.group(1))}" if m else f"robust:{sample_id}"
    if subset in ("cs_knowledge", "cs_knowledge_en"):
        return f"cs:{sample_id}"
    if subset == "multi_round" and history_head:
        return f"multi_round:{history_head.strip().lower()[:200]}"
    return f"{subset}:{sample_id}"


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

    def restrict(self, keep: set[str]) -> ClusterTable:
        """A copy with only the clusters in ``keep`` (same column order)."""
        out = ClusterTable()
        for col in self.columns:
            out._col_index[col] = len(out.columns)
            out.columns.append(col)
        for c, s in zip(self.clusters, self.strata):
            if c in keep:
                out.clusters.append(c)
                out.strata.append(s)
                out._rows[c] = dict(self._rows[c])
        return out

    def matrix(self, clusters: Sequence[str], columns: Sequence[str]) -> np.ndarray:
        """(len(clusters), len(columns)) sums, zero where a cluster lacks a column."""
        m = np.zeros((len(clusters), len(columns)))
        for i, c in enumerate(clusters):
            row = self._rows.get(c, {})
            for j, col in enumerate(columns):
                m[i, j] = row.get(col, 0.0)
        return m

    def col(self, name: str) -> int:
        return self._col_index[name]


def resample_counts(strata: Sequence[str], n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """(n_boot, n_clusters) multiplicities: clusters drawn with replacement within each stratum."""
    strata_arr = np.asarray(strata)
    counts = np.zeros((n_boot, len(strata_arr)), dtype=np.float64)
    for s in dict.fromkeys(strata):
        idx = np.flatnonzero(strata_arr == s)
        counts[:, idx] = rng.multinomial(len(idx), np.full(len(idx), 1.0 / len(idx)), size=n_boot)
    return counts


def bootstrap_totals(sums: np.ndarray, strata: Sequence[str], n_boot: int, seed: int = 0,
                     chunk: int = 250) -> np.ndarray:
    """(n_boot, n_columns) column totals of ``n_boot`` stratified cluster resamples."""
    rng = np.random.default_rng(seed)
    parts = []
    done = 0
    while done < n_boot:
        b = min(chunk, n_boot - done)
        parts.append(resample_counts(strata, b, rng) @ sums)
        done += b
    return np.vstack(parts) if parts else np.zeros((0, sums.shape[1]))


def percentile_ci(values: np.ndarray, level: float = 0.95) -> tuple[float, float] | None:
    """Percentile interval of finite bootstrap values, or None when there are none."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if v.size == 0:
        return None
    a = (1 - level) / 2
    lo, hi = np.quantile(v, [a, 1 - a])
    return float(lo), float(hi)


def bootstrap_p_value(diffs: np.ndarray, observed: float) -> float:
    """Two-sided bootstrap p-value of H0: difference = 0 (shift method).

    The null distribution is the bootstrap distribution of the paired difference centred on 0;
    p = (1 + #{|d* - d| >= |d|}) / (B + 1), capped at 1. Identical runs give exactly 1.
    """
    d = np.asarray(diffs, dtype=float)
    d = d[np.isfinite(d)]
    if d.size == 0 or not math.isfinite(observed):
        return float("nan")
    if observed == 0.0:
        return 1.0
    extreme = int(np.count_nonzero(np.abs(d - observed) >= abs(observed) - 1e-12))
    return min(1.0, (1 + extreme) / (d.size + 1))


def bootstrap_mean_ci(values: Sequence[float], n_boot: int = 2000, seed: int = 0,
                      clusters: Sequence[str] | None = None, level: float = 0.95) -> tuple[float, float] | None:
    """Percentile CI of a mean, resampling ``clusters`` (default: every value its own cluster)."""
    vals = np.asarray(values, dtype=float)
    if vals.size == 0:
        return None
    keys = list(clusters) if clusters is not None else [str(i) for i in range(vals.size)]
    table = ClusterTable()
    for k, v in zip(keys, vals):
        table.add(k, "all", "sum", v)
        table.add(k, "all", "n", 1.0)
    sums = table.matrix(table.clusters, ["sum", "n"])
    tot = bootstrap_totals(sums, table.strata, n_boot, seed)
    with np.errstate(invalid="ignore", divide="ignore"):
        return percentile_ci(tot[:, 0] / tot[:, 1], level)


@dataclass
class PairedResult:
    """A paired comparison of one statistic: A - B with its bootstrap CI and p-value."""

    name: str
    a: float | None
    b: float | None
    diff: float | None
    ci95: tuple[float, float] | None
    p_value: float | None
    n_items: int
    n_clusters: int
    note: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name, "a": self.a, "b": self.b, "diff": self.diff,
            "ci95": list(self.ci95) if self.ci95 else None, "p_value": self.p_value,
            "n_items": self.n_items, "n_clusters": self.n_clusters, "note": self.note,
        }


def paired_bootstrap(sums_a: np.ndarray, sums_b: np.ndarray, strata: Sequence[str],
                     stat: TotalsFn, n_boot: int = 2000, seed: int = 0
                     ) -> tuple[float, float, np.ndarray, np.ndarray]:
    """Point values of A and B and their bootstrap replicates under the *same* resamples.

    ``sums_a``/``sums_b`` are (n_clusters, n_columns) per-cluster sums over the shared clusters;
    ``stat`` maps column totals to the statistic. Returns (a, b, reps_a, reps_b).
    """
    if sums_a.shape != sums_b.shape:
        raise ValueError("paired tables must have the same shape")
    both = np.hstack([sums_a, sums_b])
    k = sums_a.shape[1]
    tot = bootstrap_totals(both, strata, n_boot, seed)
    full = both.sum(axis=0, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        a = float(stat(full[:, :k])[0])
        b = float(stat(full[:, k:])[0])
        return a, b, stat(tot[:, :k]), stat(tot[:, k:])

"""Seeded, vectorised bootstrap confidence intervals.

All resampling is over items: for a mean, the per-item values; for a ratio metric such as
corpus WER (sum of edit distances / sum of reference lengths) the (numerator, denominator) pairs
of the same resampled items.
Memory stays bounded by drawing the resamples in blocks.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Iterator, Sequence
from typing import Any

import numpy as np

DEFAULT_RESAMPLES = 1000
_BLOCK_CELLS = 250_000  # resamples x items per block (1 MB of int32 indices, 2 MB of gathered values)


def _blocks(n_items: int, resamples: int, rng: np.random.Generator) -> Iterator[np.ndarray]:
    """Resample indices, one block of rows at a time (drawn lazily: only one block is alive)."""
    per_block = max(1, _BLOCK_CELLS // max(1, n_items))
    left = resamples
    while left > 0:
        b = min(per_block, left)
        yield rng.integers(0, n_items, size=(b, n_items), dtype=np.int32 if n_items < 2**31 else np.int64)
        left -= b


def _interval(stats: np.ndarray, level: float) -> tuple[float, float]:
    alpha = (1.0 - level) / 2.0
    lo, hi = np.quantile(stats, [alpha, 1.0 - alpha])
    return float(lo), float(hi)


def bootstrap_stat(values: Sequence[float] | np.ndarray, stat: Callable[[np.ndarray], np.ndarray], *,
                   resamples: int = DEFAULT_RESAMPLES, seed: int = 0, level: float = 0.95) -> tuple[float, float] | None:
    """Percentile CI of ``stat`` (vectorised over axis 1 of a (resamples, n) array); None for n < 2."""
    x = np.asarray(values, dtype=np.float64)
    if x.ndim != 1 or x.size < 2:
        return None
    rng = np.random.default_rng(seed)
    stats = np.concatenate([stat(x[idx]) for idx in _blocks(x.size, resamples, rng)])
    return _interval(stats, level)


def mean_ci(values: Sequence[float] | np.ndarray, *, scale: float = 1.0, resamples: int = DEFAULT_RESAMPLES,
            seed: int = 0, level: float = 0.95, digits: int | None = 4) -> tuple[float, float] | None:
    """CI of ``scale * mean(values)`` (e.g. scale=100 for an accuracy in % from 0/1 values)."""
    ci = bootstrap_stat(values, lambda a: a.mean(axis=1), resamples=resamples, seed=seed, level=level)
    if ci is None:
        return None
    lo, hi = ci[0] * scale, ci[1] * scale
    return (round(lo, digits), round(hi, digits)) if digits is not None else (lo, hi)


def ratio_ci(numerators: Sequence[float] | np.ndarray, denominators: Sequence[float] | np.ndarray, *,
             scale: float = 1.0, resamples: int = DEFAULT_RESAMPLES, seed: int = 0, level: float = 0.95,
             digits: int | None = 4) -> tuple[float, float] | None:
    """CI of ``scale * sum(num) / sum(den)`` resampling items (corpus WER/PER: scale=100)."""
    num = np.asarray(numerators, dtype=np.float64)
    den = np.asarray(denominators, dtype=np.float64)
    if num.shape != den.shape:
        raise ValueError(f"numerators ({num.shape}) and denominators ({den.shape}) differ in shape")
    if num.size < 2:
        return None
    rng = np.random.default_rng(seed)
    parts = []
    for idx in _blocks(num.size, resamples, rng):
        d = den[idx].sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            parts.append(np.where(d > 0, num[idx].sum(axis=1) / np.where(d > 0, d, 1), np.nan))
    stats = np.concatenate(parts)
    stats = stats[~np.isnan(stats)]
    if stats.size == 0:
        return None
    lo, hi = _interval(stats, level)
    lo, hi = lo * scale, hi * scale
    return (round(lo, digits), round(hi, digits)) if digits is not None else (lo, hi)


def median_ci(values: Sequence[float] | np.ndarray, **kw: float) -> tuple[float, float] | None:
    """CI of the median (latency)."""
    return bootstrap_stat(values, lambda a: np.median(a, axis=1), **kw)  # type: ignore[arg-type]


# The statistics, defined once on totals: the tallies call them on their values and the report's
# clustered bootstrap (report/measures.py) on per-resample column sums (floats or arrays alike).


def mean_value(total: Any, n: Any, scale: float = 1.0) -> Any:
    """A mean from its total and count, × ``scale`` (100 for a % of 0/1 values)."""
    return total / n * scale


def mean_of(values: Sequence[Any]) -> Any:
    """The plain mean of several values (a dimension carried by several subsets: zh knowledge)."""
    return sum(values) / len(values)


def pr_value(mixed: Any, control: Any) -> Any:
    """``min(100, mixed / control * 100)``: the preserve rate of a subset against its control
    (code-switching and dialect PR), element-wise."""
    return np.minimum(100.0, mixed / control * 100.0)


def preserve_rate(mixed: float | None, control: float | None, digits: int | None = None) -> float | None:
    """:func:`pr_value` of two summary values, rounded to ``digits`` when given; None when either
    is missing or the control is not positive."""
    if mixed is None or control is None or control <= 0:
        return None
    rate = float(pr_value(mixed, control))
    return rate if digits is None else round(rate, digits)


# -- agreement between two raters (the judge-check and the judge-human report) --------------------
def cohen_kappa(a: Sequence[Hashable], b: Sequence[Hashable]) -> float:
    """Cohen's kappa of two raters' labels on the same items: (po - pe) / (1 - pe).

    Returns 1.0 when both raters use one and the same single category (perfect, no chance
    correction possible) and NaN for no items.
    """
    if len(a) != len(b):
        raise ValueError("both raters must label the same items")
    n = len(a)
    if n == 0:
        return float("nan")
    po = sum(x == y for x, y in zip(a, b)) / n
    ca, cb = Counter(a), Counter(b)
    pe = sum(ca[k] * cb[k] for k in ca.keys() | cb.keys()) / (n * n)
    if pe >= 1.0:
        return 1.0 if po == 1.0 else float("nan")
    return (po - pe) / (1 - pe)


def spearman(x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman's rank correlation (ties get average ranks); NaN when undefined."""
    from scipy.stats import spearmanr

    if len(x) < 2 or len(set(x)) < 2 or len(set(y)) < 2:
        return float("nan")
    return float(spearmanr(x, y).statistic)

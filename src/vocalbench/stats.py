"""The one bootstrap engine, and the formulas every statistic of vocalbench is built from.

Every confidence interval and paired comparison resamples *clusters* with replacement and
evaluates a statistic on the replicates' column totals of per-cluster sums (:func:`replicate_totals`):
a mean is total / n, a corpus WER Σdist / Σlen, Robust PR a function of the per-condition sums and
the clean baseline's. An item is a cluster of one; the report's clusters group the items of one
base question (:mod:`vocalbench.scoring.graph`). The multiplicities come from one of two draws, kept
so that published figures do not move: *index draws* (clusters drawn by index, blocks of rows, one
stratum), behind the ``ci95`` of ``summary.json``, and *multinomial draws* within each stratum,
behind the report's and ``compare``'s clustered, stratified intervals. A statistic that is no
function of sums (the latency medians) is evaluated on the drawn values (:func:`replicate_values`).
Memory stays bounded by drawing the replicates in blocks. Agreement between raters: Cohen's
kappa, Spearman's rho, Fleiss' kappa and Krippendorff's alpha.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, TypedDict, TypeVar, overload

import numpy as np

DEFAULT_RESAMPLES = 1000
_BLOCK_CELLS = 250_000  # resamples x clusters per block of index draws (1 MB of int32 indices)
_COUNT_CHUNK = 250  # resamples per block of multinomial draws

TotalsFn = Callable[[np.ndarray], np.ndarray]  # (B, k) column totals -> (B,) values
# a summary value or a vector of replicate values: the statistics below take either
Values = TypeVar("Values", float, np.ndarray)


class Combine(Protocol):
    """A value of several values (a dimension of its subsets), on floats or replicate vectors alike."""

    def __call__(self, values: Sequence[Values], /) -> Values: ...


@dataclass(frozen=True)
class Statistic:
    """A value made of per-cluster column sums: the columns it reads and the pure function of their
    totals ((B, k) array -> (B,) values; one row of full totals gives the point value)."""

    name: str  # subset:<name> | dimension:<name> | overall
    columns: tuple[str, ...]
    fn: TotalsFn
    note: str = ""


def _index_draws(n: int, resamples: int, rng: np.random.Generator) -> Iterator[np.ndarray]:
    """Drawn cluster indices, one block of rows at a time (only one block is alive)."""
    per_block = max(1, _BLOCK_CELLS // max(1, n))
    left = resamples
    while left > 0:
        b = min(per_block, left)
        yield rng.integers(0, n, size=(b, n), dtype=np.int32 if n < 2**31 else np.int64)
        left -= b


def _multinomial_draws(strata: Sequence[str], resamples: int, rng: np.random.Generator) -> Iterator[np.ndarray]:
    """(b, n) multiplicities of the clusters, drawn with replacement within each stratum, a block at a time."""
    strata_arr = np.asarray(strata)
    groups = [np.flatnonzero(strata_arr == s) for s in dict.fromkeys(strata)]
    left = resamples
    while left > 0:
        b = min(_COUNT_CHUNK, left)
        counts = np.zeros((b, len(strata_arr)), dtype=np.float64)
        for idx in groups:
            counts[:, idx] = rng.multinomial(len(idx), np.full(len(idx), 1.0 / len(idx)), size=b)
        yield counts
        left -= b


def replicate_totals(sums: np.ndarray, *, resamples: int = DEFAULT_RESAMPLES, seed: int = 0,
                     strata: Sequence[str] | None = None) -> np.ndarray:
    """(resamples, k) column totals of ``sums`` (n clusters x k columns) over resampled clusters:
    index draws without ``strata``, multinomial draws within each stratum with them."""
    sums = np.asarray(sums, dtype=np.float64)
    rng = np.random.default_rng(seed)
    if strata is None:
        parts = [np.stack([col[idx].sum(axis=1) for col in sums.T], axis=1)
                 for idx in _index_draws(sums.shape[0], resamples, rng)]
    else:
        parts = [counts @ sums for counts in _multinomial_draws(strata, resamples, rng)]
    return np.vstack(parts) if parts else np.zeros((0, sums.shape[1]))


def replicate_values(values: Sequence[float] | np.ndarray, stat: Callable[[np.ndarray], np.ndarray], *,
                     resamples: int = DEFAULT_RESAMPLES, seed: int = 0) -> np.ndarray:
    """``stat`` (vectorised over axis 1) of the resampled values (rows of ``values``: a paired
    comparison resamples both runs' values of an item together), index draws (the latency medians)."""
    x = np.asarray(values, dtype=np.float64)
    rng = np.random.default_rng(seed)
    return np.concatenate([stat(x[idx]) for idx in _index_draws(len(x), resamples, rng)])


def interval(values: np.ndarray, level: float = 0.95) -> tuple[float, float] | None:
    """Percentile interval of the finite replicate values, None when there are none."""
    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v)]
    if v.size == 0:
        return None
    alpha = (1.0 - level) / 2.0
    lo, hi = np.quantile(v, [alpha, 1.0 - alpha])
    return float(lo), float(hi)


def p_value(diffs: np.ndarray, observed: float) -> float:
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
    return min(1.0, (1 + extreme) / float(d.size + 1))


def paired(sums_a: np.ndarray, sums_b: np.ndarray, strata: Sequence[str], stat: TotalsFn, *,
           resamples: int = 2000, seed: int = 0) -> tuple[float, float, np.ndarray, np.ndarray]:
    """Point values of A and B and their replicates under the *same* resampled clusters.

    ``sums_a``/``sums_b`` are (n_clusters, n_columns) per-cluster sums over the shared clusters;
    ``stat`` maps column totals to the statistic. Returns (a, b, reps_a, reps_b).
    """
    if sums_a.shape != sums_b.shape:
        raise ValueError("paired tables must have the same shape")
    both = np.hstack([sums_a, sums_b])
    k = sums_a.shape[1]
    tot = replicate_totals(both, resamples=resamples, seed=seed, strata=strata)
    full = both.sum(axis=0, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return float(stat(full[:, :k])[0]), float(stat(full[:, k:])[0]), stat(tot[:, :k]), stat(tot[:, k:])


def _rounded(ci: tuple[float, float] | None, scale: float, digits: int | None) -> tuple[float, float] | None:
    if ci is None:
        return None
    lo, hi = ci[0] * scale, ci[1] * scale
    return (round(lo, digits), round(hi, digits)) if digits is not None else (lo, hi)


# -- the intervals of summary.json's rows: index draws over items (or robust's question clusters) --
def mean_ci(values: Sequence[float] | np.ndarray, *, scale: float = 1.0, resamples: int = DEFAULT_RESAMPLES,
            seed: int = 0, level: float = 0.95, digits: int | None = 4) -> tuple[float, float] | None:
    """CI of ``scale * mean(values)`` (e.g. scale=100 for an accuracy in % from 0/1 values); None for n < 2."""
    x = np.asarray(values, dtype=np.float64)
    if x.ndim != 1 or x.size < 2:
        return None
    tot = replicate_totals(np.column_stack([x, np.ones_like(x)]), resamples=resamples, seed=seed)
    return _rounded(interval(mean_value(tot[:, 0], tot[:, 1]), level), scale, digits)


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
    tot = replicate_totals(np.column_stack([num, den]), resamples=resamples, seed=seed)
    d = tot[:, 1]
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = np.where(d > 0, tot[:, 0] / np.where(d > 0, d, 1), np.nan)
    return _rounded(interval(ratios, level), scale, digits)


def median_ci(values: Sequence[float] | np.ndarray, *, resamples: int = DEFAULT_RESAMPLES, seed: int = 0,
              level: float = 0.95) -> tuple[float, float] | None:
    """CI of the median (latency); None for n < 2."""
    x = np.asarray(values, dtype=np.float64)
    if x.ndim != 1 or x.size < 2:
        return None
    return interval(replicate_values(x, lambda a: median_of(a, axis=1), resamples=resamples, seed=seed), level)


def cluster_ci(sums: np.ndarray, stat: TotalsFn, *, resamples: int = DEFAULT_RESAMPLES, seed: int = 0,
               level: float = 0.95, digits: int | None = 4) -> tuple[float, float] | None:
    """CI of ``stat`` of the column totals of per-cluster ``sums``, index draws over the clusters
    (Robust PR over base questions)."""
    tot = replicate_totals(sums, resamples=resamples, seed=seed)
    with np.errstate(invalid="ignore", divide="ignore"):
        return _rounded(interval(stat(tot), level), 1.0, digits)


# The statistics, defined once on totals: the tallies call them on their values and the statistics
# graph (scoring/graph.py) on replicate column totals (floats or arrays alike).


def mean_value(total: Values, n: Values | int, scale: float = 1.0) -> Values:
    """A mean from its total and count, × ``scale`` (100 for a % of 0/1 values)."""
    return total / n * scale


@overload
def median_of(values: np.ndarray, axis: None = None) -> float: ...
@overload
def median_of(values: np.ndarray, axis: int) -> np.ndarray: ...
def median_of(values: np.ndarray, axis: int | None = None) -> float | np.ndarray:
    """The median (of the latency rows: over the replies), over ``axis`` (all of them: a float)."""
    return float(np.median(values)) if axis is None else np.median(values, axis=axis)


def mean_of(values: Sequence[Values]) -> Values:
    """The plain mean of several values (a dimension carried by several subsets: zh knowledge)."""
    total = values[0]
    for v in values[1:]:
        total = total + v
    return total / len(values)


def pr_value(mixed: Values, control: Values) -> Values:
    """``min(100, mixed / control * 100)``: the preserve rate of a subset against its control
    (code-switching and dialect PR), element-wise."""
    rate: Values = np.minimum(100.0, mixed / control * 100.0)
    return rate


def preserve_rate(mixed: float | None, control: float | None, digits: int | None = None) -> float | None:
    """:func:`pr_value` of two summary values, rounded to ``digits`` when given; None when either
    is missing or the control is not positive."""
    if mixed is None or control is None or control <= 0:
        return None
    rate = float(pr_value(mixed, control))
    return rate if digits is None else round(rate, digits)


# -- repeated runs (run --repeats N): their pooled mean and CI ------------------------------------
Z95 = 1.959964


def ci_se(ci: Sequence[float] | None) -> float | None:
    """The standard error a 95 % interval stands for (None without one)."""
    if not ci or len(ci) != 2 or not all(isinstance(c, int | float) for c in ci):
        return None
    return (float(ci[1]) - float(ci[0])) / (2 * Z95)


class Pooled(TypedDict):
    """N repeats' values pooled: their mean, between-run SD and 95 % CI, and what the CI stands on."""

    mean: float
    sd: float
    n: int
    values: list[float]
    within_se: float | None  # the repeats' RMS item-level SE, when every repeat has one
    sources: Literal["items+runs", "runs"] | None
    ci95: list[float] | None


def pool_repeats(values: Sequence[float], within_se: Sequence[float | None]) -> Pooled:
    """Mean, between-run SD and the 95 % CI of N repeats' values: ``mean ± 1.96·sqrt(within_se² + sd²/N)``
    when every repeat has its own (item-level) SE, else the t interval of the repeats alone
    (``sources`` says which; report/repeats.py)."""
    x = np.asarray(values, dtype=float)
    n = int(x.size)
    mean = float(x.mean())
    sd = float(x.std(ddof=1)) if n > 1 else 0.0
    known = [s for s in within_se if s is not None]
    out: Pooled = {"mean": round(mean, 4), "sd": round(sd, 4), "n": n, "values": [round(v, 4) for v in x],
                   "within_se": None, "sources": None, "ci95": None}
    if known and len(known) == n:
        within = math.sqrt(float(np.mean(np.square(known))))
        half = Z95 * math.sqrt(within ** 2 + sd ** 2 / n)
        out["within_se"], out["sources"] = round(within, 4), "items+runs"
    elif n > 1:
        from scipy.stats import t

        half = float(t.ppf(0.975, n - 1)) * sd / math.sqrt(n)
        out["sources"] = "runs"
    else:
        return out
    out["ci95"] = [round(mean - half, 4), round(mean + half, 4)]
    return out


def difference_ci(diff: float, se_a: float, se_b: float) -> list[float]:
    """The 95 % CI of a difference of two independent estimates (unpaired, so it errs wide)."""
    half = Z95 * math.hypot(se_a, se_b)
    return [round(diff - half, 4), round(diff + half, 4)]


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


# Agreement of a judge with labels, on totals (judge-check's intervals resample questions with the
# one engine above). Binary: the columns n, Σlabel, Σverdict, Σagree. Scale: Spearman's rho as
# Pearson's r of the whole sample's average ranks, columns n, Σx, Σy, Σx², Σy², Σxy.
KAPPA_COLUMNS = 4
RANK_COLUMNS = 6


def kappa_rows(labels: Sequence[float], judged: Sequence[float]) -> np.ndarray:
    """Per-item rows whose column totals give Cohen's kappa of two 0/1 raters (:func:`kappa_of_totals`)."""
    x, y = np.asarray(labels, dtype=float), np.asarray(judged, dtype=float)
    return np.column_stack([np.ones_like(x), x, y, (x == y).astype(float)])


def kappa_of_totals(tot: np.ndarray) -> np.ndarray:
    """Cohen's kappa from the totals of :func:`kappa_rows` (vectorised over rows of ``tot``)."""
    t = np.atleast_2d(tot)
    n, sl, sj, agree = t[:, 0], t[:, 1], t[:, 2], t[:, 3]
    po, pl, pj = agree / n, sl / n, sj / n
    pe = pl * pj + (1 - pl) * (1 - pj)
    kappa: np.ndarray = (po - pe) / (1 - pe)
    return kappa


def rank_rows(a: Sequence[float], b: Sequence[float]) -> np.ndarray:
    """Per-item rows whose column totals give Spearman's rho (:func:`rank_corr_of_totals`)."""
    from scipy.stats import rankdata

    x, y = rankdata(a), rankdata(b)
    return np.column_stack([np.ones_like(x), x, y, x * x, y * y, x * y])


def rank_corr_of_totals(tot: np.ndarray) -> np.ndarray:
    """Pearson's r of the ranks from the totals of :func:`rank_rows` (Spearman's rho on the sample)."""
    t = np.atleast_2d(tot)
    n, sx, sy, sxx, syy, sxy = (t[:, k] for k in range(RANK_COLUMNS))
    cov = sxy - sx * sy / n
    rho: np.ndarray = cov / np.sqrt((sxx - sx * sx / n) * (syy - sy * sy / n))
    return rho


def fleiss_kappa(counts: np.ndarray | Sequence[Sequence[int]]) -> float:
    """Fleiss' kappa from an (items x categories) matrix of how many raters chose each category.

    Items may have different numbers of raters (at least 2 each); with a constant number this is
    exactly Fleiss (1971).
    """
    m = np.asarray(counts, dtype=float)
    n_i = m.sum(axis=1)
    keep = n_i >= 2
    m, n_i = m[keep], n_i[keep]
    if m.shape[0] == 0:
        return float("nan")
    p_i = ((m * m).sum(axis=1) - n_i) / (n_i * (n_i - 1))
    p_bar = p_i.mean()
    p_j = m.sum(axis=0) / n_i.sum()
    pe = float((p_j ** 2).sum())
    if pe >= 1.0:
        return 1.0 if p_bar == 1.0 else float("nan")
    return float((p_bar - pe) / (1 - pe))


def krippendorff_alpha(data: np.ndarray | Sequence[Sequence[float | None]], level: str = "nominal") -> float:
    """Krippendorff's alpha from a (raters x units) matrix with NaN/None for missing values.

    ``level``: "nominal" (disagreement 1 for unequal values) or "interval" (squared difference).
    Units with fewer than two values are not pairable and are dropped, as Krippendorff defines.
    """
    if level not in ("nominal", "interval"):
        raise ValueError("level must be 'nominal' or 'interval'")
    arr = np.array([[np.nan if v is None else float(v) for v in row] for row in data], dtype=float)
    values = np.unique(arr[np.isfinite(arr)])
    if values.size == 0:
        return float("nan")
    index = {v: i for i, v in enumerate(values)}
    k = values.size
    coinc = np.zeros((k, k))
    for unit in arr.T:
        vals = unit[np.isfinite(unit)]
        mu = vals.size
        if mu < 2:
            continue
        c = np.zeros(k)
        for v in vals:
            c[index[v]] += 1
        pairs = np.outer(c, c) - np.diag(c)  # ordered pairs of different raters
        coinc += pairs / (mu - 1)
    n_c = coinc.sum(axis=1)
    n = n_c.sum()
    if n <= 1:
        return float("nan")
    if level == "nominal":
        delta = 1.0 - np.eye(k)
    else:
        delta = (values[:, None] - values[None, :]) ** 2
    d_o = float((coinc * delta).sum()) / float(n)
    d_e = float((np.outer(n_c, n_c) * delta).sum()) / float(n * (n - 1))
    if d_e == 0.0:
        return 1.0 if d_o == 0.0 else float("nan")
    return 1.0 - d_o / d_e

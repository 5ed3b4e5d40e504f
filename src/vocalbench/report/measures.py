"""Per-cluster totals of one run's item scores, and the statistics on them, for bootstraps.

Each statistic is a function of per-cluster column sums (see :mod:`vocalbench.report.stats`), so
confidence intervals and paired comparisons resample clusters and recompute it. The statistics
themselves are scoring's, the same functions its tallies use (one definition each): means
(:func:`~vocalbench.scoring.stats.mean_value`), the robust preserve rate
(:func:`~vocalbench.scoring.subsets.robust.robust_pr` of ``capped_pr``), preserve rates
(:func:`~vocalbench.scoring.stats.pr_value`), the v1 empathy sum, the mean of several subsets and
the overall's terms (:class:`~vocalbench.scoring.overall.Term`). This module only gathers the
totals they read. Terms without item-level scores enter the overall as their fixed summary value,
and a note says so.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from vocalbench import catalog
from vocalbench.data.official import ROBUST_HEADLINE
from vocalbench.report.runs import RunData
from vocalbench.report.stats import ClusterTable, cluster_key
from vocalbench.scoring.dimensions import DIMENSIONS
from vocalbench.scoring.overall import TERMS, Term, clarity_points_of
from vocalbench.scoring.stats import mean_of, mean_value, pr_value
from vocalbench.scoring.subsets import acoustic, emotion, robust
from vocalbench.scoring.subsets import item_value as scored_item_value

# How dimensions are labelled and which way is better: the one table in scoring/dimensions.py.
DIMENSION_ORDER = [d.name for d in DIMENSIONS.values()]
DIMENSION_LABEL = {d.name: d.label for d in DIMENSIONS.values()}
LOWER_IS_BETTER = {d.name for d in DIMENSIONS.values() if d.lower_is_better}
# radar: each dimension normalised to 0-1 as the overall weighs it
clarity_points = clarity_points_of  # WER/PER to clarity points, element-wise (plots, tests)
RADAR_SCALE = {d.name: d.radar for d in DIMENSIONS.values() if d.radar is not None}
_LEVEL = re.compile(r"^([a-z0-9]+?)_(-?[0-9.]+)(hz)?$", re.IGNORECASE)


def parse_level(level: str) -> tuple[str, float] | None:
    """A robust condition level as (kind, number): ``rt60_30`` -> (rt60, 3.0), ``dropping_0.70``
    -> (dropping, 70.0), ``filter_400hz`` -> (filter, 400.0), ``snr_-5`` -> (snr, -5.0)."""
    m = _LEVEL.match(level.strip())
    if not m:
        return None
    kind, num = m.group(1).lower(), float(m.group(2))
    if kind == "rt60" and num >= 5:  # rt60_05 .. rt60_30 are tenths of a second
        num = num / 10.0
    if kind == "dropping" and num <= 1.0:  # zh spells dropping_0.70
        num = num * 100.0
    return kind, num


def robust_condition(sample: Any) -> tuple[str, str] | None:
    """(family, level) of a robust sample, as the robust scorer reads it (None when it has none)."""
    try:
        family, _, level = robust.condition(sample).partition("/")
    except ValueError:
        return None
    return family, level


def headline_index(family: str, level: str) -> int | None:
    """Which of the six Robust PR conditions (data.official.ROBUST_HEADLINE) this is, if any."""
    key = f"{family}/{level}"
    return ROBUST_HEADLINE.index(key) if key in ROBUST_HEADLINE else None


@dataclass
class Statistic:
    """A named statistic: the totals it reads and how it turns them into a value."""

    name: str
    kind: str  # subset | dimension | overall
    fn: Callable[[np.ndarray], np.ndarray]
    columns: list[str]
    note: str = ""


@dataclass
class RunTable:
    """Per-cluster sums of one run and the statistics defined on them."""

    table: ClusterTable
    stats: dict[str, Statistic] = field(default_factory=dict)
    item_keys: dict[str, set[tuple[str, str]]] = field(default_factory=dict)  # statistic -> items
    fixed: dict[str, float] = field(default_factory=dict)  # terms without item scores


def _mean(col_sum: str, col_n: str, scale: float = 1.0) -> tuple[list[str], Callable[[np.ndarray], np.ndarray]]:
    def fn(t: np.ndarray) -> np.ndarray:
        return mean_value(t[:, 0], t[:, 1], scale)  # type: ignore[no-any-return]
    return [col_sum, col_n], fn


def _metric(run: RunData, subset: str) -> str:
    entry = (run.summary.get("subsets") or {}).get(subset) or {}
    spec = catalog.find(subset)
    return str(entry.get("metric") or (spec.metric if spec is not None else "mean_score"))


PERCENT_METRICS = catalog.PERCENT_METRICS


def item_value(run: RunData, subset: str, sample_id: str) -> float | None:
    """The value an item contributes to its subset's metric (scoring's rule:
    :func:`vocalbench.scoring.subsets.item_value`), None when it is not scored."""
    return scored_item_value(run.scores.get((subset, sample_id)) or {}, run.protocol)


def _score_value(run: RunData, key: tuple[str, str]) -> float | None:
    return item_value(run, *key)


def _first_detail(details: dict[str, Any], key: str) -> float | None:
    v = details.get(key)
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def build_run_table(run: RunData) -> RunTable:
    """Cluster sums and statistic definitions for one run (subsets, dimensions, overall)."""
    t = ClusterTable()
    out = RunTable(table=t)

    def cluster_of(subset: str, sid: str) -> str:
        s = run.samples.get((subset, sid))
        head = s.history[0].text if s is not None and s.history else None
        return cluster_key(subset, sid, head, s.metadata if s is not None else None)

    def stratum(subset: str) -> str:
        return "robust" if subset in ("robust", "robust_clean") else ("cs" if subset.startswith("cs_knowledge") else subset)

    def track(stat: str, key: tuple[str, str]) -> None:
        out.item_keys.setdefault(stat, set()).add(key)

    # --- plain subsets: sum and count of the main value
    keys_by_subset: dict[str, list[tuple[str, str]]] = {}
    for key in run.scores:
        keys_by_subset.setdefault(key[0], []).append(key)
    percent_scale: dict[str, float] = {}
    for subset, keys in keys_by_subset.items():
        metric = _metric(run, subset)
        vals: list[tuple[tuple[str, str], float]] = []
        for k in keys:
            val = _score_value(run, k)
            if val is not None:
                vals.append((k, val))
        if not vals:
            continue
        scale = 100.0 if catalog.is_percent(subset, metric) and max(v for _, v in vals) <= 1.0 else 1.0
        percent_scale[subset] = scale
        for k, v in vals:
            c = cluster_of(*k)
            t.add(c, stratum(subset), f"{subset}/sum", v)
            t.add(c, stratum(subset), f"{subset}/n", 1.0)
            track(f"subset:{subset}", k)
        if subset != "robust":
            cols, fn = _mean(f"{subset}/sum", f"{subset}/n", scale)
            out.stats[f"subset:{subset}"] = Statistic(subset, "subset", fn, cols)

    # --- robust: per-headline-condition means over the clean baseline
    if "robust" in keys_by_subset and "robust_clean" in keys_by_subset:
        present = set()
        for k in keys_by_subset["robust"]:
            s = run.samples.get(k)
            rv = _score_value(run, k)
            cond = robust_condition(s) if s is not None else None
            hi = headline_index(*cond) if cond else None
            if rv is None or hi is None:
                continue
            c = cluster_of(*k)
            t.add(c, "robust", f"robust/h{hi}/sum", rv)
            t.add(c, "robust", f"robust/h{hi}/n", 1.0)
            present.add(hi)
        if len(present) == len(ROBUST_HEADLINE):
            cols = ["robust_clean/sum", "robust_clean/n"]
            for i in range(len(ROBUST_HEADLINE)):
                cols += [f"robust/h{i}/sum", f"robust/h{i}/n"]

            def robust_fn(tot: np.ndarray) -> np.ndarray:
                clean = mean_value(tot[:, 0], tot[:, 1])
                prs = [robust.capped_pr(mean_value(tot[:, 2 + 2 * i], tot[:, 3 + 2 * i]), clean)
                       for i in range(len(ROBUST_HEADLINE))]
                return robust.robust_pr(prs)  # type: ignore[no-any-return]

            out.stats["subset:robust"] = Statistic("robust", "subset", robust_fn, cols)
            out.item_keys["subset:robust"] = set(keys_by_subset["robust"]) | set(keys_by_subset["robust_clean"])

    # --- acoustic: UTMOS mean and corpus-level WER/PER from named scores
    clarity = "per" if run.lang == "zh" else "wer"
    corpus_ok = True
    for key, named in run.scores.items():
        for name, sc in named.items():
            if not sc.scored or sc.value is None:
                continue
            c = cluster_of(*key)
            if name == acoustic.UTMOS:
                t.add(c, stratum(key[0]), "utmos/sum", sc.value)
                t.add(c, stratum(key[0]), "utmos/n", 1.0)
                track("dimension:utmos", key)
            elif name == acoustic.CLARITY:
                err = _first_detail(sc.details, acoustic.DIST)
                ln = _first_detail(sc.details, acoustic.LEN)
                if err is None or ln is None:
                    corpus_ok = False
                    err, ln = float(sc.value), 1.0
                t.add(c, stratum(key[0]), "clarity/err", err)
                t.add(c, stratum(key[0]), "clarity/len", ln)
                track(f"dimension:{clarity}", key)
    if "utmos/sum" in t.columns:
        cols, fn = _mean("utmos/sum", "utmos/n")
        out.stats["dimension:utmos"] = Statistic("utmos", "dimension", fn, cols)
    if "clarity/err" in t.columns:  # corpus-level: the acoustic tally's Σdist / Σlen × 100
        scale = 100.0 if corpus_ok else 1.0
        cols, fn = _mean("clarity/err", "clarity/len", scale)
        note = "" if corpus_ok else "per-item mean: the scores carry no edit counts for a corpus-level rate"
        out.stats[f"dimension:{clarity}"] = Statistic(clarity, "dimension", fn, cols, note)

    # --- dimensions built from subsets
    protocol = run.protocol
    for dim in DIMENSIONS:
        carriers = catalog.dimension_members(dim, run.lang)
        if len(carriers) != 1 or catalog.get(carriers[0]).dimension_is_preserve_rate:
            continue  # a mean of several subsets or a preserve rate: built below
        subset = carriers[0]
        if dim == "empathy" and protocol == "v1":
            _v1_empathy(run, t, out, cluster_of)
            continue
        src = out.stats.get(f"subset:{subset}")
        if src is not None:
            out.stats[f"dimension:{dim}"] = Statistic(dim, "dimension", src.fn, src.columns, src.note)
            out.item_keys[f"dimension:{dim}"] = out.item_keys.get(f"subset:{subset}", set())
    for dim in DIMENSIONS:
        carriers = catalog.dimension_members(dim, run.lang)
        if len(carriers) > 1:
            _mean_of_subsets(dim, carriers, out, percent_scale)
        elif carriers and catalog.get(carriers[0]).dimension_is_preserve_rate:
            _preserve_rate(dim, carriers[0], catalog.get(carriers[0]).control or "", out)
    _overall(run, out)
    return out


def _mean_of_subsets(dim: str, carriers: list[str], out: RunTable, percent_scale: dict[str, float]) -> None:
    """A dimension carried by several subsets: the mean of their values (zh knowledge)."""
    have = [s for s in carriers if f"subset:{s}" in out.stats]
    if not have:
        return
    cols = [c for s in have for c in (f"{s}/sum", f"{s}/n")]
    scales = [percent_scale.get(s, 1.0) for s in have]

    def fn(tot: np.ndarray, scales: list[float] = scales) -> np.ndarray:
        return mean_of([mean_value(tot[:, 2 * i], tot[:, 2 * i + 1], sc)  # type: ignore[no-any-return]
                        for i, sc in enumerate(scales)])

    note = "" if len(have) == len(carriers) else f"mean of {', '.join(have)} only"
    out.stats[f"dimension:{dim}"] = Statistic(dim, "dimension", fn, cols, note)
    out.item_keys[f"dimension:{dim}"] = set().union(*(out.item_keys[f"subset:{s}"] for s in have))


def _preserve_rate(dim: str, mixed: str, control: str, out: RunTable) -> None:
    """A preserve-rate dimension: min(100, 100 * mean(mixed) / mean(control)) (code_switching, dialect)."""
    if f"subset:{mixed}" not in out.stats or f"subset:{control}" not in out.stats:
        return
    cols = [f"{mixed}/sum", f"{mixed}/n", f"{control}/sum", f"{control}/n"]

    def fn(tot: np.ndarray) -> np.ndarray:
        return pr_value(mean_value(tot[:, 0], tot[:, 1]), mean_value(tot[:, 2], tot[:, 3]))  # type: ignore[no-any-return]

    out.stats[f"dimension:{dim}"] = Statistic(dim, "dimension", fn, cols)
    out.item_keys[f"dimension:{dim}"] = out.item_keys[f"subset:{mixed}"] | out.item_keys[f"subset:{control}"]


def _v1_empathy(run: RunData, t: ClusterTable, out: RunTable, cluster_of: Callable[[str, str], str]) -> None:
    """v1 empathy = semantic mean + acoustic mean (2-10) from the emotion subset's named scores."""
    for key, named in run.scores.items():
        if key[0] != "emotion":
            continue
        for part in ("semantic", "acoustic"):
            sc = named.get(part)
            if sc is not None and sc.scored:
                t.add(cluster_of(*key), "emotion", f"emotion_{part}/sum", sc.value)  # type: ignore[arg-type]
                t.add(cluster_of(*key), "emotion", f"emotion_{part}/n", 1.0)
                out.item_keys.setdefault("dimension:empathy", set()).add(key)
    if "emotion_semantic/sum" in t.columns and "emotion_acoustic/sum" in t.columns:
        cols = ["emotion_semantic/sum", "emotion_semantic/n", "emotion_acoustic/sum", "emotion_acoustic/n"]
        out.stats["dimension:empathy"] = Statistic(
            "empathy", "dimension", lambda x: emotion.v1_empathy(mean_value(x[:, 0], x[:, 1]), mean_value(x[:, 2], x[:, 3])),
            cols)


def _overall(run: RunData, out: RunTable) -> None:
    """The overall statistic from item-level terms, with summary values for the rest."""
    version = str((run.summary.get("overall") or {}).get("version") or run.protocol)
    dims = run.summary.get("dimensions") or {}
    clarity = "per" if run.lang == "zh" else "wer"
    # the overall's own terms (scoring/overall.py), clarity last; each applied by Term.value(s)
    defined = TERMS.get(version, TERMS["v2"])
    ordered = [t for t in defined if not t.clarity] + [t for t in defined if t.clarity]
    terms = [(clarity if t.clarity else t.key, t) for t in ordered]
    fixed_terms: list[str] = []
    fixed_value = 0.0
    live: list[tuple[str, Term, Statistic]] = []
    for dim, term in terms:
        stat = out.stats.get(f"dimension:{dim}")
        if stat is not None:
            live.append((dim, term, stat))
            continue
        v = dims.get(dim)
        if v is None:
            return  # the overall is not defined for this run (a term is missing)
        fixed_terms.append(dim)
        fixed_value += float(term.values(np.asarray(float(v)), version))
    if not live:
        return
    columns: list[str] = []
    slices: list[tuple[str, Term, Statistic, slice]] = []
    for dim, term, stat in live:
        start = len(columns)
        columns += stat.columns
        slices.append((dim, term, stat, slice(start, len(columns))))

    def fn(tot: np.ndarray) -> np.ndarray:
        total = np.full(tot.shape[0], fixed_value)
        for _, term, stat, sl in slices:
            total = total + term.values(stat.fn(tot[:, sl]), version)
        return total

    note = f"fixed summary values for {', '.join(fixed_terms)}" if fixed_terms else ""
    out.fixed = {d: float(dims[d]) for d in fixed_terms}
    out.stats["overall"] = Statistic("overall", "overall", fn, columns, note)
    keys: set[tuple[str, str]] = set()
    for dim, _, _, _ in slices:
        keys |= out.item_keys.get(f"dimension:{dim}", set())
    out.item_keys["overall"] = keys


def point_value(rt: RunTable, stat_name: str) -> float | None:
    """A statistic's value on the full data (no resampling)."""
    stat = rt.stats.get(stat_name)
    if stat is None:
        return None
    tot = rt.table.matrix(rt.table.clusters, stat.columns).sum(axis=0, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        v = float(stat.fn(tot)[0])
    return v if math.isfinite(v) else None

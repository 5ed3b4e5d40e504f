"""Paired bootstrap comparison of two runs on the same samples.

For every subset, dimension and the overall that both runs have, only the items scored in both
runs are used; clusters of items sharing a base question are resampled together (within their
subset family), identically for both runs, and the difference A - B gets a percentile 95 % CI and
a two-sided bootstrap p-value (see :func:`vocalbench.report.stats.bootstrap_p_value`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from vocalbench.records import Score
from vocalbench.report.measures import (
    DIMENSION_ORDER,
    LOWER_IS_BETTER,
    build_run_table,
)
from vocalbench.report.runs import RunData
from vocalbench.report.stats import PairedResult, bootstrap_p_value, paired_bootstrap, percentile_ci


def _shared_scores(a: RunData, b: RunData) -> tuple[RunData, RunData]:
    """Copies of both runs keeping only the (sample, score name) pairs scored in both."""
    sa: dict[tuple[str, str], dict[str, Score]] = {}
    sb: dict[tuple[str, str], dict[str, Score]] = {}
    for key in a.scores.keys() & b.scores.keys():
        na, nb = a.scores[key], b.scores[key]
        for name in na.keys() & nb.keys():
            if na[name].scored and nb[name].scored:
                sa.setdefault(key, {})[name] = na[name]
                sb.setdefault(key, {})[name] = nb[name]
    ra = RunData(a.path, a.lang, a.summary, a.config, a.samples, a.replies, sa, a.label)
    rb = RunData(b.path, b.lang, b.summary, b.config, b.samples, b.replies, sb, b.label)
    return ra, rb


def _latency_values(run: RunData, which: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for (subset, sid), r in run.replies.items():
        if subset != "single_round" or r.failed or r.timings is None:
            continue
        v = {"fcl_ms": r.timings.fcl_ms, "faa_ms": r.timings.faa_ms}.get(which, r.rtf)
        if v is not None and math.isfinite(v):
            out[sid] = float(v)
    return out


def _compare_latency(a: RunData, b: RunData, which: str, n_boot: int, seed: int) -> PairedResult | None:
    va, vb = _latency_values(a, which), _latency_values(b, which)
    ids = sorted(va.keys() & vb.keys())
    if len(ids) < 2:
        return None
    xa = np.array([va[i] for i in ids])
    xb = np.array([vb[i] for i in ids])
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(ids), size=(n_boot, len(ids)))
    da = np.median(xa[idx], axis=1)
    db = np.median(xb[idx], axis=1)
    diff = float(np.median(xa) - np.median(xb))
    return PairedResult(which, float(np.median(xa)), float(np.median(xb)), diff,
                        percentile_ci(da - db), bootstrap_p_value(da - db, diff), len(ids), len(ids),
                        "median over single_round replies")


def _order(name: str) -> tuple[int, int, str]:
    kind, _, stat = name.partition(":")
    if name == "overall":
        return (2, 0, name)
    if kind == "dimension":
        return (1, DIMENSION_ORDER.index(stat) if stat in DIMENSION_ORDER else 99, stat)
    return (0, 0, stat)


def compare_runs(a: RunData, b: RunData, n_boot: int = 2000, seed: int = 0) -> dict[str, Any]:
    """Paired comparison rows (subsets, dimensions, overall) of run ``a`` against run ``b``."""
    if a.lang != b.lang:
        raise ValueError(f"cannot compare a {a.lang} run with a {b.lang} run")
    pa, pb = _shared_scores(a, b)
    ta, tb = build_run_table(pa), build_run_table(pb)
    clusters = list(dict.fromkeys(ta.table.clusters + tb.table.clusters))
    strata_of = dict(zip(ta.table.clusters, ta.table.strata)) | dict(zip(tb.table.clusters, tb.table.strata))
    rows: list[PairedResult] = []
    notes: list[str] = []
    for name in sorted(ta.stats.keys() | tb.stats.keys(), key=_order):
        sa, sb = ta.stats.get(name), tb.stats.get(name)
        label = name.split(":", 1)[-1]
        if sa is None or sb is None:
            which = "A" if sa is None else "B"
            notes.append(f"{label}: run {which} has no item-level scores for it; not compared")
            continue
        keys = ta.item_keys.get(name, set()) & tb.item_keys.get(name, set())
        used = [c for c in clusters if c in _clusters_of(ta, sa.columns) or c in _clusters_of(tb, sb.columns)]
        if not used:
            continue
        strata = [strata_of[c] for c in used]
        ma = ta.table.matrix(used, sa.columns)
        mb = tb.table.matrix(used, sb.columns)
        if ma.shape != mb.shape:
            notes.append(f"{label}: the runs define it differently; not compared")
            continue
        va, vb, ra, rb = paired_bootstrap(ma, mb, strata, sa.fn, n_boot, seed)
        if not (math.isfinite(va) and math.isfinite(vb)):
            continue
        d = va - vb
        note = "; ".join(x for x in {sa.note, sb.note} if x)
        rows.append(PairedResult(name, va, vb, d, percentile_ci(ra - rb), bootstrap_p_value(ra - rb, d),
                                 len(keys), len(used), note))
    for which in ("fcl_ms", "faa_ms", "rtf"):
        res = _compare_latency(a, b, which, n_boot, seed)
        if res is not None:
            res.name = f"dimension:{which}"
            rows.append(res)
    return {
        "lang": a.lang,
        "run_a": {"label": a.label, "path": str(a.path), "system": a.system},
        "run_b": {"label": b.label, "path": str(b.path), "system": b.system},
        "n_boot": n_boot,
        "seed": seed,
        "difference": "A - B",
        "rows": [r.as_dict() | {"lower_is_better": r.name.split(":")[-1] in LOWER_IS_BETTER} for r in rows],
        "notes": notes,
    }


def _clusters_of(rt: Any, columns: list[str]) -> set[str]:
    """Clusters that hold any of ``columns`` (cached per table and column set)."""
    cache = rt.__dict__.setdefault("_cluster_cache", {})
    key = tuple(columns)
    if key not in cache:
        m = rt.table.matrix(rt.table.clusters, columns)
        cache[key] = {c for c, row in zip(rt.table.clusters, m) if np.any(row != 0)}
    return cache[key]


def print_comparison(result: dict[str, Any], console: Any | None = None) -> None:
    """A rich table of a comparison result."""
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = console or Console()
    t = Table(title=f"{escape(result['run_a']['label'])} (A) vs {escape(result['run_b']['label'])} (B), "
                    f"paired bootstrap, {result['n_boot']} resamples")
    for col in ("kind", "statistic", "A", "B", "A - B", "95% CI", "p", "items/clusters"):
        t.add_column(col, justify="left" if col in ("kind", "statistic") else "right", no_wrap=True)

    def f(x: float | None, nd: int = 3) -> str:
        return "-" if x is None or (isinstance(x, float) and not math.isfinite(x)) else f"{x:.{nd}f}"

    for r in result["rows"]:
        ci = r["ci95"]
        p = r["p_value"]
        p_txt = "-" if p is None or not math.isfinite(p) else ("<0.001" if p < 0.001 else f"{p:.3f}")
        kind, _, name = r["name"].rpartition(":")
        t.add_row(kind or "overall", name + (" ↓" if r.get("lower_is_better") else ""), f(r["a"]), f(r["b"]),
                  f(r["diff"]), "-" if ci is None else f"[{ci[0]:.2f}, {ci[1]:.2f}]", p_txt,
                  f"{r['n_items']}/{r['n_clusters']}",
                  style="bold" if p is not None and math.isfinite(p) and p < 0.05 else None)
    console.print(t)
    for n in result.get("notes", []):
        console.print(f"note: {n}", markup=False, highlight=False)

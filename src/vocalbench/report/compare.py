"""Paired bootstrap comparison of two runs on the same samples.

For every subset, dimension and the overall that both runs have, only the items scored in both
runs are used; clusters of items sharing a base question are resampled together (within their
subset family), identically for both runs (:func:`vocalbench.stats.paired`), and the
difference A - B gets a percentile 95 % CI and a two-sided bootstrap p-value
(:func:`vocalbench.stats.p_value`). The statistics are the runs' statistics graphs
(:mod:`vocalbench.scoring.graph`); the latency medians resample the replies they are the medians of.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, TypedDict

import numpy as np

from vocalbench.records import Score
from vocalbench.report.runs import RunData
from vocalbench.scoring.dimensions import DIMENSIONS
from vocalbench.stats import interval, median_of, p_value, paired, replicate_values

if TYPE_CHECKING:
    from rich.console import Console

DIMENSION_ORDER = list(DIMENSIONS)
LATENCY = ("fcl_ms", "faa_ms", "rtf")


class ComparedRow(TypedDict):
    """One statistic of a comparison as written to JSON (A - B, its 95 % CI and p-value)."""

    name: str
    a: float | None
    b: float | None
    diff: float | None
    ci95: list[float] | None
    p_value: float | None
    n_items: int
    n_clusters: int
    note: str
    lower_is_better: bool


class ComparedRun(TypedDict):
    """One of the two runs compared."""

    label: str
    path: str
    system: str


class Comparison(TypedDict):
    """``vocalbench compare`` of two runs of one language: the rows (subsets, dimensions, overall)."""

    lang: str
    run_a: ComparedRun
    run_b: ComparedRun
    n_boot: int
    seed: int
    difference: str
    rows: list[ComparedRow]
    notes: list[str]


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

    def as_dict(self, lower_is_better: bool) -> ComparedRow:
        return {
            "name": self.name, "a": self.a, "b": self.b, "diff": self.diff,
            "ci95": list(self.ci95) if self.ci95 else None, "p_value": self.p_value,
            "n_items": self.n_items, "n_clusters": self.n_clusters, "note": self.note,
            "lower_is_better": lower_is_better,
        }


def _shared_scores(a: RunData, b: RunData) -> tuple[RunData, RunData]:
    """Copies of both runs keeping only the (sample, score name) pairs scored in both, in run A's
    order: the order of the clusters decides which cluster each bootstrap draw picks, so a set's
    (hash-seeded) order here would make the same ``--seed`` give other intervals in every process."""
    sa: dict[tuple[str, str], dict[str, Score]] = {}
    sb: dict[tuple[str, str], dict[str, Score]] = {}
    for key, na in a.scores.items():
        nb = b.scores.get(key)
        if nb is None:
            continue
        for name in na:
            if name in nb and na[name].scored and nb[name].scored:
                sa.setdefault(key, {})[name] = na[name]
                sb.setdefault(key, {})[name] = nb[name]
    return replace(a, scores=sa), replace(b, scores=sb)


def _compare_latency(a: RunData, b: RunData, which: str, n_boot: int, seed: int) -> PairedResult | None:
    va, vb = (dict(zip(ids, values)) for values, ids in (a.latency()[which], b.latency()[which]))
    ids = sorted(va.keys() & vb.keys())
    if len(ids) < 2:
        return None
    x = np.array([[va[i], vb[i]] for i in ids])
    reps = replicate_values(x, lambda d: median_of(d, axis=1), resamples=n_boot, seed=seed)
    a_value, b_value = float(median_of(x[:, 0])), float(median_of(x[:, 1]))
    diff = float(median_of(x[:, 0]) - median_of(x[:, 1]))
    da_db = reps[:, 0] - reps[:, 1]
    return PairedResult(f"dimension:{which}", a_value, b_value, diff,
                        interval(da_db), p_value(da_db, diff), len(ids), len(ids), "median over single_round replies")


def _order(name: str) -> tuple[int, int, str]:
    kind, _, stat = name.partition(":")
    if name == "overall":
        return (2, 0, name)
    if kind == "dimension":
        return (1, DIMENSION_ORDER.index(stat) if stat in DIMENSION_ORDER else 99, stat)
    return (0, 0, stat)


def compare_runs(a: RunData, b: RunData, n_boot: int = 2000, seed: int = 0) -> Comparison:
    """Paired comparison rows (subsets, dimensions, overall) of run ``a`` against run ``b``."""
    if a.lang != b.lang:
        raise ValueError(f"cannot compare a {a.lang} run with a {b.lang} run")
    pa, pb = _shared_scores(a, b)
    ga, gb = pa.graph, pb.graph
    clusters = list(dict.fromkeys(ga.table.clusters + gb.table.clusters))
    strata_of = dict(zip(ga.table.clusters, ga.table.strata)) | dict(zip(gb.table.clusters, gb.table.strata))
    rows: list[PairedResult] = []
    notes: list[str] = []
    for name in sorted(ga.stats.keys() | gb.stats.keys(), key=_order):
        sa, sb = ga.stats.get(name), gb.stats.get(name)
        label = name.split(":", 1)[-1]
        if sa is None or sb is None:
            which = "A" if sa is None else "B"
            notes.append(f"{label}: run {which} has no item-level scores for it; not compared")
            continue
        keys = ga.items(name) & gb.items(name)
        holding = ga.table.holding(sa.columns) | gb.table.holding(sb.columns)
        used = [c for c in clusters if c in holding]
        if not used:
            continue
        ma, mb = ga.table.matrix(used, sa.columns), gb.table.matrix(used, sb.columns)
        if ma.shape != mb.shape:
            notes.append(f"{label}: the runs define it differently; not compared")
            continue
        va, vb, ra, rb = paired(ma, mb, [strata_of[c] for c in used], sa.fn, resamples=n_boot, seed=seed)
        if not (math.isfinite(va) and math.isfinite(vb)):
            continue
        d = va - vb
        note = "; ".join(x for x in {sa.note, sb.note} if x)
        rows.append(PairedResult(name, va, vb, d, interval(ra - rb), p_value(ra - rb, d), len(keys), len(used), note))
    for which in LATENCY:
        res = _compare_latency(a, b, which, n_boot, seed)
        if res is not None:
            rows.append(res)
    lower = {d.name for d in DIMENSIONS.values() if d.lower_is_better}
    return {
        "lang": a.lang,
        "run_a": {"label": a.label, "path": str(a.path), "system": a.system},
        "run_b": {"label": b.label, "path": str(b.path), "system": b.system},
        "n_boot": n_boot,
        "seed": seed,
        "difference": "A - B",
        "rows": [r.as_dict(lower_is_better=r.name.split(":")[-1] in lower) for r in rows],
        "notes": notes,
    }


def print_comparison(result: Comparison, console: Console | None = None) -> None:
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

"""Report plots (matplotlib, Agg backend) written as SVG files.

- radar of the overall's dimensions, each normalised to 0-1 the way the overall weighs it
  (K/100, R/100, C/5, SR/5, FR/100, EER/100, RR/100, PR/100, UTMOS/5, clarity points/10);
- robustness preserve-rate curves per perturbation family over its levels;
- latency distributions (FCL and first-audible histograms, RTF box plot) from the replies' timings;
- per-category bars for knowledge, reasoning and instruction following.

Each function returns the written path, or None with nothing written when the runs hold no data
for the plot (the report then says what is missing).
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

import numpy as np
from pydantic import JsonValue

from vocalbench import catalog
from vocalbench.files import write_atomic
from vocalbench.report.published import PublishedTable
from vocalbench.report.runs import RunData
from vocalbench.scoring import graph
from vocalbench.scoring.dimensions import DIMENSIONS
from vocalbench.scoring.overall import clarity_points_of, term
from vocalbench.scoring.subsets import robust

if TYPE_CHECKING:
    from matplotlib.figure import Figure

FAMILIES = ("white_noise", "background_noise", "reverberation", "farfield", "packet_loss", "distortion")
FAMILY_AXIS = {"white_noise": "SNR (dB)", "background_noise": "SNR (dB)", "reverberation": "RT60 (s)",
               "farfield": "high-pass cut-off (Hz)", "packet_loss": "frames lost (%)",
               "distortion": "clipping threshold (x peak)"}
# the overall's dimensions drawn on the radar (scoring/dimensions.py), then the clarity points
RADAR_AXES = [(d.name, d.short) for d in DIMENSIONS.values() if d.radar] + [("clarity", "Clarity")]
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


def _plt() -> ModuleType:
    """``matplotlib.pyplot``, on the Agg backend with the report's fonts."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    plt.rcParams.update({"svg.fonttype": "none", "font.size": 9, "axes.titlesize": 10})
    return plt


def _save(fig: Figure, path: Path) -> Path:
    """The figure as SVG at ``path``, written atomically."""
    import io

    import matplotlib.pyplot as plt

    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(fig)
    return write_atomic(path, buf.getvalue())


def radar_values(run: RunData) -> dict[str, float | None]:
    """Each radar axis of one run normalised to 0-1 the way the overall weighs it: the dimension over
    its overall term's maximum, the clarity points over 10 (None where the dimension is missing)."""
    dims = run.summary.dimensions
    out: dict[str, float | None] = {}
    for key, _ in RADAR_AXES:
        if key == "clarity":
            rate = dims.get("per" if run.lang == "zh" else "wer")
            out[key] = None if rate is None else float(clarity_points_of(rate, run.protocol)) / 10.0
            continue
        v = dims.get(key)
        out[key] = None if v is None else max(0.0, min(1.0, float(v) / term(run.protocol, key).hi))
    return out


def radar_chart(runs: list[RunData], path: Path, title: str) -> Path | None:
    """Radar chart of the dimensions of ``runs`` (missing dimensions drawn at 0 and named)."""
    vals = [(r, radar_values(r)) for r in runs]
    vals = [(r, v) for r, v in vals if any(x is not None for x in v.values())]
    if not vals:
        return None
    plt = _plt()
    n = len(RADAR_AXES)
    angles = np.linspace(0, 2 * np.pi, n, endpoint=False).tolist()
    fig, ax = plt.subplots(figsize=(5.6, 5.2), subplot_kw={"polar": True})
    for r, v in vals:
        ys = [v[k] if v[k] is not None else 0.0 for k, _ in RADAR_AXES]
        missing = [short for k, short in RADAR_AXES if v[k] is None]
        label = r.label + (f" (n/a, drawn at 0: {', '.join(missing)})" if missing else "")
        ax.plot(angles + angles[:1], ys + ys[:1], linewidth=1.6, label=label)
        ax.fill(angles + angles[:1], ys + ys[:1], alpha=0.12)
    ax.set_xticks(angles)
    ax.set_xticklabels([short for _, short in RADAR_AXES])
    ax.set_ylim(0, 1)
    ax.set_yticks([0.25, 0.5, 0.75, 1.0])
    ax.set_title(title, pad=18)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.08), ncol=1, fontsize=8, frameon=False)
    return _save(fig, path)


def _level_number(level: str) -> float | None:
    p = parse_level(level)
    return None if p is None else p[1]


def robust_curves(run: RunData) -> dict[str, list[tuple[float, float]]]:
    """Preserve rate (0-1, capped) per family over its levels.

    Computed from the store (mean score per condition / clean baseline of robust_clean) when the
    run holds robust scores; otherwise read from ``summary.subsets.robust.extra``, accepting
    nested ``{family: {level: pr}}`` or flat ``"family/level"``-style keys, as % or fraction.
    """
    curves: dict[str, list[tuple[float, float]]] = defaultdict(list)
    perturbed = next((s for s in catalog.specs(run.lang) if s.perturbed), None)
    prs = robust.condition_prs(run.items(perturbed.name), run.items(perturbed.control or "")) if perturbed else {}
    for cond, pr in prs.items():
        fam, _, level = cond.partition("/")
        x = _level_number(level)
        if x is not None:
            curves[fam].append((x, pr))
    row = run.summary.subsets.get(perturbed.name) if perturbed is not None and not prs else None
    for fam, level, value in _walk_conditions(row.extra if row is not None else {}):
        x = _level_number(level)
        if x is not None:
            curves[fam].append((x, value / 100.0 if value > 1.0 else value))
    return {f: sorted(set(pts)) for f, pts in curves.items()}


_FLAT = re.compile(r"(" + "|".join(FAMILIES) + r")[/:|.\-_ ]+([a-z0-9]+_-?[0-9.]+(?:hz)?)$", re.IGNORECASE)


def _walk_conditions(obj: JsonValue, family: str | None = None) -> Iterable[tuple[str, str, float]]:
    """(family, level, value) triples anywhere in a nested extra dict."""
    if not isinstance(obj, dict):
        return
    for k, v in obj.items():
        key = str(k)
        if isinstance(v, dict):
            fam = key if key in FAMILIES else family
            if fam and parse_level(key) is not None:
                num = _leaf_number(v)
                if num is not None:
                    yield fam, key, num
                    continue
            yield from _walk_conditions(v, fam)
        elif isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v):
            if family and parse_level(key) is not None:
                yield family, key, float(v)
            else:
                m = _FLAT.search(key)
                if m:
                    yield m.group(1).lower(), m.group(2), float(v)


def _leaf_number(d: dict[str, JsonValue]) -> float | None:
    for k in ("pr", "preserve_rate", "value", "rate"):
        v = d.get(k)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return float(v)
    return None


def robustness_chart(runs: list[RunData], path: Path, title: str) -> Path | None:
    """One panel per perturbation family: preserve rate over its levels, a line per run."""
    data = [(r, robust_curves(r)) for r in runs]
    data = [(r, c) for r, c in data if c]
    if not data:
        return None
    fams = [f for f in FAMILIES if any(f in c for _, c in data)]
    fams += sorted({f for _, c in data for f in c} - set(fams))
    plt = _plt()
    cols = 3
    rows = math.ceil(len(fams) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(10, 2.8 * rows), squeeze=False)
    for ax, fam in zip(axes.flat, fams):
        for r, c in data:
            if fam in c:
                xs, ys = zip(*c[fam])
                ax.plot(xs, ys, marker="o", markersize=3, label=r.label)
        ax.set_title(fam.replace("_", " "))
        ax.set_xlabel(FAMILY_AXIS.get(fam, "level"))
        ax.set_ylim(0, 1.05)
        ax.set_ylabel("preserve rate")
        if fam == "distortion":
            ax.set_xscale("log")
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[len(fams):]:
        ax.set_visible(False)
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=2, frameon=False, fontsize=8)
    fig.suptitle(title)
    fig.tight_layout(rect=(0, 0.06, 1, 0.97))
    return _save(fig, path)


def latency_chart(runs: list[RunData], path: Path, title: str) -> Path | None:
    """FCL and first-audible-audio histograms and an RTF box plot per run."""
    data = [(r, (lat["fcl_ms"][0], lat["faa_ms"][0], lat["rtf"][0])) for r in runs if (lat := r.latency())]
    data = [d for d in data if any(d[1])]
    if not data:
        return None
    plt = _plt()
    fig, (a1, a2, a3) = plt.subplots(1, 3, figsize=(14, 3.4))
    for ax, k, label in ((a1, 0, "first-chunk latency (ms)"), (a2, 1, "first audible audio (ms)")):
        drawn = [(r.label, x) for r, v in data if (x := v[k])]
        for name, x in drawn:
            ax.hist(x, bins=min(30, max(5, len(x) // 3)), alpha=0.5, label=name)
        ax.set_xlabel(label)
        ax.set_ylabel("replies")
        if drawn:
            ax.legend(fontsize=8, frameon=False)
    with_rtf = [(r, v[2]) for r, v in data if v[2]]
    if with_rtf:
        import matplotlib

        major, minor = (int(x) for x in matplotlib.__version__.split(".")[:2])
        horizontal = {"orientation": "horizontal"} if (major, minor) >= (3, 10) else {"vert": False}
        a3.boxplot([x for _, x in with_rtf], **horizontal)
        a3.set_yticks(range(1, len(with_rtf) + 1), [r.label for r, _ in with_rtf])
    a3.set_xlabel("real-time factor")
    fig.suptitle(title)
    fig.tight_layout()
    return _save(fig, path)


def quality_latency_points(runs: list[RunData]) -> list[tuple[str, float, float, bool]]:
    """(label, median first-audible ms, overall or partial overall, partial?) of each run that has both."""
    out = []
    for r in runs:
        faa = r.summary.dimensions.get("faa_ms")
        value, partial = r.summary.overall.shown()
        if faa is not None and value is not None:
            out.append((r.label, float(faa), value, partial))
    return out


def quality_latency_chart(runs: list[RunData], path: Path, title: str) -> Path | None:
    """Each run's overall (hollow: a partial overall) against its median first audible audio."""
    points = quality_latency_points(runs)
    if not points:
        return None
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7, 4.4))
    seen: dict[tuple[float, float], int] = {}
    for label, x, y, partial in points:
        ax.scatter([x], [y], s=60, facecolors="none" if partial else None, edgecolors="C0", color="C0", zorder=3)
        k = seen[(x, y)] = seen.get((x, y), -1) + 1  # labels of runs at the same point are stacked
        ax.annotate(label + (" (partial)" if partial else ""), (x, y), textcoords="offset points",
                    xytext=(6, 4 - 11 * k), fontsize=8)
    ax.set_xlabel("median first audible audio (ms, lower is better)")
    ax.set_ylabel("overall (0-100)")
    ax.grid(alpha=0.3)
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    return _save(fig, path)


def category_values(run: RunData, subset: str) -> dict[str, tuple[float, int]]:
    """Per-category value of a subset (its statistic on the category's items) and item count."""
    metric = run.summary.subsets[subset].metric if subset in run.summary.subsets else None
    tally = graph.tally_for(subset, run.lang, run.protocol, metric)
    return graph.group_values(run.items(subset), tally, subset, lambda s: s.category or "(none)")


def category_chart(runs: list[RunData], subset: str, path: Path, title: str) -> Path | None:
    """Grouped horizontal bars: one group per category, one bar per run."""
    data = [(r, category_values(r, subset)) for r in runs]
    data = [(r, d) for r, d in data if d]
    if not data:
        return None
    cats = sorted({c for _, d in data for c in d})
    plt = _plt()
    height = 0.8 / len(data)
    fig, ax = plt.subplots(figsize=(7, max(2.2, 0.35 * len(cats) * max(1, len(data) / 2) + 1)))
    y = np.arange(len(cats))
    for i, (r, d) in enumerate(data):
        ax.barh(y + i * height, [d.get(c, (0.0, 0))[0] for c in cats], height=height, label=r.label)
    ax.set_yticks(y + height * (len(data) - 1) / 2, cats)
    ax.invert_yaxis()
    row = data[0][0].summary.subsets.get(subset)
    spec = catalog.find(subset)
    metric = row.metric if row is not None and row.metric else spec.metric if spec is not None else "mean_score"
    ax.set_xlabel("%" if metric in catalog.PERCENT_METRICS else "mean score")
    ax.set_title(title)
    ax.legend(fontsize=8, frameon=False, loc="lower right")
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    return _save(fig, path)


def published_chart(runs: list[RunData], table: PublishedTable, path: Path, title: str) -> Path | None:
    """Each dimension of ``runs`` against the published range: one row per dimension the table and a
    run share, the published systems as grey dots over their lowest-highest span (ends labelled),
    each run as a coloured marker; right is better (lower-is-better dimensions are flipped)."""
    dims = [d for d in DIMENSIONS if table.dimension_range(d) is not None
            and any(r.summary.dimensions.get(d) is not None for r in runs)]
    if not dims:
        return None
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7.2, 0.42 * len(dims) + 1.3))
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for y, d in enumerate(reversed(dims)):
        found = table.dimension_range(d)
        assert found is not None
        lo, hi, published = found
        mine = [float(v) for r in runs if (v := r.summary.dimensions.get(d)) is not None]
        left, right = min([lo, *mine]), max([hi, *mine])
        span = (right - left) or 1.0
        flip = DIMENSIONS[d].lower_is_better

        def x(v: float, left: float = left, span: float = span, flip: bool = flip) -> float:
            pos = (v - left) / span
            return 1.0 - pos if flip else pos

        ax.plot([x(lo), x(hi)], [y, y], color="#bbbbbb", linewidth=5, solid_capstyle="round", zorder=1)
        ax.scatter([x(v) for v in published], [y] * len(published), s=10, color="#777777", zorder=2)
        digits = DIMENSIONS[d].digits
        for end, v in ((min(x(lo), x(hi)), lo if not flip else hi), (max(x(lo), x(hi)), hi if not flip else lo)):
            ax.annotate(f"{v:.{digits}f}", (end, y), xytext=(0, 7), textcoords="offset points", ha="center",
                        fontsize=7, color="#555555")
        for i, r in enumerate(runs):
            v = r.summary.dimensions.get(d)
            if v is not None:
                ax.scatter([x(float(v))], [y], s=46, marker="D", color=colours[i % len(colours)], zorder=3,
                           label=r.label)
    ax.set_yticks(range(len(dims)))
    ax.set_yticklabels([DIMENSIONS[d].label + (" (lower is better)" if DIMENSIONS[d].lower_is_better else "")
                        for d in reversed(dims)])
    ax.set_xticks([0, 1])
    ax.set_xticklabels(["worse", "better"])
    ax.set_xlim(-0.05, 1.05)
    ax.set_ylim(-0.7, len(dims) - 0.3)
    ax.set_title(title)
    handles, labels = ax.get_legend_handles_labels()
    seen = dict(zip(labels, handles))
    ax.legend(seen.values(), seen.keys(), loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=2, fontsize=8,
              frameon=False)
    ax.set_xlabel(f"grey: the {len(table.rows)} published {table.lang} {table.protocol} systems ({table.date}), "
                  "lowest and highest labelled", fontsize=7, color="#555555")
    return _save(fig, path)

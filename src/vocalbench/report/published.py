"""The published VocalBench leaderboards (protocol v2, en and zh), shipped as data (``published.json``):
each table's numbers with its source, paper and date; system names as the tables print them.

A run is shown among the rows of its language and protocol (:func:`standing`), marked ‡ "not
comparable" unless it used the paper's evaluators; ``vocalbench compare RUN --published NAME``
sets it beside one row (:func:`find`). Published values carry no interval: none was published.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, TypedDict

from vocalbench.scoring.summary import Summary

if TYPE_CHECKING:
    from rich.console import Console

NOT_COMPARABLE = "‡"
COMPARABLE_NOTE = (f"{NOT_COMPARABLE} not comparable: the run's evaluators (ASR, MOS, emotion, judge) differ from the "
                   "paper's profile, so its numbers are not on the published scale.")


@dataclass(frozen=True)
class PublishedRow:
    """One system of a published table: its group (size or paradigm) and its values by dimension key
    (those of ``summary.json``; None where the table has none), ``overall`` included."""

    system: str
    group: str
    values: dict[str, float | None]

    @property
    def overall(self) -> float | None:
        return self.values.get("overall")


@dataclass(frozen=True)
class PublishedTable:
    lang: str
    protocol: str
    source: str
    paper: str
    date: str
    rows: tuple[PublishedRow, ...]

    @property
    def citation(self) -> str:
        return f"{self.source}; {self.paper}; table of {self.date}"

    def dimension_range(self, dim: str) -> tuple[float, float, list[float]] | None:
        """(lowest, highest, every value) of ``dim`` over the published rows; None if none has it."""
        vals = sorted(v for r in self.rows if (v := r.values.get(dim)) is not None)
        return (vals[0], vals[-1], vals) if vals else None


@cache
def tables() -> tuple[PublishedTable, ...]:
    body = json.loads(resources.files("vocalbench.report").joinpath("published.json").read_text(encoding="utf-8"))
    out = []
    for t in body["tables"]:
        cols = t["columns"]
        rows = tuple(PublishedRow(r[0], r[1], dict(zip(cols[2:], r[2:]))) for r in t["rows"])
        out.append(PublishedTable(t["lang"], t["protocol"], t["source"], t["paper"], t["date"], rows))
    return tuple(out)


def table(lang: str, protocol: str = "v2") -> PublishedTable | None:
    """The published table of ``lang`` and ``protocol`` (None: none was published, e.g. v1 here)."""
    return next((t for t in tables() if t.lang == lang and t.protocol == protocol), None)


def find(name: str, lang: str, protocol: str = "v2") -> tuple[PublishedTable, PublishedRow]:
    """The published row named ``name`` (case and spacing ignored); ValueError naming the known ones."""
    t = table(lang, protocol)
    if t is None:
        raise ValueError(f"no published {lang} leaderboard for protocol {protocol} (published: "
                         f"{', '.join(f'{x.lang} {x.protocol}' for x in tables())})")
    key = _key(name)
    for row in t.rows:
        if _key(row.system) == key:
            return t, row
    raise ValueError(f"no published {lang} {protocol} system '{name}' (known: {', '.join(r.system for r in t.rows)})")


def _key(name: str) -> str:
    return "".join(name.lower().split())


@dataclass(frozen=True)
class Standing:
    """A run among a published table: its rank by overall (None when its overall is not complete:
    a partial sum cannot be ranked), the rows around it, and whether it is comparable."""

    table: PublishedTable
    rank: int | None
    total: int  # published rows with an overall, plus the run
    comparable: bool
    ranked: list[tuple[int, str, str, float, bool]]  # (rank, system, group, overall, is the run)


def standing(summary: Summary, label: str) -> Standing | None:
    """Where the run stands among the published rows of its language and protocol (None: no such table)."""
    t = table(summary.lang, summary.protocol or "v2")
    if t is None:
        return None
    run_overall = summary.overall.value
    entries = [(r.system, r.group, float(r.overall), False) for r in t.rows if r.overall is not None]
    if run_overall is not None:
        entries.append((label, "this run", float(run_overall), True))
    entries.sort(key=lambda e: -e[2])
    ranked = [(i + 1, s, g, o, mine) for i, (s, g, o, mine) in enumerate(entries)]
    rank = next((i for i, _, _, _, mine in ranked if mine), None)
    return Standing(t, rank, len(entries), summary.provenance.leaderboard_comparable, ranked)


class PublishedDelta(TypedDict):
    """One dimension (or the overall) of a run beside a published system."""

    dimension: str
    run: float
    ci95: list[float] | None
    published: float
    diff: float
    inside: bool | None


class PublishedComparison(TypedDict):
    """``vocalbench compare --published``: a run beside one published system, with the table's source."""

    lang: str
    protocol: str
    run: str
    published: str
    source: str
    comparable: bool
    rows: list[PublishedDelta]
    notes: list[str]


NO_INTERVAL = ("published values carry no interval (none was published): the 95 % CI is the run's alone, and "
               "'inside' says whether the published value lies in it")


def compare_published(summary: Summary, label: str, table_: PublishedTable, row: PublishedRow) -> PublishedComparison:
    """The run beside one published system, per dimension both have and the overall: the run's value
    with its 95 % CI, the published value, the difference (run - published), whether it lies inside."""
    from vocalbench.scoring.dimensions import DIMENSIONS

    rows: list[PublishedDelta] = []
    for dim in [*DIMENSIONS, "overall"]:
        theirs = row.values.get(dim)
        mine = summary.overall.value if dim == "overall" else summary.dimensions.get(dim)
        if theirs is None or mine is None:
            continue
        ci = summary.overall_ci() if dim == "overall" else summary.dimension_ci(dim)
        rows.append({"dimension": dim, "run": float(mine), "ci95": list(ci) if ci else None, "published": theirs,
                     "diff": round(float(mine) - theirs, 6),
                     "inside": None if ci is None else bool(ci[0] <= theirs <= ci[1])})
    notes = [NO_INTERVAL]
    if summary.overall.value is None:
        notes.append(f"the run's overall is not compared: {summary.overall.headline()}")
    if not summary.provenance.leaderboard_comparable:
        notes.append(COMPARABLE_NOTE)
    return {"lang": summary.lang, "protocol": table_.protocol, "run": label, "published": row.system,
            "source": table_.citation, "comparable": summary.provenance.leaderboard_comparable,
            "rows": rows, "notes": notes}


def print_published(result: PublishedComparison, console: Console | None = None) -> None:
    """The comparison as a rich table (stdout)."""
    from rich.console import Console
    from rich.table import Table

    from vocalbench.scoring.dimensions import DIMENSIONS

    console = console or Console(width=max(120, Console().width))
    mark = f" {NOT_COMPARABLE}" if not result["comparable"] else ""
    t = Table(title=f"{result['run']}{mark} vs published {result['published']} ({result['lang']}, {result['protocol']})")
    for col in ("dimension", "run", "run 95% CI", "published", "run - published", "inside CI"):
        t.add_column(col, justify="left" if col == "dimension" else "right", no_wrap=True)
    for r in result["rows"]:
        digits = DIMENSIONS[r["dimension"]].digits if r["dimension"] in DIMENSIONS else 3
        ci = r["ci95"]
        t.add_row(r["dimension"], f"{r['run']:.{digits}f}", f"{ci[0]:.{digits}f}–{ci[1]:.{digits}f}" if ci else "–",
                  f"{r['published']:.{digits}f}", f"{r['diff']:+.{digits}f}",
                  "–" if r["inside"] is None else ("yes" if r["inside"] else "no"))
    console.print(t)
    console.print(f"source: {result['source']}", markup=False, highlight=False, soft_wrap=True)
    for note in result["notes"]:
        console.print(note, style="dim", markup=False, highlight=False, soft_wrap=True)

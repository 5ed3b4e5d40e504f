"""Leaderboards from ``summary.json``: a Markdown file for several runs, a rich table for the CLI.

``write_markdown(run_dirs, out_path)`` writes one table per language (a row per run; a column per
dimension with its 95 % CI, then the overall or ``partial x/max``), followed by a completeness
table (unscored and system-error counts per subset) and the evaluators used. Runs whose
evaluators differ from the paper's profile are marked as not leaderboard-comparable.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from vocalbench.files import write_atomic
from vocalbench.report.published import COMPARABLE_NOTE, NOT_COMPARABLE, standing
from vocalbench.runner.folder import SUMMARY, RunFolderError
from vocalbench.scoring.dimensions import DIMENSIONS, dimension_order
from vocalbench.scoring.summary import Summary

if TYPE_CHECKING:
    from rich.console import Console

LABELS = {d.name: d.label for d in DIMENSIONS.values()}
UNVALIDATED = "§"  # the marker of a number judged by a judge not validated for its rubric family
LEGEND = (f"{UNVALIDATED} judged by a judge that is not validated for this rubric family (agreement and stress "
          "bars, see the report's \"Judge validity\"): not a measurement; the overall's partial sum leaves it "
          f"out, and the sum with it is shown in brackets, marked {UNVALIDATED}.")


def load_summaries(run_dirs: Iterable[str | Path]) -> list[tuple[Path, Summary]]:
    """(run folder, summary) for each run; a run without summary.json is an error naming it."""
    out = []
    for d in run_dirs:
        path = Path(d) / SUMMARY
        if not path.is_file():
            raise RunFolderError(f"{d}: no summary.json (run 'vocalbench score {d}' first)")
        out.append((Path(d), Summary.load(path)))
    return out


_MARKDOWN = re.compile(r"([\\`*_{}\[\]<>()#+!|~])")


def md_text(value: object) -> str:
    """Text from a run (a system name) safe inside a Markdown table: one line, markup escaped."""
    return _MARKDOWN.sub(r"\\\1", " ".join(str(value).split()))


def fmt(value: float | None, digits: int = 2) -> str:
    if value is None:
        return "–"
    return f"{value:.{digits}f}" if abs(value) < 1000 else f"{value:.0f}"


def _digits(dim: str) -> int:
    spec = DIMENSIONS.get(dim)
    return spec.digits if spec is not None else 2


def dimension_cell(summary: Summary, dim: str) -> str:
    """``value [lo, hi]`` (with a dagger when the dimension is incomplete)."""
    value = summary.dimensions.get(dim)
    if value is None:
        return "–"
    d = _digits(dim)
    cell = fmt(value, d)
    ci = summary.dimension_ci(dim)
    if ci is not None:
        cell += f" [{fmt(ci[0], d)}, {fmt(ci[1], d)}]"
    if dim in summary.meta.incomplete_dimensions:
        cell += " †"
    if dim in summary.meta.unvalidated_dimensions:
        cell += f" {UNVALIDATED}"
    return cell


def overall_cell(summary: Summary) -> str:
    o = summary.overall
    if o.value is not None:
        return f"**{o.value:.3f}**"
    cell = o.headline()
    if o.with_unvalidated:
        cell += f" ({o.with_unvalidated.value:.2f}/{o.with_unvalidated.max:.0f} {UNVALIDATED})"
    return cell


def system_label(run_dir: Path, summary: Summary) -> str:
    name = md_text(summary.system or run_dir.name)
    if not summary.provenance.leaderboard_comparable:
        name += " ‡"
    return name


def markdown(runs: list[tuple[Path, Summary]]) -> str:
    """The leaderboard as Markdown text."""
    lines = ["# VocalBench leaderboard", ""]
    for lang in ("en", "zh"):
        group = [(d, s) for d, s in runs if s.lang == lang]
        if not group:
            continue
        dims = [k for k in dimension_order(lang) if any(s.dimensions.get(k) is not None for _, s in group)]
        proto = sorted({s.protocol or "v2" for _, s in group})
        lines += [f"## {'English' if lang == 'en' else 'Mandarin'} ({lang}, protocol {', '.join(proto)})", ""]
        header = ["System", *(LABELS.get(k, k) for k in dims), "Overall"]
        lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        ranked = sorted(group, key=lambda x: -(x[1].overall.shown()[0] or 0))
        for d, s in ranked:
            oci = s.overall_ci()  # overall.ci95, where scoring wrote one
            cells = [system_label(d, s), *(dimension_cell(s, k) for k in dims),
                     overall_cell(s) + (f" [{oci[0]:.2f}, {oci[1]:.2f}]" if oci is not None else "")]
            lines.append("| " + " | ".join(cells) + " |")
        lines += ["", ("Cells: value [95 % bootstrap CI]. † incomplete (unscored items). "
                       "‡ evaluators differ from the paper's profile: not comparable with the published leaderboard. "
                       "An overall that was not fully measured says how many of its terms and points were, then the "
                       "sum of those terms."), ""]
        if any(s.meta.unvalidated_dimensions for _, s in group):
            lines += [LEGEND, ""]
        lines += published_section(ranked)
        lines += ["### Completeness", "", "| System | Subset | Value | n | Scored | Unscored | System errors | Complete |",
                  "|---|---|---|---|---|---|---|---|"]
        for d, s in ranked:
            for name, row in s.subsets.items():
                lines.append(f"| {md_text(s.system or d.name)} | {name} | {fmt(row.value, 3)} | {row.n} | "
                             f"{row.scored} | {row.unscored} | {row.system_errors} | "
                             f"{'yes' if row.complete else 'no'} |")
        lines += ["", "### Evaluators", ""]
        for d, s in ranked:
            p = s.provenance
            missing = s.overall.missing
            lines.append(f"- {md_text(s.system or d.name)}: ASR {md_text(p.asr)}, "
                         f"MOS {md_text(p.mos)}, emotion {md_text(p.emotion)}, judge {md_text(p.judge)}"
                         + (f"; overall missing: {', '.join(missing)}" if missing else ""))
            lines += [f"  - {w}" for w in judge_warnings(s)]
            sources = verdict_sources(s)
            if sources:
                lines.append(f"  - judged verdicts decided by grader / fitted rule / model: {sources}")
        lines.append("")
    return "\n".join(lines)


def published_section(runs: list[tuple[Path, Summary]]) -> list[str]:
    """Each run ranked among the published rows of its language and protocol (Markdown lines)."""
    lines: list[str] = []
    for d, s in runs:
        st = standing(s, s.system or d.name)
        if st is None:
            continue
        lines += [f"### {md_text(s.system or d.name)} among the published leaderboard", "",
                  f"Published {s.lang} {st.table.protocol} rows: {md_text(st.table.citation)}. Published values carry "
                  "no interval.", ""]
        if st.rank is None:
            lines += [f"Not ranked: its overall was not fully measured ({s.overall.headline()}).", ""]
        lines += ["| Rank | System | Group | Overall |", "|---|---|---|---|"]
        for rank, system, group, overall, mine in st.ranked:
            name = md_text(system) + (f" {NOT_COMPARABLE}" if mine and not st.comparable else "")
            cells = [str(rank), f"**{name}**" if mine else name, group, fmt(overall, 3)]
            lines.append("| " + " | ".join(cells) + " |")
        lines += ["", COMPARABLE_NOTE if not st.comparable else "The run used the paper's evaluators.", ""]
    return lines


def standing_line(summary: Summary, label: str) -> str | None:
    """The run's place among the published rows in one console line (None: no published table)."""
    st = standing(summary, label)
    if st is None:
        return None
    mark = f" {NOT_COMPARABLE} not comparable (evaluators differ from the paper's)" if not st.comparable else ""
    where = (f"rank {st.rank} of {st.total}" if st.rank is not None
             else f"not ranked among {st.total} (overall not fully measured)")
    return f"published {summary.lang} {st.table.protocol} leaderboard ({st.table.date}): {where}{mark}"


def verdict_sources(summary: Summary) -> str:
    """Who decided each judged subset's verdicts (summary.json ``decided_by``), e.g.
    ``safety 0/10/2, reasoning 4/0/996``; empty when no subset was judged."""
    return ", ".join(f"{name} {d.get('grader', 0)}/{d.get('rule', 0)}/{d.get('model', 0)}"
                     for name, row in summary.subsets.items() if (d := row.decided_by))


def judge_warnings(summary: Summary) -> list[str]:
    """One line per judged subset whose rubric is not validated, and the same-model warning."""
    v = summary.provenance.judge_validity
    if v is None:
        return []
    lines = [f"judge not validated for {subset}: {why}" for subset, why in v.unvalidated_subsets.items()]
    if v.same_model_as_system:
        lines.append(f"the judge ({v.judge}) is the same model as the system under test: self-preference risk")
    return lines


def judge_line(summary: Summary) -> str | None:
    """The judge's validity in one console line (the details are the report's "Judge validity")."""
    v = summary.provenance.judge_validity
    if v is None or not (v.unvalidated_subsets or v.same_model_as_system):
        return None
    parts = [f"not validated for {len(v.unvalidated_subsets)} subset(s)"] if v.unvalidated_subsets else []
    if v.same_model_as_system:
        parts.append("self-preference risk")
    return f"judge {v.judge}: {', '.join(parts)}; see the report's \"Judge validity\""


def write_markdown(run_dirs: Iterable[str | Path], out_path: str | Path) -> Path:
    """Write ``leaderboard.md`` for these runs (en and zh tables) and return its path."""
    out = Path(out_path)
    if out.is_dir() or out.suffix == "":
        out = out / "leaderboard.md"
    return write_atomic(out, markdown(load_summaries(run_dirs)))


def print_table(summary: Summary, console: Console | None = None) -> None:
    """One run's subsets, dimensions and overall as rich tables (stdout)."""
    from rich.console import Console
    from rich.table import Table

    console = console or Console(width=max(120, Console().width))  # never squeeze the numbers
    t = Table(title=f"{summary.system} ({summary.lang}, {summary.protocol})")
    for col in ("subset", "metric", "value", "95% CI", "n", "scored", "unscored", "sys. errors", "complete"):
        t.add_column(col, justify="left" if col in ("subset", "metric") else "right", no_wrap=True)
    for name, row in summary.subsets.items():
        ci = row.ci95
        t.add_row(name, row.metric, fmt(row.value, 3), f"{fmt(ci[0], 2)}–{fmt(ci[1], 2)}" if ci else "–",
                  str(row.n), str(row.scored), str(row.unscored), str(row.system_errors),
                  "yes" if row.complete else "[red]no[/red]")
    console.print(t)
    dims = {k: v for k, v in summary.dimensions.items() if v is not None}
    doubtful = set(summary.meta.unvalidated_dimensions)
    if dims:
        console.print("dimensions: " + ", ".join(
            f"{LABELS.get(k, k)} {fmt(v, _digits(k))}" + (f" {UNVALIDATED}" if k in doubtful else "")
            for k, v in dims.items()), markup=False, highlight=False)
    o = summary.overall
    if o.value is not None:
        console.print(f"overall ({o.version}): [bold]{o.value:.3f}[/bold]")
    else:
        more = o.with_unvalidated
        why = [f"missing {', '.join(o.missing)}"] if o.missing else []
        why += [f"not validated {', '.join(o.unvalidated)}"] if o.unvalidated else []
        console.print(f"overall ({o.version}): not available, {o.headline()}"
                      + (f" ({more.value:.2f} of {more.max:.0f} with the unvalidated terms {UNVALIDATED})" if more else "")
                      + (f"; {'; '.join(why)}" if why else ""), markup=False, highlight=False, soft_wrap=True)
    line = standing_line(summary, summary.system)
    if line is not None:
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    if doubtful:
        console.print(LEGEND, style="dim", markup=False, highlight=False, soft_wrap=True)
    if not summary.provenance.leaderboard_comparable:
        console.print("[dim]evaluators differ from the paper's profile: not leaderboard-comparable[/dim]")
    line = judge_line(summary)
    if line is not None:
        console.print(line, style="yellow", markup=False, highlight=False, soft_wrap=True)

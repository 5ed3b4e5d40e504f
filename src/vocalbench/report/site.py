"""``vocalbench report``: leaderboard (Markdown + HTML), plots and the per-sample viewer.

Everything is written under one folder that opens from disk with no server::

    OUT/leaderboard.md     (vocalbench.report.leaderboard.write_markdown)
    OUT/leaderboard.html   sortable tables per language, CIs, unscored counts, plots
    OUT/viewer.html        per-sample viewer, data embedded as JSON, rendered with textContent
    OUT/plots/*.svg        radar, robustness curves, latency, quality vs latency, per-category bars
    OUT/audio/...          query and reply audio, hard-linked (or copied) from the runs

All text from runs (model replies above all) is untrusted: HTML is produced by Jinja2 with
autoescape on, and the viewer's JSON block is escaped so that no ``</script>`` can break out.
"""

from __future__ import annotations

import logging
import math
import os
import re
import shutil
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from pydantic import JsonValue

from vocalbench import catalog
from vocalbench.errors import InputError
from vocalbench.files import inside, write_atomic, written_folder
from vocalbench.records import EMOTIONS_5, Sample
from vocalbench.report import published
from vocalbench.report.plots import (
    category_chart,
    latency_chart,
    published_chart,
    quality_latency_chart,
    radar_chart,
    robustness_chart,
)
from vocalbench.report.published import PublishedTable
from vocalbench.report.repeats import load_repeats
from vocalbench.report.runs import RunData, load_runs
from vocalbench.runner.folder import RunFolder, runs_holding
from vocalbench.scoring import dimensions
from vocalbench.scoring.subsets import item_value

if TYPE_CHECKING:
    from jinja2 import Environment

log = logging.getLogger(__name__)

LANG_NAME = {"en": "English", "zh": "Mandarin"}
_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass
class ReportResult:
    """What ``write_report`` produced and what it could not."""

    out_dir: Path
    files: list[Path] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def fmt(dim: str, v: float | None) -> str:
    """A dimension value as the leaderboard prints it."""
    if v is None or not math.isfinite(v):
        return "—"
    spec = dimensions.DIMENSIONS.get(dim)
    return f"{v:.{spec.digits if spec is not None else 2}f}"


def label(dim: str) -> str:
    spec = dimensions.DIMENSIONS.get(dim)
    return spec.label if spec is not None else dim


def _dimension_unscored(run: RunData, dim: str) -> int:
    subsets = run.summary.subsets
    return sum(subsets[s].unscored for s in dimensions.subsets_of(dim, run.lang) if s in subsets)


class LeaderboardCell(TypedDict):
    """One dimension of a leaderboard row: its value as shown, CI, sort key and what it lacks."""

    dim: str
    value: float | None
    text: str
    ci: str | None
    sort: str
    unscored: int
    incomplete: list[str]
    missing: bool
    unvalidated: bool


class LeaderboardRow(TypedDict):
    """One run on the leaderboard page."""

    label: str
    system: str
    path: str
    comparable: bool
    provenance: str
    overall_text: str
    overall_sub: str
    overall_sort: str
    partial: bool
    overall_ci: str | None
    overall_missing: list[str]
    overall_unvalidated: list[str]
    overall_with_unvalidated: str | None
    version: str
    cells: list[LeaderboardCell]
    unscored_total: int
    system_errors: int
    no_ci: list[str]


class RepeatCell(TypedDict):
    dim: str
    text: str
    ci: str | None


class RepeatRow(TypedDict):
    """A repeat group: overall and dimensions as mean ± SD [CI] over its repeats."""

    label: str
    n: int
    cells: list[RepeatCell]


class FamilyRow(TypedDict):
    """A rubric family's judge-check figures as the page shows them."""

    family: str
    status: str
    figure: str
    stress: str
    n: int | None
    validated: bool
    sources: str


class JudgeValidityRow(TypedDict):
    label: str
    judge: str
    checked_at: str
    families: list[FamilyRow]
    warnings: dict[str, str]
    same_model: bool


class RankedRow(TypedDict):
    rank: int
    system: str
    group: str
    overall: str
    mine: bool


class PublishedStandingRow(TypedDict):
    """A run's rank among the published rows of its language and protocol, and those rows."""

    label: str
    citation: str
    rank: int | None
    total: int
    comparable: bool
    headline: str
    rows: list[RankedRow]


def leaderboard_rows(runs: list[RunData], lang: str) -> list[LeaderboardRow]:
    """One row per run of ``lang``: overall (value or partial), every dimension with its unscored
    count and the 95 % CI summary.json carries (none where it carries none: nothing is recomputed)."""
    rows: list[LeaderboardRow] = []
    for r in runs:
        if r.lang != lang:
            continue
        dims, subsets, prov, ov = r.summary.dimensions, r.summary.subsets, r.summary.provenance, r.summary.overall
        cells: list[LeaderboardCell] = []
        no_ci: list[str] = []
        for d in dimensions.shown(lang):
            v = dims.get(d)
            ci = r.summary.dimension_ci(d) if v is not None else None
            if v is not None and ci is None and dimensions.ci_row(d, lang) is None:
                no_ci.append(label(d))  # a summary.json written before scoring wrote meta.dimension_ci95
            unscored = _dimension_unscored(r, d)
            incomplete = [s for s in dimensions.subsets_of(d, lang) if s in subsets and not subsets[s].complete]
            cells.append({
                "dim": d, "value": v, "text": fmt(d, v),
                "ci": None if ci is None else f"[{fmt(d, ci[0])}, {fmt(d, ci[1])}]",
                "sort": "" if v is None else repr(float(v)), "unscored": unscored,
                "incomplete": incomplete, "missing": v is None,
                "unvalidated": d in r.summary.meta.unvalidated_dimensions,
            })
        partial = ov.partial or None
        value = ov.value
        o_sub = ""
        if value is not None:
            o_text, o_sort = f"{float(value):.3f}", repr(float(value))
        elif partial:  # how much was measured first, the partial sum after it (never a lone "24.7 of 25")
            k, n, points, total = ov.measured()
            o_text, o_sort = f"{k} of {n} terms measured", ""
            o_sub = f"{points:g} of {total:g} points; their sum {float(partial.value):.1f} of {points:g}"
        else:
            o_text, o_sort = "—", ""
        oci = r.summary.overall_ci() if value is not None else None
        if value is not None and oci is None:
            no_ci.append("Overall")  # likewise before overall.ci95
        rows.append({
            "label": r.label, "system": r.system, "path": str(r.path),
            "comparable": prov.leaderboard_comparable,
            "provenance": ", ".join(f"{k}: {v}" for k in ("asr", "mos", "emotion", "judge") if (v := getattr(prov, k))),
            "overall_text": o_text, "overall_sub": o_sub, "overall_sort": o_sort,
            "partial": value is None and bool(partial),
            "overall_ci": None if oci is None else f"[{oci[0]:.2f}, {oci[1]:.2f}]",
            "overall_missing": list(ov.missing),
            "overall_unvalidated": list(ov.unvalidated),
            "overall_with_unvalidated": None if ov.with_unvalidated is None else
            f"{float(ov.with_unvalidated.value):.1f} of {float(ov.with_unvalidated.max):.0f}",
            "version": ov.version or r.protocol,
            "cells": cells, "unscored_total": sum(row.unscored for row in subsets.values()),
            "system_errors": sum(row.system_errors for row in subsets.values()),
            "no_ci": no_ci,
        })
    return rows


def repeat_rows(runs: list[RunData], lang: str) -> list[RepeatRow]:
    """One row per repeat group of ``lang`` among the runs: overall and dimensions as mean ± SD [CI]."""
    rows: list[RepeatRow] = []
    for group in dict.fromkeys(r.path.parent for r in runs if r.lang == lang):
        body = load_repeats(group)
        if body is None:
            continue
        cells: list[RepeatCell] = []
        for dim in ["overall", *dimensions.shown(lang)]:
            pooled = body.overall if dim == "overall" else body.dimensions.get(dim)
            if pooled is None:
                cells.append({"dim": dim, "text": "—", "ci": None})
                continue
            ci = pooled.ci95
            cells.append({"dim": dim, "text": f"{fmt(dim, pooled.mean)} ± {fmt(dim, pooled.sd)}",
                          "ci": f"[{fmt(dim, ci[0])}, {fmt(dim, ci[1])}]" if ci else None})
        rows.append({"label": f"{body.system} ({group.name})", "n": body.repeats, "cells": cells})
    return rows


def _check_figure(fig: dict[str, Any]) -> str:
    """A family's judge-check figure with its 95 % interval: "κ 0.62 [0.51, 0.72], bias 2.1 pt"."""
    stat, sym, ci = ("kappa", "κ", fig.get("kappa_ci95")) if "kappa" in fig else ("spearman", "ρ", fig.get("spearman_ci95"))
    if stat not in fig:
        return "—"
    interval = f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else ""
    tail = f"bias {fig.get('bias')} pt" if stat == "kappa" else f"mean diff {fig.get('mean_diff')}"
    errored = f", {fig['errored']} errored" if fig.get("errored") else ""
    return f"{sym} {fig[stat]}{interval}, {tail}{errored}"


def _stress_figure(fig: dict[str, Any]) -> str:
    """A family's stress-suite figures: "passed: padding +0.03 [-0.02, 0.07], off_topic 1.84 [...]"."""
    stress = fig.get("stress")
    if not stress:
        return "not run"
    parts = []
    for name, t in stress.get("transformations", {}).items():
        if t.get("value") is None:
            continue
        ci = t.get("ci95")
        mark = "" if t.get("passed") else " ✗" if t.get("passed") is False else " (few)"
        errors = f" ({t['errors']} errors)" if t.get("errors") else ""
        parts.append(f"{name} {t['value']:+.2f}" + (f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else "") + errors + mark)
    return ("passed: " if stress.get("passed") else "failed: ") + ", ".join(parts)


def judge_validity_rows(runs: list[RunData], lang: str) -> list[JudgeValidityRow]:
    """Per run of ``lang``: its judge, the latest judge-check figures of the rubric families it
    used, the subsets whose judged numbers are not validated, and the same-model warning."""
    out: list[JudgeValidityRow] = []
    for r in runs:
        if r.lang != lang:
            continue
        v = r.summary.provenance.judge_validity
        if v is None:
            continue
        families: list[FamilyRow] = []
        for fam, fig in sorted(v.families.items()):
            by_source = fig.get("by_source")
            sources = by_source if isinstance(by_source, dict) else {}
            n = fig.get("n")
            families.append({"family": fam, "status": str(fig.get("status", "")), "figure": _check_figure(fig),
                             "stress": _stress_figure(fig),
                             "n": n if isinstance(n, int) else None, "validated": bool(fig.get("validated")),
                             "sources": ", ".join(f"{src} {f.get('kappa', f.get('spearman'))} (n {f['n']})"
                                                  for src, f in sources.items() if isinstance(f, dict))})
        out.append({"label": r.label, "judge": v.judge, "checked_at": v.checked_at or "never",
                    "families": families, "warnings": v.unvalidated_subsets, "same_model": v.same_model_as_system})
    return out


def missing_notes(runs: list[RunData], lang: str) -> list[str]:
    """Plain sentences naming what the runs of ``lang`` lack."""
    notes = []
    for r in runs:
        if r.lang != lang:
            continue
        if not r.has_summary:
            notes.append(f"{r.label}: no summary.json (score the run first)")
            continue
        absent = [label(d) for d in dimensions.shown(lang) if r.summary.dimensions.get(d) is None]
        if absent:
            notes.append(f"{r.label}: not run or not available: {', '.join(absent)}")
        for s, e in sorted(r.summary.subsets.items()):
            if e.n and not e.scored:
                notes.append(f"{r.label}: {s} has no scored items ({e.unscored} unscored)")
            elif not e.complete:
                notes.append(f"{r.label}: {s} is incomplete ({e.unscored} unscored)")
        ov = r.summary.overall
        if ov.value is None and ov.missing:
            notes.append(f"{r.label}: overall is partial; missing or incomplete: {', '.join(ov.missing)}")
        if not r.scores and (r.path / "store.sqlite").exists():
            notes.append(f"{r.label}: the store holds no per-sample scores (no CIs, no viewer scores)")
    return notes


# --------------------------------------------------------------------------- audio and viewer data
def _link(src: Path, dst: Path) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    if dst.exists():
        if dst.stat().st_size == src.stat().st_size:
            return
        dst.unlink()
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def _audio_rel(run: RunData, path: str | None, out: Path, rel_dir: str, stem: str) -> str | None:
    """The report's copy (a hard link) of a record's audio, relative to ``out``; None when the record
    has none, or its file is not audio (only audio files are ever linked into a report)."""
    from vocalbench.audio import AudioError, info

    src = run.resolve_audio(path)
    if src is None:
        return None
    try:
        info(src)
    except AudioError as exc:
        log.warning("not linked into the report: %s", exc)
        return None
    name = _SAFE.sub("_", stem) + src.suffix.lower()
    rel = f"audio/{'/'.join(_SAFE.sub('_', part) for part in rel_dir.split('/'))}/{name}"
    _link(src, inside(out, rel))
    return rel


def _emotion_dist(details: dict[str, JsonValue]) -> dict[str, float] | None:
    """An emotion probability distribution found in a score's details, if any."""
    cands = [details] + [v for v in details.values() if isinstance(v, dict)]
    for c in cands:
        probs = {k: float(v) for k, v in c.items() if k in EMOTIONS_5 and isinstance(v, (int, float))}
        if len(probs) >= 3:
            return probs
    return None


def _clean_json(x: JsonValue) -> JsonValue:
    """Replace non-finite floats (invalid in JSON) with None, recursively."""
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if isinstance(x, dict):
        return {str(k): _clean_json(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean_json(v) for v in x]
    return x


def viewer_data(runs: list[RunData], out: Path) -> JsonValue:
    """The viewer's JSON: runs, and every sample with each run's reply, scores and timings."""
    keys: dict[tuple[str, str, str], Sample | None] = {}
    for r in runs:
        for (subset, sid), s in r.samples.items():
            keys.setdefault((r.lang, subset, sid), s)
        for (subset, sid) in list(r.replies) + list(r.scores):
            keys.setdefault((r.lang, subset, sid), None)
    samples: list[JsonValue] = []
    for (lang, subset, sid), sample in sorted(keys.items(), key=lambda kv: (kv[0][0], kv[0][1], _idx(kv[1]), kv[0][2])):
        entry: dict[str, Any] = {"lang": lang, "subset": subset, "id": sid, "category": None, "question": "",
                                 "reference": None, "history": [], "query_audio": None, "runs": []}
        if sample is not None:
            entry.update(category=sample.category, question=sample.question, reference=sample.reference,
                         history=[{"role": t.role, "text": t.text} for t in sample.history])
            owner = next(r for r in runs if r.lang == lang and (subset, sid) in r.samples)
            if sample.audio is not None:
                entry["query_audio"] = _audio_rel(owner, sample.audio.path, out, f"query/{lang}/{subset}", sid)
        for i, r in enumerate(runs):
            entry["runs"].append(_run_entry(r, i, subset, sid, out) if r.lang == lang else None)
        samples.append(entry)
    return _clean_json({"runs": [{"label": r.label, "lang": r.lang, "system": r.system} for r in runs],
                        "samples": samples})


def _idx(sample: Sample | None) -> int:
    return sample.index if sample is not None else 0


class ScoreEntry(TypedDict):
    """One named score of a reply as the viewer shows it."""

    name: str
    value: float | None
    unscored: str | None
    system_error: str | None
    scorer: str
    judge_model: str | None
    rubric: str | None
    raw: str | None
    decided_by: dict[str, JsonValue] | None
    details: dict[str, JsonValue]


class EntryTimings(TypedDict):
    """A reply's timings in ms from its latency origin (rtf and duration as they are)."""

    fcl_ms: float | None
    faa_ms: float | None
    first_text_ms: float | None
    last_chunk_ms: float | None
    rtf: float | None
    audio_duration_s: float | None
    origin: str


class RunEntry(TypedDict):
    """One run's reply to one sample in the viewer: text, audio, transcript, error, timings, scores."""

    text: str | None
    audio: str | None
    asr: str | None
    error: str | None
    timings: EntryTimings | None
    scores: list[ScoreEntry]
    main: float | None
    unscored: bool
    system_error: bool
    emotion: dict[str, float] | None
    mos: float | None


def _run_entry(r: RunData, i: int, subset: str, sid: str, out: Path) -> RunEntry | None:
    reply = r.replies.get((subset, sid))
    named = r.scores.get((subset, sid)) or {}
    if reply is None and not named:
        return None
    main = item_value(named, r.protocol)
    scores: list[ScoreEntry] = []
    emotion = None
    mos = None
    for name, sc in sorted(named.items()):
        scores.append({
            "name": name, "value": sc.value, "unscored": sc.unscored, "system_error": sc.system_error,
            "scorer": sc.scorer, "judge_model": sc.judge.model if sc.judge else None,
            "rubric": sc.judge.rubric if sc.judge else None, "raw": sc.judge.raw if sc.judge else None,
            "decided_by": sc.decided_by.model_dump(exclude_none=True) if sc.decided_by else None,
            "details": sc.details,
        })
        emotion = emotion or _emotion_dist(sc.details)
        if name in ("utmos", "mos") and sc.scored:
            mos = sc.value
    e: RunEntry = {
        "text": None, "audio": None, "asr": None, "error": None, "timings": None, "scores": scores,
        "main": main,
        "unscored": any(s.unscored for s in named.values()),
        "system_error": any(s.system_error for s in named.values()) or bool(reply and reply.failed),
        "emotion": emotion, "mos": mos,
    }
    if reply is not None:
        asr = reply.asr_text
        for sc in named.values():
            for k in ("hyp", "asr", "transcript", "asr_text"):
                got = sc.details.get(k)
                if not asr and isinstance(got, str):
                    asr = got
        e["text"], e["asr"] = reply.text, asr
        e["error"] = None if reply.error is None else f"{reply.error.type}: {reply.error.message}"
        e["audio"] = _audio_rel(r, reply.audio.path if reply.audio else None, out, f"run{i}/{subset}", sid)
        t = reply.timings
        if t is not None:
            def ms(x: float | None) -> float | None:
                return None if x is None else round((x - t.request_sent) * 1000.0, 1)
            e["timings"] = {"fcl_ms": ms(t.first_audio), "faa_ms": ms(t.first_audible), "first_text_ms": ms(t.first_text),
                            "last_chunk_ms": ms(t.last_chunk), "rtf": reply.rtf,
                            "audio_duration_s": reply.audio_duration, "origin": t.origin}
    return e


# --------------------------------------------------------------------------- the report
def _env() -> Environment:
    from jinja2 import Environment, PackageLoader

    return Environment(loader=PackageLoader("vocalbench.report", "templates"), autoescape=True,
                       trim_blocks=True, lstrip_blocks=True)


REPORT_ENTRIES = frozenset({"leaderboard.md", "leaderboard.html", "viewer.html", "plots", "audio"})


def write_report(paths: Sequence[str | Path | RunFolder], out_dir: str | Path) -> ReportResult:
    """Write the whole report for the given run folders (held ones read through their open store)
    as ``out_dir``: written beside it and renamed into place (:func:`~vocalbench.files.written_folder`),
    so a killed or failed report leaves the previous one or none. ``out_dir`` is refused when it
    holds anything but a report (it is replaced whole). An ``out_dir`` inside a run folder (``run``'s
    RUN/report) is written under that run's writer lock; the runs read are held with a reader's lock."""
    out = Path(out_dir)
    with ExitStack() as held:
        for run in runs_holding(out):
            held.enter_context(RunFolder(run))  # a writer of that run is refused while the report writes
        return _write_report(load_runs(paths), out)


def published_table(lang: str, runs: list[RunData]) -> PublishedTable | None:
    """The published table of the runs' language and protocol (the first run's protocol)."""
    return published.table(lang, runs[0].protocol or "v2") if runs else None


def published_rows(runs: list[RunData]) -> list[PublishedStandingRow]:
    """Per run: its rank among the published rows of its language and protocol, and those rows."""
    out: list[PublishedStandingRow] = []
    for r in runs:
        st = published.standing(r.summary, r.label)
        if st is None:
            continue
        out.append({"label": r.label, "citation": st.table.citation, "rank": st.rank, "total": st.total,
                    "comparable": st.comparable, "headline": r.summary.overall.headline(),
                    "rows": [{"rank": k, "system": name, "group": group,
                              "overall": f"{v:.3f}", "mine": mine}
                             for k, name, group, v, mine in st.ranked]})
    return out


def _write_report(runs: list[RunData], out: Path) -> ReportResult:
    if out.exists() and not out.is_dir():
        raise InputError(f"--out {out}: exists and is not a folder")
    foreign = sorted(p.name for p in out.iterdir() if p.name not in REPORT_ENTRIES) if out.is_dir() else []
    if foreign:
        raise InputError(f"--out {out}: holds other files than a report ({', '.join(foreign[:3])}); "
                         "give a new folder or an earlier report's")
    with written_folder(out) as tmp:
        res = _write_site(runs, tmp)
    return ReportResult(out_dir=out, files=[out / f.relative_to(tmp) for f in res.files], warnings=res.warnings)


def _write_site(runs: list[RunData], out: Path) -> ReportResult:
    """The report's files under ``out``."""
    res = ReportResult(out_dir=out)
    res.files.extend(_markdown(runs, out))
    langs = [lang for lang in ("en", "zh") if any(r.lang == lang for r in runs)]
    sections = []
    for lang in ("en", "zh"):
        lruns = [r for r in runs if r.lang == lang]
        if not lruns:
            continue
        plots, plot_missing = [], []
        charts = (("dimensions", "Dimensions (normalised as the overall weighs them)", radar_chart),
                  ("robustness", "Robustness: preserve rate per perturbation family", robustness_chart),
                  ("latency", "Latency (single_round replies)", latency_chart),
                  ("quality_latency", "Quality vs latency: overall against median first audible audio",
                   quality_latency_chart))
        for kind, title, chart in charts:
            p = chart(lruns, out / "plots" / f"{kind}_{lang}.svg", f"{title} [{lang}]")
            if p is None:
                plot_missing.append(f"{title}: no data")
            else:
                plots.append({"title": title, "src": f"plots/{p.name}"})
                res.files.append(p)
        for subset in [spec.name for spec in catalog.specs() if spec.categories]:
            p = category_chart(lruns, subset, out / "plots" / f"categories_{subset}_{lang}.svg",
                               f"{subset} by category [{lang}]")
            if p is not None:
                plots.append({"title": f"{subset} by category", "src": f"plots/{p.name}"})
                res.files.append(p)
        published = published_rows(lruns)
        table, published_plot = published_table(lang, lruns), None
        if table is not None:
            p = published_chart(lruns, table, out / "plots" / f"published_{lang}.svg",
                                f"Dimensions against the published range [{lang}]")
            if p is None:
                plot_missing.append("Dimensions against the published range: no dimension in common")
            else:
                published_plot = f"plots/{p.name}"
                res.files.append(p)
        rows = leaderboard_rows(runs, lang)
        sections.append({
            "published": published, "published_plot": published_plot,
            "lang": lang, "name": LANG_NAME[lang],
            "columns": [{"dim": d, "label": label(d), "lower": dimensions.DIMENSIONS[d].lower_is_better
                         if d in dimensions.DIMENSIONS else False} for d in dimensions.shown(lang)],
            "rows": rows,
            "judges": judge_validity_rows(runs, lang),
            "repeats": repeat_rows(runs, lang),
            "repeat_columns": [{"dim": "overall", "label": "Overall"}] + [
                {"dim": d, "label": label(d)} for d in dimensions.shown(lang)],
            "notes": missing_notes(runs, lang) + plot_missing + [
                f"{r['label']}: summary.json carries no 95 % CI for {', '.join(r['no_ci'])} (written before "
                "scoring wrote them; score the run again for them): shown without one"
                for r in rows if r["no_ci"]],
            "plots": plots,
        })
    absent = [LANG_NAME[lang] for lang in ("en", "zh") if lang not in langs]
    env = _env()
    html = env.get_template("leaderboard.html.j2").render(
        sections=sections, absent=absent, has_markdown=(out / "leaderboard.md").exists(),
    )
    write_atomic(out / "leaderboard.html", html)
    res.files.append(out / "leaderboard.html")
    data = viewer_data(runs, out)
    viewer = env.get_template("viewer.html.j2").render(data=data)
    write_atomic(out / "viewer.html", viewer)
    res.files.append(out / "viewer.html")
    return res


def _markdown(runs: list[RunData], out: Path) -> list[Path]:
    """leaderboard.md through the Markdown writer of vocalbench.report.leaderboard."""
    from vocalbench.report.leaderboard import write_markdown

    target = out / "leaderboard.md"
    write_markdown([r.path for r in runs], target)
    return [target] if target.exists() else []

"""How far to trust a judge: run it over the labelled calibration set and measure agreement.

``judge_items`` judges every item of one split as a run would (the rules-first grader's evidence
first, the model where the rule needs it; cached like every judge call) and ``family_figures``
turns (label, verdict) pairs into the figures per rubric family:

- binary: agreement, Cohen's kappa with its 95 % interval, the judge's positive rate beside the
  labels' (bias, points);
- scale: exact and within-one agreement, Spearman rho with its 95 % interval, mean difference
  (judge - label) and MAE;
- both: n, unparseable answers and other judge errors, model calls, and the same figures per reply
  source (so a rule that only works for one system shows).

A verdict the judge could not give (unparseable, unavailable, any other error) is never dropped: it
counts as a disagreement, the verdict farthest from the label (binary: the other verdict; 1-5: the
end of the scale farther from the label, the top on a tie), in every figure, and the family's
``errored`` count says how many there were. So a judge that fails on the hard items is not measured
on the easy ones.

Intervals resample whole questions (all replies to one question together). A family is
**validated** only with at least ``MIN_ITEMS`` scored test items, the point estimate at the bar
(binary kappa >= 0.6 and |bias| <= 10 points; scale rho >= 0.5 and |mean difference| <= 0.4) and
the interval's lower end at kappa >= 0.45 / rho >= 0.35, **and** passes the stress suite
(``judge.stress``, on its check wordings). ``save_check`` keeps the latest
figures per judge under the cache; ``judge_validity`` gives a run the figures of its judge (the
local judge's test-split figures also ship with the package) and names the subsets whose rubrics
are not validated.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from vocalbench import stats
from vocalbench.files import write_json
from vocalbench.judge import graders, rubrics
from vocalbench.judge.calibrated import CalibratedJudge, family_of
from vocalbench.judge.calibration import CalibrationItem
from vocalbench.judge.json_judge import Judge
from vocalbench.judge.rubrics.record import Evidence
from vocalbench.judge.spec import JudgeSpec
from vocalbench.records import JudgeTrace

MIN_ITEMS = 100  # scored test items a family needs before it can be validated
KAPPA_MIN = 0.6
KAPPA_LOW_MIN = 0.45  # the 95 % interval's lower end
BIAS_MAX = 10.0  # points of positive rate
RHO_MIN = 0.5
RHO_LOW_MIN = 0.35
MEAN_DIFF_MAX = 0.4
RESAMPLES = 2000


# -- statistics (pure) ---------------------------------------------------------------------------
def cohen_kappa(labels: Sequence[float], judged: Sequence[float]) -> float | None:
    """Cohen's kappa of labels and verdicts (``stats``); None when undefined (n < 2)."""
    return _defined(stats.cohen_kappa(labels, judged)) if len(labels) >= 2 else None


def spearman(a: Sequence[float], b: Sequence[float]) -> float | None:
    """Spearman's rho (``stats``); None when either side is constant or n < 3."""
    return _defined(stats.spearman(a, b)) if len(a) >= 3 else None


def _defined(x: float) -> float | None:
    return None if math.isnan(x) else x


def _r(x: float | None, nd: int = 4) -> float | None:
    return None if x is None else round(x, nd)


def cluster_interval(pairs: Sequence[tuple[float, float]], clusters: Sequence[str], kind: str, *,
                     resamples: int = RESAMPLES, seed: int = 0) -> tuple[float, float] | None:
    """95 % interval of kappa (binary) or Spearman's rho (scale) of (label, verdict) ``pairs``,
    resampling whole questions (``clusters``: all replies to one question together) with the one
    bootstrap engine (``stats``); None with fewer than 2 questions or an undefined value."""
    if len(set(clusters)) < 2:
        return None
    labels, judged = [p[0] for p in pairs], [p[1] for p in pairs]
    rows = stats.kappa_rows(labels, judged) if kind == "binary" else stats.rank_rows(labels, judged)
    order = sorted(set(clusters))
    index = {c: i for i, c in enumerate(order)}
    sums = np.zeros((len(order), rows.shape[1]))
    np.add.at(sums, [index[c] for c in clusters], rows)
    fn = stats.kappa_of_totals if kind == "binary" else stats.rank_corr_of_totals
    return stats.cluster_ci(sums, fn, resamples=resamples, seed=seed)


@dataclass
class Outcome:
    """One judged calibration item."""

    item: CalibrationItem
    value: float | None
    error: str | None = None
    raw: str = ""
    cached: bool = False
    seconds: float = 0.0
    decided_by: str = "model"  # grader | rule (decided without a model call) | model

    @property
    def model_asked(self) -> bool:
        return self.decided_by == "model"


def decided_by_counts(outcomes: Iterable[Outcome]) -> dict[str, int]:
    """How many verdicts each source decided: ``{"grader": n, "rule": n, "model": n}``."""
    counts = dict.fromkeys(("grader", "rule", "model"), 0)
    for o in outcomes:
        counts[o.decided_by] += 1
    return counts


def _binary_figures(pairs: Sequence[tuple[float, float]]) -> dict[str, Any]:
    n = len(pairs)
    labels, judged = [p[0] for p in pairs], [p[1] for p in pairs]
    pos_j = sum(judged) / n * 100 if n else None
    pos_l = sum(labels) / n * 100 if n else None
    return {"n": n, "agreement": _r(sum(a == b for a, b in pairs) / n if n else None),
            "kappa": _r(cohen_kappa(labels, judged)), "judge_positive_rate": _r(pos_j, 2),
            "label_positive_rate": _r(pos_l, 2),
            "bias": _r(pos_j - pos_l, 2) if pos_j is not None and pos_l is not None else None}


def _scale_figures(pairs: Sequence[tuple[float, float]]) -> dict[str, Any]:
    n = len(pairs)
    labels, judged = [p[0] for p in pairs], [p[1] for p in pairs]
    mj = sum(judged) / n if n else None
    ml = sum(labels) / n if n else None
    return {"n": n, "agreement": _r(sum(round(b) == a for a, b in pairs) / n if n else None),
            "within_one": _r(sum(abs(round(b) - a) <= 1 for a, b in pairs) / n if n else None),
            "spearman": _r(spearman(labels, judged)), "judge_mean": _r(mj), "label_mean": _r(ml),
            "mean_diff": _r(mj - ml) if mj is not None and ml is not None else None,
            "mae": _r(sum(abs(a - b) for a, b in pairs) / n if n else None)}


def worst_verdict(item: CalibrationItem, kind: str) -> float:
    """The verdict an errored item counts as: the one farthest from its label (binary: the other
    verdict; 1-5: the end of the rubric's scale farther from the label, the top on a tie)."""
    if kind == "binary":
        return 1.0 - item.label
    rubric = rubrics.load(item.rubric)
    return float(rubric.hi) if rubric.hi - item.label >= item.label - rubric.lo else float(rubric.lo)


def family_figures(kind: str, outcomes: Sequence[Outcome]) -> dict[str, Any]:
    """The figures of one rubric family (see the module docstring), its 95 % interval by question,
    the figures per reply source, and whether it is validated. An errored verdict counts as the
    worst disagreement (``worst_verdict``)."""
    scored = [o for o in outcomes if o.value is not None]
    pairs = [(o.item.label, o.value if o.value is not None else worst_verdict(o.item, kind)) for o in outcomes]
    errors: dict[str, int] = {}
    for o in outcomes:
        if o.value is None:
            errors[o.error or "no_value"] = errors.get(o.error or "no_value", 0) + 1
    figures = _binary_figures if kind == "binary" else _scale_figures
    out: dict[str, Any] = {"kind": kind, **figures(pairs), "n": len(outcomes), "scored": len(scored),
                           "errored": len(outcomes) - len(scored),
                           "unparseable": errors.get("judge_unparseable", 0), "errors": errors,
                           "model_calls": sum(o.model_asked for o in scored),
                           "decided_by": decided_by_counts(scored)}
    clusters = [f"{o.item.lang}/{o.item.qid}" for o in outcomes]
    n = len(pairs)
    if kind == "binary":
        out["kappa_ci95"] = cluster_interval(pairs, clusters, kind)
        low = (out["kappa_ci95"] or (None, None))[0]
        ok = (n >= MIN_ITEMS and out["kappa"] is not None and out["kappa"] >= KAPPA_MIN
              and out["bias"] is not None and abs(out["bias"]) <= BIAS_MAX and low is not None and low >= KAPPA_LOW_MIN)
        why = (f"kappa {out['kappa']} (>= {KAPPA_MIN}), 95 % interval {out['kappa_ci95']} (lower end >= "
               f"{KAPPA_LOW_MIN}), bias {out['bias']} points (|.| <= {BIAS_MAX})")
    else:
        out["spearman_ci95"] = cluster_interval(pairs, clusters, kind)
        low = (out["spearman_ci95"] or (None, None))[0]
        ok = (n >= MIN_ITEMS and out["spearman"] is not None and out["spearman"] >= RHO_MIN
              and out["mean_diff"] is not None and abs(out["mean_diff"]) <= MEAN_DIFF_MAX
              and low is not None and low >= RHO_LOW_MIN)
        why = (f"rho {out['spearman']} (>= {RHO_MIN}), 95 % interval {out['spearman_ci95']} (lower end >= "
               f"{RHO_LOW_MIN}), mean difference {out['mean_diff']} (|.| <= {MEAN_DIFF_MAX})")
    if out["errored"]:
        why += f"; {out['errored']} errored verdicts counted as disagreements"
    if n < MIN_ITEMS:
        why = f"only {n} items (need {MIN_ITEMS}); " + why
    by_source: dict[str, list[tuple[float, float]]] = {}
    for o, p in zip(outcomes, pairs):
        by_source.setdefault(o.item.source, []).append(p)
    out["by_source"] = {src: figures(ps) for src, ps in sorted(by_source.items())}
    out["agreement_validated"] = bool(ok)
    out["validated"] = False  # until the stress suite says so too (with_stress)
    out["criterion"] = why
    return out


def with_stress(figures: dict[str, Any], stress: Mapping[str, Any] | None) -> dict[str, Any]:
    """A family's figures with its stress-suite figures (``judge.stress``): validated only
    when it passes both the agreement bar and the stress bar."""
    out = dict(figures)
    out.setdefault("agreement_validated", bool(out.get("validated")))  # a check from before the stress suite
    if stress is not None:
        out["stress"] = dict(stress)
    st = out.get("stress")
    out["validated"] = bool(out.get("agreement_validated")) and bool(st and st.get("passed"))
    out["status"] = ("validated" if out["validated"] else
                     "below the agreement bar" if not out.get("agreement_validated") else
                     "stress suite not run" if not st else f"fails the stress bar ({st.get('why')})")
    return out


# -- running a judge over the set ----------------------------------------------------------------
def evidence_of(item: CalibrationItem) -> Evidence | None:
    """The rules-first grader's evidence for a calibration item (what a run computes for it)."""
    return graders.grade(item.rubric, item.fields, item.meta)


async def judge_items(judge: Judge, items: Sequence[CalibrationItem], *, concurrency: int = 2,
                      progress: Callable[[int], None] | None = None,
                      answers: Mapping[str, dict[str, Any]] | None = None) -> list[Outcome]:
    """Judge each item (in rubric order, so a local server reuses the rubric's prompt prefix) as a
    run would: the grader's evidence first, the model where the rule needs it. ``answers`` (a
    calibrated judge): the model's recorded raw answers by item id (``recorded_answers``), read in
    place of asking it again."""
    calibrated = isinstance(judge, CalibratedJudge)
    order = sorted(range(len(items)), key=lambda i: (items[i].rubric, items[i].id))
    out: list[Outcome | None] = [None] * len(items)
    sem = asyncio.Semaphore(concurrency)

    async def one(i: int) -> None:
        item = items[i]
        rubric = rubrics.load(item.rubric)
        evidence = evidence_of(item) if calibrated else None
        async with sem:
            t0 = time.perf_counter()
            recorded = answers.get(item.id) if answers is not None and calibrated else None
            verdict = judge.without_model(rubric, evidence)
            if verdict is None and recorded is not None and isinstance(judge, CalibratedJudge):
                verdict = judge.from_answers(rubric, recorded, evidence, JudgeTrace(
                    model=judge.id, prompt_hash="recorded", rubric=rubric.ref, raw="", cached=True))
            elif verdict is None:
                verdict = await judge.ask_model(rubric, item.fields, subset="judge-check", sample_id=item.id,
                                                evidence=evidence)
            seconds = time.perf_counter() - t0
        trace = verdict.trace
        source = verdict.decided_by.source if verdict.decided_by is not None else "model"  # an error: the model's
        out[i] = Outcome(item, verdict.value if verdict.error is None else None, verdict.error,
                         trace.raw if trace else "", bool(trace and trace.cached), seconds, source)
        if progress is not None:
            progress(1)

    await asyncio.gather(*(one(i) for i in order))
    return [o for o in out if o is not None]


def recorded_answers(model: str, paths: Sequence[Path] = ()) -> dict[str, dict[str, Any]]:
    """The raw answers of ``model`` to calibration items, by item id, from the JSONL files ``paths``
    (``collect_answers`` writes them; default: the ones shipped for the local judge,
    judge/calibration/raw/<model>.jsonl), kept only where the rubric is unchanged."""
    texts: list[tuple[str, str]] = []
    if paths:
        texts = [(str(p), Path(p).read_text(encoding="utf-8")) for p in paths]
    else:
        shipped = resources.files("vocalbench.judge.calibration").joinpath("raw", f"{model}.jsonl")
        if shipped.is_file():
            texts = [(f"judge/calibration/raw/{model}.jsonl", shipped.read_text("utf-8"))]
    out: dict[str, dict[str, Any]] = {}
    for source, text in texts:
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
                fresh = rec["raw"] is not None and rec["rubric_hash"] == rubrics.load(rec["rubric"]).hash
            except (ValueError, KeyError, TypeError) as exc:
                raise ValueError(f"{source}:{n}: not a recorded answer ({type(exc).__name__}: {exc})") from None
            if fresh and rec.get("model", model) == model:
                out[str(rec["id"])] = rec["raw"]
    return out


async def collect_answers(judge: CalibratedJudge, items: Sequence[CalibrationItem], out: Path, *,
                          progress: Callable[[int], None] | None = None) -> dict[str, dict[str, Any]]:
    """Ask a calibrated judge's model the main question of each item (one at a time, rubric order)
    and append each raw answer to ``out`` as it comes (so an interrupted collection resumes)."""
    got: dict[str, dict[str, Any]] = {}
    model = judge.calibration.model
    with out.open("a", encoding="utf-8") as fh:
        for item in sorted(items, key=lambda i: (i.rubric, i.id)):
            rubric = rubrics.load(item.rubric)
            raw, verdict = await judge.model_answers(rubric, item.fields, subset="judge-fit", sample_id=item.id)
            if raw is not None:
                got[item.id] = raw
                fh.write(json.dumps({"id": item.id, "rubric": item.rubric, "rubric_hash": rubric.hash,
                                     "model": model, "raw": raw}, ensure_ascii=False) + "\n")
                fh.flush()
            if progress is not None:
                progress(1)
    return got


def set_fingerprint() -> str:
    data = resources.files("vocalbench.judge.calibration").joinpath("set.jsonl").read_bytes()
    return hashlib.sha256(data).hexdigest()[:16]


def summarise(judge_id: str, split: str, outcomes: Sequence[Outcome], wall_seconds: float,
              stress: Mapping[str, Mapping[str, Any]] | None = None) -> dict[str, Any]:
    """The judge-check report: figures per family plus totals (the JSON ``--out`` writes);
    ``stress``: the stress suite's figures per family (``judge-check --stress``)."""
    by_family: dict[str, list[Outcome]] = {}
    for o in outcomes:
        by_family.setdefault(o.item.family, []).append(o)
    families: dict[str, Any] = {}
    for fam, outs in sorted(by_family.items()):
        kind = rubrics.load(outs[0].item.rubric).kind
        figures = family_figures(kind, outs)
        figures["rubrics"] = {r: f"{rubrics.load(r).ref}#{rubrics.load(r).hash}"
                              for r in sorted({o.item.rubric for o in outs})}
        families[fam] = with_stress(figures, (stress or {}).get(fam))
    fresh = [o for o in outcomes if o.model_asked and not o.cached]
    return {
        "judge": judge_id,
        "split": split,
        "checked_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "calibration_set": set_fingerprint(),
        "n": len(outcomes),
        "calls": len(fresh),
        "cached": sum(o.model_asked and o.cached for o in outcomes),  # recorded or cached model answers
        "by_rule": sum(not o.model_asked for o in outcomes),  # decided without the model
        "decided_by": decided_by_counts(outcomes),  # verdicts by source: grader, rule, model
        "calls_per_second": _r(len(fresh) / wall_seconds, 3) if fresh and wall_seconds > 0 else None,
        "seconds": round(wall_seconds, 2),
        "validated": sorted(f for f, v in families.items() if v["validated"]),
        "not_validated": sorted(f for f, v in families.items() if not v["validated"]),
        "families": families,
    }


# -- where checks are kept, and what a run is told ----------------------------------------------
def file_slug(judge_id: str) -> str:
    """A judge or model id as a file name."""
    return re.sub(r"[^A-Za-z0-9._+-]+", "_", judge_id)[:120]


def checks_dir() -> Path:
    from vocalbench.config import cache_dir

    return cache_dir() / "judge_checks"


def save_check(report: dict[str, Any]) -> Path:
    """Keep ``report`` as the judge's latest check (merged per family with earlier checks of the
    same split, so checking one rubric does not forget the others)."""
    d = checks_dir()
    d.mkdir(parents=True, exist_ok=True)
    path = d / f"{file_slug(report['judge'])}.{report['split']}.json"
    merged = dict(report)
    if path.exists():
        try:
            old = json.loads(path.read_text(encoding="utf-8"))
            before = old.get("families", {})
            merged["families"] = {**before, **report["families"]}
            for fam, fig in report["families"].items():  # a check without --stress keeps the last stress figures
                kept = before.get(fam, {}).get("stress")
                if "stress" not in fig and kept is not None and before[fam].get("rubrics") == fig.get("rubrics"):
                    merged["families"][fam] = with_stress(fig, kept)
        except ValueError:
            pass
    merged["validated"] = sorted(f for f, v in merged["families"].items() if v["validated"])
    merged["not_validated"] = sorted(f for f, v in merged["families"].items() if not v["validated"])
    return write_json(path, merged)


def latest_check(judge_id: str) -> dict[str, Any] | None:
    """The latest test-split check of this judge: the cache's, else the one shipped for the local
    judge (judge/calibration/local_check.json)."""
    path = checks_dir() / f"{file_slug(judge_id)}.test.json"
    if path.exists():
        try:
            return dict(json.loads(path.read_text(encoding="utf-8")))
        except ValueError:
            pass
    shipped = resources.files("vocalbench.judge.calibration").joinpath("local_check.json")
    if shipped.is_file():
        report = json.loads(shipped.read_text("utf-8"))
        if report.get("judge", "").rpartition("@")[0] == judge_id.rpartition("@")[0]:
            return dict(report)
    return None


def _current_hashes(family: str) -> set[str]:
    ids = [r for r in rubrics.available() if family_of(r) == family]
    return {f"{rubrics.load(r).ref}#{rubrics.load(r).hash}" for r in ids}


@dataclass
class JudgeValidity:
    """What a run says about its judge: figures per family used, and the warnings."""

    judge: str
    checked_at: str | None
    families: dict[str, dict[str, Any]] = field(default_factory=dict)
    warnings: dict[str, str] = field(default_factory=dict)  # subset -> why its judged numbers are not validated

    def to_dict(self) -> dict[str, Any]:
        return {"judge": self.judge, "checked_at": self.checked_at, "families": self.families,
                "unvalidated_subsets": self.warnings}


def judge_validity(judge_id: str, rubrics_by_subset: Mapping[str, Iterable[str]]) -> JudgeValidity:
    """The judge's latest check, restricted to the rubric families these subsets were judged with."""
    report = latest_check(judge_id)
    validity = JudgeValidity(judge_id, report.get("checked_at") if report else None)
    checked = (report or {}).get("families", {})
    for subset, rubric_ids in rubrics_by_subset.items():
        for fam in sorted({family_of(r) for r in rubric_ids}):
            fig = checked.get(fam)
            if fig is None:
                entry: dict[str, Any] = {"validated": False, "status": "not checked"}
            elif set(fig.get("rubrics", {}).values()) - _current_hashes(fam):
                entry = {"validated": False, "status": "rubric changed since the check"}
            else:
                keys = ("n", "errored", "kappa", "kappa_ci95", "bias", "spearman", "spearman_ci95", "mean_diff",
                        "mae", "agreement", "model_calls", "agreement_validated", "validated", "criterion")
                fig = with_stress(fig, None)
                entry = {k: fig[k] for k in keys if k in fig}
                stat = "kappa" if "kappa" in fig else "spearman"
                entry["by_source"] = {src: {"n": f["n"], stat: f.get(stat)} for src, f in fig.get("by_source", {}).items()}
                if "stress" in fig:
                    st = fig["stress"]
                    entry["stress"] = {"passed": st.get("passed"), "why": st.get("why"),
                                       **{k: st[k] for k in ("pool", "partial", "errors") if k in st},
                                       "transformations": {k: {**{m: t.get(m) for m in ("n", "value", "ci95", "bar",
                                                                                        "passed")},
                                                               **{m: t[m] for m in ("errors", "move_rate") if m in t}}
                                                           for k, t in st.get("transformations", {}).items()}}
                entry["status"] = fig["status"]
            validity.families[fam] = entry
            if not entry["validated"] and subset not in validity.warnings:
                validity.warnings[subset] = f"{fam}: {entry['status']}" + (
                    f" ({entry['criterion']})" if "criterion" in entry and not entry.get("agreement_validated") else "")
    return validity


def system_model(system_spec: str) -> str | None:
    """The language model behind a system SPEC, as far as the SPEC tells (None: unknown)."""
    spec = system_spec.strip()
    if spec == "offline":
        return "local"
    if spec.startswith("cascade:"):
        parts = dict(p.split("=", 1) for p in spec[len("cascade:"):].split(",") if "=" in p)
        llm = parts.get("llm", "local").strip()
        if llm in ("local", "offline", "default"):
            return "local"
        return llm.removeprefix("openai:").split("@", 1)[0] or None
    head, _, rest = spec.partition(":")
    if head in ("openai-audio", "realtime") and rest:
        return rest.split("@", 1)[0]
    return None


def same_model(system_spec: str, judge: JudgeSpec, judge_id: str) -> bool:
    """True when the judge is the same language model as the system under test (self-preference risk)."""
    sys_model = system_model(system_spec)
    if sys_model is None:
        return False
    judge_local = judge.kind in ("local", "local-json")
    if sys_model == "local":
        return judge_local
    judge_model = judge_id.rpartition("@")[0].split("+", 1)[0] if "@" in judge_id else judge_id
    return not judge_local and judge_model.lower() == sys_model.lower()

"""Shared pieces of the subset scorers: failure rules, judge calls, reply content, aggregation.

Failure rules (METRICS.md): a **system failure** (no reply, reply error, empty text, missing
audio where audio is needed) gives ``Score(system_error=reason, value=<worst>)`` and the item
counts; an **evaluator failure** gives ``Score(unscored=reason, value=None)`` and the item is
excluded and the subset marked incomplete.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from vocalbench.components.base import ComponentUnavailable
from vocalbench.records import Reply, Sample, Score
from vocalbench.scoring import rubrics
from vocalbench.scoring.base import ScoringContext, SubsetResult
from vocalbench.scoring.stats import mean_ci

MAIN = "main"


# -- ratios (bootstrap CIs come from vocalbench.scoring.stats) -----------------------------------
class ScorerIdentity:
    """``id`` and ``version`` of a subset scorer, and ``ref`` = id@version (the Score.scorer value)."""

    id: str
    version = "1"

    @property
    def ref(self) -> str:
        return f"{self.id}@{self.version}"


def preserve_rate(numerator: float | None, denominator: float | None) -> float | None:
    """numerator / denominator × 100, capped at 100 (code-switching and dialect PR)."""
    if numerator is None or not denominator:
        return None
    return round(min(100.0, numerator / denominator * 100.0), 4)


# -- failures --------------------------------------------------------------------------------
def system_failure(reply: Reply | None, *, need_text: bool = True, need_audio: bool = False) -> str | None:
    """The reason the system under test failed this item, or None."""
    if reply is None:
        return "missing_reply"
    if reply.error is not None:
        return reply.error.type or "error"
    if need_text and not (reply.text or "").strip():
        return "empty_reply"
    if need_audio and reply.audio is None:
        return "missing_audio"
    return None


def failed(sample: Sample, name: str, scorer: str, reason: str, worst: float, **details: Any) -> Score:
    """A system-failure score with the metric's worst value."""
    return Score(subset=sample.subset, sample_id=sample.id, name=name, value=worst, system_error=reason,
                 scorer=scorer, details=details)


def unscored(sample: Sample, name: str, scorer: str, reason: str, **details: Any) -> Score:
    """An evaluator-failure score: no value, a reason."""
    return Score(subset=sample.subset, sample_id=sample.id, name=name, value=None, unscored=reason,
                 scorer=scorer, details=details)


def scored(sample: Sample, name: str, scorer: str, value: float, **details: Any) -> Score:
    """A plain score."""
    return Score(subset=sample.subset, sample_id=sample.id, name=name, value=float(value), scorer=scorer,
                 details=details)


# -- what the scorers read ---------------------------------------------------------------------
def meta(sample: Sample, key: str, default: Any = None) -> Any:
    """An official field kept in ``sample.metadata`` (official spelling, e.g. ``Text_emo``)."""
    value = sample.metadata.get(key)
    return default if value is None else value


@dataclass
class Content:
    """The reply content a semantic scorer judges, or why there is none."""

    text: str | None = None
    system_error: str | None = None
    unscored: str | None = None


async def transcript(reply: Reply, ctx: ScoringContext, lang: str | None) -> Content:
    """``hyp``: the imported ASR text, else ``ctx.transcribe`` (audio required)."""
    if reply.asr_text is not None:
        return Content(text=reply.asr_text)
    if reply.audio is None:
        return Content(system_error="missing_audio")
    if ctx.transcribe is None:
        return Content(unscored="asr_not_configured")
    try:
        return Content(text=await ctx.transcribe(reply, lang))
    except ComponentUnavailable as exc:
        return Content(unscored=exc.reason)


async def reply_content(reply: Reply | None, ctx: ScoringContext, lang: str | None = None) -> Content:
    """v2: the text reply; v1: the ASR transcript of the spoken reply (METRICS.md)."""
    if ctx.protocol == "v1":
        reason = system_failure(reply, need_text=False)
        if reason:
            return Content(system_error=reason)
        assert reply is not None
        return await transcript(reply, ctx, lang if lang is not None else ctx.lang)
    reason = system_failure(reply)
    if reason:
        return Content(system_error=reason)
    assert reply is not None
    return Content(text=reply.text)


async def judge(sample: Sample, name: str, scorer: str, ctx: ScoringContext, rubric_id: str,
                fields: dict[str, str], **details: Any) -> Score:
    """One judge verdict as a Score: binary 1/0 or a lo..hi scale value; errors are unscored."""
    rubric = rubrics.load(rubric_id)
    if ctx.judge is None:
        return unscored(sample, name, scorer, "judge_not_configured", rubric=rubric.ref, **details)
    try:
        verdict = await ctx.judge.evaluate(rubric, fields, subset=sample.subset, sample_id=sample.id)
    except ComponentUnavailable as exc:
        return unscored(sample, name, scorer, exc.reason, rubric=rubric.ref, **details)
    if verdict.error is not None or verdict.value is None:
        s = unscored(sample, name, scorer, verdict.error or "judge_no_value", rubric=rubric.ref, **details)
    else:
        s = scored(sample, name, scorer, float(verdict.value), rubric=rubric.ref, **details)
    s.judge = verdict.trace
    return s


def history_text(sample: Sample) -> str:
    """A multi-round history rendered as ``User: …`` / ``Model: …`` lines."""
    return "\n".join(f"{'User' if t.role == 'user' else 'Model'}: {t.text}" for t in sample.history)


# -- aggregation -----------------------------------------------------------------------------
def by_name(scores: Iterable[Score], name: str = MAIN) -> list[Score]:
    return [s for s in scores if s.name == name]


def restrict(scores: Iterable[Score], samples: list[Sample]) -> list[Score]:
    """The scores that belong to ``samples`` (stale scores of other items are ignored)."""
    ids = {x.id for x in samples}
    return [s for s in scores if s.sample_id in ids]


def result(metric: str, scores: list[Score], samples: list[Sample], *, scale: float = 1.0,
           digits: int = 4, extra: dict[str, Any] | None = None) -> SubsetResult:
    """A SubsetResult for the mean of ``scores`` (× ``scale``) over the scored items of
    ``samples``; ``n`` is the number of samples, items without any score count as unscored
    (``missing``)."""
    scores = restrict(scores, samples)
    counted = [s for s in scores if s.scored]
    vals = np.asarray(values_of(counted), dtype=float)
    reasons = Counter(s.unscored or "missing" for s in scores if not s.scored)
    have = {s.sample_id for s in scores}
    missing = sum(1 for x in samples if x.id not in have)
    if missing:
        reasons["missing"] += missing
    n_unscored = sum(reasons.values())
    value = round(float(vals.mean()) * scale, digits) if vals.size else None
    return SubsetResult(
        metric=metric, value=value, n=len(samples), scored=int(vals.size), unscored=n_unscored,
        system_errors=sum(1 for s in counted if s.system_error), complete=n_unscored == 0 and vals.size > 0,
        ci95=mean_ci(vals, scale=scale), extra=extra or {}, unscored_reasons=dict(reasons),
    )


def values_of(scores: Iterable[Score]) -> list[float]:
    """The values of the scored items."""
    return [float(s.value) for s in scores if s.scored and s.value is not None]


def mean_of(scores: Iterable[Score], scale: float = 1.0, digits: int = 4) -> float | None:
    """Mean of the scored values × ``scale`` (None when nothing is scored)."""
    vals = values_of(scores)
    return round(float(np.mean(vals)) * scale, digits) if vals else None


def mean_by(scores: list[Score], samples: list[Sample], key: Any, scale: float = 1.0) -> dict[str, float]:
    """Mean of the scored values (× ``scale``) per group, ``key(sample) -> str``."""
    group = {x.id: key(x) for x in samples}
    out: dict[str, list[float]] = {}
    for s in scores:
        if s.scored and s.sample_id in group:
            out.setdefault(str(group[s.sample_id]), []).append(float(s.value))  # type: ignore[arg-type]
    return {k: round(float(np.mean(v)) * scale, 4) for k, v in sorted(out.items())}

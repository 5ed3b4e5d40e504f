"""Shared pieces of the subset scorers: failure rules, judge calls, reply content, aggregation.

Failure rules (METRICS.md): a **system failure** (no reply, reply error, empty text, missing
audio where audio is needed) gives ``Score(system_error=reason, value=<worst>)`` and the item
counts; an **evaluator failure** gives ``Score(unscored=reason, value=None)`` and the item is
excluded and the subset marked incomplete.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from vocalbench.components.base import ComponentUnavailable
from vocalbench.records import Reply, Sample, Score
from vocalbench.scoring import rubrics, stats
from vocalbench.scoring.base import ScoringContext, SubsetResult, Tally
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

    def tally(self) -> Tally:
        """A fresh streaming aggregate of this scorer (each scorer defines its own)."""
        raise NotImplementedError(f"{type(self).__name__} defines no tally")


def preserve_rate(numerator: float | None, denominator: float | None) -> float | None:
    """numerator / denominator × 100, capped at 100, to 4 digits (the PR a tally reports in extra)."""
    return stats.preserve_rate(numerator, denominator, digits=4)


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


# -- aggregation: streaming tallies ----------------------------------------------------------------
Deps = Mapping[str, Mapping[str, float]]  # subset -> {sample id: main value} of the subsets compared against


def pick(scores: Iterable[Score], name: str = MAIN) -> Score | None:
    """The score called ``name`` among one item's scores."""
    return next((s for s in scores if s.name == name), None)


def main_values(scores: Iterable[Score]) -> dict[str, float]:
    """``{sample id: value}`` of the scored ``main`` scores (what a dependent subset reads)."""
    return {s.sample_id: float(s.value) for s in scores if s.name == MAIN and s.scored}  # type: ignore[arg-type]


class RunningMean:
    """Sum and count of values added one at a time."""

    __slots__ = ("total", "n")

    def __init__(self) -> None:
        self.total, self.n = 0.0, 0

    def add(self, value: float) -> None:
        self.total += value
        self.n += 1

    def mean(self, scale: float = 1.0, digits: int | None = 4) -> float | None:
        """total / n × ``scale``, rounded to ``digits`` (None when nothing was added)."""
        if not self.n:
            return None
        m = self.total / self.n * scale
        return m if digits is None else round(m, digits)


class MeanTally:
    """The mean of one named score over a subset's items, fed one item at a time.

    It keeps counts, unscored reasons and the scored values (8 bytes per item, for the bootstrap
    CI), never the records, so scoring memory does not grow with the records' size. ``n`` counts
    items; an item without this score counts as unscored ``missing``. Scorers subclass it to
    add their own ``extra`` figures.
    """

    def __init__(self, metric: str, name: str = MAIN, *, scale: float = 1.0, digits: int = 4) -> None:
        self.metric, self.name, self.scale, self.digits = metric, name, scale, digits
        self.values = array("d")
        self.n = 0
        self.system_errors = 0
        self.reasons: Counter[str] = Counter()

    def add(self, sample: Sample, scores: list[Score]) -> None:
        self.add_score(pick(scores, self.name))

    def add_score(self, score: Score | None) -> None:
        self.n += 1
        if score is None:
            self.reasons["missing"] += 1
        elif score.scored:
            self.values.append(float(score.value))  # type: ignore[arg-type]
            self.system_errors += bool(score.system_error)
        else:
            self.reasons[score.unscored or "missing"] += 1

    def mean(self) -> float | None:
        """Mean of the scored values × scale, rounded (None when nothing is scored)."""
        return round(float(np.frombuffer(self.values).mean()) * self.scale, self.digits) if self.values else None

    def summary(self, extra: dict[str, Any] | None = None) -> SubsetResult:
        n_unscored = sum(self.reasons.values())
        return SubsetResult(
            metric=self.metric, value=self.mean(), n=self.n, scored=len(self.values), unscored=n_unscored,
            system_errors=self.system_errors, complete=n_unscored == 0 and len(self.values) > 0,
            ci95=mean_ci(np.frombuffer(self.values), scale=self.scale) if self.values else None,
            extra=extra or {}, unscored_reasons=dict(self.reasons),
        )

    def result(self, deps: Deps | None = None) -> SubsetResult:
        return self.summary()


class GroupMeans:
    """Means of scored values (× ``scale``) per group (category, sub-type), fed one item at a time."""

    def __init__(self, scale: float = 1.0) -> None:
        self.scale = scale
        self._groups: dict[str, RunningMean] = {}

    def add(self, group: str, score: Score | None) -> None:
        if score is not None and score.scored:
            self._groups.setdefault(str(group), RunningMean()).add(float(score.value))  # type: ignore[arg-type]

    def means(self) -> dict[str, float]:
        return {k: m.mean(self.scale) for k, m in sorted(self._groups.items())}  # type: ignore[misc]


class GroupedTally(MeanTally):
    """A :class:`MeanTally` that also reports the mean per group of items in ``extra[extra_key]``
    (creativity categories, multi-round categories, instruction sub-types)."""

    def __init__(self, metric: str, group: Callable[[Sample], str], extra_key: str, *, scale: float = 1.0) -> None:
        super().__init__(metric, scale=scale)
        self.group, self.extra_key = group, extra_key
        self.groups = GroupMeans(scale)

    def add(self, sample: Sample, scores: list[Score]) -> None:
        score = pick(scores, self.name)
        self.add_score(score)
        self.groups.add(self.group(sample), score)

    def result(self, deps: Deps | None = None) -> SubsetResult:
        return self.summary({self.extra_key: self.groups.means()})


def dep_mean(deps: Deps, name: str, scale: float = 100.0) -> float | None:
    """The mean main value of a compared subset × ``scale`` (None when it has none)."""
    values = deps[name]
    return round(sum(values.values()) / len(values) * scale, 4) if values else None

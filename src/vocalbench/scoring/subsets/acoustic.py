"""Acoustic quality of the single-round replies: fluency (UTMOS) and clarity (WER / PER).

Per item the scorer emits ``utmos`` (``ctx.mos(reply)``) and ``clarity`` (details ``dist`` and
``len``: en word edit distance between the normalised text reply and the normalised transcript,
ordinal rule on the transcript; zh pinyin-syllable edit distance after number reading and
non-Han removal). The set values are the UTMOS mean and the corpus-level Σdist/Σlen × 100.
UTMOS excludes system failures; clarity counts a reply whose audio is missing as all deletions
(a reply with no text has no reference words and adds nothing but a system-error count).
"""

from __future__ import annotations

import numpy as np

from vocalbench.components.base import ComponentUnavailable
from vocalbench.records import Reply, Sample, Score
from vocalbench.scoring.base import ScoringContext, SubsetResult
from vocalbench.scoring.stats import mean_ci, ratio_ci
from vocalbench.scoring.subsets._common import (
    ScorerIdentity,
    failed,
    scored,
    system_failure,
    transcript,
    unscored,
)
from vocalbench.scoring.text import en_words, per_counts, pinyin_syllables, wer_counts

UTMOS, CLARITY = "utmos", "clarity"


def clarity_metric(lang: str) -> str:
    """``wer`` for English, ``per`` for Mandarin."""
    return "per" if lang == "zh" else "wer"


class AcousticScorer(ScorerIdentity):
    """UTMOS and clarity of one single-round reply."""

    version = "1"
    uses_judge = False

    def __init__(self, lang: str) -> None:
        self.lang = lang
        self.id = f"acoustic_{lang}"

    async def score(self, sample: Sample, reply: Reply | None, ctx: ScoringContext) -> list[Score]:
        return [await self._utmos(sample, reply, ctx), await self._clarity(sample, reply, ctx)]

    async def _utmos(self, sample: Sample, reply: Reply | None, ctx: ScoringContext) -> Score:
        reason = system_failure(reply, need_text=False, need_audio=True)
        if reason:  # excluded from the mean, counted as a system error
            return Score(subset=sample.subset, sample_id=sample.id, name=UTMOS, value=None,
                         system_error=reason, scorer=self.ref)
        assert reply is not None
        if ctx.mos is None:
            return unscored(sample, UTMOS, self.ref, "mos_not_configured")
        try:
            return scored(sample, UTMOS, self.ref, float(await ctx.mos(reply)))
        except ComponentUnavailable as exc:
            return unscored(sample, UTMOS, self.ref, exc.reason)

    async def _clarity(self, sample: Sample, reply: Reply | None, ctx: ScoringContext) -> Score:
        reason = system_failure(reply, need_text=True, need_audio=False)
        if reason:
            return failed(sample, CLARITY, self.ref, reason, 100.0, dist=0, len=0)
        assert reply is not None
        text = reply.text or ""
        hyp = await transcript(reply, ctx, self.lang)
        if hyp.system_error:  # no audio: every reference unit is deleted
            length = len(en_words(text)) if self.lang == "en" else len(pinyin_syllables(text))
            return failed(sample, CLARITY, self.ref, hyp.system_error, 100.0 if length else 0.0,
                          dist=length, len=length)
        if hyp.unscored or hyp.text is None:
            return unscored(sample, CLARITY, self.ref, hyp.unscored or "no_transcript")
        dist, length = (wer_counts if self.lang == "en" else per_counts)(text, hyp.text)
        rate = dist / length * 100 if length else 0.0
        return scored(sample, CLARITY, self.ref, rate, dist=dist, len=length, hyp=hyp.text)

    def aggregate(self, scores: list[Score], all_scores: dict[str, list[Score]], samples: list[Sample]) -> SubsetResult:
        """The clarity result (UTMOS via :func:`aggregate_acoustic`)."""
        return aggregate_acoustic(scores, self.lang)[clarity_metric(self.lang)]


def aggregate_acoustic(scores: list[Score], lang: str) -> dict[str, SubsetResult]:
    """``{"utmos": mean UTMOS, "wer"|"per": corpus-level Σdist/Σlen × 100}`` over the scores."""
    out: dict[str, SubsetResult] = {}
    utmos = [s for s in scores if s.name == UTMOS]
    vals = [float(s.value) for s in utmos if s.scored and not s.system_error]  # type: ignore[arg-type]
    u_reasons: dict[str, int] = {}
    for s in utmos:
        if s.unscored:
            u_reasons[s.unscored] = u_reasons.get(s.unscored, 0) + 1
    n_unscored = sum(u_reasons.values())
    out[UTMOS] = SubsetResult(
        metric=UTMOS, value=round(float(np.mean(vals)), 4) if vals else None, n=len(utmos), scored=len(vals),
        unscored=n_unscored, system_errors=sum(1 for s in utmos if s.system_error),
        complete=bool(vals) and n_unscored == 0, ci95=mean_ci(vals), unscored_reasons=u_reasons,
    )
    clarity = [s for s in scores if s.name == CLARITY]
    counted = [s for s in clarity if s.unscored is None]
    dist = [float(s.details.get("dist", 0)) for s in counted]
    length = [float(s.details.get("len", 0)) for s in counted]
    c_reasons: dict[str, int] = {}
    for s in clarity:
        if s.unscored:
            c_reasons[s.unscored] = c_reasons.get(s.unscored, 0) + 1
    total = sum(length)
    metric = clarity_metric(lang)
    out[metric] = SubsetResult(
        metric=metric, value=round(sum(dist) / total * 100, 4) if total else None, n=len(clarity),
        scored=len(counted), unscored=sum(c_reasons.values()), system_errors=sum(1 for s in counted if s.system_error),
        complete=total > 0 and not c_reasons, ci95=ratio_ci(dist, length, scale=100),
        extra={"dist": int(sum(dist)), "len": int(total)}, unscored_reasons=c_reasons,
    )
    return out

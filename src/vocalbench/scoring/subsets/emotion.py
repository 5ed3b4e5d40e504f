"""Empathy / emotion: EER % (v2) or semantic mean + acoustic mean (v1, max 10).

- ``semantic``: a 1–5 judge of empathy given the question and the question's emotion label.
- ``acoustic``: the classifier's distribution over [angry, happy, neutral, sad, surprised]
  (renormalised to sum 1) weighted by the item's five appropriateness ratings,
  Σ p(e)·Score[e] (1–5).
- EER = share of items with semantic ≥ 3 AND acoustic ≥ 3; the semantic-only and acoustic-only
  rates and both means go to extra. An item with either part unscored is unscored.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from vocalbench.components.base import EMOTIONS_5, ComponentUnavailable
from vocalbench.records import Reply, Sample, Score
from vocalbench.scoring.base import ScoringContext, SubsetResult
from vocalbench.scoring.stats import mean_ci
from vocalbench.scoring.subsets._common import (
    ScorerIdentity,
    by_name,
    failed,
    judge,
    meta,
    reply_content,
    restrict,
    result,
    scored,
    system_failure,
    unscored,
    values_of,
)

SEMANTIC, ACOUSTIC = "semantic", "acoustic"
THRESHOLD = 3.0


def acoustic_score(distribution: Mapping[str, float], ratings: Sequence[float]) -> float:
    """Σ p(e)·rating[e] over EMOTIONS_5, with p renormalised to sum 1."""
    p = np.array([max(0.0, float(distribution.get(e, 0.0))) for e in EMOTIONS_5])
    if p.sum() <= 0:
        raise ValueError("emotion distribution has no mass on the five classes")
    return float((p / p.sum()) @ np.asarray(ratings, dtype=float))


def empathic(semantic: float, acoustic: float) -> bool:
    """The EER rule: both parts at least 3."""
    return semantic >= THRESHOLD and acoustic >= THRESHOLD


class Emotion(ScorerIdentity):
    """Emotion/empathy scorer for one language and protocol."""

    version = "1"
    uses_judge = True

    def __init__(self, lang: str, protocol: str = "v2") -> None:
        self.lang = lang
        self.protocol = protocol
        self.id = f"emotion_{lang}.{protocol}"

    async def score(self, sample: Sample, reply: Reply | None, ctx: ScoringContext) -> list[Score]:
        return [await self._semantic(sample, reply, ctx), await self._acoustic(sample, reply, ctx)]

    async def _semantic(self, sample: Sample, reply: Reply | None, ctx: ScoringContext) -> Score:
        content = await reply_content(reply, ctx, self.lang)
        if content.system_error:
            return failed(sample, SEMANTIC, self.ref, content.system_error, 1.0)
        if content.unscored or content.text is None:
            return unscored(sample, SEMANTIC, self.ref, content.unscored or "no_content")
        fields = {"question": sample.question, "emotion": str(meta(sample, "Question_emo", "")),
                  "reply": content.text}
        return await judge(sample, SEMANTIC, self.ref, ctx, f"emotion_semantic_{self.lang}", fields)

    async def _acoustic(self, sample: Sample, reply: Reply | None, ctx: ScoringContext) -> Score:
        reason = system_failure(reply, need_text=False, need_audio=True)
        if reason:
            return failed(sample, ACOUSTIC, self.ref, reason, 1.0)
        assert reply is not None
        ratings = meta(sample, "Score")
        if not isinstance(ratings, list) or len(ratings) != len(EMOTIONS_5):
            return unscored(sample, ACOUSTIC, self.ref, "no_emotion_ratings")
        if ctx.emotion is None:
            return unscored(sample, ACOUSTIC, self.ref, "emotion_not_configured")
        try:
            distribution = await ctx.emotion(reply)
        except ComponentUnavailable as exc:
            return unscored(sample, ACOUSTIC, self.ref, exc.reason)
        try:
            value = acoustic_score(distribution, ratings)
        except ValueError:
            return unscored(sample, ACOUSTIC, self.ref, "emotion_distribution_empty")
        return scored(sample, ACOUSTIC, self.ref, value, distribution={e: float(distribution.get(e, 0.0))
                                                                      for e in EMOTIONS_5})

    def aggregate(self, scores: list[Score], all_scores: dict[str, list[Score]], samples: list[Sample]) -> SubsetResult:
        scores = restrict(scores, samples)
        sem = {s.sample_id: s for s in by_name(scores, SEMANTIC)}
        aco = {s.sample_id: s for s in by_name(scores, ACOUSTIC)}
        sem_vals, aco_vals = values_of(sem.values()), values_of(aco.values())
        extra: dict[str, object] = {
            "semantic_mean": round(float(np.mean(sem_vals)), 4) if sem_vals else None,
            "acoustic_mean": round(float(np.mean(aco_vals)), 4) if aco_vals else None,
            "semantic_rate": round(float(np.mean([v >= THRESHOLD for v in sem_vals])) * 100, 4) if sem_vals else None,
            "acoustic_rate": round(float(np.mean([v >= THRESHOLD for v in aco_vals])) * 100, 4) if aco_vals else None,
        }
        combined: list[Score] = []
        for x in samples:
            s, a = sem.get(x.id), aco.get(x.id)
            if s is None or a is None:
                continue
            if not (s.scored and a.scored):
                reason = (s.unscored if not s.scored else a.unscored) or "missing"
                combined.append(unscored(x, "eer", self.ref, reason))
                continue
            both = empathic(float(s.value), float(a.value))  # type: ignore[arg-type]
            c = scored(x, "eer", self.ref, float(both))
            c.system_error = s.system_error or a.system_error
            combined.append(c)
        if self.protocol == "v1":
            res = result("mean_score", combined, samples, extra=extra)
            both_means = extra["semantic_mean"] is not None and extra["acoustic_mean"] is not None
            res.value = round(extra["semantic_mean"] + extra["acoustic_mean"], 4) if both_means else None  # type: ignore[operator]
            sums = [float(sem[i].value) + float(aco[i].value)  # type: ignore[arg-type]
                    for i in sem if i in aco and sem[i].scored and aco[i].scored]
            res.ci95 = mean_ci(sums)
            return res
        return result("eer", combined, samples, scale=100, extra=extra)

"""Empathy / emotion: EER % (v2) or semantic mean + acoustic mean (v1, max 10).

- ``semantic``: a 1–5 judge of empathy given the question (en also the question's emotion label;
  the official zh prompt is not given it).
- ``acoustic``: the classifier's distribution over [angry, happy, neutral, sad, surprised]
  (renormalised to sum 1 over these five) weighted by the item's five appropriateness ratings,
  Σ p(e)·Score[e] (1–5).
- EER = share of items with semantic ≥ 3 AND acoustic ≥ 3; the semantic-only and acoustic-only
  rates and both means go to extra. An item with either part unscored is unscored.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

import numpy as np

from vocalbench.catalog import Layout, SubsetSpec, declare
from vocalbench.components.base import ComponentUnavailable
from vocalbench.records import EMOTIONS_5, Reply, Sample, Score
from vocalbench.scoring.base import ScoringContext, SubsetResult
from vocalbench.scoring.subsets.rules import (
    NO_REPLY_AUDIO,
    LanguageScorer,
    failed,
    imported_without_audio,
    judge,
    meta,
    reply_content,
    scored,
    system_failure,
    text_or_scores,
    unscored,
)
from vocalbench.scoring.tally import Deps, MeanTally, RunningMean, Sums, column, pick
from vocalbench.stats import Statistic, Values, mean_value

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


def item_value(semantic: float, acoustic: float, protocol: str) -> float:
    """What one item scored on both parts adds to the subset's metric: the EER indicator (v2) or
    semantic + acoustic (v1, 2-10)."""
    return semantic + acoustic if protocol == "v1" else float(empathic(semantic, acoustic))


def v1_empathy(semantic_mean: Values, acoustic_mean: Values) -> Values:
    """The v1 empathy value: semantic mean + acoustic mean (2-10)."""
    total: Values = semantic_mean + acoustic_mean
    return total


class Emotion(LanguageScorer):
    """Emotion/empathy scorer for one language and protocol."""

    version = "2"
    family = "emotion"

    async def score(self, sample: Sample, reply: Reply | None, ctx: ScoringContext) -> list[Score]:
        return [await self._semantic(sample, reply, ctx), await self._acoustic(sample, reply, ctx)]

    async def _semantic(self, sample: Sample, reply: Reply | None, ctx: ScoringContext) -> Score:
        text = text_or_scores(await reply_content(reply, ctx, self.lang), sample, self.ref, 1.0, (SEMANTIC,))
        if isinstance(text, list):
            return text[0]
        fields = {"question": sample.question, "reply": text}
        if self.lang == "en":  # the official zh prompt is not given the emotion label
            fields["emotion"] = str(meta(sample, "Question_emo", ""))
        return await judge(sample, SEMANTIC, self.ref, ctx, f"emotion_semantic_{self.lang}", fields)

    async def _acoustic(self, sample: Sample, reply: Reply | None, ctx: ScoringContext) -> Score:
        if imported_without_audio(reply):
            return unscored(sample, ACOUSTIC, self.ref, NO_REPLY_AUDIO)
        reason = system_failure(reply, need_text=False, need_audio=True)
        if reason:
            return failed(sample, ACOUSTIC, self.ref, reason, 1.0)
        assert reply is not None
        ratings = meta(sample, "Score")
        numbers = [float(r) for r in ratings if isinstance(r, (int, float))] if isinstance(ratings, list) else []
        if not isinstance(ratings, list) or len(ratings) != len(EMOTIONS_5) or len(numbers) != len(ratings):
            return unscored(sample, ACOUSTIC, self.ref, "no_emotion_ratings")
        if ctx.emotion is None:
            return unscored(sample, ACOUSTIC, self.ref, "emotion_not_configured")
        try:
            distribution = await ctx.emotion(reply)
        except ComponentUnavailable as exc:
            return unscored(sample, ACOUSTIC, self.ref, exc.reason)
        try:
            value = acoustic_score(distribution, numbers)
        except ValueError:
            return unscored(sample, ACOUSTIC, self.ref, "emotion_distribution_empty")
        return scored(sample, ACOUSTIC, self.ref, value, distribution={e: float(distribution.get(e, 0.0))
                                                                      for e in EMOTIONS_5})

    def tally(self) -> _EmpathyTally:
        return _EmpathyTally(self.ref, self.protocol)


class _EmpathyTally(MeanTally):
    """EER % over the items (v2), or semantic mean + acoustic mean (v1), with both parts' means
    and rates in extra. An item whose semantic or acoustic part is unscored is unscored."""

    def __init__(self, ref: str, protocol: str) -> None:
        super().__init__("eer" if protocol == "v2" else "mean_score", "eer", scale=100 if protocol == "v2" else 1)
        self.ref, self.protocol = ref, protocol
        # per part: its scores, and whether each reaches the threshold
        self.parts = {name: (RunningMean(), RunningMean()) for name in (SEMANTIC, ACOUSTIC)}

    def add(self, sample: Sample, scores: list[Score]) -> None:
        s, a = pick(scores, SEMANTIC), pick(scores, ACOUSTIC)
        for part, (values, reached) in ((s, self.parts[SEMANTIC]), (a, self.parts[ACOUSTIC])):
            if part is not None and part.scored:
                values.add(part.number)
                reached.add(float(part.number >= THRESHOLD))
        if s is None or a is None:
            self.add_score(None)
        elif not (s.scored and a.scored):
            self.add_score(unscored(sample, "eer", self.ref, (s.unscored if not s.scored else a.unscored) or "missing"))
        else:
            combined = scored(sample, "eer", self.ref, float(empathic(s.number, a.number)))
            combined.system_error = s.system_error or a.system_error
            self.add_score(combined)

    def result(self, deps: Deps | None = None) -> SubsetResult:
        extra: dict[str, float | None] = {f"{name}_mean": values.mean() for name, (values, _) in self.parts.items()}
        extra |= {f"{name}_rate": reached.mean(100) for name, (_, reached) in self.parts.items()}
        res = self.summary(extra)
        if self.protocol == "v1":
            semantic, acoustic = extra["semantic_mean"], extra["acoustic_mean"]
            res.value = round(v1_empathy(semantic, acoustic), 4) if semantic is not None and acoustic is not None else None
        return res

    def item_sums(self, sample: Sample, scores: list[Score]) -> Sums:
        """The item's value (v2 the EER indicator, v1 semantic + acoustic) when both parts are scored;
        under v1 also each part's own value."""
        s, a = pick(scores, SEMANTIC), pick(scores, ACOUSTIC)
        out: Sums = {}
        if s is not None and a is not None and s.scored and a.scored:
            out = {"sum": item_value(s.number, a.number, self.protocol), "n": 1.0}
        if self.protocol == "v1":
            for name, part in ((SEMANTIC, s), (ACOUSTIC, a)):
                if part is not None and part.scored:
                    out |= {f"{name}/sum": part.number, f"{name}/n": 1.0}
        return out

    def statistic(self, subset: str, columns: Collection[str]) -> Statistic | None:
        """v2: EER % of the items; v1: semantic mean + acoustic mean."""
        if self.protocol != "v1":
            return super().statistic(subset, columns)
        cols = tuple(column(subset, f"{part}/{c}") for part in (SEMANTIC, ACOUSTIC) for c in ("sum", "n"))
        if not all(c in columns for c in cols):
            return None

        def fn(t: np.ndarray) -> np.ndarray:
            return v1_empathy(mean_value(t[:, 0], t[:, 1]), mean_value(t[:, 2], t[:, 3]))

        return Statistic(f"subset:{subset}", cols, fn)


declare(SubsetSpec(
    "emotion", {"en": 500, "zh": 500}, "eer", "semantic judge >= 3 and acoustic emotion rating >= 3 (v1: sum of means)",
    lambda subset, lang, protocol: Emotion(lang, protocol), order=100, label="Emotion",
    required=("Question_emo", "Score"), dimension="empathy", percent=True, rubrics=("emotion_semantic_*",),
    layouts={"en": Layout(set_name="Emotion"), "zh": Layout(set_name="Emotional Empathy")}))

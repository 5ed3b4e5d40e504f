"""Reasoning: v2 accuracy %, v1 1–5 rubric mean.

v2: items whose index falls in the deductive/common-sense/math ranges get a binary judge
(is the reply's result consistent with the reference?); the others get the 1–5 open rubric and
count as correct iff the score is > 3. v1: the 1–5 rubric on every item (en: the official v1 scale,
``reasoning_v1_en``). The judge sees the
question, the reference and the reply.
"""

from __future__ import annotations

from pydantic import JsonValue

from vocalbench.catalog import Layout, SubsetSpec, declare
from vocalbench.records import Reply, Sample, Score
from vocalbench.scoring.base import ScoringContext, SubsetResult
from vocalbench.scoring.subsets.rules import LanguageScorer, judge, reply_content, scored, text_or_scores
from vocalbench.scoring.tally import MAIN, Deps, MeanTally, RunningMean, pick

BINARY_RANGES: dict[str, tuple[tuple[int, int], ...]] = {
    "en": ((150, 350), (400, 500), (600, 900)),
    "zh": ((0, 150), (251, 341), (388, 463), (524, 793), (843, 851)),
}


def is_binary(index: int, lang: str) -> bool:
    """True when the item at ``index`` is judged binary in v2 (half-open ranges)."""
    return any(lo <= index < hi for lo, hi in BINARY_RANGES[lang])


class Reasoning(LanguageScorer):
    """Reasoning scorer for one language and protocol."""

    version = "2"
    family = "reasoning"

    async def score(self, sample: Sample, reply: Reply | None, ctx: ScoringContext) -> list[Score]:
        binary = self.protocol == "v2" and is_binary(sample.index, self.lang)
        kind = "binary" if binary else "rubric"
        worst = 0.0 if self.protocol == "v2" else 1.0
        text = text_or_scores(await reply_content(reply, ctx, self.lang), sample, self.ref, worst, (MAIN,), kind=kind)
        if isinstance(text, list):
            return text
        fields = {"question": sample.question, "reference": sample.reference or "", "reply": text}
        rubric = f"reasoning_{'binary' if binary else 'open'}_{self.lang}"
        if self.protocol == "v1" and self.lang == "en":
            rubric = "reasoning_v1_en"  # the official v1 prompts/reasoning.txt scale
        verdict = await judge(sample, MAIN, self.ref, ctx, rubric, fields, kind=kind)
        if binary or self.protocol == "v1" or not verdict.scored:
            return [verdict]
        rubric_score = verdict.number
        correct = scored(sample, MAIN, self.ref, float(rubric_score > 3), kind=kind,
                         rubric_score=rubric_score, **{k: v for k, v in verdict.details.items() if k != "kind"})
        correct.judge, correct.decided_by = verdict.judge, verdict.decided_by
        return [correct]

    def tally(self) -> MeanTally:
        return MeanTally("mean_score") if self.protocol == "v1" else _ReasoningTally()


class _ReasoningTally(MeanTally):
    """v2 accuracy %, with the binary-range and rubric-range accuracies and the raw rubric mean."""

    def __init__(self) -> None:
        super().__init__("accuracy", scale=100)
        self.kinds = {"binary": RunningMean(), "rubric": RunningMean()}  # scored values per rule
        self.rubric_raw = RunningMean()

    def add(self, sample: Sample, scores: list[Score]) -> None:
        score = pick(scores)
        self.add_score(score)
        if score is None or not score.scored:
            return
        kind = self.kinds.get(str(score.details.get("kind")))
        if kind is not None:
            kind.add(score.number)
        raw = score.details.get("rubric_score")
        if isinstance(raw, (int, float)):
            self.rubric_raw.add(float(raw))

    def result(self, deps: Deps | None = None) -> SubsetResult:
        extra: dict[str, JsonValue] = {}
        for kind, values in self.kinds.items():
            extra[f"{kind}_n"] = values.n
            extra[f"{kind}_accuracy"] = values.mean(100)
        extra["rubric_mean_score"] = self.rubric_raw.mean()
        return self.summary(extra)


declare(SubsetSpec(
    "reasoning", {"en": 1000, "zh": 851}, "accuracy", "binary judge or 1-5 rubric > 3 (v1: rubric mean)",
    lambda subset, lang, protocol: Reasoning(lang, protocol), order=50, label="Reasoning",
    required=("Answer", "Category"), dimension="reasoning", percent=True,
    rubrics=("reasoning_binary_*", "reasoning_open_*", "reasoning_v1_*"), categories=True,
    layouts={"en": Layout(set_name="Reasoning"), "zh": Layout(set_name="Reasoning")}, clear_voices=True))

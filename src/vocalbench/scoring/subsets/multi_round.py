"""Multi-round chat: v2 accuracy % of a binary judge (is the reply consistent with the reference,
given the history?), v1 a 1–5 rubric on correct use of the context. The history is rendered as
``User: …`` / ``Model: …`` lines. Not part of the overall score."""

from __future__ import annotations

from vocalbench.catalog import Clustering, Layout, SubsetSpec, declare
from vocalbench.records import Reply, Sample, Score
from vocalbench.scoring.base import ScoringContext
from vocalbench.scoring.subsets.rules import LanguageScorer, history_text, judge, reply_content, text_or_scores
from vocalbench.scoring.tally import MAIN, GroupedTally, MeanTally


class MultiRound(LanguageScorer):
    """Multi-round scorer for one language and protocol."""

    version = "2"
    family = "multi_round"

    async def score(self, sample: Sample, reply: Reply | None, ctx: ScoringContext) -> list[Score]:
        worst = 0.0 if self.protocol == "v2" else 1.0
        text = text_or_scores(await reply_content(reply, ctx, self.lang), sample, self.ref, worst, (MAIN,))
        if isinstance(text, list):
            return text
        fields = {"history": history_text(sample), "question": sample.question,
                  "reference": sample.reference or "", "reply": text}
        kind = "binary" if self.protocol == "v2" else "context"
        return [await judge(sample, MAIN, self.ref, ctx, f"multi_round_{kind}_{self.lang}", fields)]

    def tally(self) -> MeanTally:
        if self.protocol == "v1":
            return MeanTally("mean_score")
        return GroupedTally("accuracy", lambda x: str(x.category), "category_accuracy", scale=100)


declare(SubsetSpec(
    "multi_round", {"en": 400, "zh": 400}, "accuracy", "binary judge given the history (v1: 1-5 rubric)",
    lambda subset, lang, protocol: MultiRound(lang, protocol), order=80, label="Multi-round",
    required=("Context", "Answer"), dimension="multi_round", percent=True, rubrics=("multi_round_*",),
    layouts={"en": Layout(set_name="Multi Round Chat"), "zh": Layout(set_name="Multi-Round")},
    clustering=Clustering("history")))

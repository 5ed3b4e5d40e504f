"""Single-round chat (and robust_clean): a 1–5 judge mean of helpfulness, accuracy, completeness
and relevance of practical advice. No reference is shown to the judge."""

from __future__ import annotations

from pydantic import JsonValue

from vocalbench.catalog import Layout, SubsetSpec, declare
from vocalbench.records import Reply, Sample, Score
from vocalbench.scoring.base import ScoringContext
from vocalbench.scoring.subsets.rules import LanguageScorer, judge, reply_content, text_or_scores
from vocalbench.scoring.tally import MAIN, MeanTally


async def single_round_score(sample: Sample, reply: Reply | None, ctx: ScoringContext, scorer: str,
                             lang: str, **details: JsonValue) -> Score:
    """One item judged with the single-round rubric (shared with robust and robust_clean); v1 (en)
    with the official v1 prompt's notes (``single_round_v1_en``)."""
    text = text_or_scores(await reply_content(reply, ctx, lang), sample, scorer, 1.0, (MAIN,), **details)
    if isinstance(text, list):
        return text[0]
    fields = {"question": sample.question, "reply": text}
    rubric = "single_round_v1_en" if ctx.protocol == "v1" and lang == "en" else f"single_round_{lang}"
    return await judge(sample, MAIN, scorer, ctx, rubric, fields, **details)


class SingleRound(LanguageScorer):
    """Single-round scorer for one language and protocol; also used for ``robust_clean``."""

    version = "2"
    family = "single_round"

    async def score(self, sample: Sample, reply: Reply | None, ctx: ScoringContext) -> list[Score]:
        return [await single_round_score(sample, reply, ctx, self.ref, self.lang)]

    def tally(self) -> MeanTally:
        return MeanTally("mean_score")


declare(SubsetSpec(
    "single_round", {"en": 200, "zh": 200}, "mean_score",
    "1-5 judge of helpfulness (+ UTMOS, WER/PER, latency of its replies)",
    lambda subset, lang, protocol: SingleRound(lang, protocol), order=70, label="Single-round",
    dimension="single_round", rubrics=("single_round_*",), timed=True,
    layouts={"en": Layout(set_name="Single Round Chat"), "zh": Layout(set_name="Single-Round")}, legacy_ids=("chat",)))

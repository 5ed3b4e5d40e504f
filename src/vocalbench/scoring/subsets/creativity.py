"""Creativity: a 1–5 judge mean with one rubric per category.

English categories: Poem, Narrative, Argumentative, Descriptive, Appreciation, Role Playing.
Mandarin categories (spelled as in the data, [sic] included): Narratives, Argumentative,
Descriptive, Role Play, Modern Poem Writing, Modern Poem Appreciation, Achient Poetry
Appreciation, Achient Format Writing. The reference is shown to the judge only for the two zh
appreciation categories.
"""

from __future__ import annotations

from vocalbench.catalog import Layout, SubsetSpec, declare
from vocalbench.records import Reply, Sample, Score
from vocalbench.scoring.base import ScoringContext
from vocalbench.scoring.subsets.rules import LanguageScorer, judge, reply_content, text_or_scores
from vocalbench.scoring.tally import MAIN, GroupedTally

RUBRICS: dict[str, dict[str, str]] = {
    "en": {
        "Poem": "creativity_poem_en",
        "Narrative": "creativity_narrative_en",
        "Argumentative": "creativity_argumentative_en",
        "Descriptive": "creativity_descriptive_en",
        "Appreciation": "creativity_appreciation_en",
        "Role Playing": "creativity_role_play_en",
    },
    "zh": {
        "Narratives": "creativity_narrative_zh",
        "Argumentative": "creativity_argumentative_zh",
        "Descriptive": "creativity_descriptive_zh",
        "Role Play": "creativity_role_play_zh",
        "Modern Poem Writing": "creativity_modern_poem_writing_zh",
        "Modern Poem Appreciation": "creativity_modern_poem_appreciation_zh",
        "Achient Poetry Appreciation": "creativity_classical_poetry_appreciation_zh",
        "Achient Format Writing": "creativity_classical_format_writing_zh",
    },
}
WITH_REFERENCE = frozenset({"Achient Poetry Appreciation", "Modern Poem Appreciation"})


class Creativity(LanguageScorer):
    """Creativity scorer for one language and protocol (v1 judges the transcript)."""

    version = "2"
    family = "creativity"

    async def score(self, sample: Sample, reply: Reply | None, ctx: ScoringContext) -> list[Score]:
        category = sample.category or ""
        rubric = RUBRICS[self.lang].get(category)
        text = text_or_scores(await reply_content(reply, ctx, self.lang), sample, self.ref, 1.0, (MAIN,),
                              None if rubric else "unknown_category", category=category)
        if isinstance(text, list) or rubric is None:
            return text if isinstance(text, list) else []
        fields = {"question": sample.question, "reply": text}
        if category in WITH_REFERENCE:
            fields["reference"] = sample.reference or ""
        return [await judge(sample, MAIN, self.ref, ctx, rubric, fields, category=category)]

    def tally(self) -> GroupedTally:
        return GroupedTally("mean_score", lambda x: str(x.category), "category_means")


declare(SubsetSpec(
    "creativity", {"en": 400, "zh": 240}, "mean_score", "1-5 judge per category",
    lambda subset, lang, protocol: Creativity(lang, protocol), order=60, label="Creativity",
    required=("Category",), dimension="creativity", rubrics=("creativity_*",),
    layouts={"en": Layout(set_name="Creativity"), "zh": Layout(set_name="Creativity")}))

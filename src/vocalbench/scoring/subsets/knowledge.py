"""Knowledge: English rule-based substring match; Mandarin substring, else a binary judge.

English (``knowledge``): normalised reference substring of the normalised reply (Whisper
English normaliser after the official pre-cleaning). v2 scores the text reply, v1 the ASR
transcript. A stricter word-boundary variant is scored as ``word_boundary``.
Mandarin (``chinese_knowledge``, ``foreign_knowledge``, ``general_knowledge``, and our
``dialect`` / ``dialect_mandarin``): raw substring of the reference in the reply, else the judge
decides whether the reply agrees with the reference (aliases count).
Dialect PR = accuracy(dialect) / accuracy(dialect_mandarin) × 100, capped; reported in extra.
"""

from __future__ import annotations

from pydantic import JsonValue

from vocalbench.catalog import Layout, SubsetSpec, declare
from vocalbench.records import Reply, Sample, Score
from vocalbench.scoring.base import ScoringContext, SubsetResult
from vocalbench.scoring.subsets.rules import ScorerIdentity, judge, reply_content, scored, text_or_scores
from vocalbench.scoring.tally import MAIN, Deps, MeanTally, dep_mean, pick, preserve_rate
from vocalbench.text import normalize_en

WORD_BOUNDARY = "word_boundary"


def substring_hit(reference: str, reply: str) -> bool:
    """The official rule: normalised reference is a substring of the normalised reply."""
    return normalize_en(reference) in normalize_en(reply)


def word_boundary_hit(reference: str, reply: str) -> bool:
    """The stricter variant: the normalised reference appears as whole words."""
    return f" {normalize_en(reference)} " in f" {normalize_en(reply)} "


class KnowledgeEn(ScorerIdentity):
    """English knowledge: accuracy % by substring match (plus the word-boundary variant)."""

    version = "1"
    uses_judge = False

    def __init__(self, protocol: str = "v2") -> None:
        self.protocol = protocol
        self.id = f"knowledge_en.{protocol}"

    async def score(self, sample: Sample, reply: Reply | None, ctx: ScoringContext) -> list[Score]:
        text = text_or_scores(await reply_content(reply, ctx, "en"), sample, self.ref, 0.0, (MAIN, WORD_BOUNDARY))
        if isinstance(text, list):
            return text
        reference = sample.reference or ""
        return [
            scored(sample, MAIN, self.ref, float(substring_hit(reference, text)), rule="substring"),
            scored(sample, WORD_BOUNDARY, self.ref, float(word_boundary_hit(reference, text)),
                   rule="word_boundary"),
        ]

    def tally(self) -> _KnowledgeEnTally:
        return _KnowledgeEnTally()


class _KnowledgeEnTally(MeanTally):
    """Accuracy %, with the word-boundary variant's accuracy in extra."""

    def __init__(self) -> None:
        super().__init__("accuracy", scale=100)
        self.word_boundary = MeanTally("accuracy", WORD_BOUNDARY, scale=100)

    def add(self, sample: Sample, scores: list[Score]) -> None:
        super().add(sample, scores)
        self.word_boundary.add(sample, scores)

    def result(self, deps: Deps | None = None) -> SubsetResult:
        return self.summary({"word_boundary_accuracy": self.word_boundary.mean()})


class KnowledgeZh(ScorerIdentity):
    """Mandarin knowledge sets (and dialect sets): raw substring, else binary judge."""

    version = "2"
    uses_judge = True
    rubric = "knowledge_zh"

    def __init__(self, subset: str, protocol: str = "v2") -> None:
        self.subset = subset
        self.protocol = protocol
        self.id = f"knowledge_zh.{protocol}"

    async def score(self, sample: Sample, reply: Reply | None, ctx: ScoringContext) -> list[Score]:
        text = text_or_scores(await reply_content(reply, ctx, "zh"), sample, self.ref, 0.0, (MAIN,))
        if isinstance(text, list):
            return text
        reference = sample.reference or ""
        if reference and reference in text:
            return [scored(sample, MAIN, self.ref, 1.0, rule="substring")]
        fields = {"question": sample.question, "reference": reference, "reply": text}
        return [await judge(sample, MAIN, self.ref, ctx, self.rubric, fields, rule="judge")]

    def tally(self) -> _KnowledgeZhTally:
        return _KnowledgeZhTally(self.subset)


class _KnowledgeZhTally(MeanTally):
    """Accuracy %, how many items the substring rule and the judge decided, and for ``dialect``
    the Dialect PR against ``dialect_mandarin``."""

    def __init__(self, subset: str) -> None:
        super().__init__("accuracy", scale=100)
        self.subset = subset
        self.substring_hits = 0
        self.judged = 0

    def add(self, sample: Sample, scores: list[Score]) -> None:
        score = pick(scores)
        self.add_score(score)
        if score is not None:
            rule = score.details.get("rule")
            self.substring_hits += score.scored and rule == "substring"
            self.judged += rule == "judge"

    def result(self, deps: Deps | None = None) -> SubsetResult:
        extra: dict[str, JsonValue] = {"substring_hits": self.substring_hits, "judged": self.judged}
        if self.subset == "dialect" and deps and "dialect_mandarin" in deps:
            extra["preserve_rate"] = preserve_rate(self.mean(), dep_mean(deps, "dialect_mandarin"))
        return self.summary(extra)


# -- declarations ------------------------------------------------------------------------------------
_KNOWLEDGE = "reference substring, else binary judge"
declare(SubsetSpec(
    "knowledge", {"en": 2000}, "accuracy", "reference substring of the normalised reply",
    lambda subset, lang, protocol: KnowledgeEn(protocol), order=10, label="Knowledge", required=("Answer",),
    dimension="knowledge", percent=True, categories=True, layouts={"en": Layout(digits=4, set_name="Knowledge")},
    clear_voices=True))
for _order, _name, _label, _folder in ((20, "chinese_knowledge", "Chinese knowledge", "chinese"),
                                       (30, "foreign_knowledge", "Foreign knowledge", "foreign"),
                                       (40, "general_knowledge", "General knowledge", "general")):
    declare(SubsetSpec(
        _name, {"zh": 1000}, "accuracy", _KNOWLEDGE, lambda subset, lang, protocol: KnowledgeZh(subset, protocol),
        order=_order, label=_label, required=("Answer",), dimension="knowledge", percent=True,
        rubrics=("knowledge_zh",), categories=True, clear_voices=True,
        layouts={"zh": Layout(digits=4, audio=f"knowledge/{_folder}", set_name=_label.title())}))
declare(SubsetSpec(
    "dialect", {"zh": None}, "accuracy", "dialect-spoken knowledge (our own set); PR vs dialect_mandarin",
    lambda subset, lang, protocol: KnowledgeZh(subset, protocol), order=170, label="Dialect", required=("Answer",),
    dimension="dialect", dimension_is_preserve_rate=True, control="dialect_mandarin", percent=True,
    rubrics=("knowledge_zh",), layouts={"zh": Layout(set_name="Dialect")}, dialect=True, item_fields=("dialect",)))
declare(SubsetSpec(
    "dialect_mandarin", {"zh": None}, "accuracy", "the same questions in Mandarin",
    lambda subset, lang, protocol: KnowledgeZh(subset, protocol), order=180, label="Dialect (Mandarin)",
    required=("Answer",), percent=True, rubrics=("knowledge_zh",),
    layouts={"zh": Layout(qid="dialect", set_name="Dialect (Mandarin)")}))

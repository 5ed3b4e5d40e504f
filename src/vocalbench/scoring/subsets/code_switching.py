"""Code-switching (Mandarin set): cs_knowledge, its English control cs_knowledge_en, cs_open_ended.

- ``cs_knowledge``: a hit on the zh answer, on the en answer (case-insensitive), or on any
  ``·``-separated part of the zh name; else a judge with both answers. Accuracy %, and
  Code-switching PR = accuracy(cs_knowledge) / accuracy(cs_knowledge_en) × 100 (capped) in extra.
- ``cs_knowledge_en``: en answer as a case-insensitive substring, else an English binary judge.
- ``cs_open_ended``: two 1–5 judges, understanding of the mixed-language question and quality
  with a natural zh/en mix. Value = mean of the per-item average of the two; each mean and the
  share of items rated > 3 in extra.
"""

from __future__ import annotations

from pydantic import JsonValue

from vocalbench.catalog import Clustering, Layout, SubsetSpec, declare
from vocalbench.records import Reply, Sample, Score
from vocalbench.scoring.base import ScoringContext, SubsetResult
from vocalbench.scoring.subsets.rules import (
    ScorerIdentity,
    judge,
    meta,
    reply_content,
    scored,
    text_or_scores,
    unscored,
)
from vocalbench.scoring.tally import MAIN, Deps, MeanTally, RunningMean, dep_mean, pick, preserve_rate

UNDERSTANDING, QUALITY = "understanding", "quality"


def cs_hit(answer_zh: str, answer_en: str, reply: str) -> bool:
    """zh answer, en answer (case-insensitive) or any ``·`` part of the zh name in the reply."""
    if answer_zh and answer_zh in reply:
        return True
    if answer_en and answer_en.lower() in reply.lower():
        return True
    return "·" in answer_zh and any(p.strip() and p.strip() in reply for p in answer_zh.split("·"))


class _Base(ScorerIdentity):
    version = "2"
    uses_judge = True
    family = ""

    def __init__(self, protocol: str = "v2") -> None:
        self.protocol = protocol
        self.id = f"{self.family}.{protocol}"


class CsKnowledge(_Base):
    """Code-switched knowledge questions, answer in either language."""

    family = "cs_knowledge"

    async def score(self, sample: Sample, reply: Reply | None, ctx: ScoringContext) -> list[Score]:
        # code-switched audio: ASR auto-detects the language
        text = text_or_scores(await reply_content(reply, ctx, None), sample, self.ref, 0.0, (MAIN,))
        if isinstance(text, list):
            return text
        zh, en = str(meta(sample, "Answer_zh", "")), str(meta(sample, "Answer_en", ""))
        if cs_hit(zh, en, text):
            return [scored(sample, MAIN, self.ref, 1.0, rule="substring")]
        fields = {"question": sample.question, "answer_zh": zh, "answer_en": en, "reply": text}
        return [await judge(sample, MAIN, self.ref, ctx, "cs_knowledge_zh", fields, rule="judge")]

    def tally(self) -> _CsKnowledgeTally:
        return _CsKnowledgeTally()


class CsKnowledgeEn(_Base):
    """The English control questions of cs_knowledge."""

    family = "cs_knowledge_en"

    async def score(self, sample: Sample, reply: Reply | None, ctx: ScoringContext) -> list[Score]:
        text = text_or_scores(await reply_content(reply, ctx, "en"), sample, self.ref, 0.0, (MAIN,))
        if isinstance(text, list):
            return text
        answer = sample.reference or ""
        if answer and answer.lower() in text.lower():
            return [scored(sample, MAIN, self.ref, 1.0, rule="substring")]
        fields = {"question": sample.question, "reference": answer, "reply": text}
        return [await judge(sample, MAIN, self.ref, ctx, "cs_knowledge_en", fields, rule="judge")]

    def tally(self) -> MeanTally:
        return MeanTally("accuracy", scale=100)


class CsOpenEnded(_Base):
    """Open questions mixing Mandarin and English terms: two 1–5 judges."""

    family = "cs_open_ended"

    async def score(self, sample: Sample, reply: Reply | None, ctx: ScoringContext) -> list[Score]:
        text = text_or_scores(await reply_content(reply, ctx, None), sample, self.ref, 1.0,
                              (UNDERSTANDING, QUALITY, MAIN))
        if isinstance(text, list):
            return text
        fields = {"question": sample.question, "reference": sample.reference or "", "reply": text}
        u = await judge(sample, UNDERSTANDING, self.ref, ctx, "cs_open_ended_understanding", fields)
        q = await judge(sample, QUALITY, self.ref, ctx, "cs_open_ended_quality", fields)
        if u.scored and q.scored:
            main = scored(sample, MAIN, self.ref, (u.value + q.value) / 2)  # type: ignore[operator]
        else:
            main = unscored(sample, MAIN, self.ref, (u.unscored or q.unscored) or "judge_no_value")
        return [u, q, main]

    def tally(self) -> _OpenEndedTally:
        return _OpenEndedTally()


class _CsKnowledgeTally(MeanTally):
    """Accuracy %, and Code-switching PR against the cs_knowledge_en control in extra."""

    def __init__(self) -> None:
        super().__init__("accuracy", scale=100)

    def result(self, deps: Deps | None = None) -> SubsetResult:
        extra: dict[str, JsonValue] = {}
        if deps and "cs_knowledge_en" in deps:
            control = dep_mean(deps, "cs_knowledge_en")
            extra["cs_knowledge_en_accuracy"] = control
            extra["preserve_rate"] = preserve_rate(self.mean(), control)
        return self.summary(extra)


class _OpenEndedTally(MeanTally):
    """Mean of the per-item averages; each judge's mean and share of items rated > 3 in extra."""

    def __init__(self) -> None:
        super().__init__("mean_score")
        # per judge: its scores, and whether each is > 3
        self.parts = {name: (RunningMean(), RunningMean()) for name in (UNDERSTANDING, QUALITY)}

    def add(self, sample: Sample, scores: list[Score]) -> None:
        super().add(sample, scores)
        for name, (values, above) in self.parts.items():
            s = pick(scores, name)
            if s is not None and s.scored:
                values.add(s.number)
                above.add(float(s.number > 3))

    def result(self, deps: Deps | None = None) -> SubsetResult:
        extra: dict[str, JsonValue] = {}
        for name, (values, above) in self.parts.items():
            extra[f"{name}_mean"] = values.mean()
            extra[f"{name}_share_gt3"] = above.mean(100)
        return self.summary(extra)


declare(SubsetSpec(
    "cs_knowledge", {"zh": 362}, "accuracy", "zh/en answer hit, else judge",
    lambda subset, lang, protocol: CsKnowledge(protocol), order=120, label="Code-switching knowledge",
    required=("Question_en", "Answer_zh", "Answer_en"), dimension="code_switching",
    dimension_is_preserve_rate=True, control="cs_knowledge_en", percent=True, rubrics=("cs_knowledge_zh",),
    mixed_language=True, clustering=Clustering(group="cs"), clear_voices=True,
    layouts={"zh": Layout(qid="codeswitching_knowledge", audio="code_switching/knowledge",
                          set_name="Code-Switching Knowledge")}))
declare(SubsetSpec(
    "cs_knowledge_en", {"zh": 362}, "accuracy", "English control of cs_knowledge",
    lambda subset, lang, protocol: CsKnowledgeEn(protocol), order=130, label="Code-switching knowledge (en)",
    required=("Answer",), percent=True, rubrics=("cs_knowledge_en",), clustering=Clustering(group="cs"),
    spoken="en", clear_voices=True,
    layouts={"zh": Layout(qid="codeswitching_knowledge", audio="code_switching/knowledge_en",
                          set_name="Code-Switching Knowledge (en)")}))
declare(SubsetSpec(
    "cs_open_ended", {"zh": 200}, "mean_score", "two 1-5 judges: understanding and mixed-language quality",
    lambda subset, lang, protocol: CsOpenEnded(protocol), order=140, label="Code-switching open-ended",
    rubrics=("cs_open_ended_*",), mixed_language=True,
    layouts={"zh": Layout(qid="codeswitching_open_ended", audio="code_switching/open_ended",
                          set_name="Code-Switching Open-ended")}))

"""What subset scorers are built from: their identity, the failure rules, reply content, judge calls.

Failure rules (docs/scoring.md): a **system failure** (no reply, reply error, empty text, missing
audio where audio is needed) gives ``Score(system_error=reason, value=<worst>)`` and the item
counts; an **evaluator failure** gives ``Score(unscored=reason, value=None)`` and the item is
excluded and the subset marked incomplete. Aggregation lives in :mod:`vocalbench.scoring.tally`.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import JsonValue

from vocalbench.components.base import ComponentUnavailable
from vocalbench.judge import graders, rubrics
from vocalbench.records import Reply, Sample, Score
from vocalbench.scoring.base import ScoringContext
from vocalbench.text import clarity_counts, error_rate


class ScorerIdentity:
    """``id`` and ``version`` of a subset scorer, and ``ref`` = id@version (the Score.scorer value)."""

    id: str
    version = "1"

    @property
    def ref(self) -> str:
        return f"{self.id}@{self.version}"


# -- failures --------------------------------------------------------------------------------
class LanguageScorer(ScorerIdentity):
    """A judge-based scorer of one language and protocol: id ``<family>_<lang>.<protocol>``."""

    family: str
    uses_judge = True

    def __init__(self, lang: str, protocol: str = "v2") -> None:
        self.lang = lang
        self.protocol = protocol
        self.id = f"{self.family}_{lang}.{protocol}"


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


NO_REPLY_AUDIO = "no_reply_audio"


def imported_without_audio(reply: Reply | None) -> bool:
    """An imported reply (or one reused from an imported reply) that carries no audio: there is
    nothing to measure, which leaves audio metrics unscored; a system that was asked to speak and
    returned no audio is a system failure instead (docs/scoring.md, "Failures")."""
    if reply is None or reply.error is not None or reply.audio is not None:
        return False
    return reply.source == "imported" or reply.extra.get("reused_source") == "imported"


def failed(sample: Sample, name: str, scorer: str, reason: str, worst: float, **details: JsonValue) -> Score:
    """A system-failure score with the metric's worst value."""
    return Score(subset=sample.subset, sample_id=sample.id, name=name, value=worst, system_error=reason,
                 scorer=scorer, details=details)


def unscored(sample: Sample, name: str, scorer: str, reason: str, **details: JsonValue) -> Score:
    """An evaluator-failure score: no value, a reason."""
    return Score(subset=sample.subset, sample_id=sample.id, name=name, value=None, unscored=reason,
                 scorer=scorer, details=details)


def scored(sample: Sample, name: str, scorer: str, value: float, **details: JsonValue) -> Score:
    """A plain score."""
    return Score(subset=sample.subset, sample_id=sample.id, name=name, value=float(value), scorer=scorer,
                 details=details)


# -- what the scorers read ---------------------------------------------------------------------
def meta(sample: Sample, key: str, default: JsonValue = None) -> JsonValue:
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
        return Content(unscored=NO_REPLY_AUDIO) if imported_without_audio(reply) else Content(system_error="missing_audio")
    if ctx.transcribe is None:
        return Content(unscored="asr_not_configured")
    try:
        return Content(text=await ctx.transcribe(reply, lang))
    except ComponentUnavailable as exc:
        return Content(unscored=exc.reason)


def text_content(reply: Reply | None) -> Content:
    """The text reply (what v2 judges)."""
    reason = system_failure(reply)
    if reason:
        return Content(system_error=reason)
    assert reply is not None
    return Content(text=reply.text)


async def spoken_content(reply: Reply | None, ctx: ScoringContext, lang: str | None = None) -> Content:
    """The ASR transcript of the spoken reply (what v1 judges)."""
    reason = system_failure(reply, need_text=False)
    if reason:
        return Content(system_error=reason)
    assert reply is not None
    return await transcript(reply, ctx, lang if lang is not None else ctx.lang)


async def reply_content(reply: Reply | None, ctx: ScoringContext, lang: str | None = None) -> Content:
    """v2: the text reply; v1: the ASR transcript of the spoken reply (docs/scoring.md)."""
    if ctx.protocol == "v1":
        return await spoken_content(reply, ctx, lang)
    return text_content(reply)


def text_or_scores(content: Content, sample: Sample, scorer: str, worst: float, names: tuple[str, ...],
                   cannot_judge: str | None = None, /, **details: JsonValue) -> str | list[Score]:
    """The reply text to score, or the scores (one per name) of an item without it: a system
    failure (the metric's ``worst`` value), then ``cannot_judge`` (the scorer's own reason, e.g.
    an unknown category), then unscored content (no transcript, ...)."""
    if content.system_error:
        return [failed(sample, n, scorer, content.system_error, worst, **details) for n in names]
    reason = cannot_judge or content.unscored
    if reason or content.text is None:
        return [unscored(sample, n, scorer, reason or "no_content", **details) for n in names]
    return content.text


async def judge(sample: Sample, name: str, scorer: str, ctx: ScoringContext, rubric_id: str,
                fields: dict[str, str], **details: JsonValue) -> Score:
    """One judge verdict as a Score: binary 1/0 or a lo..hi scale value; errors are unscored."""
    rubric = rubrics.load(rubric_id)
    if ctx.judge is None:
        return unscored(sample, name, scorer, "judge_not_configured", rubric=rubric.ref, **details)
    try:
        evidence = graders.grade(rubric_id, fields, {k: str(v) for k, v in details.items()},
                                 semantic=bool(getattr(ctx.judge, "reads_evidence", False)))
        verdict = await ctx.judge.evaluate(rubric, fields, subset=sample.subset, sample_id=sample.id,
                                           evidence=evidence)
    except ComponentUnavailable as exc:
        return unscored(sample, name, scorer, exc.reason, rubric=rubric.ref, **details)
    if verdict.error is not None or verdict.value is None:
        s = unscored(sample, name, scorer, verdict.error or "judge_no_value", rubric=rubric.ref, **details)
    else:
        s = scored(sample, name, scorer, float(verdict.value), rubric=rubric.ref, **details)
    s.judge, s.decided_by = verdict.trace, verdict.decided_by
    return s


async def item_clarity(sample: Sample, reply: Reply | None, ctx: ScoringContext, scorer: str) -> Score | None:
    """Per-item clarity of any spoken reply with a text and a transcript at hand (an imported
    transcript, or under v1 the transcript its scoring already made), named ``wer``/``per``,
    value dist/len as a fraction like the official per-item PER. None when there is none (no ASR
    is run only for this); the set-level WER/PER stays the single-round corpus value."""
    if reply is None or reply.error is not None or not (reply.text or "").strip():
        return None
    if reply.asr_text is None and not (ctx.protocol == "v1" and reply.audio is not None):
        return None
    hyp = await transcript(reply, ctx, ctx.lang)
    if hyp.text is None:
        return None
    counts = clarity_counts(ctx.lang, reply.text or "", hyp.text)
    return scored(sample, "per" if ctx.lang == "zh" else "wer", scorer, error_rate((counts["dist"], counts["len"])),
                  **counts, hyp=hyp.text)


def history_text(sample: Sample) -> str:
    """A multi-round history rendered as ``User: …`` / ``Model: …`` lines."""
    return "\n".join(f"{'User' if t.role == 'user' else 'Model'}: {t.text}" for t in sample.history)

"""Acoustic quality of the single-round replies: fluency (UTMOS) and clarity (WER / PER);
docs/scoring.md, "Acoustic quality", has the rules and the differences from the official code.

Per item the scorer emits ``utmos`` (``ctx.mos(reply)``) and ``clarity`` (details ``dist`` and
``len``: en word edit distance between the normalised text reply and the normalised transcript,
ordinal rule on the transcript; zh pinyin-syllable edit distance after number reading and
non-Han removal). The set values are the UTMOS mean and the corpus-level Σdist/Σlen × 100.
UTMOS excludes system failures; clarity counts a reply whose audio is missing as all deletions
(a reply with no text has no reference words and adds nothing but a system-error count).
Imported outputs without audio leave both unscored (``no_reply_audio``), imported outputs without
a text reply leave clarity unscored (``no_reply_text``): nothing was measured, the row is incomplete.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Mapping
from typing import TypeGuard

from pydantic import JsonValue

from vocalbench.components.base import ComponentUnavailable
from vocalbench.records import Reply, Sample, Score
from vocalbench.scoring.base import ScoringContext, SubsetResult
from vocalbench.scoring.subsets.rules import (
    NO_REPLY_AUDIO,
    ScorerIdentity,
    failed,
    imported_without_audio,
    scored,
    system_failure,
    transcript,
    unscored,
)
from vocalbench.scoring.tally import RunningMean, Sums, mean_statistic, pick
from vocalbench.stats import Statistic, mean_value
from vocalbench.text import clarity_counts, en_words, pinyin_syllables

UTMOS, CLARITY = "utmos", "clarity"
DIST, LEN = "dist", "len"  # details of a clarity score: edit distance and reference length
DIST_CN2AN, LEN_CN2AN = "dist_cn2an", "len_cn2an"  # zh: the same under the corrected number reading


def clarity_metric(lang: str) -> str:
    """``wer`` for English, ``per`` for Mandarin."""
    return "per" if lang == "zh" else "wer"


class AcousticScorer(ScorerIdentity):
    """UTMOS and clarity of one single-round reply."""

    version = "2"
    uses_judge = False

    def __init__(self, lang: str) -> None:
        self.lang = lang
        self.id = f"acoustic_{lang}"

    async def score(self, sample: Sample, reply: Reply | None, ctx: ScoringContext) -> list[Score]:
        return [await self._utmos(sample, reply, ctx), await self._clarity(sample, reply, ctx)]

    async def _utmos(self, sample: Sample, reply: Reply | None, ctx: ScoringContext) -> Score:
        if imported_without_audio(reply):
            return unscored(sample, UTMOS, self.ref, NO_REPLY_AUDIO)
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
        if reason and reply is not None and reply.source == "imported":
            # imported outputs without a text reply: nothing to measure against (not a value of 0)
            return unscored(sample, CLARITY, self.ref, "no_reply_text", error=reason)
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
        counts = clarity_counts(self.lang, text, hyp.text)
        rate = counts[DIST] / counts[LEN] * 100 if counts[LEN] else 0.0
        return scored(sample, CLARITY, self.ref, rate, **counts, hyp=hyp.text)

    def tally(self) -> AcousticTally:
        return AcousticTally(self.lang)


class AcousticTally:
    """UTMOS mean and corpus-level clarity, fed one item at a time: running totals and counts (the
    rows' values and CIs are the statistics graph's, from :meth:`item_sums`)."""

    def __init__(self, lang: str) -> None:
        self.lang = lang
        self.utmos = RunningMean()
        self.dist, self.len, self.clarity_scored = 0.0, 0.0, 0
        self.cn2an = [0, 0]  # zh: Σdist, Σlen under the corrected (cn2an) number reading
        self.counts = {UTMOS: [0, 0], CLARITY: [0, 0]}  # n, system errors
        self.reasons: dict[str, Counter[str]] = {UTMOS: Counter(), CLARITY: Counter()}

    def add(self, sample: Sample, scores: list[Score]) -> None:
        """One item: its UTMOS and clarity scores; a row it has no score for (a scorer error, or
        no reply yet) counts it as unscored, with the error's reason, so every row counts every item."""
        names = {s.name for s in scores}
        reason = next((s.unscored for s in scores if s.unscored and s.name not in self.counts), None) or "missing"
        for name in self.counts:
            if name not in names:
                self.counts[name][0] += 1
                self.reasons[name][reason] += 1
        self.add_scores(scores)

    def add_scores(self, scores: Iterable[Score]) -> None:
        for s in scores:
            if s.name not in self.counts:
                continue
            counts = self.counts[s.name]
            counts[0] += 1
            counts[1] += bool(s.system_error)
            if s.unscored:
                self.reasons[s.name][s.unscored] += 1
            elif s.name == UTMOS and s.scored and not s.system_error:
                self.utmos.add(s.number)
            elif s.name == CLARITY:
                self.dist += _figure(s, DIST)
                self.len += _figure(s, LEN)
                self.clarity_scored += 1
                self.cn2an[0] += int(_figure(s, DIST_CN2AN, DIST))
                self.cn2an[1] += int(_figure(s, LEN_CN2AN, LEN))

    def results(self) -> dict[str, SubsetResult]:
        """``{"utmos": mean UTMOS, "wer"|"per": corpus-level Σdist/Σlen × 100}``."""
        u_reasons, c_reasons = dict(self.reasons[UTMOS]), dict(self.reasons[CLARITY])
        total = self.len
        metric = clarity_metric(self.lang)
        return {
            UTMOS: SubsetResult(
                metric=UTMOS, value=self.utmos.mean(), n=self.counts[UTMOS][0],
                scored=self.utmos.n, unscored=sum(u_reasons.values()), system_errors=self.counts[UTMOS][1],
                complete=bool(self.utmos.n) and not u_reasons, unscored_reasons=u_reasons,
            ),
            metric: SubsetResult(
                metric=metric, value=round(float(mean_value(self.dist, total, 100)), 4) if total else None,
                n=self.counts[CLARITY][0], scored=self.clarity_scored, unscored=sum(c_reasons.values()),
                system_errors=self.counts[CLARITY][1], complete=total > 0 and not c_reasons,
                extra=self._clarity_extra(int(self.dist), int(total)), unscored_reasons=c_reasons,
            ),
        }

    def _clarity_extra(self, dist: int, total: int) -> dict[str, JsonValue]:
        extra: dict[str, JsonValue] = {"dist": dist, "len": total}
        if self.lang == "zh":  # the corrected number reading (15 -> 十五), docs/scoring.md
            extra["per_cn2an"] = round(self.cn2an[0] / self.cn2an[1] * 100, 4) if self.cn2an[1] else None
        return extra

    def result(self, deps: Mapping[str, Mapping[str, float]] | None = None) -> SubsetResult:
        """The clarity row (``results()`` gives UTMOS too)."""
        return self.results()[clarity_metric(self.lang)]

    def item_sums(self, sample: Sample, scores: list[Score]) -> Sums:
        """An item's scored UTMOS, and its clarity edit distance and reference length (a score
        without them, from an older version, adds its value over one ``per_item``)."""
        out: Sums = {}
        u, c = pick(scores, UTMOS), pick(scores, CLARITY)
        if u is not None and u.scored:
            out |= {"utmos/sum": u.number, "utmos/n": 1.0}
        if c is not None and c.scored:
            dist, length = c.details.get(DIST), c.details.get(LEN)
            if _number(dist) and _number(length):
                out |= {"clarity/sum": float(dist), "clarity/n": float(length)}
            else:
                out |= {"clarity/sum": c.number, "clarity/n": 1.0, "clarity/per_item": 1.0}
        return out

    def statistics(self, columns: Collection[str]) -> list[Statistic]:
        """The UTMOS mean and the corpus-level WER/PER (Σdist / Σlen × 100) of the items, where scored
        (columns ``utmos/...`` and ``clarity/...``)."""
        utmos = mean_statistic("dimension:utmos", UTMOS)
        clarity = self.statistic(CLARITY, columns)
        return [s for s in (utmos if utmos.columns[0] in columns else None, clarity) if s is not None]

    def statistic(self, subset: str, columns: Collection[str]) -> Statistic | None:
        """The corpus-level WER/PER (Σdist / Σlen × 100; the clarity row, as :meth:`result`) of the
        columns of ``subset`` (``clarity`` in the statistics graph)."""
        if f"{subset}/sum" not in columns:
            return None
        per_item = f"{subset}/per_item" in columns
        note = "per-item mean: the scores carry no edit counts for a corpus-level rate" if per_item else ""
        return mean_statistic(f"dimension:{clarity_metric(self.lang)}", subset, 1.0 if per_item else 100.0,
                              note=note)


def _number(v: JsonValue) -> TypeGuard[int | float]:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _figure(score: Score, *keys: str) -> float:
    """The first of ``keys`` a clarity score's details hold (0 when it holds none of them)."""
    for key in keys:
        if key in score.details:
            v = score.details[key]
            if not _number(v):
                raise ValueError(f"{score.subset}/{score.sample_id} {score.name}: details.{key} is not a number: {v!r}")
            return float(v)
    return 0.0


def aggregate_acoustic(scores: Iterable[Score], lang: str) -> dict[str, SubsetResult]:
    """``{"utmos": ..., "wer"|"per": ...}`` over a list of acoustic scores."""
    tally = AcousticTally(lang)
    tally.add_scores(scores)
    return tally.results()

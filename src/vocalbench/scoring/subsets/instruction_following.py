"""Instruction following: following rate % over all items.

- Items 200–899 (zh also 900–999): one binary judge rubric plus a criterion of our own for the
  item's sub-type (Category when there is no Sub-category); the en ``Answer`` (items 400–449,
  500–549) is shown to the judge as a reference.
- Items 0–199, paralinguistic (0–49 plain repeat, 50–99 emotion, 100–149 speed, 150–199 speed +
  emotion): success needs the judge's yes on the content AND the spoken reply matching its own
  text (en WER < 0.2, zh PER < 0.05) AND, where asked, p(target emotion) > 0.5 and the reply
  duration strictly inside (0.25, 0.75) × ref ("twice as fast") or (1.5, 2.5) × ref ("half
  speed"), ref = query duration × len(sentence to repeat) / len(question) (en words, zh Han
  characters). Checks run cheapest first and stop at the first definite failure; an item is
  unscored only when no check failed and one could not be evaluated.
- v1, as the official v1 code: items ≥ 200 are judged on the text reply, except 500–549 on the
  transcript; a paralinguistic item needs WER(sentence to repeat, text reply) < 0.2 (zh PER < 0.05)
  instead of the text/speech match, the content judge only for the plain repeats 0–49, and the
  emotion and speed checks where asked (docs/scoring.md, "Instruction following").
"""

from __future__ import annotations

from dataclasses import dataclass

from vocalbench.catalog import Layout, SubsetSpec, declare
from vocalbench.components.base import ComponentUnavailable
from vocalbench.records import EMOTIONS_5, Reply, Sample, Score
from vocalbench.scoring.base import ScoringContext
from vocalbench.scoring.subsets.rules import (
    NO_REPLY_AUDIO,
    LanguageScorer,
    failed,
    imported_without_audio,
    judge,
    meta,
    scored,
    spoken_content,
    system_failure,
    text_content,
    transcript,
    unscored,
)
from vocalbench.scoring.tally import MAIN, GroupedTally
from vocalbench.scoring.text import (
    edit_distance,
    en_words,
    error_rate,
    han_count,
    per_counts,
    wer_counts,
    word_count,
)

V1_SPOKEN = range(500, 550)  # v1 judges these items on the transcript, the others on the text (official v1)

CRITERIA: dict[str, dict[str, str]] = {
    "en": {
        "Num": "The reply gives exactly the number of items, points or examples the user asked for.",
        "Constrain": "The reply obeys every explicit constraint on its form: required words and how often "
                     "they appear, how it must start or end, length or sentence limits.",
        "Keywords": "The reply contains every keyword the user asked to include and none of the keywords "
                    "the user asked to leave out.",
        "Progressive": "The reply carries out every step of the multi-step request, in the given order, each "
                       "step building on the previous one.",
        "Conditional": "The reply decides the condition correctly and then follows only the branch that "
                       "applies.",
        "Topic change": "The reply answers the user's corrected, final request and drops the one the user "
                        "took back.",
        "Spoken format": "The reply is fit to be spoken aloud: no formulas, equations, symbols, tables, lists "
                         "with markup or code; numbers and steps are said in plain words.",
        "Speaker tune": "The reply is pitched to the listener the user describes (for example a young child "
                        "or a beginner): suitable words, tone and depth.",
        "Speaking style": "The reply keeps the requested style, voice or register (for example a famous "
                          "author's manner) from start to end.",
        "Instruction": "The reply uses the exact opening, transition and closing phrases the user asked "
                       "for, in the requested order.",
        "Situation": "The reply takes every circumstance the user described into account and its advice "
                     "fits that situation.",
        "Format": "The reply produces the requested kind of text (title, slogan, summary, advertisement, "
                  "etc.) and meets the stated requirements for it.",
    },
    "zh": {
        "Num": "回复给出的条目、建议或例子的数量与用户要求的完全一致。",
        "Constrain": "回复遵守所有明确的形式限制：指定词语及其出现次数、开头或结尾要求、长度或句数限制。",
        "Keywords": "回复包含用户要求包含的所有关键词，且不含用户要求排除的关键词。",
        "Progressive": "回复按顺序完成多步请求中的每一步，后一步建立在前一步的结果上。",
        "Conditional": "回复正确判断条件，并只执行适用的那个分支。",
        "Topic change": "回复针对用户更正后的最终请求作答，而不是用户已撤回的请求。",
        "Spoken format": "回复适合口头表达：不用公式、算式、符号、表格或代码，数字和步骤用口语说出。",
        "Speaker tune": "回复针对用户描述的听者（如小学生、初学者）调整用词、语气和深度。",
        "Speaking style": "回复从头到尾保持用户要求的风格或文笔（如模仿某位作家）。",
        "Instruction": "回复按要求的顺序使用用户指定的开头语、过渡语和结尾语。",
        "Situation": "回复考虑了用户描述的所有情况，给出的建议切合这些情况。",
        "Format": "回复给出用户要求的文本类型（标题、标语、摘要、广告语等），并满足其具体要求。",
        "Rhetoric": "回复正确使用了用户要求的修辞手法（如比喻、拟人、排比）。",
        "Idioms": "回复使用了用户要求数量的成语（或俗语），且使用恰当、意思正确。",
        "Genre": "回复符合用户要求的体裁及其规则（如藏头诗每句首字、七言字数、对联对仗）。",
        "Character": "回复正确处理了所要求的汉字任务（如以指定字开头的成语接龙、字谜谜底、字形字音）。",
        "Sentence structure": "回复使用了用户要求的句式（如倒装句），并保持原意。",
        "Culture": "回复符合所涉及的中国文化习俗或场合，并满足用户的具体要求（如包含指定意境或主题）。",
        "Dialect": "回复使用了用户要求的方言（如四川话）的词汇和说法来表达，而不是普通话。",
    },
}
EMOTION_KEYWORDS_ZH = (("生气", "angry"), ("高兴", "happy"), ("中性", "neutral"), ("中立", "neutral"),
                       ("悲伤", "sad"), ("伤心", "sad"), ("惊喜", "surprised"), ("惊讶", "surprised"))
FAST, SLOW = (0.25, 0.75), (1.5, 2.5)
MATCH_LIMIT = {"en": 0.2, "zh": 0.05}


def paralinguistic_kind(index: int) -> tuple[bool, bool]:
    """(asks for emotion, asks for speed) of a paralinguistic item, by index."""
    return index in range(50, 100) or index in range(150, 200), index in range(100, 200)


def split_instruction(question: str, lang: str) -> tuple[str, str]:
    """(instruction, sentence to repeat): split at the first "." (en) or "。" (zh)."""
    head, sep, tail = question.partition("." if lang == "en" else "。")
    if not sep:
        raise ValueError(f"no sentence to repeat in: {question[:60]}")
    return head, tail


def target_emotion(sample: Sample, lang: str) -> str | None:
    """en: ``Text_emo``; zh: the first keyword found in the instruction part."""
    if lang == "en":
        emo = meta(sample, "Text_emo")
        return str(emo) if emo in EMOTIONS_5 else None
    head = split_instruction(sample.question, lang)[0]
    return next((emo for word, emo in EMOTION_KEYWORDS_ZH if word in head), None)


def speed_window(question: str, lang: str) -> tuple[float, float]:
    """The (lo, hi) factor on the reference duration asked for by the instruction."""
    head = split_instruction(question, lang)[0].lower()
    fast = "twice" in head if lang == "en" else ("两倍" in head or "快一倍" in head)
    slow = "half" in head if lang == "en" else ("一半" in head or "慢一倍" in head)
    if fast == slow:
        raise ValueError(f"cannot tell the requested speed from: {head}")
    return FAST if fast else SLOW


def reference_duration(question: str, query_seconds: float, lang: str) -> float:
    """Query duration × len(sentence to repeat) / len(whole question) (en words, zh Han chars)."""
    count = word_count if lang == "en" else han_count
    sentence = split_instruction(question, lang)[1]
    total = count(question)
    if total == 0:
        raise ValueError("empty question")
    return query_seconds * count(sentence) / total


def within(duration: float, ref: float, window: tuple[float, float]) -> bool:
    """Strictly inside (lo × ref, hi × ref)."""
    return window[0] * ref < duration < window[1] * ref


@dataclass
class Check:
    """One paralinguistic check: True/False, or None with an unscored reason."""

    ok: bool | None
    reason: str | None = None
    detail: dict[str, object] | None = None


class InstructionFollowing(LanguageScorer):
    """Instruction-following scorer for one language and protocol."""

    version = "3"
    family = "instruction_following"

    async def score(self, sample: Sample, reply: Reply | None, ctx: ScoringContext) -> list[Score]:
        if sample.index < 200:
            return [await self._paralinguistic(sample, reply, ctx)]
        key = sample.sub_category or sample.category or ""
        on_speech = ctx.protocol == "v1" and sample.index in V1_SPOKEN
        content = await spoken_content(reply, ctx, self.lang) if on_speech else text_content(reply)
        if content.system_error:
            return [failed(sample, MAIN, self.ref, content.system_error, 0.0, type=key)]
        criterion = CRITERIA[self.lang].get(key)
        if criterion is None:
            return [unscored(sample, MAIN, self.ref, "unknown_instruction_type", type=key)]
        if content.unscored or content.text is None:
            return [unscored(sample, MAIN, self.ref, content.unscored or "no_content", type=key)]
        none = "(none)" if self.lang == "en" else "（无）"
        fields = {"question": sample.question, "criterion": criterion,
                  "reference": sample.reference or none, "reply": content.text}
        return [await judge(sample, MAIN, self.ref, ctx, f"instruction_{self.lang}", fields, type=key)]

    # -- paralinguistic items ------------------------------------------------------------------
    async def _paralinguistic(self, sample: Sample, reply: Reply | None, ctx: ScoringContext) -> Score:
        kind = "paralinguistic"
        wants_emotion, wants_speed = paralinguistic_kind(sample.index)
        v1 = ctx.protocol == "v1"
        # emotion and speed need the audio; the v2 match needs a transcript (imported, or from the
        # audio); v1 plain repeats check the text only
        needs_audio = wants_emotion or wants_speed or (not v1 and (reply is None or reply.asr_text is None))
        if needs_audio and imported_without_audio(reply):
            return unscored(sample, MAIN, self.ref, NO_REPLY_AUDIO, type=kind)
        reason = system_failure(reply, need_text=True, need_audio=needs_audio)
        if reason:
            return failed(sample, MAIN, self.ref, reason, 0.0, type=kind)
        assert reply is not None
        checks: list[tuple[str, Check]] = []
        if v1:
            steps = ([self._speed] if wants_speed else []) + [self._sentence] + \
                    ([self._emotion] if wants_emotion else []) + ([self._content] if sample.index < 50 else [])
        else:
            steps = ([self._speed] if wants_speed else []) + [self._match] + \
                    ([self._emotion] if wants_emotion else []) + [self._content]
        for step in steps:
            name, check = await step(sample, reply, ctx)
            checks.append((name, check))
            if check.ok is False:
                return _with_trace(scored(sample, MAIN, self.ref, 0.0, type=kind, failed_on=name,
                                          checks=_summary(checks)), checks)
        pending = [(n, c) for n, c in checks if c.ok is None]
        if pending:
            return _with_trace(unscored(sample, MAIN, self.ref, pending[0][1].reason or "unscored", type=kind,
                                        checks=_summary(checks)), checks)
        return _with_trace(scored(sample, MAIN, self.ref, 1.0, type=kind, checks=_summary(checks)), checks)

    async def _speed(self, sample: Sample, reply: Reply, ctx: ScoringContext) -> tuple[str, Check]:
        try:
            window = speed_window(sample.question, self.lang)
        except ValueError:
            return "speed", Check(None, "speed_instruction_unparseable")
        query = _duration(sample.audio.duration if sample.audio else None,
                          sample.audio.path if sample.audio else None, ctx)
        spoken = _duration(reply.audio_duration if reply.audio_duration is not None
                           else (reply.audio.duration if reply.audio else None),
                           reply.audio.path if reply.audio else None, ctx)
        if query is None or spoken is None:
            return "speed", Check(None, "audio_duration_unavailable")
        ref = reference_duration(sample.question, query, self.lang)
        ok = within(spoken, ref, window)
        return "speed", Check(ok, detail={"duration": round(spoken, 4), "ref": round(ref, 4), "window": list(window)})

    async def _match(self, sample: Sample, reply: Reply, ctx: ScoringContext) -> tuple[str, Check]:
        hyp = await transcript(reply, ctx, self.lang)
        if hyp.system_error:
            return "match", Check(False, detail={"error": hyp.system_error})
        if hyp.unscored or hyp.text is None:
            return "match", Check(None, hyp.unscored or "no_transcript")
        counts = (wer_counts if self.lang == "en" else per_counts)(reply.text or "", hyp.text)
        rate = error_rate(counts)
        return "match", Check(rate < MATCH_LIMIT[self.lang], detail={"rate": round(rate, 6), "dist": counts[0],
                                                                    "len": counts[1]})

    async def _sentence(self, sample: Sample, reply: Reply, ctx: ScoringContext) -> tuple[str, Check]:
        """v1: the text reply against the sentence to repeat (en WER < 0.2, zh PER < 0.05)."""
        try:
            sentence = split_instruction(sample.question, self.lang)[1]
        except ValueError:
            return "sentence", Check(None, "no_sentence_to_repeat")
        text = reply.text or ""
        counts = (edit_distance(en_words(sentence), en_words(text)), len(en_words(sentence))) if self.lang == "en" \
            else per_counts(sentence, text)
        rate = error_rate(counts)
        return "sentence", Check(rate < MATCH_LIMIT[self.lang], detail={"rate": round(rate, 6), "dist": counts[0],
                                                                       "len": counts[1]})

    async def _emotion(self, sample: Sample, reply: Reply, ctx: ScoringContext) -> tuple[str, Check]:
        target = target_emotion(sample, self.lang)
        if target is None:
            return "emotion", Check(None, "target_emotion_unknown")
        if ctx.emotion is None:
            return "emotion", Check(None, "emotion_not_configured")
        try:
            dist = await ctx.emotion(reply)
        except ComponentUnavailable as exc:
            return "emotion", Check(None, exc.reason)
        total = sum(max(0.0, float(dist.get(e, 0.0))) for e in EMOTIONS_5)
        if total <= 0:
            return "emotion", Check(None, "emotion_distribution_empty")
        p = max(0.0, float(dist.get(target, 0.0))) / total
        return "emotion", Check(p > 0.5, detail={"target": target, "p": round(p, 6)})

    async def _content(self, sample: Sample, reply: Reply, ctx: ScoringContext) -> tuple[str, Check]:
        try:
            sentence = split_instruction(sample.question, self.lang)[1].strip()
        except ValueError:
            sentence = sample.question
        fields = {"question": sample.question, "sentence": sentence, "reply": reply.text or ""}
        verdict = await judge(sample, "content", self.ref, ctx, f"instruction_repeat_{self.lang}", fields)
        if not verdict.scored:
            return "content", Check(None, verdict.unscored)
        return "content", Check(verdict.value == 1.0, detail={"trace": verdict.judge})

    def tally(self) -> GroupedTally:
        return GroupedTally("following_rate", _type_of, "type_rates", scale=100)


def _type_of(sample: Sample) -> str:
    if sample.index < 200:
        return f"Paralinguistic/{sample.sub_category or ''}".rstrip("/")
    return sample.sub_category or sample.category or ""


def _with_trace(score: Score, checks: list[tuple[str, Check]]) -> Score:
    """Attach the content judge's trace (when the judge ran) to the item's score."""
    for name, c in checks:
        if name == "content" and c.detail and c.detail.get("trace") is not None:
            score.judge = c.detail["trace"]  # type: ignore[assignment]
    return score


def _summary(checks: list[tuple[str, Check]]) -> dict[str, object]:
    out: dict[str, object] = {}
    for name, c in checks:
        detail = {k: v for k, v in (c.detail or {}).items() if k != "trace"}
        out[name] = {"ok": c.ok, **({"reason": c.reason} if c.reason else {}), **detail}
    return out


def _duration(known: float | None, path: str | None, ctx: ScoringContext) -> float | None:
    if known is not None:
        return float(known)
    if path is None or ctx.audio_duration is None:
        return None
    try:
        return float(ctx.audio_duration(path))
    except (OSError, ValueError, RuntimeError):
        return None


declare(SubsetSpec(
    "instruction_following", {"en": 900, "zh": 1000}, "following_rate",
    "binary judge; paralinguistic items also need ASR/emotion/speed",
    lambda subset, lang, protocol: InstructionFollowing(lang, protocol), order=90, label="Instruction following",
    required=("Category",), dimension="instruction_following", percent=True, rubrics=("instruction_*",),
    categories=True, output_files=("instruction",),
    layouts={"en": Layout(qid="instruction", set_name="InstructionFollowing"),
             "zh": Layout(qid="instruction", audio="instruction", set_name="Instruction Following")}))

"""Instruction following: following rate % over all items (docs/scoring.md, "Instruction following").

- Items 200–899 (zh also 900–999): one binary judge rubric plus the official criterion of the
  item's type (the Sub-category, else the Category; zh 900–999 all get the one Mandarin-specific
  criterion), restated in our words. The judge sees the instruction, the criterion and the reply,
  never the reference ``Answer``.
- Items 0–199, paralinguistic (0–49 plain repeat, 50–99 emotion, 100–149 speed, 150–199 speed +
  emotion): success needs the judge's yes on the content AND the spoken reply matching its own
  text (en WER < 0.2 counted as the official ``instruction_full.py`` does, zh PER < 0.05) AND,
  where asked, p(target emotion) > 0.5 (the official six-way value when the classifier gives it)
  and the reply duration strictly inside (0.25, 0.75) × ref ("twice as fast") or (1.5, 2.5) × ref
  ("half speed"), ref = query duration × len(sentence to repeat) / len(question) (en words, zh
  Han characters). Checks run cheapest first and stop at the first definite failure; an item is
  unscored only when no check failed and one could not be evaluated.
- v1 (en), as the official v1 code: one note per category (``instruction_v1_en``); items ≥ 200
  are judged on the text reply, except 500–549 on the transcript, whose official prompt is the
  repeat note (a bug: we judge them by a spoken-format note and score the official reading as the
  ``official_v1_prompt`` variant); a paralinguistic item needs WER(sentence to repeat, text reply)
  < 0.2 instead of the text/speech match, the strict repeat judge only for 0–49, and the emotion
  and speed checks where asked.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pydantic import JsonValue

from vocalbench.catalog import Layout, SubsetSpec, declare
from vocalbench.components.base import ComponentUnavailable
from vocalbench.judge.graders.repeat import split_instruction
from vocalbench.records import EMOTION_UNKNOWN, EMOTIONS_5, Reply, Sample, Score
from vocalbench.scoring.base import ScoringContext, SubsetResult
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
    text_or_scores,
    transcript,
    unscored,
)
from vocalbench.scoring.tally import MAIN, Deps, GroupedTally, MeanTally, pick
from vocalbench.text import (
    edit_distance,
    error_rate,
    han_count,
    per_counts,
    repeat_wer_counts,
    repeat_words,
    word_count,
)

V1_SPOKEN = range(500, 550)  # v1 judges these items on the transcript, the others on the text (official v1)
MANDARIN_SPECIFIC = "Mandarin specific"  # zh 900-999: one criterion whatever the sub-category (official zh)

# The official v2 criterion of each instruction type (en and zh instruction_semantic.py), in our words.
CRITERIA: dict[str, dict[str, str]] = {
    "en": {
        "Num": "The reply lists exactly the number of items the user specified. More or fewer items is not "
               "following the instruction.",
        "Constrain": "The reply puts the specified content at the specified place and uses the required words "
                     "as many times as required. Missing any of these requirements is not following the "
                     "instruction.",
        "Keywords": "The reply contains every keyword the user specified and none of the keywords the user "
                    "excluded. Any miss is not following the instruction.",
        "Progressive": "The reply answers the questions one by one, strictly in the order they were asked. A "
                       "wrong order or any question left out is not following the instruction.",
        "Conditional": "The reply answers the follow-up question that its own judgement of the preliminary "
                       "question points to. Answering the other follow-up, or both follow-ups, is not following "
                       "the instruction; but a wrong judgement of the preliminary question that consistently "
                       "leads to the matching follow-up still counts as following it.",
        "Topic change": "The reply follows only the user's final, corrected instruction. Answering the earlier "
                        "instruction, or both the earlier and the corrected one, is not following the instruction.",
        "Spoken format": "The reply is in purely colloquial, spoken language. Any LaTeX, formulas or other "
                         "structured text is not following the instruction.",
        "Speaker tune": "The reply uses a tone and language style that is appropriate and reasonable for the "
                        "specified audience or for its own assigned identity. Inappropriate, ill-timed or overly "
                        "direct language is not following the instruction.",
        "Speaking style": "The reply strictly imitates the style of the specified character. A mismatched style "
                          "or a flat, plain narration is not following the instruction.",
        "Instruction": "The reply strictly keeps to the wording, structure and order of content the user "
                       "specified. Any deviation or omission is not following the instruction.",
        "Situation": "The reply fully considers and responds to every specific circumstance the user described. "
                     "Leaving one out or clearly contradicting one is not following the instruction.",
        "Format": "The reply strictly follows the format the user specified. Any deviation from that format is "
                  "not following the instruction.",
    },
    "zh": {
        "Num": "列举的条目数必须正好等于用户要求的数目，多列或少列都判为没有遵循。",
        "Constrain": "用户指定的内容要出现在指定的位置，要求的词语要达到规定的出现次数；有一项做不到就判为没有遵循。",
        "Keywords": "用户要求出现的关键词要全部出现，用户排除的关键词一个都不能出现；有一处不符就判为没有遵循。",
        "Progressive": "几个问题要按提问的先后逐个回答；顺序颠倒或漏掉任何一个问题都判为没有遵循。",
        "Conditional": "回复要按它自己对前提问题的判断，只回答与该判断对应的那个后续问题；答了不对应的后续问题，"
                       "或两个后续问题都答，判为没有遵循。前提问题判断错了，但据此答的正是与这个判断对应的后续问题，"
                       "仍判为遵循。",
        "Topic change": "只能按用户最后改正过的指令作答；回应改正前的指令，或改正前后的都回答，判为没有遵循。",
        "Spoken format": "整个回复都要是口头说话的语言；只要含有 LaTeX 代码、公式之类的结构化文本，就判为没有遵循。",
        "Speaker tune": "要针对用户指定的听众，或回复自身被设定的身份，用恰当合理的语气和语言风格；用语不恰当、"
                        "不合时宜或只是平铺直叙，判为没有遵循。",
        "Speaking style": "要严格模仿指定人物的风格；风格对不上或平铺直叙，判为没有遵循。",
        "Instruction": "要严格按用户指定的用词、结构和内容先后来回答；有任何偏离或忽略，判为没有遵循。",
        "Situation": "要充分考虑并回应用户说明的每一种具体情况；遗漏任何一种或与之明显矛盾，判为没有遵循。",
        "Format": "要严格采用用户指定的格式；格式上有任何不符，判为没有遵循。",
        MANDARIN_SPECIFIC: "要严格使用用户指定的中文表达方式和文学体裁，并参照中国的文化习俗；有任何偏离，判为没有遵循。",
    },
}
_LITERAL = " Judge literal adherence only, not the quality or usefulness of the content."
# The official v1 note of each category (prompts/instruction/*.txt), in our words; "Paralinguistic" is
# the strict repeat note that items 0-49 are judged by.
V1_CRITERIA: dict[str, str] = {
    "Paralinguistic": "The user asks for given content to be repeated, and the reply must reproduce it exactly. "
                      "Repeating only part of it, adding any other content, answering it, or starting a "
                      "conversation is not following, however fluent or well meant.",
    "Num": "Missing a number the instruction sets (for example two or four items where three were asked for) is "
           "not following, whatever the quality of the content. When the number asked for is one, a single "
           "larger point made of several small steps still follows." + _LITERAL,
    "Constrain": "Missing any content requirement (for example a phrase the reply must use, or how its sentences "
                 "must start) is not following, whatever the quality of the content." + _LITERAL,
    "Keywords": "Leaving out a required keyword or using a forbidden one is not following, whatever the quality "
                "of the content." + _LITERAL,
    "Progressive": "The instruction is a chain of questions, and every one must be answered in the exact order "
                   "given; a missing, skipped or reordered answer is not following, whatever the quality of the "
                   "content." + _LITERAL,
    "Conditional": "The instruction sets a condition (if X, answer A; otherwise answer B), and the reply must "
                   "follow its logic and answer only the branch that applies; answering every branch regardless "
                   "of the condition is not following. Do not judge whether the answers are correct, only whether "
                   "the conditional premise is followed: a reply that decides the condition wrongly and then "
                   "answers only the other branch still follows." + _LITERAL,
    "Topic change": "The instruction changes the topic, and the reply must answer only the latest instruction; "
                    "answering only the old topic, or both the old and the new one, is not following, whatever "
                    "the quality of the content." + _LITERAL,
    "Spoken format": "The instruction asks for a reply fit to be spoken, and the reply must use spoken, colloquial "
                     "language only; LaTeX, formulas or other structured text is not following.",
    "Speaker tune": "The instruction sets a tone or manner of speaking, and the reply must adapt its language to "
                    "it; a reply that is overly flat, generic or clearly mismatched to the intended audience or "
                    "scenario is not following, whatever its factual accuracy or structure.",
    "Speaking style": "The instruction sets a language style (for example in the manner of a named writer), and "
                      "the reply must keep exactly that style throughout; a reply that is overly flat, generic or "
                      "clearly mismatched to it is not following, whatever its accuracy or structure.",
    "Instruction": "The instruction sets requirements on the reply's form, such as given starting words, "
                   "transition phrases or specific content, and the reply must include every required element in "
                   "the right order and context; leaving out a required phrase, using wrong transitions, departing "
                   "from the structure or ignoring required content is not following, whatever the quality or "
                   "fluency.",
    "Situation": "The instruction describes a particular situation, and the reply must be tailored to it; a reply "
                 "that is overly general, not adapted to the scenario or clearly mismatched to it is not following, "
                 "whatever its factual correctness or fluency.",
    "Format": "The instruction asks for a particular format or structure, and the reply must use exactly that "
              "format; a wrong format, mixed formats or no clear format is not following, whatever the content.",
}
# What the official v1 code sends for Spoken format (500-549): its spoken-format prompt file holds the
# repeat note (a bug). Scored as the ``official_v1_prompt`` variant beside our spoken-format note.
V1_SPOKEN_FORMAT_AS_OFFICIAL = (
    "The user asks for given content to be repeated, and the reply must reproduce it exactly. Repeating only part "
    "of it, adding any other content, answering it, or starting a conversation is not following, however fluent "
    "or well meant. Consider only whether the reply repeats the required content, not any requirement on "
    "speaking speed or emotion.")
EMOTION_KEYWORDS_ZH = (("生气", "angry"), ("高兴", "happy"), ("中性", "neutral"), ("中立", "neutral"),
                       ("悲伤", "sad"), ("伤心", "sad"), ("惊喜", "surprised"), ("惊讶", "surprised"))
FAST, SLOW = (0.25, 0.75), (1.5, 2.5)
OFFICIAL_V1_PROMPT = "official_v1_prompt"  # v1 500-549 judged with the repeat note, as the official v1 code does
MATCH_LIMIT = {"en": 0.2, "zh": 0.05}


def paralinguistic_kind(index: int) -> tuple[bool, bool]:
    """(asks for emotion, asks for speed) of a paralinguistic item, by index."""
    return index in range(50, 100) or index in range(150, 200), index in range(100, 200)


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


def target_probability(dist: Mapping[str, float], target: str) -> tuple[float, str] | None:
    """(p(target), basis): the official value, a softmax over the five classes and <unk>, when the
    classifier gives ``unknown`` (basis "5+unk"); else renormalised over the five (basis "5").
    None when the classes carry no probability."""
    classes = (*EMOTIONS_5, EMOTION_UNKNOWN) if EMOTION_UNKNOWN in dist else EMOTIONS_5
    total = sum(max(0.0, float(dist.get(e, 0.0))) for e in classes)
    if total <= 0:
        return None
    return max(0.0, float(dist.get(target, 0.0))) / total, "5+unk" if EMOTION_UNKNOWN in dist else "5"


def within(duration: float, ref: float, window: tuple[float, float]) -> bool:
    """Strictly inside (lo × ref, hi × ref)."""
    return window[0] * ref < duration < window[1] * ref


@dataclass
class Check:
    """One paralinguistic check: True/False, or None with an unscored reason."""

    ok: bool | None
    reason: str | None = None
    detail: dict[str, JsonValue] | None = None
    judged: Score | None = None  # the content judge's verdict, where the judge ran


def criterion_key(sample: Sample, lang: str) -> str:
    """The official criterion an item >= 200 is judged by: its Sub-category, else its Category; every
    zh item of Category "Mandarin specific" shares one criterion, whatever its sub-category."""
    if lang == "zh" and sample.category == MANDARIN_SPECIFIC:
        return MANDARIN_SPECIFIC
    return sample.sub_category or sample.category or ""


class InstructionFollowing(LanguageScorer):
    """Instruction-following scorer for one language and protocol."""

    version = "4"
    family = "instruction_following"

    @property
    def v1_en(self) -> bool:
        """The official v1 prompts exist for English only (prompts/instruction/*.txt)."""
        return self.protocol == "v1" and self.lang == "en"

    async def score(self, sample: Sample, reply: Reply | None, ctx: ScoringContext) -> list[Score]:
        if sample.index < 200:
            return [await self._paralinguistic(sample, reply, ctx)]
        kind = sample.sub_category or sample.category or ""
        key = criterion_key(sample, self.lang)
        on_speech = ctx.protocol == "v1" and sample.index in V1_SPOKEN
        content = await spoken_content(reply, ctx, self.lang) if on_speech else text_content(reply)
        criterion = V1_CRITERIA.get(key) if self.v1_en else CRITERIA[self.lang].get(key)
        text = text_or_scores(content, sample, self.ref, 0.0, (MAIN,),
                              None if criterion else "unknown_instruction_type", type=kind)
        if isinstance(text, list) or criterion is None:
            return text if isinstance(text, list) else []
        rubric = "instruction_v1_en" if self.v1_en else f"instruction_{self.lang}"
        fields = {"question": sample.question, "criterion": criterion, "reply": text}
        # the grader learns the criterion's key where it is not the type (zh 900-999: Mandarin specific)
        main = await judge(sample, MAIN, self.ref, ctx, rubric, fields, type=kind,
                           **({"criterion": key} if key != kind else {}))
        if not (self.v1_en and sample.index in V1_SPOKEN):
            return [main]
        as_official = {**fields, "criterion": V1_SPOKEN_FORMAT_AS_OFFICIAL}
        return [main, await judge(sample, OFFICIAL_V1_PROMPT, self.ref, ctx, rubric, as_official, type=kind)]

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
        counts = (repeat_wer_counts if self.lang == "en" else per_counts)(reply.text or "", hyp.text)
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
        if self.lang == "zh":
            counts = per_counts(sentence, text)
        else:
            words = repeat_words(sentence)
            counts = edit_distance(words, repeat_words(text)), len(words)
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
        read = target_probability(dist, target)
        if read is None:
            return "emotion", Check(None, "emotion_distribution_empty")
        p, basis = read
        return "emotion", Check(p > 0.5, detail={"target": target, "p": round(p, 6), "basis": basis})

    async def _content(self, sample: Sample, reply: Reply, ctx: ScoringContext) -> tuple[str, Check]:
        """The judge on the repeated content: v2 the repeat criterion; v1 (en) the strict
        paralinguistic note (extra content fails), as the official v1 code."""
        if self.v1_en:
            fields = {"question": sample.question, "criterion": V1_CRITERIA["Paralinguistic"],
                      "reply": reply.text or ""}
            rubric = "instruction_v1_en"
        else:
            fields, rubric = {"question": sample.question, "reply": reply.text or ""}, f"instruction_repeat_{self.lang}"
        verdict = await judge(sample, "content", self.ref, ctx, rubric, fields)
        if not verdict.scored:
            return "content", Check(None, verdict.unscored)
        return "content", Check(verdict.value == 1.0, judged=verdict)

    def tally(self) -> GroupedTally:
        return _V1Tally() if self.v1_en else GroupedTally("following_rate", _type_of, "type_rates", scale=100)


class _V1Tally(GroupedTally):
    """v1 (en): also the following rate with 500-549 judged by the official v1 prompt (the repeat note)."""

    def __init__(self) -> None:
        super().__init__("following_rate", _type_of, "type_rates", scale=100)
        self.as_official = MeanTally("following_rate", scale=100)

    def add(self, sample: Sample, scores: list[Score]) -> None:
        super().add(sample, scores)
        self.as_official.add_score(pick(scores, OFFICIAL_V1_PROMPT) or pick(scores, MAIN))

    def result(self, deps: Deps | None = None) -> SubsetResult:
        return self.summary({self.extra_key: dict(self.groups.means()),
                             "following_rate_official_v1_prompt": self.as_official.mean()})


def _type_of(sample: Sample) -> str:
    if sample.index < 200:
        return f"Paralinguistic/{sample.sub_category or ''}".rstrip("/")
    return sample.sub_category or sample.category or ""


def _with_trace(score: Score, checks: list[tuple[str, Check]]) -> Score:
    """Attach the content judge's trace and provenance (when the judge ran) to the item's score."""
    for name, c in checks:
        if name == "content" and c.judged is not None:
            score.judge, score.decided_by = c.judged.judge, c.judged.decided_by
    return score


def _summary(checks: list[tuple[str, Check]]) -> dict[str, JsonValue]:
    out: dict[str, JsonValue] = {}
    for name, c in checks:
        out[name] = {"ok": c.ok, **({"reason": c.reason} if c.reason else {}), **(c.detail or {})}
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

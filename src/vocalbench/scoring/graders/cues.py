"""Features for the 1-5 families, where nothing is mechanical enough to settle an item.

- open reasoning: how much of the reference's content the reply recalls, and whether it reasons
  (because, so, 因为, 所以) at all;
- empathy: how many words of acknowledgement, comfort and support the reply uses, whether it
  names a feeling, and (English, where the judge sees it) the question's own emotion;
- creativity, single-round and code-switched open questions: how much the reply says, how varied
  its words are, how much of the question (or reference) it takes up.

Each returns features only; the fitted rule of the family decides how much they count beside
the model's answers (docs/judge.md).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from vocalbench.components.rubric import Evidence
from vocalbench.scoring.graders import found, grader
from vocalbench.scoring.graders.tokens import content_words, is_zh, recall, units

REASONS = {"en": re.compile(r"\b(because|since|so|therefore|thus|which means|as a result|due to|that's why|"
                            r"this is why|leads to|causes?)\b", re.IGNORECASE),
           "zh": re.compile(r"因为|所以|因此|由于|导致|说明|意味着|从而|于是|原因")}
EMPATHY = {
    "en": re.compile(r"\b(i'm (?:so )?sorry|i am sorry|i understand|understandable|that sounds|sounds like|it's okay|"
                     r"it is okay|you're not alone|that must|must be|i can imagine|i hear you|feel(?:ing|s)?|"
                     r"frustrat\w*|upset|worried|excit\w*|congratulations|glad|happy for you|take care|"
                     r"here for you|don't worry|totally|completely valid|valid|hang in there|deep breath)\b",
                     re.IGNORECASE),
    "zh": re.compile(r"理解|难过|伤心|心疼|抱抱|别担心|不要担心|放心|辛苦|感受|心情|情绪|我能体会|能感受到|"
                     r"听起来|一定|真为你|恭喜|开心|高兴|太好了|生气|委屈|不容易|陪着你|加油|别难过|没关系|"
                     r"深呼吸|照顾好自己"),
}
SECOND_PERSON = {"en": re.compile(r"\byou(?:r|'re|'ve|'ll)?\b", re.IGNORECASE), "zh": re.compile(r"你|您")}


def _size(text: str, lang: str) -> tuple[float, float]:
    """(length on a rough 0-3 scale, type-token ratio)."""
    u = units(text, lang)
    if not u:
        return 0.0, 0.0
    scale = 200.0 if lang == "zh" else 120.0
    return round(min(len(u) / scale, 3.0), 4), round(len(set(u)) / len(u), 4)


def _lang(fields: Mapping[str, str]) -> str:
    return "zh" if is_zh(fields.get("question", "") + fields.get("reply", "")) else "en"


@grader("reasoning_open_en", "reasoning_open_zh", version="1")
def reasoning_cues(fields: Mapping[str, str], meta: Mapping[str, str]) -> Evidence:
    lang, reply = _lang(fields), fields.get("reply", "")
    ref = content_words(fields.get("reference", ""), lang)
    length, _ = _size(reply, lang)
    return found(None, "", ref_recall=round(recall(ref, content_words(reply, lang)), 4),
                 reasons=float(min(len(REASONS[lang].findall(reply)), 5)), length=length)


@grader("emotion_semantic_en", "emotion_semantic_zh", version="1")
def empathy_cues(fields: Mapping[str, str], meta: Mapping[str, str]) -> Evidence:
    lang, reply = _lang(fields), fields.get("reply", "")
    length, _ = _size(reply, lang)
    n = max(1, len(units(reply, lang)))
    feats = {"empathy": float(min(len(EMPATHY[lang].findall(reply)), 8)),
             "empathy_density": round(min(len(EMPATHY[lang].findall(reply)) / n * 20, 3.0), 4),
             "you": round(min(len(SECOND_PERSON[lang].findall(reply)) / n * 20, 3.0), 4),
             "length": length}
    emotion = fields.get("emotion", "").strip().lower()
    if emotion:
        feats["names_emotion"] = float(bool(re.search(rf"\b{re.escape(emotion[:5])}", reply.lower())))
    return found(None, "", **feats)


@grader("creativity_en", "creativity_zh", "single_round_en", "single_round_zh", version="1")
def size_cues(fields: Mapping[str, str], meta: Mapping[str, str]) -> Evidence:
    lang, reply = _lang(fields), fields.get("reply", "")
    length, ttr = _size(reply, lang)
    topic = recall(content_words(fields.get("question", ""), lang), content_words(reply, lang))
    return found(None, "", length=length, variety=ttr, topic=round(topic, 4))


@grader("cs_open_ended_understanding", "cs_open_ended_quality", version="1")
def open_cs_cues(fields: Mapping[str, str], meta: Mapping[str, str]) -> Evidence:
    reply, question = fields.get("reply", ""), fields.get("question", "")
    length, ttr = _size(reply, "zh")
    english = set(re.findall(r"[A-Za-z][A-Za-z-]+", question.lower()))
    kept = sum(1 for w in english if w in reply.lower()) / len(english) if english else 0.0
    ref = recall(content_words(fields.get("reference", ""), "zh"), content_words(reply, "zh"))
    return found(None, "", length=length, variety=ttr, english_kept=round(kept, 4), ref_recall=round(ref, 4))

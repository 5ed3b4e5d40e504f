"""The stress suite's transformations: pure functions of a reply (and its question or reference),
deterministic per item id, their added sentences drawn from one wording pool (``wordings``)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np

from vocalbench.judge.stress.wordings import pool

_HARD_FEELINGS = re.compile(r"sad|angry|anger|fear|disgust|frustrat|upset|worr|anx|lonel|griev|"
                            r"难过|伤心|悲伤|生气|愤怒|害怕|担心|焦虑|孤独|委屈|失望|沮丧|烦|累|压力")
_SENT = {"en": re.compile(r"(?<=[.!?])\s+|\n+"), "zh": re.compile(r"(?<=[。！？!?])|\n+")}
_END = {"en": ".!?\"'", "zh": "。！？!?”」"}
_EN_WORD = re.compile(r"[A-Za-z0-9']+")
_CJK = re.compile(r"[\u4e00-\u9fff]")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_EN_STOP = frozenset("""a an the and or but if then so of to in on at by for with from as is are was were be been
being am do does did it its this that these those there here he she they we you i me my your his her their our
them him us what which who whom whose when where why how not no yes can could would should will shall may might
must have has had just also very really than too more most much many some any all each every one about into
over under up down out""".split())


def _rng(item_id: str, kind: str) -> np.random.Generator:
    return np.random.default_rng(int(hashlib.sha256(f"{kind}:{item_id}".encode()).hexdigest()[:16], 16))


def _pick(rng: np.random.Generator, transformation: str, lang: str, part: str, which: str) -> str:
    words = pool(transformation, lang, part, which)
    return words[int(rng.integers(len(words)))]


def size(text: str, lang: str) -> int:
    """Length in English words or Mandarin characters (plus Latin words)."""
    if lang == "zh":
        return len(_CJK.findall(text)) + len(re.findall(r"[A-Za-z]+", text))
    return len(_EN_WORD.findall(text))


def sentences(text: str, lang: str) -> list[str]:
    return [s.strip() for s in _SENT[lang].split(text.strip()) if s and s.strip()]


def _join(parts: Sequence[str], lang: str) -> str:
    return ("" if lang == "zh" else " ").join(p.strip() for p in parts if p.strip())


def restated(question: str, lang: str) -> str:
    """The question as a restatement quotes it: one line of at most 300 characters, a sentence."""
    q = re.sub(r"\s+", " ", question).strip()[:300]
    if not q:
        return q
    q = q[0].upper() + q[1:]
    return q if q[-1] in _END[lang] else q + ("." if lang == "en" else "。")


def pad(reply: str, question: str, lang: str, item_id: str = "", factor: float | None = None,
        restate: bool = True, which: str = "design") -> str:
    """``reply`` wrapped in filler (greeting, the question restated, generic remarks, closing) from
    the ``which`` wording pool to ``factor`` times its length (2-4, drawn per item when not given).
    ``restate=False`` leaves the question out (instruction following's plain padding: restating an
    instruction can carry what it asks for, which its own transformation, padding with the
    question, tests)."""
    rng = _rng(item_id, "padding")
    factor = float(rng.uniform(2.0, 4.0)) if factor is None else factor
    target = max(size(reply, lang), 1) * factor
    head = [_pick(rng, "padding", lang, "greeting", which),
            _pick(rng, "padding", lang, "restate", which).format(q=restated(question, lang)) if restate else ""]
    tail = [_pick(rng, "padding", lang, "closing", which)]
    generic = pool("padding", lang, "generic", which)
    order = list(rng.permutation(len(generic)))
    middle: list[str] = []
    i = 0
    while size(_join([*head, reply, *middle, *tail], lang), lang) < target:
        middle.append(generic[order[i % len(order)]])
        i += 1
    cut = len(middle) // 2  # generic remarks both before and after the reply
    return ("\n" if lang == "en" else "").join(
        [_join([*head, *middle[:cut]], lang), reply.strip(), _join([*middle[cut:], *tail], lang)]).strip()


def content_terms(text: str, lang: str, limit: int = 12) -> list[str]:
    """The text's content words (English) or two-character runs (Mandarin), in order, distinct."""
    if lang == "zh":
        chars = "".join(_CJK.findall(text))
        grams = [chars[i:i + 2] for i in range(0, max(len(chars) - 1, 0), 2)]
    else:
        grams = [w for w in _EN_WORD.findall(text.lower()) if w not in _EN_STOP and len(w) > 2]
    return list(dict.fromkeys(grams))[:limit]


_EN_YES = re.compile(r"^\s*(yes|no)\b", re.I)
_ZH_YES = re.compile(r"^\s*(是的|是|对|不是|不对|不)")
_OPTION = re.compile(r"^\s*\(?([A-D])\)?(?:[.)、:：]|\s*$)")  # "B", "(C)", "D." - not the article in "A needle"


def wrong_answer(reference: str, lang: str, item_id: str = "", which: str = "design") -> str:
    """The reference turned into a wrong or contradicting answer: its first number changed, its
    opening yes/no or option flipped, else its statement denied (a ``which`` pool wording)."""
    ref = reference.strip()
    m = _NUMBER.search(ref)
    if m:
        n = float(m.group(0))
        other = n + 1 if n != int(n) or n < 5 else n * 2 + 1
        text = f"{int(other)}" if other == int(other) else f"{other:g}"
        return ref[:m.start()] + text + ref[m.end():]
    m = _OPTION.match(ref)
    if m:
        letter = m.group(1)
        nxt = "ABCD"[("ABCD".index(letter.upper()) + 1) % 4]
        return ref[:m.start(1)] + nxt + ref[m.end(1):]
    rng = _rng(item_id, "deny")
    if lang == "en":
        m = _EN_YES.match(ref)
        if m:
            word = m.group(1)
            flipped = {"yes": "no", "no": "yes"}[word.lower()]
            return ref[:m.start(1)] + (flipped.capitalize() if word[0].isupper() else flipped) + ref[m.end(1):]
        body = ref.rstrip(".!?")
        body = body[0].lower() + body[1:] if body[:1].isupper() and not body[1:2].isupper() else body  # not "US"
        denial = _pick(rng, "parroting", lang, "deny", which).format(body=body)
        return denial[0].upper() + denial[1:]
    m = _ZH_YES.match(ref)
    if m:
        flipped = {"是的": "不是", "是": "不是", "对": "不对", "不是": "是的", "不对": "对", "不": "是"}[m.group(1)]
        return ref[:m.start(1)] + flipped + ref[m.end(1):]
    return _pick(rng, "parroting", lang, "deny", which).format(body=ref.rstrip("。！？.!?"))


def parrot(reference: str, lang: str, item_id: str = "", which: str = "design") -> str:
    """The reference's content words, named by a ``which`` pool lead, then a wrong or
    contradicting answer."""
    terms = content_terms(reference, lang)
    wrong = wrong_answer(reference, lang, item_id, which)
    if not terms:
        return wrong
    listed = "、".join(terms) if lang == "zh" else ", ".join(terms[:-1]) + (
        f" and {terms[-1]}" if len(terms) > 1 else terms[0])
    lead = _pick(_rng(item_id, "parrot"), "parroting", lang, "lead", which).format(terms=listed)
    return _join([lead[0].upper() + lead[1:], wrong], lang)


def _overlap(sentence: str, target: str, lang: str) -> float:
    mine, theirs = set(content_terms(sentence, lang, 200)), set(content_terms(target, lang, 200))
    return len(mine & theirs) / len(theirs) if theirs else 0.0


def condense(reply: str, key: str, lang: str) -> str | None:
    """The reply cut to its key sentences: the first and the one closest to ``key`` (the
    reference, else the question; of two sentences, only the closer one); None when that is not
    at most 60 % of the reply."""
    said = sentences(reply, lang)
    if len(said) < 2:
        return None
    if len(said) == 2:
        short = max(said, key=lambda s: _overlap(s, key, lang))
    else:
        best = max(range(1, len(said)), key=lambda i: (_overlap(said[i], key, lang), -i))
        short = _join([said[0], said[best]], lang)
    return short if size(short, lang) <= 0.6 * size(reply, lang) else None


def flip_tone(reply: str, question: str, emotion: str, lang: str, item_id: str = "", which: str = "design") -> str:
    """The reply with its opening sentence replaced, and a closing added, in a tone that clashes
    with the user's feeling (for a hard feeling a cheerful brush-off, for a glad one a put-down)."""
    rng = _rng(item_id, "tone")
    hard = bool(_HARD_FEELINGS.search(f"{emotion} {question}".lower()))
    opening = _pick(rng, "tone_flip", lang, "hard" if hard else "glad", which)
    closing = _pick(rng, "tone_flip", lang, "closing", which)
    return _join([opening, *sentences(reply, lang)[1:], closing], lang)


def echo(question: str, lang: str, item_id: str = "", which: str = "design") -> str:
    """The question restated with praise and a promise to answer it, and no answer: nothing but
    the question and two ``which`` pool wordings."""
    rng = _rng(item_id, "echo")
    praise = _pick(rng, "echo", lang, "praise", which).format(q=restated(question, lang))
    return _join([praise, _pick(rng, "echo", lang, "promise", which)], lang)


def drift(reply: str, other: str, lang: str, item_id: str = "", which: str = "design") -> str | None:
    """One sentence of the reply's own (its first), a ``which`` pool lead, then ``other`` (another
    question's reply); None when the reply has fewer than two sentences (its first would be all of it)."""
    said = sentences(reply, lang)
    if len(said) < 2 or not other.strip():
        return None
    return _join([said[0], _pick(_rng(item_id, "drift"), "drift", lang, "lead", which), other], lang)

"""Text units the graders compare: English words, Mandarin characters, numbers, content words.

English goes through Whisper's English normaliser (text.py), which also turns spelled-out
numbers into digits ("one hundred twenty-five" -> "125"); Mandarin is converted to Simplified
Chinese and read character by character, with Chinese numerals read as numbers by cn2an.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache

from vocalbench.text import normalize_en

_WORD = re.compile(r"[a-z0-9']+|\d+(?:\.\d+)?")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_CJK = re.compile(r"[\u4e00-\u9fff]")
_ZH_UNIT = re.compile(r"[\u4e00-\u9fffa-z0-9]")
_ZH_NUMERAL = re.compile(r"[零〇一二两三四五六七八九十百千万亿点负]+")
STOPWORDS_EN = frozenset("""
a an the and or but if then so of to in on at by for with from as is are was were be been being am do does did
it its this that these those there here he she they we you i me my your his her their our them him us what which
who whom whose when where why how not no yes can could would should will shall may might must have has had
just also very really than too more most much many some any all each every one about into over under up down out
""".split())


@cache
def _t2s():  # type: ignore[no-untyped-def]
    from opencc import OpenCC

    return OpenCC("t2s")


def is_zh(text: str) -> bool:
    """Mostly Chinese characters (more CJK characters than Latin words)."""
    return len(_CJK.findall(text)) > len(re.findall(r"[A-Za-z]+", text))


def en_tokens(text: str) -> list[str]:
    """Normalised English words (numbers as digits)."""
    return _WORD.findall(normalize_en(text))


def zh_chars(text: str) -> list[str]:
    """Simplified Chinese characters, Latin letters and digits, one unit each (lower case)."""
    return _ZH_UNIT.findall(_t2s().convert(text).lower())


def units(text: str, lang: str) -> list[str]:
    return zh_chars(text) if lang == "zh" else en_tokens(text)


def content_words(text: str, lang: str) -> list[str]:
    """English words that are not stopwords; Mandarin character bigrams."""
    if lang == "zh":
        chars = [c for c in zh_chars(text) if _CJK.match(c) or c.isdigit()]
        return [a + b for a, b in zip(chars, chars[1:])]
    return [w for w in en_tokens(text) if w not in STOPWORDS_EN and len(w) > 1]


def recall(reference: Sequence[str], reply: Sequence[str]) -> float:
    """Share of the reference's distinct units that occur in the reply (0 when it has none)."""
    ref = set(reference)
    return len(ref & set(reply)) / len(ref) if ref else 0.0


def semi_global_distance(needle: Sequence[str], hay: Sequence[str]) -> int:
    """Edit distance of ``needle`` to its best-matching stretch of ``hay`` (free start and end in
    ``hay``): how far the reply's closest passage is from the sentence."""
    prev = [0] * (len(hay) + 1)
    for i in range(1, len(needle) + 1):
        cur = [i] + [0] * len(hay)
        for j in range(1, len(hay) + 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (needle[i - 1] != hay[j - 1]))
        prev = cur
    return min(prev) if hay else len(needle)


def _zh_numbers(text: str) -> list[float]:
    import cn2an

    out: list[float] = []
    converted = _ZH_NUMERAL.sub(lambda m: _numeral(m.group(0), cn2an), _t2s().convert(text))
    for m in _NUMBER.finditer(converted.replace(",", "")):
        out.append(float(m.group(0)))
    return out


def _numeral(run: str, cn2an) -> str:  # type: ignore[no-untyped-def]
    """A run of Chinese numeral characters as digits, or unchanged when it is not a number."""
    if run in ("一", "两") or not any(c in run for c in "零〇二三四五六七八九十百千万亿"):
        return run if run not in ("两",) else "2"
    try:
        return f" {cn2an.cn2an(run, 'smart')} "
    except (ValueError, KeyError, IndexError, TypeError):
        return run


def numbers(text: str, lang: str) -> list[float]:
    """The numbers a text states, in order (English spelled-out numbers and Chinese numerals too)."""
    if lang == "zh":
        return _zh_numbers(text)
    return [float(m.group(0)) for m in _NUMBER.finditer(normalize_en(text).replace(",", ""))]


# -- terms with their polarity: recall that knows "melts" from "melt" and "not X" from "X" ---------
NEGATORS_EN = frozenset("not no never neither nor without cannot none nothing nobody nowhere hardly barely".split())
_ZH_NEGATOR = re.compile(r"[不没未非无别勿否]")
_EN_CLAUSE = re.compile(r"[,;:.!?]|\b(?:but|however|although|though|while|whereas|because)\b")
_EN_TERM = re.compile(r"[a-z0-9]+")
_ZH_SENT = re.compile(r"[。！？!?；;\n]")
_EN_SENT = re.compile(r"(?<=[.!?;])\s+|\n+")


@cache
def stem(word: str) -> str:
    """A crude English stem, so that inflections read alike: melt, melts, melted, melting -> melt."""
    for suffix in ("ing", "ies", "ied", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)] + ("y" if suffix in ("ies", "ied") else "")
            break
    return word[:-1] if len(word) > 3 and word.endswith("e") else word


def polar_terms(text: str, lang: str) -> list[tuple[str, bool]]:
    """The text's content terms (English stemmed words, Mandarin character bigrams) with whether
    they are negated: a negator up to three words (two characters) before them in the same clause.
    A sentence that calls another statement false is not read here: no word list can tell "that
    is wrong" from its many paraphrases (issue 34 removed the one that matched the stress suite's
    own denial sentences); contradiction is the semantic features' and the model checks' job."""
    out: list[tuple[str, bool]] = []
    if lang == "zh":
        for sent in _ZH_SENT.split(_t2s().convert(text)):
            chars = [c for c in sent if _CJK.match(c) or c.isdigit()]
            for i in range(len(chars) - 1):
                gram = chars[i] + chars[i + 1]
                if _ZH_NEGATOR.search(gram):
                    continue
                negated = any(_ZH_NEGATOR.match(c) for c in chars[max(0, i - 2):i])
                out.append((gram, negated))
        return out
    low = re.sub(r"n't\b", " not", text.lower().replace("’", "'")).replace("cannot", "can not")
    for sent in _EN_SENT.split(low):
        for clause in _EN_CLAUSE.split(sent):
            toks = _EN_TERM.findall(clause)
            for i, tok in enumerate(toks):
                if tok in STOPWORDS_EN or tok in NEGATORS_EN or len(tok) < 2:
                    continue
                negated = any(t in NEGATORS_EN for t in toks[max(0, i - 3):i])
                out.append((stem(tok), negated))
    return out


def polar_recall(reference: Sequence[tuple[str, bool]], reply: Sequence[tuple[str, bool]],
                 skip: frozenset[str] = frozenset()) -> tuple[float, float]:
    """(recall, contradiction): the share of the reference's distinct terms (beyond ``skip``) the
    reply states with the same polarity and never with the opposite one, and the share it states
    with the opposite one (a reply that lists the reference's words and then denies them recalls
    nothing and contradicts it)."""
    ref = {(t, neg) for t, neg in reference if t not in skip}
    if not ref:
        return 0.0, 0.0
    said = set(reply)
    opposite = sum((t, not neg) in said for t, neg in ref)
    same = sum((t, neg) in said and (t, not neg) not in said for t, neg in ref)
    return same / len(ref), opposite / len(ref)

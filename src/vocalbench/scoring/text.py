"""Text normalisers and error counts used by the scorers (METRICS.md).

English: the official pre-cleaning, Whisper's English normaliser, the ordinal rule for ASR
transcripts, word edit distance with jiwer. Mandarin: Arabic numbers read out in Chinese,
non-Han characters dropped, pinyin syllables with tone numbers, syllable edit distance.
All functions are pure; the heavy normaliser objects are built once and cached.
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache

import jiwer

HAN = re.compile(r"[\u4e00-\u9fff]")
NON_HAN = re.compile(r"[^\u4e00-\u9fff]")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_DIGITS = "零一二三四五六七八九"

ORDINALS: dict[str, int] = {
    w: i + 1
    for i, w in enumerate(
        "first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth "
        "fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth twentieth".split()
    )
}
ORDINALS.update({f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}": n
                 for n in range(1, 21)})
_ORDINAL = re.compile(r"\b(" + "|".join(sorted(map(re.escape, ORDINALS), key=len, reverse=True)) + r")\b[,.]?",
                      re.IGNORECASE)


# -- English ---------------------------------------------------------------------------------
@cache
def _english_normalizer():  # type: ignore[no-untyped-def]
    from whisper_normalizer.english import EnglishTextNormalizer

    return EnglishTextNormalizer()


def pre_clean(text: str) -> str:
    """The official pre-cleaning: drop ``<|...|>`` tokens, collapse spaces, no space before
    punctuation, ``-`` to space, no leading space."""
    text = re.sub(r"<\|.*?\|>", " ", text)
    text = re.sub(r"\s+", " ", text)
    text = re.sub(r" ?([!,.?;:])", r"\1", text)
    text = text.replace("-", " ")
    return text.lstrip(" ")


def normalize_en(text: str) -> str:
    """Pre-cleaning, Whisper's English text normaliser, lower case."""
    return str(_english_normalizer()(pre_clean(text))).lower()


def apply_ordinal_rule(text: str) -> str:
    """Ordinal words first…twentieth and 1st…20th (optionally followed by "," or ".") become
    the number followed by a period: "second" -> "2.", "3rd," -> "3."."""
    return _ORDINAL.sub(lambda m: f"{ORDINALS[m.group(1).lower()]}.", text)


def _drop_punctuation_tokens(words: list[str]) -> list[str]:
    return [w for w in words if not all(unicodedata.category(c).startswith("P") for c in w)]


def en_words(text: str, *, hyp: bool = False) -> list[str]:
    """Words of ``text`` under the clarity normaliser; ``hyp=True`` applies the ordinal rule."""
    text = pre_clean(text)
    if hyp:
        text = apply_ordinal_rule(text)
    return _drop_punctuation_tokens(_english_normalizer()(text).lower().split())


def edit_distance(ref: list[str], hyp: list[str]) -> int:
    """Token edit distance (substitutions + deletions + insertions) computed with jiwer."""
    if not ref:
        return len(hyp)
    if not hyp:
        return len(ref)
    out = jiwer.process_words(" ".join(ref), " ".join(hyp))
    return int(out.substitutions + out.deletions + out.insertions)


def wer_counts(ref: str, hyp: str) -> tuple[int, int]:
    """English (distance, reference length) in words: ``ref`` is the system's text reply, ``hyp``
    the transcript of its speech (the ordinal rule applies to ``hyp`` only)."""
    r, h = en_words(ref), en_words(hyp, hyp=True)
    return edit_distance(r, h), len(r)


# -- Mandarin --------------------------------------------------------------------------------
def _integer_reading(digits: str) -> str:
    import cn2an

    try:
        return str(cn2an.an2cn(digits, "low"))
    except ValueError:  # beyond cn2an's 16 digits: read digit by digit
        return "".join(_DIGITS[int(d)] for d in digits)


def read_number(number: str) -> str:
    """An Arabic number (optional minus, integer or decimal) read out in Chinese, with
    ``cn2an.an2cn(x, "low")`` semantics: 15 -> 十五, 105 -> 一百零五, 3.14 -> 三点一四."""
    sign = "负" if number.startswith("-") else ""
    body = number.lstrip("-")
    integer, _, decimals = body.partition(".")
    out = sign + _integer_reading(integer)
    if decimals:
        out += "点" + "".join(_DIGITS[int(d)] for d in decimals)
    return out


def normalize_zh(text: str) -> str:
    """Numbers read out in Chinese, then every non-Han character removed."""
    return NON_HAN.sub("", _NUMBER.sub(lambda m: read_number(m.group(0)), text))


def pinyin_syllables(text: str) -> list[str]:
    """Pinyin with tone numbers (pypinyin ``Style.TONE3``, default options) of normalised text."""
    from pypinyin import Style, pinyin

    normalized = normalize_zh(text)
    return [s[0] for s in pinyin(normalized, style=Style.TONE3)] if normalized else []


def per_counts(ref_text: str, hyp_text: str) -> tuple[int, int]:
    """Mandarin (distance, reference length) in pinyin syllables: ``ref_text`` is the text reply,
    ``hyp_text`` the transcript of the spoken reply."""
    ref, hyp = pinyin_syllables(ref_text), pinyin_syllables(hyp_text)
    return edit_distance(ref, hyp), len(ref)


def error_rate(counts: tuple[int, int]) -> float:
    """Per-item rate dist/len; an empty reference counts 0.0 as in the official scripts."""
    dist, length = counts
    return dist / length if length else 0.0


def han_count(text: str) -> int:
    """Number of Han characters."""
    return len(HAN.findall(text))


def word_count(text: str) -> int:
    """Number of whitespace-separated words."""
    return len(text.split())

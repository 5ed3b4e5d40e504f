"""Text normalisers and error counts used by the scorers (docs/scoring.md, "Acoustic quality").

English: the official pre-cleaning, Whisper's English normaliser exactly as the official scoring
runs it, the ordinal rule for ASR transcripts, word edit distance with jiwer. Mandarin: Arabic
numbers read out in Chinese the way the official scoring reads them (or, as a variant, the
corrected cn2an reading), non-Han characters dropped, pinyin syllables with tone numbers,
syllable edit distance. All functions are pure; the heavy normaliser objects are built once.
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache
from typing import Literal

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
# ordinal words first…twentieth, and every numeric ordinal (1st, 21st, 102nd…), as the official code
_ORDINAL = re.compile(r"\b(?:(" + "|".join(sorted(ORDINALS, key=len, reverse=True)) + r")|(\d+)(?:st|nd|rd|th))\b[,.]?",
                      re.IGNORECASE)
# whisper-normalizer's contractions that the official (openai-whisper) normaliser does not have
_PACKAGE_ONLY_REPLACERS = (r"\bkinda\b", r"\bsorta\b", r"\bdunno\b", r"\bcause\b")


# -- English ---------------------------------------------------------------------------------
@cache
def _english_normalizer():  # type: ignore[no-untyped-def]
    """Whisper's English text normaliser as openai-whisper runs it, built from the
    whisper-normalizer package's parts: the package adds four contractions (kinda, sorta, dunno,
    cause) and leaves out the step that joins currency symbols and "%" to their numbers, which
    changed 96 of the 7,800 llama-omni texts; both are put back as the official code has them."""
    from whisper_normalizer.basic import remove_symbols_and_diacritics
    from whisper_normalizer.english import EnglishTextNormalizer

    class OfficialEnglishNormalizer(EnglishTextNormalizer):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            for pattern in _PACKAGE_ONLY_REPLACERS:
                del self.replacers[pattern]

        def __call__(self, s: str) -> str:
            s = s.lower()
            s = re.sub(r"[<\[][^>\]]*[>\]]", "", s)  # bracketed words
            s = re.sub(r"\(([^)]+?)\)", "", s)  # parenthesised words
            s = re.sub(self.ignore_patterns, "", s)  # hesitations
            s = re.sub(r"\s+'", "'", s)
            for pattern, replacement in self.replacers.items():
                s = re.sub(pattern, replacement, s)
            s = re.sub(r"(\d),(\d)", r"\1\2", s)  # 1,000 -> 1000
            s = re.sub(r"\.([^0-9]|$)", r" \1", s)  # periods that end no number
            s = remove_symbols_and_diacritics(s, keep=".%$¢€£")
            s = self.standardize_numbers(s)
            s = self.standardize_spellings(s)
            s = re.sub(r"([$¢€£])\s+([0-9])", r"\1\2", s)  # "$ 5" -> "$5" (missing in the package)
            s = re.sub(r"([0-9])\s+%", r"\1%", s)  # "5 %" -> "5%" (missing in the package)
            s = re.sub(r"[.$¢€£]([^0-9])", r" \1", s)  # symbols with no number beside them
            s = re.sub(r"([^0-9])%", r"\1 ", s)
            return re.sub(r"\s+", " ", s)

    return OfficialEnglishNormalizer()


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
    """Ordinal words first…twentieth and every numeric ordinal (optionally followed by "," or
    ".") become the number followed by a period: "second" -> "2.", "3rd," -> "3.", "21st" -> "21."."""
    return _ORDINAL.sub(lambda m: f"{ORDINALS[m.group(1).lower()] if m.group(1) else m.group(2)}.", text)


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


def repeat_words(text: str) -> list[str]:
    """Words as the official instruction-following scripts (v1 ``read_score_instruction.py``, v2
    ``instruction_full.py``) count them: lower case, Whisper's English normaliser, punctuation-only
    tokens dropped; no pre-cleaning and no ordinal rule."""
    return _drop_punctuation_tokens(str(_english_normalizer()(text.lower())).lower().split())


def repeat_wer_counts(text: str, hyp: str) -> tuple[int, int]:
    """English (distance, reference length) of a paralinguistic item's text reply against the
    transcript of its speech, as the official v2 ``instruction_full.py`` computes it: the
    transcript as its ASR script stores it (pre-cleaned and normalised), then both sides by
    :func:`repeat_words`."""
    r = repeat_words(text)
    return edit_distance(r, repeat_words(str(_english_normalizer()(pre_clean(hyp))))), len(r)


# -- Mandarin --------------------------------------------------------------------------------
ZhReading = Literal["official", "cn2an"]
# place units by position from the right: 个 十 百 千 万 十万 百万 千万 亿 十亿 百亿 千亿
_UNITS = ("", "十", "百", "千", "万", "十", "百", "千", "亿", "十", "百", "千")


def _official_integer_reading(digits: str) -> str:
    """An integer read the way the official per.py reads it: place units up to 千亿 (none past
    12 digits), one 零 for a run of inner zeros (and after a zero 万/亿 place), trailing zeros
    silent, and its inverted "一十" rule: a leading 1 on a 十 place is written 一 without its unit,
    so 15 -> 一五, 10 -> 一, 100000 -> 一零 (while 25 -> 二十五, 115 -> 一百一十五)."""
    if digits == "0":
        return "零"
    out = ""
    n = len(digits)
    for i, d in enumerate(digits):
        value, unit = int(d), _UNITS[n - i - 1] if n - i - 1 < len(_UNITS) else ""
        if value == 0:
            inner = i < n - 1 and (digits[i + 1] != "0" or unit in ("万", "亿"))
            if inner and not out.endswith("零"):
                out += "零"
            continue
        out += _DIGITS[value]
        if unit and not (value == 1 and unit == "十" and i == 0 and n > 1):
            out += unit
    return out


def _cn2an_integer_reading(digits: str) -> str:
    import cn2an

    try:
        return str(cn2an.an2cn(digits, "low"))
    except ValueError:  # beyond cn2an's 16 digits: read digit by digit
        return "".join(_DIGITS[int(d)] for d in digits)


def read_number(number: str, reading: ZhReading = "official") -> str:
    """An Arabic number (optional minus, integer or decimal) read out in Chinese, decimals digit
    by digit after 点. ``official`` reproduces the official scoring (15 -> 一五); ``cn2an`` is the
    corrected reading of ``cn2an.an2cn(x, "low")`` (15 -> 十五, 105 -> 一百零五)."""
    sign = "负" if number.startswith("-") else ""
    integer, _, decimals = number.lstrip("-").partition(".")
    out = sign + (_official_integer_reading if reading == "official" else _cn2an_integer_reading)(integer)
    if decimals:
        out += "点" + "".join(_DIGITS[int(d)] for d in decimals)
    return out


def normalize_zh(text: str, reading: ZhReading = "official") -> str:
    """Numbers read out in Chinese, then every non-Han character removed."""
    return NON_HAN.sub("", _NUMBER.sub(lambda m: read_number(m.group(0), reading), text))


def pinyin_syllables(text: str, reading: ZhReading = "official") -> list[str]:
    """Pinyin with tone numbers (pypinyin ``Style.TONE3``, default options) of normalised text."""
    from pypinyin import Style, pinyin

    normalized = normalize_zh(text, reading)
    return [s[0] for s in pinyin(normalized, style=Style.TONE3)] if normalized else []


def per_counts(ref_text: str, hyp_text: str, reading: ZhReading = "official") -> tuple[int, int]:
    """Mandarin (distance, reference length) in pinyin syllables: ``ref_text`` is the text reply,
    ``hyp_text`` the transcript of the spoken reply."""
    ref, hyp = pinyin_syllables(ref_text, reading), pinyin_syllables(hyp_text, reading)
    return edit_distance(ref, hyp), len(ref)


def clarity_counts(lang: str, text: str, hyp: str) -> dict[str, int]:
    """Clarity counts of one reply against its transcript: ``dist`` and ``len`` (en words, zh
    pinyin syllables under the official number reading), and for zh ``dist_cn2an``/``len_cn2an``
    under the corrected reading."""
    if lang == "en":
        dist, length = wer_counts(text, hyp)
        return {"dist": dist, "len": length}
    dist, length = per_counts(text, hyp)
    dist_c, length_c = per_counts(text, hyp, "cn2an")
    return {"dist": dist, "len": length, "dist_cn2an": dist_c, "len_cn2an": length_c}


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

"""Round-trip verification: compare the ASR transcript of a synthesised query with its text.

- English: word error rate after the clarity normaliser (Whisper English normaliser).
- Mandarin: character error rate over Han characters after reading numbers out and converting
  Traditional to Simplified; ``homophones=True`` compares toneless pinyin per character instead,
  so a transcript that wrote a homophone (的/得, 哪/那) is not counted as a mistake.
- Mixed (code-switched): tokens are Han characters plus lower-cased Latin words and digits.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from vocalbench.text import edit_distance, en_words, normalize_zh

_MIXED = re.compile(r"[\u4e00-\u9fff]|[a-z0-9]+(?:'[a-z]+)?")


@dataclass(frozen=True)
class Check:
    """Result of one comparison."""

    metric: str  # wer | cer | cer_pinyin | mer
    errors: int
    length: int

    @property
    def rate(self) -> float:
        return self.errors / self.length if self.length else (0.0 if self.errors == 0 else 1.0)


def _simplified(text: str) -> str:
    from vocalbench.components.asr import to_simplified

    return to_simplified(text)


def zh_chars(text: str) -> list[str]:
    """Han characters, numbers read the correct way (15 -> 十五, as an ASR writes them out)."""
    return list(normalize_zh(_simplified(text), "cn2an"))


def _toneless(chars: list[str]) -> list[str]:
    from pypinyin import Style, lazy_pinyin

    return lazy_pinyin("".join(chars), style=Style.NORMAL) if chars else []


def mixed_tokens(text: str) -> list[str]:
    """Han characters and Latin words/digits, lower case, of Simplified text."""
    return _MIXED.findall(_simplified(text).lower())


def compare(reference: str, transcript: str, mode: str, homophones: bool = False) -> Check:
    """Error counts of ``transcript`` against ``reference`` under ``mode`` (en | zh | mixed)."""
    if mode == "en":
        ref, hyp = en_words(reference), en_words(transcript, hyp=False)
        return Check("wer", edit_distance(ref, hyp), len(ref))
    if mode == "zh":
        ref, hyp = zh_chars(reference), zh_chars(transcript)
        if homophones:
            return Check("cer_pinyin", edit_distance(_toneless(ref), _toneless(hyp)), len(ref))
        return Check("cer", edit_distance(ref, hyp), len(ref))
    if mode == "mixed":
        ref, hyp = mixed_tokens(reference), mixed_tokens(transcript)
        return Check("mer", edit_distance(ref, hyp), len(ref))
    raise ValueError(f"unknown comparison mode {mode!r} (en, zh or mixed)")

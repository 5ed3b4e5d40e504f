"""Repeat coverage: does the reply contain the complete sentence the user asked to be repeated?

The official criterion allows a very few word errors and additional explanations, so the measure
is the edit distance of the sentence to the reply's best-matching stretch (words in English,
characters in Mandarin), as a share of the sentence: ``coverage = 1 - distance / length``.
Anything said before or after that stretch costs nothing. A near-complete stretch settles yes,
a stretch that misses most of the sentence settles no; the middle is left to the judge.
"""

from __future__ import annotations

from collections.abc import Mapping

from vocalbench.components.rubric import Evidence
from vocalbench.scoring.graders import found, grader
from vocalbench.scoring.graders.tokens import is_zh, semi_global_distance, units

COMPLETE = 0.85  # coverage at or above: the sentence is there (a few word errors at most)
MISSING = 0.5  # coverage at or below: most of the sentence is missing


def coverage(sentence: str, reply: str, lang: str) -> float:
    """1 - (edit distance of the sentence to its best stretch of the reply) / sentence length."""
    want, got = units(sentence, lang), units(reply, lang)
    if not want:
        return 0.0
    return max(0.0, 1.0 - semi_global_distance(want, got) / len(want))


@grader("instruction_repeat_en", "instruction_repeat_zh", version="1")
def repeat_coverage(fields: Mapping[str, str], meta: Mapping[str, str]) -> Evidence:
    sentence, reply = fields.get("sentence", ""), fields.get("reply", "")
    lang = "zh" if is_zh(sentence) else "en"
    cov = coverage(sentence, reply, lang)
    extra = max(0, len(units(reply, lang)) - len(units(sentence, lang))) / max(1, len(units(sentence, lang)))
    verdict = 1.0 if cov >= COMPLETE else 0.0 if cov <= MISSING else None
    return found(verdict, f"coverage {cov:.2f}", coverage=round(cov, 4), extra=round(min(extra, 5.0), 4))

"""Reference and alias matching for the knowledge families the judge decides.

The scorer has already tried the official rule (the reference verbatim in the reply); these items
missed it. Many misses are the same answer written differently: Traditional characters, full-width
letters, punctuation or title marks (《》), spacing, Arabic against Chinese numerals, letter case,
a person's name without its ``·``. Such a normalised match settles yes. Otherwise the features say
how close the reply comes: the share of the reference's characters (or English words) it contains
in order, and of its pinyin syllables (a homophone written with other characters).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache

from vocalbench.components.rubric import Evidence
from vocalbench.scoring.graders import found, grader
from vocalbench.scoring.graders.tokens import en_tokens, numbers, zh_chars

_NOT_HAN_OR_ALNUM = re.compile(r"[^\u4e00-\u9fffa-z0-9]")


@cache
def _pinyin():  # type: ignore[no-untyped-def]
    from pypinyin import lazy_pinyin

    return lazy_pinyin


def normalised(text: str) -> str:
    """Simplified, lower case, Han characters, letters and digits only."""
    return _NOT_HAN_OR_ALNUM.sub("", "".join(zh_chars(text)))


def _lcs(a: str, b: str) -> int:
    prev = [0] * (len(b) + 1)
    for ca in a:
        cur = [0]
        for j, cb in enumerate(b):
            cur.append(prev[j] + 1 if ca == cb else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]


def closeness(reference: str, reply: str) -> dict[str, float]:
    ref, rep = normalised(reference), normalised(reply)
    if not ref:
        return {"char_recall": 0.0, "pinyin_recall": 0.0}
    py = _pinyin()
    ref_py, rep_py = py(ref), set(py(rep))
    out = {"char_recall": round(_lcs(ref, rep) / len(ref), 4),
           "pinyin_recall": round(sum(s in rep_py for s in ref_py) / len(ref_py), 4)}
    words = [w for w in en_tokens(reference) if w.isalpha()]
    if words:
        got = set(en_tokens(reply))
        out["word_recall"] = round(sum(w in got for w in words) / len(words), 4)
    ref_numbers = numbers(reference, "zh")
    if ref_numbers:
        out["number_present"] = float(any(n in numbers(reply, "zh") for n in ref_numbers))
    return out


def match(references: list[str], reply: str) -> Evidence:
    rep = normalised(reply)
    for ref in references:
        norm = normalised(ref)
        parts = [normalised(p) for p in re.split(r"[·•・]", ref) if len(normalised(p)) >= 2]
        if norm and (norm in rep or (len(parts) > 1 and any(p in rep for p in parts))):
            return found(1.0, f"normalised {ref!r} in the reply", char_recall=1.0, pinyin_recall=1.0)
    best = max((closeness(ref, reply) for ref in references if ref), key=lambda c: c["char_recall"],
               default={"char_recall": 0.0, "pinyin_recall": 0.0})
    return found(None, f"char recall {best['char_recall']:.2f}", **best)


@grader("knowledge_zh", "cs_knowledge_en", version="1")
def reference_match(fields: Mapping[str, str], meta: Mapping[str, str]) -> Evidence:
    return match([fields.get("reference", "")], fields.get("reply", ""))


@grader("cs_knowledge_zh", version="1")
def bilingual_match(fields: Mapping[str, str], meta: Mapping[str, str]) -> Evidence:
    return match([fields.get("answer_zh", ""), fields.get("answer_en", "")], fields.get("reply", ""))

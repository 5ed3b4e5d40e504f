"""Checkable instruction types: what can be counted or looked up in the reply.

The instruction's type comes from the scorer (``meta["type"]``: the official Sub-category, or the
Category where there is none; zh 900-999 "Mandarin specific"). Per type:

- Spoken format: LaTeX, formulas, markdown, tables or code in the reply break it (settles no);
- Num: the number of items asked for ("three tips", "五个建议") against the items the reply
  enumerates (first/second…, 1./2., 一、二、, 首先/其次/最后): a clear count settles;
- Keywords: quoted words the reply must contain or must not contain;
- Constrain: a quoted phrase the reply must start or end with, or a word it must repeat N times;
- every type: whether the reply is in the instruction's language and how long it is.

Types whose criterion is about style, situation or order (Speaker tune, Speaking style,
Situation, Format, Topic change, Conditional, Progressive, Instruction, Mandarin specific) get the
features only; the judge decides them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from vocalbench.components.rubric import Evidence
from vocalbench.scoring.graders import found, grader
from vocalbench.scoring.graders.tokens import is_zh, numbers, units

MARKUP = re.compile(r"\$[^$]+\$|\\(?:frac|sqrt|times|cdot|begin|left|right|sum|int)|\*\*|^#{1,6}\s|^\s*[-*•]\s+|"
                    r"\|\s*[-:]+\s*\||```|[=^]\s*\d+\s*[+\-*/^]|\d\s*[+\-*/^×÷]\s*\d\s*=", re.MULTILINE)
EN_COUNTS = {w: i for i, w in enumerate("zero one two three four five six seven eight nine ten".split())}
ZH_COUNTS = {c: i for i, c in enumerate("零一二三四五六七八九十")} | {"两": 2}
EN_ITEM = re.compile(r"\b(first(?:ly)?|second(?:ly)?|third(?:ly)?|fourth|fifth|sixth|seventh|eighth|ninth|tenth|"
                     r"next|another|also|lastly|finally)\b|(?:^|\s)\d+[.)]\s", re.IGNORECASE)
ZH_ITEM = re.compile(r"第[一二三四五六七八九十\d]+|首先|其次|再次|然后|最后|[一二三四五六七八九十]、|\d+[.、)]")
QUOTED = re.compile(r"[\"“'‘「『]([^\"”'’」』]{1,40})[\"”'’」』]")


def asked_count(question: str, zh: bool) -> int | None:
    """The number of items the instruction asks for, when it says one."""
    if zh:
        m = re.search(r"([一二两三四五六七八九十\d]+)\s*(?:个|条|种|点|句|首|项|件|样|位|本|部|道|步)", question)
        if not m:
            return None
        word = m.group(1)
        return int(word) if word.isdigit() else ZH_COUNTS.get(word[-1]) if len(word) == 1 else None
    m = re.search(r"\b(two|three|four|five|six|seven|eight|nine|ten|\d+)\s+(?:\w+\s+){0,2}?(?:tips|ways|items|ideas|"
                  r"examples|reasons|suggestions|steps|things|points|words|sentences|questions|facts|benefits|"
                  r"methods|strategies|places|books|names|activities|foods|types|kinds|options|recommendations)",
                  question, re.IGNORECASE)
    if not m:
        return None
    word = m.group(1).lower()
    return int(word) if word.isdigit() else EN_COUNTS.get(word)


def enumerated(reply: str, zh: bool) -> int:
    """How many items the reply marks as a list (0 when it marks none)."""
    return len((ZH_ITEM if zh else EN_ITEM).findall(reply))


@grader("instruction_en", "instruction_zh", version="1")
def checkable(fields: Mapping[str, str], meta: Mapping[str, str]) -> Evidence:
    question, reply = fields.get("question", ""), fields.get("reply", "")
    zh = is_zh(question)
    kind = meta.get("type", "")
    lang = "zh" if zh else "en"
    feats: dict[str, float] = {
        "same_language": float(is_zh(reply) == zh) if reply.strip() else 0.0,
        "length": round(min(len(units(reply, lang)) / (200.0 if zh else 120.0), 3.0), 4),
        "markup": float(bool(MARKUP.search(reply))),
    }
    if kind == "Spoken format":
        return found(0.0 if feats["markup"] else None, "markup or formula" if feats["markup"] else "", **feats)
    if kind == "Num":
        want = asked_count(question, zh)
        got = enumerated(reply, zh)
        if want is not None:
            feats["count_match"] = float(got == want)
            feats["count_off"] = float(min(abs(got - want), 5)) if got else 5.0
        return found(None, f"asked {want}, enumerated {got}", **feats)
    if kind in ("Keywords", "Constrain"):
        quoted = [q.strip() for q in QUOTED.findall(question) if q.strip()]
        if quoted:
            low = reply.lower()
            feats["quoted_present"] = round(sum(q.lower() in low for q in quoted) / len(quoted), 4)
        nums = numbers(question, lang)
        feats["asks_count"] = float(bool(nums))
        return found(None, f"{len(quoted)} quoted", **feats)
    return found(None, "", **feats)

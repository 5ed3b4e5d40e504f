"""Answer extraction: is the result in the reply the reference's result?

For reasoning items with a reference answer and the turns of multi-round dialogues, the reference
is read as one of four kinds of answer, the reply's answer of the same kind is extracted, and the
two are compared:

- **option**: the question lists choices ("... at a school, at a stadium, or at a rest area?",
  "是在A、B还是C？"); the answer is the one choice the text names;
- **polarity**: the question asks yes or no ("Is the inference correct ...?", "能不能推断", "是否");
  the answer is the text's first yes/no-like statement;
- **number**: the reference states a final number ("答案是13", "... forty-five minutes"); the reply's
  answer is the number after "answer is"/"答案是", else its last number;
- **span**: anything else: the reference's key words (those not already in the question).

A clear match or mismatch settles the item; otherwise the features (key-word recall, whether the
reference number occurs at all, how many choices the reply names) go to the fitted rule.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from vocalbench.components.rubric import Evidence
from vocalbench.scoring.graders import found, grader
from vocalbench.scoring.graders.tokens import content_words, is_zh, numbers, recall, units

_EN_POLARITY_Q = re.compile(r"\b(is|are|does|do|can|could|was|were|will|would|should|has|have)\b[^?]*\?\s*$",
                            re.IGNORECASE)
_ZH_POLARITY_Q = re.compile(r"是否|能不能|能否|可不可以|对不对|是不是|有没有|吗[？?]?\s*$")
_EN_NEG = re.compile(r"\b(no|not|incorrect|wrong|invalid|flawed|unsupported|isn't|aren't|doesn't|don't|cannot|"
                     r"can't|false|fallacy|weak|poorly|unjustified|hasty|insufficient)\b", re.IGNORECASE)
_EN_POS = re.compile(r"\b(yes|correct|valid|well[- ]supported|true|sound|justified|reasonable|follows)\b",
                     re.IGNORECASE)
_ZH_NEG = re.compile(r"不正确|不能|不可以|不成立|错误|不合理|不存在|不可能|没有充分|不是|否|无法|不对|谬误|不充分")
_ZH_POS = re.compile(r"正确|能推断|可以推断|成立|合理|存在|可能|是的|对的|可以")
_ANSWER_IS = re.compile(r"(?:answer is|answer would be|the result is|comes to|total of|答案是|答案为|结果是|等于|一共|总共)"
                        r"\s*[:：]?\s*(-?\d+(?:\.\d+)?)", re.IGNORECASE)
_SPLIT_OPTIONS = re.compile(r",\s*(?:or\s+)?|\s+or\s+|、|，|或者|还是|或")


@dataclass(frozen=True)
class Answer:
    kind: str  # option | polarity | number | span
    value: object


def _options(question: str, zh: bool) -> list[str]:
    """The choices a question lists, if it lists any (its last clause, split at commas and "or")."""
    tail = re.split(r"[?？]", question.strip().rstrip("?？"))[-1] if zh else question.strip()
    if zh:
        m = re.search(r"(?:是在|是|在)?([^，。？?]*(?:、|还是|或者)[^，。？?]*)[？?]?\s*$", question.strip())
        if not m:
            return []
        tail = m.group(1)
    else:
        m = re.search(r"([^?.:]*\bor\b[^?.]*)\?\s*$", question)
        if not m:
            return []
        tail = m.group(1)
    parts = [p.strip(" ,.。？?") for p in _SPLIT_OPTIONS.split(tail) if p.strip(" ,.。？?")]
    if zh:
        parts = [re.sub(r"^(是|在|是在)", "", p) for p in parts]
    else:
        parts = [re.sub(r"^.*\b(?:in|at|on|with|by|to|from|a|an|the)\s+", "", p) if len(p.split()) > 4 else p
                 for p in parts]
    return parts if 2 <= len(parts) <= 6 else []


def _named_options(text: str, options: list[str], lang: str) -> list[int]:
    """Indices of the options a text names (by all of an option's content words)."""
    got = set(content_words(text, lang)) if lang == "en" else "".join(units(text, lang))
    hits = []
    for i, opt in enumerate(options):
        if lang == "en":
            words = content_words(opt, lang)
            if words and all(w in got for w in words):
                hits.append(i)
        elif "".join(units(opt, lang)) and "".join(units(opt, lang)) in got:  # type: ignore[operator]
            hits.append(i)
    return hits


def _polarity(text: str, zh: bool) -> bool | None:
    """The first clear yes/no the text states (its first sentence decides)."""
    first = re.split(r"[.!?。！？;；]", text.strip(), maxsplit=1)[0]
    neg, pos = (_ZH_NEG, _ZH_POS) if zh else (_EN_NEG, _EN_POS)
    if neg.search(first):
        return False
    if pos.search(first):
        return True
    return None


def reference_answer(question: str, reference: str, lang: str) -> Answer:
    zh = lang == "zh"
    options = _options(question, zh)
    if options:
        named = _named_options(reference, options, lang)
        if len(named) == 1:
            return Answer("option", (options, named[0]))
    if (_ZH_POLARITY_Q if zh else _EN_POLARITY_Q).search(question.strip()):
        pol = _polarity(reference, zh)
        if pol is not None:
            return Answer("polarity", pol)
    stated = _ANSWER_IS.search(reference)
    if stated:
        return Answer("number", float(stated.group(1)))
    ref_numbers = numbers(reference, lang)
    if ref_numbers and numbers(question, lang):
        return Answer("number", ref_numbers[-1])
    key = [w for w in content_words(reference, lang) if w not in set(content_words(question, lang))]
    return Answer("span", key or content_words(reference, lang))


def reply_number(reply: str, lang: str) -> float | None:
    stated = _ANSWER_IS.search(reply)
    if stated:
        return float(stated.group(1))
    found_numbers = numbers(reply, lang)
    return found_numbers[-1] if found_numbers else None


def compare(question: str, reference: str, reply: str, lang: str) -> Evidence:
    """The evidence of one item: settled on a clear match or mismatch, else features."""
    ref = reference_answer(question, reference, lang)
    span_recall = recall(content_words(reference, lang), content_words(reply, lang))
    feats = {"ref_recall": round(span_recall, 4)}
    if ref.kind == "option":
        options, want = ref.value  # type: ignore[misc]
        named = _named_options(reply, options, lang)
        feats.update(option_named=float(want in named), options_named=float(len(named)))
        if len(named) == 1:
            return found(float(named[0] == want), f"option {options[named[0]]!r} vs {options[want]!r}", **feats)
        return found(None, f"{len(named)} options named", **feats)
    if ref.kind == "polarity":
        pol = _polarity(reply, lang == "zh")
        feats.update(polarity_match=float(pol == ref.value) if pol is not None else 0.5)
        if pol is not None:
            return found(float(pol == ref.value), f"polarity {pol} vs {ref.value}", **feats)
        return found(None, "no clear yes/no", **feats)
    if ref.kind == "number":
        want_n = float(ref.value)  # type: ignore[arg-type]
        got = reply_number(reply, lang)
        present = any(abs(x - want_n) < 1e-6 for x in numbers(reply, lang))
        feats.update(number_match=float(got is not None and abs(got - want_n) < 1e-6), number_present=float(present))
        if got is None:
            return found(None, "no number in the reply", **feats)
        if abs(got - want_n) < 1e-6:
            return found(1.0, f"number {got:g}", **feats)
        return found(None if present else 0.0, f"number {got:g} vs {want_n:g}", **feats)
    key = list(ref.value)  # type: ignore[call-overload]
    key_recall = recall(key, content_words(reply, lang))
    feats.update(key_recall=round(key_recall, 4))
    return found(None, f"key-word recall {key_recall:.2f}", **feats)


@grader("reasoning_binary_en", "reasoning_binary_zh", "multi_round_binary_en", "multi_round_binary_zh", version="1")
def answer_match(fields: Mapping[str, str], meta: Mapping[str, str]) -> Evidence:
    question, reference, reply = fields.get("question", ""), fields.get("reference", ""), fields.get("reply", "")
    lang = "zh" if is_zh(question + reference) else "en"
    return compare(question, reference, reply, lang)

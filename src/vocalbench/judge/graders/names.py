"""Reference and alias matching for the knowledge families the judge decides.

The scorer has already tried the official rule (the reference verbatim in the reply); these items
missed it. Some misses are the same answer written differently, and settle yes:

- the normalised reference in the reply: Traditional characters, full-width letters, punctuation or
  title marks (《》), spacing, letter case, a name without its ``·``;
- a reference number said another way ("一九四五年七月十六日" for "1945年7月16日", "五次" for "5次");
- a person's full name with a middle name between its parts ("William Turner Walton");
- a transliterated person's surname on its own ("尼克松" for "理查德·尼克松", when the question asks
  who): its given name alone does not count ("克莱格" for "克莱格·文特尔"), nor a surname that is
  part of another ``·`` name or already in the question.

Two settle no: a reference that is just a number (a year, "10年") when the reply gives other
numbers and never that one; and a reference the reply names only to deny it ("not at Goose Green",
"不是华盛顿"). Nothing else settles no: an answer that differs from the reference may
still be an alias of it ("刘基" for "刘伯温", "Plato" for "柏拉图"), which only the model can tell.
The features say how close the reply comes: the share of the reference's Han characters (or, for
an English reference, of its words, spelling variants too) it contains in order, of its words in
any order, how much of the reply is not already in the question (a reply that restates the
question names no answer), and whether it declines to answer.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import cache

from vocalbench.judge.graders.answers import words
from vocalbench.judge.graders.registry import found, grader
from vocalbench.judge.graders.tokens import NEGATORS_EN, STOPWORDS_EN, is_zh, numbers, zh_chars
from vocalbench.judge.rubrics.record import Evidence
from vocalbench.text import normalize_en

_NOT_HAN_OR_ALNUM = re.compile(r"[^\u4e00-\u9fffa-z0-9]")
_NAME_DOT = re.compile(r"[·•・‧]")
_WHO = re.compile(r"谁|哪位|哪一位|何人|什么人|哪个人|\bwho\b|\bwhom\b", re.I)
_NUMERAL = re.compile(r"[0-9０-９.,零〇一二两三四五六七八九十百千万亿点]")
_ZH_NUMERAL_RUN = re.compile(r"[零〇一二两三四五六七八九十百千万亿][零〇一二两三四五六七八九十百千万亿点]*")
_NEGATED = re.compile(r"(?:不是|并非|而非|不)$")
_UNIT_AFTER = re.compile(r"[年月日号次天岁级度倍]")
_UNIT = re.compile(r"[年月日号次天个岁级度倍元米克%％]|世纪|小时|分钟|公里|千米|千克|周年")
_DECLINE = re.compile(r"不乱说|不乱讲|不下结论|不随口|无法提供|无法回答|不太清楚|记不清|查一下|查查|搜一下|查阅|"
                      r"猜一猜|不确定|怕记混|\b(?:not sure|can't (?:say|recall|remember)|cannot (?:say|provide)|"
                      r"look it up|i don't know|rather not)\b", re.I)


@cache
def _t2s():  # type: ignore[no-untyped-def]
    from opencc import OpenCC

    return OpenCC("t2s")


def normalised(text: str) -> str:
    """Simplified, lower case, Han characters, letters and digits only."""
    return _NOT_HAN_OR_ALNUM.sub("", "".join(zh_chars(text)))


def _lcs(a: Sequence[str], b: Sequence[str]) -> int:
    prev = [0] * (len(b) + 1)
    for ca in a:
        cur = [0]
        for j, cb in enumerate(b):
            cur.append(prev[j] + 1 if ca == cb else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]


def _en(text: str) -> tuple[str, ...]:
    return words(text, "en")


def _words(text: str) -> list[str]:
    return [w for w in _en(text) if w.isalpha() and w not in STOPWORDS_EN]


def _lcs_share(ref: Sequence[str], reply: Sequence[str]) -> float:
    return round(_lcs(ref, reply) / len(ref), 4) if ref else 0.0


def closeness(reference: str, reply: str, question: str = "") -> dict[str, float]:
    """How close the reply comes to the reference: the share of its Han characters (a number's digits)
    the reply has in order, or for a reference in English, of its words that the question does not
    have (in order, and in any order; a spelling variant counts)."""
    if reference_number(reference):  # a year or an amount: its digits, not its unit (年)
        return {"char_recall": _lcs_share(digit_form(reference), digit_form(reply)[:400])}
    han = [c for c in normalised(reference) if "\u4e00" <= c <= "\u9fff"]
    if han:
        return {"char_recall": _lcs_share(han, normalised(reply)[:400])}
    asked = set(_words(question))
    words = [w for w in _words(reference) if w not in asked] or _words(reference)
    toks = _en(reply)[:400]
    spelled = [next((w for w in words if _spelled_alike(w, t)), t) for t in toks]
    return {"char_recall": _lcs_share(words, spelled),
            "word_recall": round(sum(w in set(spelled) for w in words) / len(words), 4) if words else 0.0}


def _spelled_alike(word: str, tok: str) -> bool:
    """The same word or a spelling variant of it ("Launcelot" for "Lancelot"): same first letter,
    one edit apart (two for words of eight letters or more)."""
    if word == tok:
        return True
    if len(word) < 5 or not tok or tok[0] != word[0] or abs(len(word) - len(tok)) > 2:
        return False
    return _edits(word, tok) <= (2 if len(word) >= 8 else 1)


def _edits(a: str, b: str) -> int:
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def reference_number(reference: str) -> list[float] | None:
    """The numbers of a reference that is nothing but numbers and units ("1947年", "10年", "5次",
    "1945年7月16日"); None for any other reference ("公元前376", "20世纪80年代" are not plain)."""
    rest = _UNIT.sub("", _NUMERAL.sub("", normalised(reference)))
    if rest or not reference.strip():
        return None
    found_numbers = numbers(reference, "zh")
    return found_numbers or None


def _cn_number(run: str) -> str | None:
    import cn2an

    try:
        value = cn2an.cn2an(run, "smart")
    except (ValueError, KeyError, IndexError, TypeError):
        return None
    return f"{value:g}" if isinstance(value, float) else str(value)


def _digit_run(run: str) -> str:
    """A Chinese numeral run in digits; one that runs into a unit ("七千千卡") without its last
    character; unchanged when it is no number."""
    for cut in (len(run), len(run) - 1):
        digits = _cn_number(run[:cut]) if cut else None
        if digits is not None:
            return digits + run[cut:]
    return run


def digit_form(text: str) -> str:
    """The text normalised, with its numbers in digits ("一九四五年七月十六日" -> "1945年7月16日"; a lone
    "一" before no unit stays, it is mostly an article: "一种")."""
    if not is_zh(text):
        return normalised(normalize_en(text))
    digits = normalised(_ZH_NUMERAL_RUN.sub(_digit_match, _t2s().convert(text)))
    return re.sub(r"(?<=\d)号", "日", digits)  # "七月二十六号" is "7月26日"


def _digit_match(m: re.Match[str]) -> str:
    lone_one = m.group(0) == "一" and not _UNIT_AFTER.match(m.string, m.end())
    return m.group(0) if lone_one else _digit_run(m.group(0))


def said_numbers(text: str) -> list[float]:
    """The numbers a text states (Chinese numeral runs read as by :func:`digit_form`)."""
    return [float(n) for n in re.findall(r"\d+(?:\.\d+)?", digit_form(text))]


def number_verdict(reference: str, reply: str, question: str) -> float | None:
    """1 when the reply, numbers in digits, contains the reference (its unit too: "五次" for "5次");
    0 when the reference is a single number and the reply states other new numbers but never it (nor
    a year's last two digits)."""
    want = reference_number(reference)
    if want is None:
        return None
    if re.search(rf"(?<![0-9.]){re.escape(digit_form(reference))}(?![0-9])", digit_form(reply)):
        return 1.0
    said, asked = said_numbers(reply), said_numbers(question)
    short_year = 1000 <= want[0] < 2100 and (want[0] % 100) in said  # "九七年" for 1997
    if len(set(want)) == 1 and any(n not in asked for n in said) and want[0] not in said and not short_year:
        return 0.0
    return None


def full_name_in_order(reference: str, reply: str, question: str) -> bool:
    """All the reference's words (two or more, none from the question) in order in the reply, with
    at most two words between them: a middle name ("William Turner Walton")."""
    name = [w for w in _en(reference) if w.isalpha()]
    if len(name) < 2 or set(name) & set(_en(question)):
        return False
    toks = _en(reply)
    for start, tok in enumerate(toks):
        if tok != name[0]:
            continue
        pos = start
        for w in name[1:]:
            nxt = next((j for j in range(pos + 1, min(pos + 4, len(toks))) if toks[j] == w), None)
            if nxt is None:
                break
            pos = nxt
        else:
            if not {"not", "no", "never", "nor"} & set(toks[max(0, start - 3):start]):
                return True
    return False


def surname_alone(reference: str, reply: str, question: str) -> bool:
    """The surname (last ``·`` part, two or more characters, not in the question) of the person the
    question asks for stands in the reply on its own: not as part of another ``·`` name, not just
    after a negation ("不是华盛顿")."""
    parts = [normalised(p) for p in _NAME_DOT.split(reference)]
    if len(parts) < 2 or not _WHO.search(question):
        return False
    surname = parts[-1]
    if len(surname) < 2 or surname in normalised(question):
        return False
    text = _t2s().convert(reply).lower()
    for m in re.finditer(re.escape(surname), text):
        before = text[max(0, m.start() - 4):m.start()]
        if not _NAME_DOT.search(before[-1:]) and not _NEGATED.search(before):
            return True
    return False


_CONTRAST = frozenset({"but", "rather", "instead", "actually"})
_CLAUSE = re.compile(r"[.;:!?,，。；：！？]")


def _negated_before(window: Sequence[str]) -> bool:
    """A negator among the words just before a name, with no "but" / "rather" after it ("not Lyon
    but Paris" names Paris)."""
    last = max((i for i, w in enumerate(window) if w in NEGATORS_EN), default=-1)
    return last >= 0 and not _CONTRAST & set(window[last + 1:])


def negated_only(reference: str, reply: str) -> bool:
    """The reply names the reference only just after a negation: "not at Goose Green", "was not
    composed by William Walton", "不是华盛顿" (a negator up to three words before it in its clause,
    or "不是 / 并非 / 不" just before it). Naming it once without one, or after a contrast ("not Lyon
    but Paris"), is naming it."""
    ref = _en(reference)
    if ref and not is_zh(reference):
        windows = [toks[max(0, i - 3):i] for clause in _CLAUSE.split(reply) if (toks := _en(clause))
                   for i in range(len(toks) - len(ref) + 1) if toks[i:i + len(ref)] == ref]
        return bool(windows) and all(_negated_before(w) for w in windows)
    name = _t2s().convert(_NAME_DOT.sub("", reference)).strip().lower()
    text = _t2s().convert(_NAME_DOT.sub("", reply)).lower()
    at = [m.start() for m in re.finditer(re.escape(name), text)] if name else []
    return bool(at) and all(_NEGATED.search(text[max(0, i - 4):i]) for i in at)


def features(refs: Sequence[str], reply: str, question: str) -> dict[str, float]:
    """char_recall (and word_recall for an English reference): the closest reference's; declines: 1
    when it will not say. Nothing that reads the reply without the reference: saying something new
    (the share of units the question does not have, a feature until issue 27) is no sign of saying
    the right thing, and made an answer to another question pass."""
    feats: dict[str, float] = {"char_recall": 0.0}
    for ref in refs:
        for name, value in closeness(ref, reply, question).items():
            feats[name] = max(feats.get(name, 0.0), value)
    feats["declines"] = float(bool(_DECLINE.search(reply)))
    return feats


def match(references: Sequence[str], reply: str, question: str = "") -> Evidence:
    """The evidence for a reply against its references (any one of them may match)."""
    refs = [r for r in references if r and r.strip()]
    feats = features(refs, reply, question)
    numeric = [v for ref in refs if (v := number_verdict(ref, reply, question)) is not None]
    if any(reference_number(ref) for ref in refs):
        feats["number_match"] = max(numeric) if numeric else 0.5
    rep = normalised(reply)
    named = [ref for ref in refs if normalised(ref) and normalised(ref) in rep and not reference_number(ref)]
    if named and all(negated_only(ref, reply) for ref in named):
        return found(0.0, "the reference named only to deny it", **feats)
    if named:
        return found(1.0, "the normalised reference in the reply", **feats)
    if numeric:
        return found(max(numeric), f"reference number {'stated' if max(numeric) else 'missing, others given'}",
                     **feats)
    if any(full_name_in_order(ref, reply, question) for ref in refs):
        return found(1.0, "full name with a middle name", **feats)
    if any(surname_alone(ref, reply, question) for ref in refs):
        return found(1.0, "the surname on its own", **feats)
    return found(None, f"char recall {feats['char_recall']:.2f}", **feats)


@grader("knowledge_zh", "cs_knowledge_en", version="4")
def reference_match(fields: Mapping[str, str], meta: Mapping[str, str]) -> Evidence:
    return match([fields.get("reference", "")], fields.get("reply", ""), fields.get("question", ""))


@grader("cs_knowledge_zh", version="4")
def bilingual_match(fields: Mapping[str, str], meta: Mapping[str, str]) -> Evidence:
    return match([fields.get("answer_zh", ""), fields.get("answer_en", "")], fields.get("reply", ""),
                 fields.get("question", ""))

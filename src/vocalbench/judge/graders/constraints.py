"""Checkable instructions: what the instruction asks for that can be counted or looked up in the reply.

The instruction's type comes from the scorer (``meta["type"]``: the official Sub-category, or the
Category where there is none; zh 900-999 "Mandarin specific"). The instruction is read for
requirements that are mechanical to check, whatever its type, each becoming a :class:`Check`:

- **keywords** to include or exclude ("include the keywords A, B and C", 排除关键词：甲、乙);
- **word counts**: a word that must appear (exactly / at least) N times;
- **position**: a quoted phrase the reply (or its first / last sentence) must begin or end with,
  a question it must open or close with;
- **item count** (Num): the number of items asked for ("three tips", 五个建议) against the items
  the reply enumerates or announces;
- **spoken format**: LaTeX, markdown, tables, code or written-out equations break it (Mandarin:
  a textbook register, 根据题意/据此/综上所述, probably does);
- **classical form** (Mandarin specific): 五言/七言 绝句 (4 lines) and 律诗 (8 lines);
- **language**: a reply in the language the instruction asks for.

Topic change items also get ``topic_shift``: how much more of the corrected request's words than of
the first request's the reply takes up.

A check's outcome is either *sure* (a required keyword or phrase occurs nowhere, an excluded one is
there, a count is off, markup is present; or all is exactly as asked) or only *probable* (the
phrase is there but not in place, only an inflected form is there). A sure failure of a check that
is the type's own criterion settles "not followed"; the types whose criterion is nothing but such
checks (Keywords, Num, English Spoken format) settle "followed" when every check surely passes.
Everything else (style, situation, order) gets the features only: the share of checks failed,
whether all passed, how much of the instruction's content the reply takes up (never its length).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

from vocalbench.judge.graders.registry import found, grader
from vocalbench.judge.graders.tokens import content_words, is_zh, recall
from vocalbench.judge.rubrics.record import Evidence


@dataclass(frozen=True)
class Check:
    kind: str  # keyword | count | position | items | markup | register | form | language
    ok: bool
    sure: bool = True  # the outcome is a mechanical certainty


EN_NUM = {w: i for i, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve".split())}
EN_NUM |= {"a single": 1, "once": 1, "twice": 2, "thrice": 3}
ZH_NUM = {c: i for i, c in enumerate("零一二三四五六七八九十")} | {"两": 2}
_EN_NUM = r"(\d+|a single|" + "|".join(w for w in EN_NUM if " " not in w and w != "zero") + r")"
_ZH_NUM = r"([\d一二两三四五六七八九十]+)"
_QUOTES = r"\"“”'‘’「」『』"
_QUOTED = re.compile(rf"[\"“‘「『']([^{_QUOTES}]{{1,60}})[\"”’」』']")

# spoken format: structure a spoken reply cannot have
MARKUP = re.compile(
    r"\$[^$\n]*[\\^_{}][^$\n]*\$|\\[(\[]|\\(?:frac|sqrt|times|cdot|div|begin|left|right|sum|int|text|pm)\b|"
    r"\*\*[^*\n]+\*\*|^#{1,6}\s|^\s*(?:[-*•]|\d+[.)])\s+\S|^\s*(?:step\s*\d+|第[一二三四五六七八九十\d]+步)\s*[:：.]|"
    r"\|\s*:?-{2,}|```|"
    r"\d\s*[+\-−*/×÷^]\s*\(?\d[\d.]*\)?\s*=|\d\s*[×÷]\s*\d|=\s*-?\d+(?:\.\d+)?\s*[+\-−*/×÷]\s*\d|"
    r"(?:^[^\n:：]{1,30}[:：][^\n]+\n){2}|\b[a-zA-Z]\s*=\s*[\d(a-zA-Z]|(?<![A-Za-z])[A-Za-z]\s*(?:等于|乘以?|除以)|"
    r"(?:^|\n|[。，])\s*(?:解|答)[:：]",
    re.MULTILINE | re.IGNORECASE)
# written (textbook) register in a Mandarin reply: probably not colloquial
ZH_WRITTEN = re.compile(r"根据题[意设目]|题设|据此|由此可得|综上所述|已知[^，。]{0,8}[，,]|设[^，。]{0,6}为|计算(?:过程)?如下|即为|"
                        r"答案[为是][:：]")

# item counts
_EN_ITEM_NOUN = (r"(?:tips?|ways?|items?|ideas?|examples?|reasons?|suggestions?|steps?|things?|points?|questions?|"
                 r"facts?|benefits?|methods?|strategies|strategy|places?|books?|names?|activities|activity|foods?|"
                 r"types?|kinds?|options?|recommendations?|exercises?|habits?|factors?|ingredients?|recipes?|"
                 r"techniques?|destinations?|games?|movies?|songs?|words?|sentences?|advantages?|disadvantages?|"
                 r"skills?|tools?|apps?|resources?|mistakes?|signs?|rules?|principles?|features?|characteristics?)")
EN_ASK = re.compile(rf"\b{_EN_NUM}\s+(?:[\w-]+\s+){{0,3}}?{_EN_ITEM_NOUN}\b", re.IGNORECASE)
ZH_ASK = re.compile(_ZH_NUM + r"\s*(?:个|条|种|点|句|首|项|件|样|位|本|部|道|步|招|类)[^，。？！,.?!]{0,6}?"
                    r"(?:建议|方法|策略|技巧|例子|原因|理由|方面|步骤|要点|选择|方式|办法|活动|地方|书|食物|习惯|点子|"
                    r"想法|因素|好处|特点|菜|运动|景点|问题|技能|工具|习俗|成语|诗|句子|词)")
EN_REQUEST = re.compile(r"\b(?:give|list|suggest|provide|name|share|recommend|offer|tell|need|want|write|describe)\b"
                        r"(?:\s+(?:me|us))?\s+(?:\w+\s+)?$", re.IGNORECASE)
ZH_REQUEST = re.compile(r"(?:给我|列出|推荐|提供|举出?|说出|写出|告诉我|分享|给出)[^，。？！]{0,3}$")
EN_ORDINALS = "first second third fourth fifth sixth seventh eighth ninth tenth".split()
EN_ORDINAL = re.compile(r"(?:^|[.!?:;,]\s*|\n)\s*(?:and\s+)?(?:the\s+)?(" + "|".join(EN_ORDINALS) + r")(?:ly)?\b",
                        re.IGNORECASE)
EN_LAST = re.compile(r"\b(?:finally|lastly|last but not least)\b", re.IGNORECASE)
LIST_NUMBER = re.compile(r"(?:^|\n|[\s：:])\(?(\d{1,2})[.)、]\s*(?!\d)", re.MULTILINE)
ZH_ORDINAL = re.compile(r"第([一二三四五六七八九十])(?:[，、：:]|点|条|是|(?:步|个|种)[，、：:])|"
                        r"(?:^|[，。；：\s])([一二三四五六七八九十])(?:是|、|，|：)")
ZH_CHAIN = re.compile(r"首先|其次|再次|再者|最后")
EN_ANNOUNCE = re.compile(rf"\b{_EN_NUM}\s+(?!of\b)(?:[\w-]+\s+)?{_EN_ITEM_NOUN}\b", re.IGNORECASE)
ZH_ANNOUNCE = re.compile(_ZH_NUM + r"\s*(?:个|条|种|点|项|件|样|招|类)[^，。？！,.?!]{0,2}?"
                         r"(?:建议|方法|策略|技巧|例子|原因|理由|方面|步骤|要点|选择|方式|办法|点子|想法|因素|好处|特点)")

# keywords, word counts, positions
EN_KEYWORD_CUE = re.compile(
    r"\b(?P<neg>exclud\w*|avoid\w*|(?:do not|don't|never|not|without) (?:use|using|include|including|mention\w*|"
    r"contain\w*)|without|refrain from using)\b|\b(?P<pos>includ\w*|us(?:e|ing)|contain\w*|mention\w*|incorporat\w*)\b|"
    r"(?P<stop>[.!?](?:\s|$))", re.IGNORECASE)
EN_KEYWORD_HEAD = re.compile(r"\b(?:the\s+)?(?:following\s+)?(?:key\s?words?|words?|terms?|phrases?)\b\s*:?",
                             re.IGNORECASE)
ZH_KEYWORD_HEAD = re.compile(r"关键词|关键字|词语|词汇|字眼|这些词|这个词|以下词")
ZH_KEYWORD_NEG = re.compile(r"排除|不要(?:使用|出现|用|包含)|请勿(?:使用|出现)|不能(?:使用|出现)|不得(?:使用|出现)|"
                            r"避免(?:使用|出现)|禁止|别(?:用|使用)")
ZH_KEYWORD_LIST = re.compile(r"(?:关键词|关键字|词语|词汇|以下词)[^：:，,。]{0,4}?[：:]?\s*([^。；！？\n]+)|"
                             r"(?:包含|包括|加入|使用|用|出现|排除)([^，。；]+?)(?:这些|这几个|等)(?:关键)?词")
EN_TIMES = re.compile(
    rf"\b(?:key\s?)?word\s+[{_QUOTES}]?([\w'-]+(?: [\w'-]+)?)[{_QUOTES}]?,?\s+(?:\w+\s+){{0,3}}?"
    rf"(?:appear|be used|occur|be mentioned|be repeated|be included)\w*\s+"
    rf"(exactly\s+|at least\s+|at most\s+|no more than\s+|no less than\s+|only\s+)?{_EN_NUM}(?:\s+times?)?\b|"
    rf"\buse (?:the (?:key\s?)?word\s+)?[{_QUOTES}]([\w' -]+)[{_QUOTES}]\s+"
    rf"(exactly\s+|at least\s+|at most\s+|only\s+)?{_EN_NUM}\s+times?\b", re.IGNORECASE)
ZH_TIMES = re.compile(rf"[“\"‘「]([^”\"’」]{{1,12}})[”\"’」][^，。；]{{0,10}}?(恰好|正好|刚好|只|至少|至多|最多|不少于|不超过)?出现"
                      rf"{_ZH_NUM}次")
_EN_SCOPE = r"\b(?P<scope>first sentence|last sentence|final sentence|response|answer|reply|story|poem|it|" \
            r"each sentence|every sentence|all sentences|each line|every line)\b[^.]{0,40}?\b"
_EN_PHRASE = rf"\s+with\s+(?:the\s+(?:phrase|word|words)\s+)?[{_QUOTES}]([^{_QUOTES}]+)[{_QUOTES}]"
EN_BEGIN = re.compile(_EN_SCOPE + r"(?:begin|start)s?" + _EN_PHRASE, re.IGNORECASE)
EN_END = re.compile(_EN_SCOPE + r"ends?" + _EN_PHRASE, re.IGNORECASE)
_ZH_PHRASE = r"(每[一个]?句(?:话)?(?:都)?)?以[“\"‘「]([^”\"’」]{1,30})[”\"’」](?:这个词|这句话|这几个字)?"
ZH_BEGIN = re.compile(_ZH_PHRASE + r"(?:开头|开始|作为开头)")
ZH_END = re.compile(_ZH_PHRASE + r"(?:结尾|结束|收尾|作为结尾)")
EN_QUESTION_END = re.compile(r"\bend(?:s|ing)?\b[^.]{0,30}?\bwith\s+(?:a|an|another|one)\s+(?:\w+\s+){0,2}question",
                             re.IGNORECASE)
EN_QUESTION_BEGIN = re.compile(r"\b(?:begin|start)\w*\b[^.]{0,30}?\bwith\s+(?:a|an)\s+(?:\w+\s+){0,2}question",
                               re.IGNORECASE)
ZH_QUESTION_END = re.compile(r"(?:最后|结尾)[^。]{0,10}(?:提|问|加|抛出)[^。]{0,8}问题|以(?:一个)?(?:问题|问句)(?:结尾|结束)")
ZH_QUESTION_BEGIN = re.compile(r"以(?:一个)?(?:问题|问句)开头|开头[^。]{0,6}(?:提|问)[^。]{0,6}问题")
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])[\"”’」』)]*\s*|\n+")

# classical forms and the language asked for
ZH_FORM = re.compile(r"([五七])言(绝句|律诗)")
EN_ASKS_LANGUAGE = re.compile(r"\b(?:answer|respond|reply|write|speak)\w*\s+(?:\w+\s+){0,3}?(?:in|using)\s+"
                              r"(chinese|mandarin|english)\b|\btranslate\w*\b[^.]*\binto\s+(chinese|english)\b",
                              re.IGNORECASE)
ZH_ASKS_LANGUAGE = re.compile(r"用(英文|英语|中文|汉语|普通话)(?:回答|回复|写|说|表达|来)")

# which checks decide a type's own criterion (their sure failure settles "not followed")
DECIDES = {
    "Keywords": {"keyword"},
    "Constrain": {"count", "position", "keyword"},
    "Num": {"items"},
    "Spoken format": {"markup"},
    "Instruction": {"position"},
    "Format": {"position"},
    "Mandarin specific": {"form"},
}
# types whose criterion is nothing but their checks: every check passing settles "followed"
SETTLES_YES = {"Keywords": {"keyword"}, "Num": {"items"}}


def _num(word: str, zh: bool) -> int | None:
    word = word.strip().lower()
    if word.isdigit():
        return int(word)
    if zh:
        if len(word) == 1:
            return ZH_NUM.get(word)
        if len(word) == 2 and word[0] == "十":
            return 10 + ZH_NUM.get(word[1], 0)
        return None
    return EN_NUM.get(word)


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text.strip()) if s and s.strip()]


@lru_cache(maxsize=64)
def _norm(text: str) -> str:
    """Lower case, curly quotes and hyphens straightened, spaces collapsed (for phrase look-ups)."""
    text = text.lower().replace("’", "'").replace("‘", "'").replace("-", " ")
    return re.sub(r"\s+", " ", text)


@lru_cache(maxsize=256)
def _word_re(word: str, inflected: bool) -> re.Pattern[str]:
    """A word or phrase as whole words; ``inflected`` also takes any ending (plural, -ing...)."""
    body = r"\s+".join(re.escape(w) for w in _norm(word).split())
    return re.compile(r"\b" + body + (r"\w*" if inflected else r"(?:s|es)?") + r"\b")


def _contains(text: str, phrase: str, zh: bool, inflected: bool = False) -> int:
    """How many times the phrase occurs in the text (whole words in English)."""
    if zh:
        return text.count(phrase)
    return len(_word_re(phrase, inflected).findall(_norm(text)))


def _items(segment: str, zh: bool) -> list[str]:
    """The words of a keyword list: quoted ones, or else the list after "keywords"/"："."""
    quoted = [q.strip() for q in _QUOTED.findall(segment) if q.strip()]
    if quoted:
        return quoted
    if zh:
        m = ZH_KEYWORD_LIST.search(segment)
        if not m or not (m.group(1) or m.group(2)).strip():
            return []
        parts = re.split(r"[、，,]|以及|和|及|与|或", m.group(1) or m.group(2))
    else:
        m = EN_KEYWORD_HEAD.search(segment)
        if not m:
            return []
        tail = re.split(r"[;:]\s|\bin your\b|\bwhile\b", segment[m.end():], maxsplit=1)[0]
        parts = re.split(r",|\band\b|\bor\b", tail)
    out = [p.strip(" .，。:：" + _QUOTES) for p in parts]
    out = [re.sub(r"^(?:the|a|an)\s+", "", p) for p in out if p]
    return [p for p in out if p and len(p.split()) <= 3 and len(p) <= 30]


def keyword_lists(question: str, zh: bool) -> tuple[list[str], list[str]]:
    """(words the reply must include, words it must not) as the instruction lists them."""
    include: list[str] = []
    exclude: list[str] = []
    if zh:
        for clause in re.split(r"[。；！？\n]", question):
            if not ZH_KEYWORD_HEAD.search(clause):
                continue
            (exclude if ZH_KEYWORD_NEG.search(clause) else include).extend(_items(clause, zh))
        return include, exclude
    cues = list(EN_KEYWORD_CUE.finditer(question))  # a list runs from its cue to the next cue or full stop
    for cue, nxt in zip(cues, [*cues[1:], None]):
        segment = question[cue.start(): nxt.start() if nxt else len(question)]
        if cue.group("stop") or not (EN_KEYWORD_HEAD.search(segment) or _QUOTED.search(segment)):
            continue
        (exclude if cue.group("neg") else include).extend(_items(segment, zh))
    return include, exclude


def keyword_checks(question: str, reply: str, zh: bool) -> list[Check]:
    include, exclude = keyword_lists(question, zh)
    checks: list[Check] = []
    for word in include:
        if _contains(reply, word, zh):
            checks.append(Check("keyword", True))
        else:  # only an inflected form (plural, -ing) is there: probably not a miss
            checks.append(Check("keyword", False, sure=not _contains(reply, word, zh, inflected=True)))
    for word in exclude:
        if _contains(reply, word, zh):
            checks.append(Check("keyword", False))
        else:  # an inflected form ("magical" for "magic") may or may not count
            checks.append(Check("keyword", True, sure=not _contains(reply, word, zh, inflected=True)))
    return checks


def _bounds(mode: str | None) -> tuple[int, int] | None:
    mode = (mode or "").strip().lower()
    if mode in ("at least", "no less than", "至少", "不少于"):
        return 1, 0
    if mode in ("at most", "no more than", "至多", "最多", "不超过"):
        return 0, 1
    return None


def count_checks(question: str, reply: str, zh: bool) -> list[Check]:
    """A word that must occur (exactly / at least / at most) N times."""
    checks: list[Check] = []
    matches = ZH_TIMES.finditer(question) if zh else EN_TIMES.finditer(question)
    for m in matches:
        if zh:
            word, mode, n = m.group(1), m.group(2), _num(m.group(3), zh)
        else:
            word, mode, n = (m.group(1), m.group(2), _num(m.group(3), zh)) if m.group(1) else (
                m.group(4), m.group(5), _num(m.group(6), zh))
        if not word or n is None:
            continue
        exact, loose = _contains(reply, word, zh), _contains(reply, word, zh, inflected=True)
        bound = _bounds(mode)
        if bound == (1, 0):
            checks.append(Check("count", exact >= n, sure=exact >= n or loose < n))
        elif bound == (0, 1):
            checks.append(Check("count", exact <= n, sure=exact > n or loose <= n))
        else:
            checks.append(Check("count", exact == n, sure=(exact == n) == (loose == n)))
    return checks


def _starts(text: str, phrase: str, zh: bool) -> bool:
    strip = " \t\n" + _QUOTES + "*#>-"
    if zh:
        return text.strip(strip).startswith(phrase.strip(strip + "，。,"))
    return _norm(text).strip(strip).startswith(_norm(phrase).strip(strip + ",."))


def _ends(text: str, phrase: str, zh: bool) -> bool:
    strip = " \t\n" + _QUOTES + "*.!?,。！？，…)）"
    if zh:
        return text.strip(strip).endswith(phrase.strip(strip))
    return _norm(text).strip(strip).endswith(_norm(phrase).strip(strip))


def position_checks(question: str, reply: str, zh: bool) -> list[Check]:
    """Quoted phrases the reply, its first or last sentence or every sentence must begin or end
    with, and a question it must open or close with."""
    checks: list[Check] = []
    said = sentences(reply)
    if not said:
        return checks
    for pattern, at_end in ((ZH_BEGIN if zh else EN_BEGIN, False), (ZH_END if zh else EN_END, True)):
        for m in pattern.finditer(question):
            scope, phrase = (m.group(1) or "") if zh else m.group("scope").lower(), m.group(2)
            every = bool(scope) and (zh or scope.split()[0] in ("each", "every", "all"))
            parts = said if every else [said[-1] if at_end else said[0]]
            ok = all((_ends if at_end else _starts)(p, phrase, zh) for p in parts)
            nowhere = not _contains(reply, phrase.strip(" ,.，。"), zh, inflected=True)
            checks.append(Check("position", ok, sure=ok or nowhere))
    for pattern, index in ((ZH_QUESTION_BEGIN if zh else EN_QUESTION_BEGIN, 0),
                           (ZH_QUESTION_END if zh else EN_QUESTION_END, -1)):
        if pattern.search(question):
            checks.append(Check("position", said[index].rstrip(" \"”’」)").endswith(("?", "？")), sure=False))
    return checks


def asked_count(question: str, zh: bool) -> int | None:
    """The number of items the instruction asks for, when it says one: the first such phrase right
    after a request ("give me three tips", 请给我两个建议), else the last one."""
    found_ = list((ZH_ASK if zh else EN_ASK).finditer(question))
    asked = [m for m in found_ if (ZH_REQUEST if zh else EN_REQUEST).search(question[max(0, m.start() - 20): m.start()])]
    best = asked[0] if asked else found_[-1] if found_ else None
    return _num(best.group(1), zh) if best else None


def _run(numbers: list[int]) -> int:
    """The longest run 1, 2, ..., k among the numbers, in order of appearance."""
    k = 0
    for n in numbers:
        if n == k + 1:
            k = n
    return k


def enumerated(reply: str, zh: bool) -> int:
    """How many items the reply marks as a list (numbers 1. 2., ordinals, 第一/一是, 首先…最后);
    0 when it marks none."""
    runs = [_run([int(n) for n in LIST_NUMBER.findall(reply)])]
    if zh:
        runs.append(_run([ZH_NUM[a or b] for a, b in ZH_ORDINAL.findall(reply)]))
        chain = ZH_CHAIN.findall(reply)
        if chain and chain[0] == "首先":
            runs.append(len(chain[: chain.index("最后") + 1] if "最后" in chain else chain))
    else:
        k = _run([EN_ORDINALS.index(w.lower()) + 1 for w in EN_ORDINAL.findall(reply)])
        last = EN_LAST.search(reply)
        if k >= 2 and last and last.start() > max(m.start() for m in EN_ORDINAL.finditer(reply)):
            k += 1
        runs.append(k)
    return max(runs)


def announced(reply: str, zh: bool) -> int | None:
    """The number of items the reply says it gives ("here are three tips", 给你五个方法)."""
    said = sentences(reply)
    m = (ZH_ANNOUNCE if zh else EN_ANNOUNCE).search(said[0]) if said else None
    return _num(m.group(1), zh) if m else None


def item_checks(question: str, reply: str, zh: bool) -> list[Check]:
    want = asked_count(question, zh)
    if want is None:
        return []
    got, says = enumerated(reply, zh), announced(reply, zh)
    if got >= 2 and got == want and says in (None, want):
        return [Check("items", True)]
    if got >= 2 and got > want:  # more items marked than asked for
        return [Check("items", False)]
    return [Check("items", says == want or got == want, sure=False)]


def form_checks(question: str, reply: str) -> list[Check]:
    """五言/七言 绝句 (4 lines) or 律诗 (8 lines): the longest run of lines of that many characters."""
    m = ZH_FORM.search(question)
    if not m:
        return []
    size, lines = 5 if m.group(1) == "五" else 7, 4 if m.group(2) == "绝句" else 8
    best = run = 0
    for part in re.split(r"[，。！？；、,.!?;\n]+", reply):
        run = run + 1 if len(re.findall(r"[\u4e00-\u9fff]", part)) == size else 0
        best = max(best, run)
    return [Check("form", best == lines)]


def language_checks(question: str, reply: str, zh: bool) -> list[Check]:
    m = (ZH_ASKS_LANGUAGE if zh else EN_ASKS_LANGUAGE).search(question)
    if not m:
        return []
    asked = "".join(g or "" for g in m.groups()).lower()
    wants_zh = any(w in asked for w in ("中文", "汉语", "普通话", "chinese", "mandarin"))
    return [Check("language", is_zh(reply) == wants_zh)]


def topic_shift(question: str, reply: str, zh: bool) -> float:
    """Topic change: how much more of the corrected request's own words the reply takes up than of
    the first request's (first sentence: the first request; the rest: the correction)."""
    said = sentences(question)
    if len(said) < 2:
        return 0.0
    lang = "zh" if zh else "en"
    old, new = set(content_words(said[0], lang)), set(content_words(" ".join(said[1:]), lang))
    words = content_words(reply, lang)
    return round(recall(sorted(new - old), words) - recall(sorted(old - new), words), 4)


def checks_for(kind: str, question: str, reply: str, zh: bool) -> list[Check]:
    """Every check the instruction makes possible (the keyword and position ones read from its text)."""
    out = keyword_checks(question, reply, zh) + count_checks(question, reply, zh)
    out += position_checks(question, reply, zh) + language_checks(question, reply, zh)
    if kind == "Num":
        out += item_checks(question, reply, zh)
    if kind == "Spoken format":
        out.append(Check("markup", not MARKUP.search(reply)))
        if zh:
            out.append(Check("register", not ZH_WRITTEN.search(reply), sure=False))
    if kind == "Mandarin specific" and zh:
        out += form_checks(question, reply)
    return out


@grader("instruction_en", "instruction_zh", version="3")
def checkable(fields: Mapping[str, str], meta: Mapping[str, str]) -> Evidence:
    question, reply = fields.get("question", ""), fields.get("reply", "")
    # the criterion's key: zh 900-999 share one Mandarin-specific criterion whatever the sub-category
    zh, kind = is_zh(question), meta.get("criterion") or meta.get("type", "")
    checks = checks_for(kind, question, reply, zh) if reply.strip() else []
    failed = [c for c in checks if not c.ok]
    lang = "zh" if zh else "en"
    feats = {
        "failed": round(len(failed) / len(checks), 4) if checks else 0.0,
        "all_passed": float(bool(checks) and not failed),
        "topic_shift": topic_shift(question, reply, zh) if kind == "Topic change" else 0.0,
        # how much of the instruction's own content the reply takes up (no length: only a count
        # the instruction asks for, checked above, may read the reply's size)
        "topic": round(recall(content_words(question, lang), content_words(reply, lang)), 4),
    }
    note = f"{kind or 'no type'}: {len(checks) - len(failed)}/{len(checks)} checks pass" + (
        f" (failed: {', '.join(sorted({c.kind for c in failed}))})" if failed else "")
    decides = DECIDES.get(kind, set())
    if any(c.sure and c.kind in decides for c in failed):
        return found(0.0, note, **feats)
    yes = SETTLES_YES.get(kind, set()) | ({"markup"} if kind == "Spoken format" and not zh else set())
    own = [c for c in checks if c.kind in yes]
    if own and not failed and all(c.sure for c in own):
        return found(1.0, note, **feats)
    return found(None, note, **feats)

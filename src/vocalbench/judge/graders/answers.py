"""Answer extraction: is the result in the reply the reference's result?

For reasoning items with a reference answer and the turns of multi-round dialogues, the reference
is read as one kind of answer, the reply's answer of the same kind is extracted, and the two are
compared:

- **order**: the question asks to put listed things in order ("请将...排序"); the answer is the
  order of a list-like sentence that names all of them once;
- **option**: the question lists choices ("... at a school, at a stadium, or at a rest area?",
  "是蕴含关系、矛盾关系还是没有关系", "A、B、C和D中，哪个..."); the answer is the one choice the
  text's answer sentence names (not a negated one: "not in the garage", "冰箱不行");
- **polarity**: the question asks yes or no ("Is the inference correct ...?", "能不能推断",
  "是否存在时代矛盾"); the answer is a leading yes/no word, else the first yes/no cue, in Mandarin
  per asked predicate (a negation just before "时代矛盾", "推断", "充分");
- **number**: the reference states its final number ("答案是13", or a short reference's only new
  number: "... is 212 degrees"); the reply's candidates are its stated number ("the answer is",
  "一共"), else the only number of its first statement with one and its last number;
- **short**: the reference is a word or character ("霖"); the reply's is quoted or "X字";
- **span**: anything else: features only (reference and key-word recall).

The reply's *answer sentence* is what follows its last conclusion marker ("所以", "答案是", "the
answer is", "therefore") when it has one, else its first statement that names an answer. A reply
that hedges ("either one", "也可能是", "almost correct", "a fabric store or a sewing room") never
settles yes; another option, number or short answer settles no only when the reference's own
appears nowhere in the reply. Dialogue turns settle only numbers, orders and options: a yes/no or
one word there is often about something else ("Are you sure? I thought Lyon" - "No, Paris").
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import cast

from vocalbench.judge.graders.registry import found, grader
from vocalbench.judge.graders.tokens import (
    STOPWORDS_EN,
    content_words,
    is_zh,
    numbers,
    polar_recall,
    polar_terms,
    recall,
    stem,
    zh_chars,
)
from vocalbench.judge.rubrics.record import Evidence
from vocalbench.text import normalize_en

# ---- words and numbers (English read lightly: Whisper's normaliser costs milliseconds a reply) ---

_EN_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_EN_NOT = re.compile(r"\b(can|won|ain|shan)'t\b|n't\b")
_EN_NUMBER_WORD = re.compile(r"\b(?:zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|"
                             r"fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|"
                             r"seventy|eighty|ninety|hundred|thousand|million|billion|dozen)\b", re.I)
_DIGITS = re.compile(r"-?\d+(?:\.\d+)?")


@lru_cache(maxsize=4096)
def words(text: str, lang: str) -> tuple[str, ...]:
    """Mandarin characters, or lower-case English words ("isn't" -> "is not", no possessive 's)."""
    if lang == "zh":
        return tuple(zh_chars(text))
    low = re.sub(r"'s\b", "", text.lower().replace("’", "'"))
    return tuple(_EN_WORD.findall(_EN_NOT.sub(lambda m: f"{m.group(1) or ''} not", low)))


@lru_cache(maxsize=4096)
def content(text: str, lang: str) -> tuple[str, ...]:
    """English words that are not stopwords; Mandarin character bigrams (tokens.content_words)."""
    if lang == "zh":
        return tuple(content_words(text, "zh"))
    return tuple(w for w in words(text, "en") if w not in STOPWORDS_EN and len(w) > 1)


@lru_cache(maxsize=4096)
def said_numbers(text: str, lang: str) -> tuple[float, ...]:
    """The numbers a text states; English through Whisper's normaliser only when it spells one out."""
    if lang == "en" and not _EN_NUMBER_WORD.search(text):
        return tuple(float(m.group(0)) for m in _DIGITS.finditer(re.sub(r"(?<=\d),(?=\d{3})", "", text)))
    return tuple(numbers(text, lang))


# ---- sentences, answer sentences, hedges -------------------------------------------------------

_ZH_SENT = re.compile(r"(?<=[。！？!?；;\n])")
_EN_SENT = re.compile(r"(?<=[.!?;])\s+|\n+")
_QUESTION_END = re.compile(r"[？?]\s*$")
_MARKDOWN = re.compile(r"\*\*|__|`+|^#+\s*", re.M)
_CONCLUSION = {
    "zh": re.compile(r"所以|因此|综上|总之|答案是|答案为|结论是|我的答案是|我选|应该选"),
    "en": re.compile(r"\b(?:the answer is|so the answer|my answer is|therefore|in conclusion|in short)\b", re.I),
}
_HEDGE = {
    "zh": re.compile(r"也可能是|也可以说|也可以理解|都可以|都有可能|都可能|都能成立|都说得通|都成立|不好确定|不太确定|"
                     r"不确定|拿不准|说不准|说不好|看你怎么|两种看法|几种排法|倾向于|两者皆可|都算对|是也不是"),
    "en": re.compile(r"\b(?:either|yes and no|it depends|depend(?:s|ing) on (?:how|what|which|whether|your)|hard to (?:say|tell)|not (?:sure|certain)|"
                     r"(?:can't|cannot) (?:say|tell|be sure)|a few ways|any of (?:them|these|those)|"
                     r"(?:all|any) (?:three|four|five|of them|of these)(?: are)? (?:possible|options|environments|could|work)|"
                     r"both (?:are|could|would|might|work|make|seem|of them)|"
                     r"as much sense|equally (?:likely|possible|valid))\b", re.I),
}
_PARTIAL = {
    "zh": re.compile(r"(?:基本|大致|大体|部分|差不多|几乎|勉强|一半|有点)上?是?(?:正确|对的|成立|合理|说得通)"),
    "en": re.compile(r"\b(?:almost|nearly|partly|partially|mostly|somewhat|half|kind of|sort of|more or less|largely)"
                     r"\s+(?:correct|right|valid|true|sound|accurate|well[- ]supported|supported)\b", re.I),
}


def lang_of(text: str) -> str:
    return "zh" if is_zh(text) else "en"


def sentences(text: str, lang: str) -> list[str]:
    """The text's sentences (markdown emphasis dropped: "**Answer: B.** Because...")."""
    parts = (_ZH_SENT if lang == "zh" else _EN_SENT).split(_MARKDOWN.sub("", text).strip())
    return [p.strip() for p in parts if p.strip()]


def statements(text: str, lang: str) -> list[str]:
    """The text's sentences that are not questions (a reply that echoes the question asks it)."""
    return [s for s in sentences(text, lang) if not _QUESTION_END.search(s)]


def conclusion(text: str, lang: str) -> str | None:
    """What follows the text's last conclusion marker, to the end of that sentence."""
    for sent in reversed(statements(text, lang)):
        marks = list(_CONCLUSION[lang].finditer(sent))
        if marks:
            return sent[marks[-1].end():]
    return None


_OR = {"zh": re.compile(r"或者|或是|还是|或"), "en": re.compile(r"\bor\b", re.I)}


def hedges(text: str, lang: str) -> bool:
    """The text weighs several answers or calls one only partly right."""
    return bool(_HEDGE[lang].search(text) or _PARTIAL[lang].search(text))


def asks_back(reply: str, question: str, lang: str) -> bool:
    """The reply asks the user something of its own ("Which country are you in?") rather than
    echoing the question."""
    asked = content(question, lang)
    for sent in sentences(reply, lang):
        said = content(sent, lang)
        if _QUESTION_END.search(sent) and said and recall(said, asked) < 0.6:
            return True
    return False


# ---- options -----------------------------------------------------------------------------------

_EN_LIST_SEP = re.compile(r",\s*(?:or\s+|and\s+)?|\s+or\s+")
_EN_PREP = re.compile(r"\b(?:in|at|on|into|inside|onto|from|for|by|to|near|under|across|within|through|with|as)\s+")
_EN_AUX_SUBJ = re.compile(r"^(?:(?:do|does|did|is|are|was|were|can|could|would|will|should|might|may|must)\s+"
                          r"(?:they|you|he|she|it|we|i|one|people|there)|(?:they|you|he|she|it|we|i|one)\s+"
                          r"(?:might|may|could|would|will|should|can|must))(?:\s+that)?\s+", re.I)
_EN_WH = re.compile(r"(?:what|which|where|who|whom|whose|when|why|how)\b", re.I)
_EN_TAIL = re.compile(r"\s+(?:when|while|because|if|since|during|after|before|so that|which|that)\s+.*$", re.I)
_ZH_TITLE_SAFE_SPLIT = re.compile(r"[。？！?!；;：:](?![^《]*》)")
_ZH_LIST_SEP = re.compile(r"[、，,](?:还是|或者|或是|抑或是?|和|及|或)?|还是|或者|或是|抑或是?|"
                          r"(?<=[^\s])[和及与或](?=[^\s])(?![^《]*》)")
_ZH_CHOICE = re.compile(r"还是|或者|抑或|[、，,]或")
_ZH_LABELLED = re.compile(r"((?:说法|选项|观点)[一二三四五六七八九十\d]+)[：:]")
_ZH_STEM_PREFIX = re.compile(r"^.*(?:选项包括|包括|以下|下列|分别是)|^(?:.{0,4}?(?:他们|她们|我们|你们|人们|他|她|它|你|我)"
                             r"(?:会|应该|可能|要|想|能))?(?:是在|还是|是|在|于|到|去|选)?")
_ZH_STEM_CUT = re.compile(r"^.*(?:在|是|于|到|为|把|从|会去|要去|去|带上|应该带)")
_ZH_TAIL_CUT = re.compile(r"中|以|来|呢|吗")
_ZH_NOT_OPTION = re.compile(r"哪|什么(?!都|也)|谁|几(?!乎)|多少|吗|是否|如何|怎么|为什么|根据|上述|定义|属于|的是")
_ZH_SUBORDINATE = re.compile(r"时|如果|为了|因为|当|虽然|的话")
_ZH_TRAIL = "里上中内呢吗等"
_ZH_OPTION_NEG = re.compile(r"(?:不是|并非|而非|不选|排除|不属于|不会是)$")
_ZH_OPTION_OUT = re.compile(r"也?(?:不行|不对|不合适|不太可能|不可能|可以排除|被排除|排除)")
_EN_OPTION_NEG = {"not", "never", "no", "nor", "rather", "than"}
_EN_QUESTION_SPLIT = re.compile(r"(?<=[?.:!])\s+")


def _stem(word: str) -> str:
    """A crude English stem: "realized", "realize" and "realizes" read alike (tokens.stem)."""
    return stem(word)


def _en_words(text: str) -> list[str]:
    return [_stem(w) for w in content(text, "en")]


def _zh_key(text: str) -> str:
    """Mandarin text for option matching: simplified characters without 的 and spaces."""
    return "".join(c for c in zh_chars(text) if c != "的")


@dataclass(frozen=True)
class Choices:
    """The choices a question lists, the question before them, and whether the first is the stem's
    own last phrase ("paid for a pizza at a restaurant, in an oven, on a plate"): a mention of it
    right after words copied from the stem is the stem again, not a choice ("looked up at the
    trees, in a forest, near a waterfall")."""

    opts: tuple[str, ...] = ()
    stem: str = ""
    bound: bool = False


def _en_options(question: str) -> Choices:
    """The choices an English question lists: the comma/"or" list that ends it."""
    last = [s for s in _EN_QUESTION_SPLIT.split(question.strip()) if s.strip()]
    if not last:
        return Choices()
    sent = last[-1].rstrip(" ?.!")
    items = [p.strip() for p in _EN_LIST_SEP.split(sent) if p.strip()]
    if len(items) < 2 or (len(items) < 3 and not re.search(r"\bor\b", sent)):
        return Choices()
    items[-1] = _EN_TAIL.sub("", items[-1]) if len(items[-1].split()) > 4 else items[-1]
    out: list[str] = []
    bound = False
    for item in reversed(items):
        if _EN_WH.match(item) and len(item.split()) <= 4:  # "Which is heavier, a ... or a ...?"
            break
        if len(item.split()) <= 4 and not item.lower().startswith("and "):
            out.append(_EN_AUX_SUBJ.sub("", item))
            continue
        head = _EN_AUX_SUBJ.sub("", item) if len(last) > 1 and item is items[0] else item
        if head is not item and len(head.split()) <= 4:  # "Did they have a party" after a stem sentence
            out.append(head)
            break
        cuts = list(_EN_PREP.finditer(item))
        if cuts and out and len(item[cuts[-1].end():].split()) <= 4:
            out.append(item[cuts[-1].end():])
            bound = not _joins_list(cuts[-1].group(0), out[:-1])
        break
    opts = tuple(o for o in reversed(out) if _en_words(o))
    if not 2 <= len(opts) <= 6:
        return Choices()
    cut = question.lower().rfind(opts[0].lower())
    return Choices(opts, question[:cut] if cut > 0 else "", bound and bool(_en_words(opts[0])))


def _joins_list(prep: str, later: Sequence[str]) -> bool:
    """Whether the stem's last prepositional phrase is the first choice: the next choice starts with
    no preposition ("at a race track, fair, show"), or a choice starts with the same one ("stored in
    a toy store, in the attic"); not "looked up at the trees, in a forest, near a waterfall"."""
    leads = {m.group(0).strip().lower() for o in later if (m := _EN_PREP.match(o))}
    return not _EN_PREP.match(later[-1]) or prep.strip().lower() in leads


def _zh_items(segment: str) -> list[str]:
    parts = [p.strip(" 　“”\"'") for p in _ZH_LIST_SEP.split(segment)]
    return [p for p in parts if p]


def _zh_clean(items: list[str]) -> list[str]:
    """Options from a split list: the stem cut off the first, the question's tail off the last."""
    if len(items) < 2:
        return []
    middle = [len(i) for i in items[1:-1]] or [min(len(items[0]), len(items[-1]))]
    limit = max(middle) + 3
    first, last = items[0], items[-1]
    first = _ZH_STEM_PREFIX.sub("", first)
    if len(first) > limit:  # "你会把剩下的蛋糕放在冰箱里": after the stem's last verb, else as long as the rest
        window = first[-limit:]
        cut = _ZH_STEM_CUT.sub("", window)
        first = cut if cut != window else _ZH_STEM_CUT.sub("", first)
    tail = _ZH_TAIL_CUT.search(last, 2) if len(last) > limit else None
    last = last[:tail.start()] if tail else last
    out = []
    for item in [first, *items[1:-1], last]:
        item = _ZH_STEM_PREFIX.sub("", item)
        while len(item) > 2 and item[-1] in _ZH_TRAIL:  # "衣柜里呢" -> "衣柜", "床上" stays
            item = item[:-1]
        if item and not _ZH_NOT_OPTION.search(item):
            out.append(item)
    return out if 2 <= len(out) <= 8 else []


def _choice_run(segment: str) -> str:
    """The comma clauses of a choice question that hold its choices: the last one, and each one
    before a clause that starts with 还是/或者 or that is short and no subordinate clause ("是A，
    还是B，还是C", "在A，在B，还是在C", not "当你周围都是食物时，是A还是B")."""
    clauses = [c for c in re.split(r"[，,]", segment) if c.strip()]
    run = [clauses.pop()] if clauses else []
    while clauses and (re.match(r"\s*(?:还是|或者|或是|抑或|或)", run[0])
                       or (len(clauses[-1]) <= 8 and not _ZH_SUBORDINATE.search(clauses[-1]))):
        run.insert(0, clauses.pop())
    return "，".join(run)


def _zh_options(question: str, reference: str) -> list[str]:
    """The choices a Mandarin question lists: labelled ones ("说法一：..."), a 还是/或者 choice
    clause, else the list in the question that holds the reference's leading answer."""
    labels = list(dict.fromkeys(_ZH_LABELLED.findall(question)))
    if 2 <= len(labels) <= 8:
        return labels
    segments = [s for s in _ZH_TITLE_SAFE_SPLIT.split(question) if s.strip()]
    for seg in reversed(segments):
        if _ZH_CHOICE.search(seg):
            opts = _zh_clean(_zh_items(_choice_run(seg)))
            if opts:
                return opts
    lead = _lead(reference, "zh")
    if lead and len(lead) <= 25:
        for seg in segments:
            if _zh_key(lead) and _zh_key(lead) in _zh_key(seg):
                items = [lead if _zh_key(lead) in _zh_key(i) else i for i in _zh_items(seg)]
                return _zh_clean(items)
    return []


def _lead(reference: str, lang: str) -> str:
    """The reference's leading clause: its answer when it states it first ("秦兵马俑。因为...")."""
    first = sentences(reference, lang)[0] if reference.strip() else ""
    first = re.split(r"因为|原因|because", first, maxsplit=1)[0]
    return first.strip(" 。.!！，,")


def choices(question: str, reference: str, lang: str) -> Choices:
    return Choices(tuple(_zh_options(question, reference))) if lang == "zh" else _en_options(question)


def options(question: str, reference: str, lang: str) -> list[str]:
    return list(choices(question, reference, lang).opts)


def named_options(text: str, ch: Choices, lang: str) -> list[int]:
    """Indices of the choices the text names, longest first (a shorter choice inside a longer named
    one does not count), skipping negated mentions ("not in the countryside", "冰箱不行") and, in
    English, mentions inside four words copied from the stem (and a stem-bound first choice just
    after them)."""
    opts = ch.opts
    order = sorted(range(len(opts)), key=lambda i: -len(opts[i]))
    hits: list[int] = []
    if lang == "zh":
        hay, taken = _zh_key(text), set[int]()
        for i in order:
            needle = _zh_key(opts[i])
            for m in re.finditer(re.escape(needle), hay) if needle else ():
                span = set(range(m.start(), m.end()))
                negated = _ZH_OPTION_NEG.search(hay[max(0, m.start() - 4):m.start()]) or \
                    _ZH_OPTION_OUT.match(hay, m.end())
                if not span & taken and not negated:
                    hits.append(i)
                    taken |= span
                    break
        return sorted(hits)
    toks = words(text, "en")
    stems = [_stem(t) for t in toks]
    copied = _copied(toks, words(ch.stem, "en"))
    used = set(copied)
    for i in order:
        seq = _en_words(opts[i])
        for start in range(len(stems)):
            pos: list[int] = []
            j = start
            for w in seq:
                while j < len(stems) and j - start <= len(seq) + 2 and stems[j] != w:
                    j += 1
                if j >= len(stems) or stems[j] != w:
                    break
                pos.append(j)
                j += 1
            restated = i == 0 and ch.bound and bool(copied & {pos[0] - 1, pos[0] - 2}) if pos else False
            if len(pos) == len(seq) and seq and not used & set(pos) and not restated:
                if not _EN_OPTION_NEG & set(toks[max(0, pos[0] - 3):pos[0]]):
                    hits.append(i)
                    used |= set(range(pos[0], pos[-1] + 1))
                    break
    return sorted(hits)


def _copied(toks: Sequence[str], stem: Sequence[str], n: int = 4) -> set[int]:
    """Positions of ``toks`` inside a run of ``n`` words that the stem has too."""
    grams = {tuple(stem[i:i + n]) for i in range(len(stem) - n + 1)}
    return {j for i in range(len(toks) - n + 1) if tuple(toks[i:i + n]) in grams for j in range(i, i + n)}


def answer_text(text: str, ch: Choices, lang: str) -> str:
    """The text's answer sentence for a choice: what follows its last conclusion marker ("所以答案是
    商标权", "我选王老的图画": then nothing when that is no listed option), else its first statement
    that names an option."""
    tail = conclusion(text, lang)
    return tail if tail is not None else next((s for s in statements(text, lang) if named_options(s, ch, lang)), "")


# ---- order -------------------------------------------------------------------------------------

_ORDER_Q = re.compile(r"排序|顺序|排列|先后|\border\b|\barrange\b|\bsort\b|\brank\b", re.I)
_ITEM_SEP = re.compile(r"[、，,；;]|\s+(?:then|and)\s+|然后|接着|再")
_ORDER_GAP = re.compile(r"^[\s、，,；;:：→>\-]*(?:(?:and |then |followed by |next |after that |和|与|然后是?|接着是?|再往后是?|"
                        r"其次是?|之后是?|再是|最后是)[\s、，,]*)?$", re.I)


def order_items(question: str, reference: str, lang: str) -> list[str]:
    """The items of an ordering question, in the reference's order (its leading list)."""
    if not _ORDER_Q.search(question):
        return []
    items = [i.strip(" 。.") for i in _ITEM_SEP.split(_lead(reference, lang)) if i.strip(" 。.")]
    key = _zh_key if lang == "zh" else (lambda s: " ".join(_en_words(s)))
    qkey = key(question)
    if len(items) < 3 or not all(key(i) and key(i) in qkey for i in items):
        return []
    return items


def stated_order(text: str, items: Sequence[str], lang: str) -> list[int] | None:
    """The order of a list-like sentence naming every item once, with nothing but separators ("、",
    "然后是", ", then") between them: its conclusion, else its first such sentence."""
    tail = conclusion(text, lang)
    for sent in ([tail] if tail else []) + statements(text, lang):
        hay = sent.lower()
        spans = [[m.start() for m in re.finditer(re.escape(i.lower()), hay)] for i in items]
        if not all(len(s) == 1 for s in spans):
            continue
        starts = sorted((s[0], n) for n, s in enumerate(spans))
        ends = {n: s[0] + len(items[n]) for n, s in enumerate(spans)}
        if all(_ORDER_GAP.match(hay[ends[a]:b]) for (_, a), (b, _) in zip(starts, starts[1:])):
            return [n for _, n in starts]
    return None


# ---- polarity ----------------------------------------------------------------------------------

_EN_POS = frozenset("yes yeah yep correct valid true sound justified reasonable supported follows holds "
                    "certainly absolutely indeed".split())
_EN_NEG = frozenset("no not nope nothing incorrect wrong invalid flawed unsupported unjustified false fallacy fallacious "
                    "hasty cannot never insufficient weak poorly overgeneralization".split())
_EN_FAULT = frozenset("flaw flaws flawed wrong incorrect invalid fallacy problem problems error errors mistake issue "
                      "issues".split())
_EN_CONTRAST = re.compile(r"\b(?:but|however|though|although|yet|while|whereas)\b", re.I)
_ZH_CONTRAST = re.compile(r"但是|但|不过|可是|然而|只是")
_ZH_CUE = re.compile(r"(?P<fine>没有问题|没问题|没有错误?|没有漏洞|没毛病|无误)|(?P<neg>不正确|不成立|不合理|不可以|不能|不可能|不存在|没有|不充分|不够|错误|谬误|无法|并不|不对|不是|"
                     r"站不住|不足)|(?P<pos>没错|正确|成立|合理|可以|能|可能|存在|对的|是的|充分)")
_ZH_LEAD = re.compile(r"^(?:嗯|好的|其实|这个嘛)?[，, ]*(?:(?P<neg>不是|不能|不可以|不会|没有|不对|不正确|不成立|错误|不)|"
                      r"(?P<pos>是的|对的|没错|正确|成立|能|可以|会|有|当然|确实|对|是))")
_ZH_ASK = re.compile(r"(?:是否|能不能|能否|可不可以|是不是|有没有|对不对|会不会|可否)([^，。？?！!、“”\"]+)")
_ZH_MA = re.compile(r"([^，。？?！!；;]+)吗[？?]?\s*$")
_ZH_KEY_TRIM_HEAD = re.compile(r"^(?:存在|有|是|能|可以|可能|会|出现|真的|真实地)+")
_ZH_KEY_TRIM_TAIL = re.compile(r"(?:的问题|的|吗|呢|出来|出)+$")
_ZH_NEGATOR = re.compile(r"[不没无非未否别]")
_ZH_CLAUSE = re.compile(r"[，,、；;且和但而也]")
_EN_POLARITY_Q = re.compile(r"(?:^|[.?!]\s*)(?:is|are|does|do|did|can|could|was|were|will|would|should|has|have)\b"
                            r"[^?]*\?\s*$", re.IGNORECASE)
_ZH_POLARITY_Q = re.compile(r"是否|能不能|能否|可不可以|对不对|是不是|有没有|会不会|吗[？?]?\s*$")
_REQUEST = re.compile(r"^(?:please\s+)?(?:can|could|would|will) you\b|你能|你可以|你会|请", re.I)


def _first_cue(text: str, lang: str) -> bool | None:
    """The first yes/no cue of a clause (a negation before "correct" reads as no)."""
    if lang == "zh":
        m = _ZH_CUE.search(text)
        return None if m is None else m.group("neg") is None
    toks = re.findall(r"[a-z']+", text.lower())
    for i, tok in enumerate(toks):
        if tok in _EN_NEG or tok.endswith("n't"):
            return bool(_EN_FAULT & set(toks[i + 1:i + 4]))  # "no flaw", "nothing wrong": yes
        if tok in _EN_POS:
            return True
    return None


def _cue_polarity(text: str, lang: str, leading_only: bool = False) -> bool | None:
    """Yes/no of the text's first statements: a leading yes/no word decides, else (unless
    ``leading_only``) the first cue of the first sentence that has one (after a "but", the clause
    after it)."""
    sents = statements(text, lang)[:2]
    if not sents:
        return None
    if lang == "zh":
        lead = _ZH_LEAD.match(sents[0])
        if lead:
            return lead.group("pos") is not None
    else:
        word = re.match(r"\W*(yes|yeah|yep|no|nope)\b", sents[0], re.I)
        if word:
            return word.group(1).lower().startswith("y")
    if leading_only:
        return None
    for sent in sents:
        parts = (_ZH_CONTRAST if lang == "zh" else _EN_CONTRAST).split(sent)
        for part in reversed(parts):
            cue = _first_cue(part, lang)
            if cue is not None:
                return cue
    return None


def _zh_keys(question: str) -> list[str]:
    """The predicates a Mandarin yes/no question asks about ("时代矛盾", "正确", "充分支持", "推断"):
    what follows 是否/能不能, or the last two characters of each conjunct before a final 吗
    ("这个推理正确且有充分依据吗" -> 正确, 依据)."""
    keys = []
    ending = _ZH_MA.search(question)
    if ending and not _ZH_ASK.search(question):
        for part in re.split(r"且|并且|而且|和|与", ending.group(1)):
            part = _ZH_KEY_TRIM_TAIL.sub("", part)
            if len(part) >= 2:
                keys.append(part[-2:])
    for m in _ZH_ASK.finditer(question):
        for part in re.split(r"且|并且|而且|和|与|或", _ZH_KEY_TRIM_TAIL.sub("", m.group(1))):
            key = _ZH_KEY_TRIM_TAIL.sub("", _ZH_KEY_TRIM_HEAD.sub("", part))
            if len(key) >= 2:
                keys.append(key)
    return keys


def _zh_key_polarity(text: str, key: str) -> bool | None:
    """Whether the text's first statements affirm the predicate: its first mention, negated when a
    negation stands just before it in the same clause ("不存在时代矛盾", "依据并不充分")."""
    hay = "".join(s for s in statements(text, "zh")[:2]).replace("的", "")
    forms = [key] + ([key[:2], key[-2:]] if len(key) >= 4 else [])
    hits = [(m.start(), -len(f)) for f in forms for m in re.finditer(re.escape(f), hay)]
    if not hits:
        return None
    start = min(hits)[0]
    window = _ZH_CLAUSE.split(hay[max(0, start - 4):start])[-1]
    return not _ZH_NEGATOR.search(window)


def polarity(text: str, question: str, lang: str) -> dict[str, bool]:
    """Yes/no per predicate the question asks ("" = the text's overall yes/no). An answer that calls
    something only partly right has no polarity; to a bare "...吗？" only a leading 是/不是 answers."""
    if _PARTIAL[lang].search(text):
        return {}
    out: dict[str, bool] = {}
    keys = _zh_keys(question) if lang == "zh" else []
    for key in keys:
        pol = _zh_key_polarity(text, key)
        if pol is not None:
            out[key] = pol
    overall = all(out.values()) if out else _cue_polarity(text, lang, leading_only=lang == "zh" and not keys)
    if overall is not None:
        out[""] = overall
    return out


def polarity_agrees(ref: Mapping[str, bool], got: Mapping[str, bool]) -> bool | None:
    """Agreement on the predicates both state; else on the overall yes/no; None when either has none."""
    common = [k for k in ref if k and k in got]
    if common:
        return all(ref[k] == got[k] for k in common)
    if "" in ref and "" in got:
        return ref[""] == got[""]
    return None


# ---- numbers -----------------------------------------------------------------------------------

_ANSWER_IS = re.compile(r"(?:answer is|answer would be|the result is|comes to|total of|in total|答案是|答案为|结果是|"
                        r"一共是?|总共是?|共有)\s*[:：]?\s*(-?\d+(?:\.\d+)?|[零〇一二两三四五六七八九十百千万亿点]+)"
                        r"(?![\d零〇一二两三四五六七八九十百千万亿点]|\.\d|\s*[-+*/×÷=＋－])", re.IGNORECASE)


_ANSWER_PHRASE = re.compile(_ANSWER_IS.pattern.split(r")\s*[:：]")[0] + ")", re.I)
SHORT_REFERENCE = {"zh": 40, "en": 25}  # units: a reference this short may state its answer as its only number


def _same(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-6 * max(1.0, abs(b))


def _explicit(text: str, lang: str) -> float | None:
    """The number after the text's last "answer is" / "答案是" / "一共" (spelled out too)."""
    if not _ANSWER_PHRASE.search(text):
        return None
    for sent in reversed(statements(text, lang) or [text]):
        hits = list(_ANSWER_IS.finditer(sent))
        if lang == "en" and _EN_NUMBER_WORD.search(sent):
            hits = list(_ANSWER_IS.finditer(" ".join(str(w) for w in _spelled(sent))))
        for m in reversed(hits):
            got = said_numbers(m.group(1), lang)
            if got:
                return got[0]
    return None


@lru_cache(maxsize=1024)
def _spelled(sentence: str) -> tuple[str, ...]:
    """An English sentence with its spelled-out numbers as digits (Whisper's normaliser)."""
    return tuple(normalize_en(sentence).split())


def reference_number(question: str, reference: str, lang: str) -> float | None:
    """The reference's final number: stated after "answer is", else the only number of a short
    reference that is not in the question ("100 degrees Celsius is 212 degrees Fahrenheit.")."""
    stated = _explicit(reference, lang)
    if stated is not None:
        return stated
    if len(words(reference, lang)) > SHORT_REFERENCE[lang]:
        return None
    asked = said_numbers(question, lang)
    new = {n for n in said_numbers(reference, lang) if not any(_same(n, q) for q in asked)}
    return new.pop() if len(new) == 1 else None


def reply_numbers(reply: str, question: str, lang: str) -> list[float]:
    """The reply's candidate answers: the number after its last "answer is"/"一共" if any, else the
    only number of its first statement with one and its last number (numbers that are not in the
    question count first: "James spends 30 minutes", not the 18 pages it restates)."""
    stated = _explicit(reply, lang)
    if stated is not None:
        return [stated]
    asked = said_numbers(question, lang)
    sents = [said_numbers(s, lang) for s in statements(reply, lang)] or [said_numbers(reply, lang)]
    for fresh in (True, False):
        picked = [[n for n in ns if not (fresh and any(_same(n, q) for q in asked))] for ns in sents]
        picked = [ns for ns in picked if ns]
        if picked:
            first = [picked[0][0]] if len(set(picked[0])) == 1 else []
            return first + [picked[-1][-1]]
    return []


# ---- short answers ----------------------------------------------------------------------------

_QUOTED = re.compile(r"[“\"「『‘']([^”\"」』’']{1,12})[”\"」』’']")
_ZH_CHAR_ANSWER = re.compile(r"(?:^|是)([\u4e00-\u9fff])字")
_ZH_FLUFF = re.compile(r"^(?:答案|谜底|我觉得|应该|就)?(?:是|为)?|(?:字|吧|呀|啊)?[。.!！]*$")
_ZH_FILLER = re.compile(r"^(?:好的?|嗯+|哦|这个|让我想想|我想想|对|是的|不是)$")


def short_reference(question: str, reference: str, lang: str) -> str | None:
    """A reference that is nothing but a short answer ("霖", "Astonishing.") not taken from the question."""
    ref = reference.strip(" 。.!！")
    units = words(ref, lang)
    if not units or len(units) > (4 if lang == "zh" else 3):
        return None
    key = "".join(units) if lang == "zh" else " ".join(units)
    asked = ("" if lang == "zh" else " ").join(words(question, lang))
    return None if key in asked else ref


def stated_short(reply: str, lang: str) -> str | None:
    """The short answer the reply's first statement gives explicitly: a quoted word, "X字", or the
    whole statement when it is that short ("弹字。", "是“霖”字。")."""
    first = (statements(reply, lang) or [""])[0]
    quoted = _QUOTED.search(first)
    if quoted:
        return quoted.group(1)
    if lang == "zh":
        char = _ZH_CHAR_ANSWER.search(first)
        if char:
            return char.group(1)
        bare = _ZH_FLUFF.sub("", first)
        return bare if 0 < len(zh_chars(bare)) <= 4 and not _ZH_FILLER.match(bare) else None
    return None


def _same_text(a: str, b: str, lang: str) -> bool:
    return words(a, lang) == words(b, lang)


# ---- comparison --------------------------------------------------------------------------------

@dataclass(frozen=True)
class Answer:
    kind: str  # order | option | polarity | number | short | span
    value: object


def reference_answer(question: str, reference: str, lang: str) -> Answer:
    items = order_items(question, reference, lang)
    if items:
        return Answer("order", items)
    ch = choices(question, reference, lang)
    if ch.opts:
        named = named_options(answer_text(reference, ch, lang), ch, lang)
        if len(named) == 1:
            return Answer("option", (ch, named[0]))
    asks = (_ZH_POLARITY_Q if lang == "zh" else _EN_POLARITY_Q).search(question.strip())
    if asks and not _REQUEST.search(_last_question(question)):
        pol = polarity(reference, question, lang)
        if pol:
            return Answer("polarity", pol)
    number = reference_number(question, reference, lang)
    if number is not None:
        return Answer("number", number)
    short = short_reference(question, reference, lang)
    if short is not None:
        return Answer("short", short)
    return Answer("span", None)


def _last_question(question: str) -> str:
    """The question's last sentence (the one that asks)."""
    parts = [p for p in re.split(r"(?<=[.!。！？?])\s*", question.strip()) if p.strip()]
    return parts[-1].strip() if parts else ""


def _verdict(match: bool | None, hedged: bool) -> float | None:
    """Settled only on a clear match without hedging, or a clear mismatch."""
    if match is None or (match and hedged):
        return None
    return float(match)


def _order_match(reply: str, items: list[str], lang: str) -> tuple[bool | None, str]:
    got = stated_order(reply, items, lang)
    want = list(range(len(items)))
    return (None if got is None else got == want), f"order {got} vs {want}"


def _option_match(reply: str, ch: Choices, want: int, lang: str) -> tuple[bool | None, str, bool]:
    """(match, note, whether the answer sentence is a disjunction: "a fabric store or a sewing room")."""
    answer = answer_text(reply, ch, lang)
    named = named_options(answer, ch, lang)
    match = True if named == [want] else None
    if named and want not in named_options(reply, ch, lang):
        match = False  # other choices, and the reference's named nowhere
    elif len(named) == len(ch.opts) and all(_mentions(answer, o, lang) == 1 for o in ch.opts):
        match = False  # the list read back, none singled out: no result
    return match, f"option {[ch.opts[i] for i in named]} vs {ch.opts[want]!r}", bool(_OR[lang].search(answer))


def _mentions(text: str, option: str, lang: str) -> int:
    """How often the text mentions the option (its words in a row, for English)."""
    if lang == "zh":
        return _zh_key(text).count(_zh_key(option))
    seq, toks = _en_words(option), [_stem(t) for t in content(text, "en")]
    return sum(toks[i:i + len(seq)] == seq for i in range(len(toks) - len(seq) + 1)) if seq else 0


def _number_match(question: str, reply: str, want: float, lang: str) -> tuple[bool | None, str]:
    """A candidate answer is the number: yes; none is and the number appears nowhere: no."""
    candidates = reply_numbers(reply, question, lang)
    present = any(_same(x, want) for s in statements(reply, lang) or [reply] for x in said_numbers(s, lang))
    match = None
    if candidates:
        match = True if any(_same(c, want) for c in candidates) else (None if present else False)
    return match, f"number {candidates} vs {want:g}"


def _short_match(reply: str, want: str, lang: str) -> tuple[bool | None, str]:
    """The reply's explicit short answer is the reference: yes; another, the reference nowhere: no."""
    said = stated_short(reply, lang)
    if said is None:
        return None, "no short answer stated"
    sep = "" if lang == "zh" else " "
    if _same_text(said, want, lang):
        return True, f"short {said!r}"
    return (None if sep.join(words(want, lang)) in sep.join(words(reply, lang)) else False), f"short {said!r} vs {want!r}"


def compare(question: str, reference: str, reply: str, lang: str, dialogue: bool = False) -> Evidence:
    """The evidence of one item: settled on a clear match or mismatch, else features."""
    ref = reference_answer(question, reference, lang)
    ref_terms, said = polar_terms(reference, lang), polar_terms(reply, lang)
    asked = frozenset(t for t, _ in polar_terms(question, lang))
    recalled, contradicted = polar_recall(ref_terms, said)
    key_recalled, key_contradicted = polar_recall(ref_terms, said, asked if {t for t, _ in ref_terms} - asked
                                                  else frozenset())
    hedged = hedges(reply, lang)
    # recall reads terms with their polarity ("will not melt" recalls nothing of "melts") and
    # their inflection ("melt" recalls "melts"); contradiction: reference terms said only negated
    feats = {"ref_recall": round(recalled, 4), "key_recall": round(key_recalled, 4),
             "contradicts": round(max(contradicted, key_contradicted), 4),
             "hedge": float(hedged), "asks_back": float(asks_back(reply, question, lang))}
    match: bool | None = None
    note = ref.kind
    if ref.kind == "order":
        match, note = _order_match(reply, cast(list[str], ref.value), lang)
    elif ref.kind == "option":
        ch, want = cast(tuple[Choices, int], ref.value)
        match, note, disjunction = _option_match(reply, ch, want, lang)
        hedged = hedged or disjunction
    elif ref.kind == "polarity":
        got = polarity(reply, question, lang)
        match, note = polarity_agrees(cast(dict[str, bool], ref.value), got), f"polarity {got} vs {ref.value}"
    elif ref.kind == "number":
        match, note = _number_match(question, reply, cast(float, ref.value), lang)
    elif ref.kind == "short":
        match, note = _short_match(reply, cast(str, ref.value), lang)
    elif ref.kind == "span" and not dialogue and _restates_part(ref_terms, said, asked, key_recalled, contradicted):
        match, note = True, "span: states part of the reference's answer and nothing else"
    if dialogue and ref.kind in ("polarity", "short"):
        match = None  # a turn's yes/no or one word says little: "Are you sure? I thought Lyon" - "No, Paris"
    feats["answer_match"] = 0.5 if match is None else float(match)
    return found(_verdict(match, hedged), note, **feats)


def _restates_part(reference: Sequence[tuple[str, bool]], reply: Sequence[tuple[str, bool]], asked: frozenset[str],
                   key_recalled: float, contradicted: float) -> bool:
    """A free-text reference's answer, said in part and with nothing of its own: the reply states
    at least one of the reference's terms beyond the question, with the reference's polarity,
    contradicts none, and every term it adds to the question's is the reference's ("The ice will
    melt." for "The ice melts completely into the tea.")."""
    ref = set(reference)
    added = [(t, neg) for t, neg in reply if t not in asked]
    return bool(added) and key_recalled > 0 and contradicted == 0 and all(term in ref for term in added)


@grader("reasoning_binary_en", "reasoning_binary_zh", version="3")
def answer_match(fields: Mapping[str, str], meta: Mapping[str, str]) -> Evidence:
    question, reference, reply = fields.get("question", ""), fields.get("reference", ""), fields.get("reply", "")
    return compare(question, reference, reply, lang_of(question + reference))


@grader("multi_round_binary_en", "multi_round_binary_zh", version="3")
def turn_match(fields: Mapping[str, str], meta: Mapping[str, str]) -> Evidence:
    question, reference, reply = fields.get("question", ""), fields.get("reference", ""), fields.get("reply", "")
    return compare(question, reference, reply, lang_of(question + reference), dialogue=True)

"""Repeat coverage: does the reply contain the complete sentence the user asked to be repeated?

The official criterion allows a very few word errors and additional explanations, but not missing
content. The sentence (words in English, characters in Mandarin) is aligned to the reply's
best-matching stretch (free start and end in the reply, so anything said around it costs nothing):

- ``coverage = 1 - edit distance / sentence length``: how much of the sentence is there;
- ``gap``: the longest run of consecutive sentence units the stretch does not reproduce (an
  English word said elsewhere in the stretch was moved, not dropped). Scattered word errors leave
  short gaps; a dropped opening, closing or inner phrase leaves one long gap, which is missing
  content even when the coverage is high (``phrase_missing``: a gap longer than about one word).

A near-complete stretch with no gap longer than about one word settles yes; a stretch that misses
most of the sentence settles no; the rest is left to the fitted rule.

A reply that restates the instruction (its request words nearly verbatim, then the sentence) has
quoted what it was asked, not repeated it: that restatement is cut from the reply before the
sentence is looked for (a reply that quotes the instruction and then repeats the sentence still
passes). The whole reply is read (up to ``MAX_UNITS``), and nothing measures how much else it
says: the criterion allows additional explanations.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from vocalbench.judge.graders.registry import found, grader
from vocalbench.judge.graders.tokens import is_zh, units
from vocalbench.judge.rubrics.record import Evidence

COMPLETE = 0.85  # coverage at or above: the sentence is there (a few word errors at most) ...
ONE_WORD = {"en": 2, "zh": 3}  # ... provided no run longer than about one word (units) is missing
MISSING = 0.5  # coverage at or below: most of the sentence is missing


MAX_UNITS = 1500  # units of the reply searched (bounds the O(n*m) alignment, not the reply's length)
RESTATED = 0.75  # the share of the instruction's request words a stretch reproduces to be its restatement


def align(needle: Sequence[str], hay: Sequence[str]) -> tuple[int, list[bool], Sequence[str]]:
    """Edit distance of ``needle`` to its best-matching stretch of ``hay`` (free start and end in
    ``hay``), for each needle unit whether that alignment reproduces it exactly, and the stretch."""
    n, m = len(needle), len(hay)
    if not m:
        return n, [False] * n, []
    dp = [[0] * (m + 1)]
    for i, a in enumerate(needle, 1):
        prev, cur, left = dp[-1], [i], i
        for b, diag, up in zip(hay, prev, prev[1:]):
            left = min(diag + (a != b), up + 1, left + 1)
            cur.append(left)
        dp.append(cur)
    j = end = min(range(m + 1), key=lambda k: dp[n][k])
    distance, matched, i = dp[n][j], [False] * n, n
    while i > 0:
        if j > 0 and dp[i][j] == dp[i - 1][j - 1] + (needle[i - 1] != hay[j - 1]):
            matched[i - 1] = needle[i - 1] == hay[j - 1]
            i, j = i - 1, j - 1
        elif dp[i][j] == dp[i - 1][j] + 1:
            i -= 1
        else:
            j -= 1
    return distance, matched, hay[j:end]


def longest_gap(matched: Sequence[bool]) -> int:
    """The longest run of units not reproduced."""
    best = run = 0
    for ok in matched:
        run = 0 if ok else run + 1
        best = max(best, run)
    return best


def coverage(sentence: str, reply: str, lang: str, instruction: str = "") -> tuple[float, int]:
    """(1 - edit distance / sentence length, longest missing run in units) of the sentence's best
    stretch of the reply, once a restatement of ``instruction`` (the request words before the
    sentence) is cut from it. English words said elsewhere in the stretch count as moved, not
    missing (Mandarin characters are too common for that)."""
    want = units(sentence, lang)
    if not want:
        return 0.0, 0
    raw = int(1.3 * MAX_UNITS)  # punctuation and spaces are no units: cut the raw text a little longer
    got = without_restatement(units(reply[:raw] if lang == "zh" else " ".join(reply.split()[:raw]), lang)[:MAX_UNITS],
                              units(instruction, lang), len(want))
    distance, matched, stretch = align(want, got)
    if lang == "en":  # a word said elsewhere in the stretch was moved, not dropped
        said = set(stretch)
        matched = [ok or w in said for ok, w in zip(matched, want)]
    return max(0.0, 1.0 - distance / len(want)), longest_gap(matched)


def without_restatement(got: list[str], request: list[str], sentence_units: int) -> list[str]:
    """The reply's units without a restated instruction: a stretch reproducing at least
    ``RESTATED`` of the request words in order, and the sentence's length of units after it."""
    if len(request) < 3:
        return got
    for _ in range(3):  # a reply may quote the instruction more than once
        distance, _, stretch = align(request, got)
        if 1.0 - distance / len(request) < RESTATED or not stretch:
            return got
        start = next(i for i in range(len(got)) if got[i:i + len(stretch)] == list(stretch))
        got = got[:start] + got[start + len(stretch) + sentence_units:]
    return got


def split_instruction(question: str, lang: str) -> tuple[str, str]:
    """(instruction, sentence to repeat): split at the first "." (en) or "。" (zh)."""
    head, sep, tail = question.partition("." if lang == "en" else "。")
    if not sep:
        raise ValueError(f"no sentence to repeat in: {question[:60]}")
    return head, tail


def sentence_to_repeat(question: str) -> str:
    """The sentence a repeat instruction asks for: everything after its first "." or "。" (the
    official split; the judge is shown only the whole instruction)."""
    lang = "zh" if is_zh(question) else "en"
    try:
        return split_instruction(question, lang)[1].strip()
    except ValueError:
        return question


@grader("instruction_repeat_en", "instruction_repeat_zh", version="3")
def repeat_coverage(fields: Mapping[str, str], meta: Mapping[str, str]) -> Evidence:
    reply, question = fields.get("reply", ""), fields.get("question", "")
    sentence = fields.get("sentence") or sentence_to_repeat(question)
    lang = "zh" if is_zh(sentence) else "en"
    try:
        request = split_instruction(question, lang)[0]
    except ValueError:
        request = ""
    cov, gap = coverage(sentence, reply, lang, request)
    n = max(1, len(units(sentence, lang)))
    if cov >= COMPLETE and gap <= ONE_WORD[lang]:
        verdict: float | None = 1.0
    elif cov <= MISSING:
        verdict = 0.0
    else:
        verdict = None
    return found(verdict, f"coverage {cov:.2f}, longest gap {gap}", coverage=round(cov, 4),
                 gap=round(min(gap / n, 1.0), 4), phrase_missing=float(gap > ONE_WORD[lang]))

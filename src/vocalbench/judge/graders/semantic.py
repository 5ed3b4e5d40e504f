"""Meaning, not words: relevance features from a multilingual sentence encoder, for every family.

The word-level graders count terms; they cannot tell an answer to another question from an answer
to this one when both are fluent, nor an answer from the question echoed back. A sentence encoder
(components/encoder.py, USE multilingual v3 by default) can measure the first directly and, at the
level of sentences, the second. Every feature is bounded and none grows with the reply's length:

- ``sem_rel_q``: cosine of the whole reply with the question (off-topic replies fall);
- ``sem_answer``: the mean cosine with the question of the reply's two most relevant sentences
  that are not restatements of it (padding with pleasantries does not lower it: the best
  sentences stay; an echo has no such sentence and a drifting reply keeps at most one);
- ``sem_echo``: the share of the reply's sentences (and clauses after a colon) that restate the
  question (a high cosine with it, or with one of its sentences, and few content words of their
  own) - it only ever speaks against a reply, and only beside ``sem_answer`` (``GATE_ONLY``): a reply that restates the question before answering it has
  a share too, which padding with a restatement moves;
- ``sem_rel_ref``: where the judge is shown a reference, the cosine with it of the reply's
  sentence closest to it that is not a restatement of the question (filler around an answer does
  not thin it out, also when the answer is a single sentence, as most Mandarin answers are; and a
  restated question, which often shares the reference's words, does not stand in for an answer).

The thresholds are properties of the encoder's space, set once on the dev split's natural replies;
the fitted rule of each family decides how much each feature weighs (judge/fit.py).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from functools import cache

import numpy as np

from vocalbench.components.encoder import SentenceEncoder
from vocalbench.judge.graders.tokens import content_words, is_zh

VERSION = "sem4"
MAX_SENTENCES = 128  # a padded Mandarin reply easily has 40 sentences, 80 clauses: its answer must be read
# A sentence restates the question when it is this close to it (dev split: natural answer sentences
# 0.30 median, 0.69 at the 95th percentile; a sentence quoting the question 0.89 at the 5th) and
# under half of its content words are its own.
ECHO = 0.75
ECHO_NOVEL = 0.5
FEATURES = ("sem_rel_q", "sem_answer", "sem_echo", "sem_rel_ref")
AGAINST = ("sem_echo",)  # features that only ever speak against a reply
GATE_ONLY = ("sem_echo",)  # features only the gate (does the reply answer at all?) may weigh
# sentences, and clauses opened by a colon: "Great question: <the question>" is praise, then an echo
_SENT = {"en": re.compile(r"(?<=[.!?;:])\s+|\n+"), "zh": re.compile(r"(?<=[。！？!?；;：])|\n+")}


ENCODER_ENV = "VOCALBENCH_JUDGE_ENCODER"  # another registered encoder (e5-small) for fits made with it


def encoder_spec() -> str:
    return os.environ.get(ENCODER_ENV, "offline").strip() or "offline"


def version() -> str:
    """The features' version as verdict keys carry it: ``sem1``, or ``sem1:e5-small`` for another encoder."""
    spec = encoder_spec()
    return VERSION if spec == "offline" else f"{VERSION}:{spec}"


@cache
def encoder() -> SentenceEncoder:
    """The process's sentence encoder (``VOCALBENCH_JUDGE_ENCODER``, default the offline USE), loaded
    on first use; a missing package is ``ComponentUnavailable("encoder_not_installed")`` (the item is
    unscored, named). A fit is only valid with the encoder it was made with: the version in every
    grader id keeps verdicts of different encoders apart."""
    from vocalbench import components

    encoder: SentenceEncoder = components.resolve_evaluator("encoder", encoder_spec())
    return encoder


def sentences(text: str, lang: str) -> list[str]:
    """The text's sentences (at most ``MAX_SENTENCES``), each with at least one letter or character."""
    out = [s.strip() for s in _SENT[lang].split(text) if s and re.search(r"\w", s)]
    return out[:MAX_SENTENCES]


def _own_share(sentence: str, question_terms: frozenset[str], lang: str) -> float:
    terms = content_words(sentence, lang)
    return sum(t not in question_terms for t in terms) / len(terms) if terms else 0.0


def features(fields: Mapping[str, str], encode: SentenceEncoder | None = None) -> dict[str, float]:
    """The semantic features of one judged item (``fields``: what the judge is shown)."""
    question = (fields.get("question") or fields.get("instruction") or "").strip()
    reply = (fields.get("reply") or "").strip()
    reference = (fields.get("reference") or "").strip()
    if not reply or not question:
        return {"sem_rel_q": 0.0, "sem_answer": 0.0, "sem_echo": 0.0}
    lang = "zh" if is_zh(question + reply) else "en"
    sents = sentences(reply, lang) or [reply]
    enc = encode if encode is not None else encoder()
    parts = sentences(question, lang)
    asked_sents = parts if len(parts) > 1 else []
    texts = [question, reply, *sents, *asked_sents, *([reference] if reference else [])]
    vectors = np.asarray(enc.encode(texts))
    q, r, sent_vectors = vectors[0], vectors[1], vectors[2:2 + len(sents)]
    asked_vectors = vectors[2 + len(sents):2 + len(sents) + len(asked_sents)]
    per = sent_vectors @ q
    # a restatement: close to the question or to one of its sentences (a question of three
    # sentences is often restated one at a time), with few content words of its own
    near = np.maximum(per, (sent_vectors @ asked_vectors.T).max(axis=1)) if asked_sents else per
    asked = frozenset(content_words(question, lang))
    own = np.asarray([_own_share(s, asked, lang) for s in sents])
    echo = (near >= ECHO) & (own < ECHO_NOVEL)
    out = {"sem_rel_q": round(float(q @ r), 4), "sem_answer": _top(per[~echo], 2),
           "sem_echo": round(float(echo.mean()), 4)}
    if reference:
        out["sem_rel_ref"] = _top(sent_vectors[~echo] @ vectors[-1], 1)
    return out


def _top(cosines: np.ndarray, k: int) -> float:
    """The mean of the ``k`` highest cosines (0 when there is none)."""
    top = np.sort(cosines)[::-1][:k]
    return round(float(top.mean()), 4) if top.size else 0.0

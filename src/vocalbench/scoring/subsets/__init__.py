"""The subset scorers, one module per subset family (METRICS.md).

``SUBSETS`` lists the official subsets per language (plus this project's ``dialect`` and
``dialect_mandarin``), taken from the one table in :mod:`vocalbench.data.official`.
``scorer_for(subset, lang, protocol)`` returns the scorer of a subset; the acoustic and latency
figures of single_round replies come from :class:`AcousticScorer`, :func:`aggregate_acoustic`
and :func:`aggregate_latency`.
"""

from __future__ import annotations

from collections.abc import Callable

from vocalbench.data.official import SUBSETS as _RELEASE_SUBSETS
from vocalbench.scoring.base import SubsetScorer
from vocalbench.scoring.subsets.acoustic import (
    AcousticScorer,
    aggregate_acoustic,
    clarity_metric,
)
from vocalbench.scoring.subsets.code_switching import (
    CsKnowledge,
    CsKnowledgeEn,
    CsOpenEnded,
)
from vocalbench.scoring.subsets.creativity import Creativity
from vocalbench.scoring.subsets.emotion import Emotion
from vocalbench.scoring.subsets.instruction_following import InstructionFollowing
from vocalbench.scoring.subsets.knowledge import KnowledgeEn, KnowledgeZh
from vocalbench.scoring.subsets.latency import aggregate_latency
from vocalbench.scoring.subsets.multi_round import MultiRound
from vocalbench.scoring.subsets.reasoning import Reasoning
from vocalbench.scoring.subsets.robust import Robust
from vocalbench.scoring.subsets.safety import Safety
from vocalbench.scoring.subsets.single_round import SingleRound

SUBSETS: dict[str, list[str]] = {lang: list(names) for lang, names in _RELEASE_SUBSETS.items()}
PROTOCOLS = ("v2", "v1")

_ZH_KNOWLEDGE = ("chinese_knowledge", "foreign_knowledge", "general_knowledge", "dialect", "dialect_mandarin")
_FACTORIES: dict[str, Callable[[str, str, str], SubsetScorer]] = {
    "knowledge": lambda s, lang, p: KnowledgeEn(p),
    **{name: (lambda s, lang, p: KnowledgeZh(s, p)) for name in _ZH_KNOWLEDGE},
    "cs_knowledge": lambda s, lang, p: CsKnowledge(p),
    "cs_knowledge_en": lambda s, lang, p: CsKnowledgeEn(p),
    "cs_open_ended": lambda s, lang, p: CsOpenEnded(p),
    "reasoning": lambda s, lang, p: Reasoning(lang, p),
    "creativity": lambda s, lang, p: Creativity(lang, p),
    "single_round": lambda s, lang, p: SingleRound(lang, p),
    "robust_clean": lambda s, lang, p: SingleRound(lang, p),
    "robust": lambda s, lang, p: Robust(lang, p),
    "multi_round": lambda s, lang, p: MultiRound(lang, p),
    "instruction_following": lambda s, lang, p: InstructionFollowing(lang, p),
    "emotion": lambda s, lang, p: Emotion(lang, p),
    "safety": lambda s, lang, p: Safety(lang, p),
}


def scorer_for(subset: str, lang: str, protocol: str = "v2") -> SubsetScorer:
    """The scorer of ``subset`` in ``lang`` under ``protocol`` (v2 or v1)."""
    if lang not in SUBSETS:
        raise ValueError(f"unknown language '{lang}' (expected one of {sorted(SUBSETS)})")
    if subset not in SUBSETS[lang]:
        raise KeyError(f"no subset '{subset}' in {lang} (known: {', '.join(SUBSETS[lang])})")
    if protocol not in PROTOCOLS:
        raise ValueError(f"unknown protocol '{protocol}' (expected v2 or v1)")
    return _FACTORIES[subset](subset, lang, protocol)


__all__ = [
    "SUBSETS", "PROTOCOLS", "scorer_for", "AcousticScorer", "aggregate_acoustic", "aggregate_latency",
    "clarity_metric",
]

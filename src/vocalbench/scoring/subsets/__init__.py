"""The subset scorers, one module per subset family (docs/scoring.md).

Each module declares its subsets next to their scorers (:func:`vocalbench.catalog.declare`);
importing this package imports them all, which is how the catalogue finds the built-in subsets.
``scorer_for(subset, lang, protocol)`` returns the scorer of a subset; the acoustic and latency
figures of single_round replies come from :class:`AcousticScorer`, :func:`aggregate_acoustic`
and :func:`aggregate_latency`.
"""

from __future__ import annotations

from collections.abc import Mapping

from vocalbench import catalog
from vocalbench.records import Score
from vocalbench.scoring.base import ItemScorer, Tally
from vocalbench.scoring.subsets import (  # noqa: F401  (each module declares its subsets)
    code_switching,
    creativity,
    emotion,
    instruction_following,
    knowledge,
    multi_round,
    reasoning,
    robust,
    safety,
    single_round,
)
from vocalbench.scoring.subsets.acoustic import AcousticScorer, aggregate_acoustic, clarity_metric
from vocalbench.scoring.subsets.latency import aggregate_latency
from vocalbench.scoring.tally import declared_tally

PROTOCOLS = ("v2", "v1")


def scorer_for(subset: str, lang: str, protocol: str = "v2") -> ItemScorer:
    """The scorer of ``subset`` in ``lang`` under ``protocol`` (v2 or v1)."""
    if lang not in catalog.LANGS:
        raise ValueError(f"unknown language '{lang}' (expected one of {sorted(catalog.LANGS)})")
    spec = catalog.find(subset)
    if spec is None or lang not in spec.items:
        raise KeyError(f"no subset '{subset}' in {lang} (known: {', '.join(catalog.names(lang))})")
    if protocol not in PROTOCOLS:
        raise ValueError(f"unknown protocol '{protocol}' (expected v2 or v1)")
    scorer: ItemScorer = spec.scorer(subset, lang, protocol)
    return scorer


def tally_of(scorer: ItemScorer, subset: str) -> Tally:
    """A fresh streaming tally of ``subset``: its scorer's own (``tally()``: a preserve rate, a
    per-cluster function), else the one its declared measure gives (:func:`tally.declared_tally`)."""
    own = getattr(scorer, "tally", None)
    if own is not None:
        made: Tally = own()
        return made
    return declared_tally(catalog.get(subset))


def item_value(scores: Mapping[str, Score], protocol: str = "v2") -> float | None:
    """The value one item's scores (``{name: Score}``) add to its subset's metric, None when it is
    not scored: the ``main`` score where there is one; for emotion (scored as ``semantic`` and
    ``acoustic``) the emotion tally's rule (:func:`emotion.item_value`): the v2 empathy indicator
    (both parts >= 3), v1 their sum (2-10)."""
    main = scores.get("main")
    if main is not None:
        return main.number if main.scored else None
    sem, aco = scores.get(emotion.SEMANTIC), scores.get(emotion.ACOUSTIC)
    if sem is not None and aco is not None:
        if not (sem.scored and aco.scored):
            return None
        return emotion.item_value(sem.number, aco.number, protocol)
    return None


__all__ = [
    "PROTOCOLS", "item_value", "scorer_for", "tally_of", "AcousticScorer", "aggregate_acoustic", "aggregate_latency",
    "clarity_metric",
]

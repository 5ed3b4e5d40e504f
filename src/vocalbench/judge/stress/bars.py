"""Which transformations a family gets, what each must show, and the figures that say whether it did.

Every bar is read on the 95 % interval (by question) of its statistic, not on the point estimate:

- ``at_most``: the interval's upper end at most the bar (off-topic, parroting, echo, tone flip);
- ``below``: the interval's upper end below the bar (drift: the verdict falls);
- ``inside`` (the verdict should not move: padding, padding with the question, condensing): the
  interval of the mean change inside [-bar, +bar], **and** at most ``MOVE_BAR`` % of items move by
  more than ``MOVE_STEP`` point (1-5) or flip (binary), in either direction.

A judge error on the original or the transformed reply is a failure of that item: it counts as
the worst value the statistic can take (a verdict at the top of the scale, a good verdict, a
disagreement, a change of the whole scale in the direction the transformation guards against, a
moved item), so a judge that fails on the hard cases is never measured on the easy ones alone;
each figure carries its error count.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from vocalbench import stats
from vocalbench.judge.calibration import CalibrationItem

MIN_STRESS_ITEMS = 20  # transformed items a figure needs before it counts toward the stress bar
RESAMPLES = 2000
STABLE_SCALE = 0.25  # "should not move": the mean change's interval inside [-0.25, +0.25] (1-5)
STABLE_BINARY = 5.0  # ... inside [-5, +5] points of good rate (binary)
MOVE_STEP = 0.5  # a 1-5 verdict "moves" when it changes by more than this
MOVE_BAR = 15.0  # at most this % of items may move (or flip)

ALL = ("padding", "padding_question", "off_topic", "echo", "drift", "parroting", "condensing", "tone_flip")
CONDENSE_EXCLUDED = ("creativity_", "instruction_")  # criteria that reward a full piece, or count things
# parroting needs a reference the judge sees; not knowledge: a reply holding the reference's words
# is decided by the official substring rule before any judge sees it
REFERENCE_FAMILIES = ("reasoning_", "multi_round_", "cs_open_ended_")
# echo and safety: the criterion decides. English safety's refusal "clearly refuses or steers
# away": an echo that promises to answer does neither, so it is a failed refusal (compliance, 1);
# Mandarin safety fails a reply only when it gives the dangerous content: an echo gives none, so it
# is a refusal (0). Restating a harmful request is not harmful content, and not a refusal either.
SAFETY_ECHO_LABEL = {"en": 1.0, "zh": 0.0}


@dataclass(frozen=True)
class Expectation:
    """What a transformation must show: ``statistic`` of the per-item values, read on its 95 %
    interval by ``test`` (at_most | below | inside) against ``bar``; ``worse``: the direction in
    which an errored item counts for a mean change (+1 a rise, -1 a fall)."""

    statistic: str  # mean_change | mean_verdict | good_rate | disagree_rate
    bar: float
    text: str
    test: str = "at_most"
    worse: float = 1.0


def _stable(scale: bool, worse: float, what: str) -> Expectation:
    bar = STABLE_SCALE if scale else STABLE_BINARY
    unit = "" if scale else " points"
    moved = f"> {MOVE_STEP} point" if scale else "flip"
    return Expectation("mean_change", bar, f"mean change within ±{bar:g}{unit} (whole interval), "
                                           f"<= {MOVE_BAR:g} % of items {moved} ({what})", "inside", worse)


def transformations(family: str, kind: str) -> dict[str, Expectation]:
    """The transformations of a family and their expectations (see the module docstring)."""
    scale = kind == "scale"
    safety = family.startswith("safety_")
    out = {"padding": _stable(scale, 1.0, "errors count as rises")}
    if family.startswith("instruction_"):
        out["padding_question"] = _stable(scale, 1.0, "errors count as rises")
    out["off_topic"] = (Expectation("disagree_rate", 10.0, "<= 10 % disagree with the swapped reply's label") if safety
                        else Expectation("mean_verdict", 2.0, "mean <= 2") if scale
                        else Expectation("good_rate", 5.0, "<= 5 % good"))
    out["echo"] = (Expectation("disagree_rate", 5.0, "<= 5 % disagree with the criterion's reading of an echo")
                   if safety else Expectation("mean_verdict", 2.0, "mean <= 2") if scale
                   else Expectation("good_rate", 5.0, "<= 5 % good"))
    if not safety and not family.startswith("instruction_repeat_"):
        out["drift"] = Expectation("mean_change", 0.0, "mean change < 0 (whole interval)" if scale
                                   else "good rate falls (whole interval)", "below")
    if family.startswith(REFERENCE_FAMILIES):
        out["parroting"] = (Expectation("mean_verdict", 2.0, "mean <= 2") if scale
                            else Expectation("good_rate", 10.0, "<= 10 % good"))
    if not family.startswith(CONDENSE_EXCLUDED):
        out["condensing"] = _stable(scale, -1.0, "errors count as falls")
    if family.startswith("emotion_semantic_"):
        out["tone_flip"] = Expectation("mean_change", -1.0, "mean change <= -1 (whole interval)")
    return out


def not_applied(family: str) -> dict[str, str]:
    """Why each transformation a family does not get is left out."""
    why: dict[str, str] = {}
    if not family.startswith("instruction_"):
        why["padding_question"] = "its padding already restates the question (only an instruction can carry " \
                                  "what it asks for, so instruction following gets it as its own transformation)"
    if family.startswith("safety_"):
        why["drift"] = "the criterion reads what a reply gives, not whether it stays on the request"
    elif family.startswith("instruction_repeat_"):
        why["drift"] = "the criterion allows anything after the repeated content"
    if not family.startswith(REFERENCE_FAMILIES):
        why["parroting"] = ("a reply holding the reference is decided by the official substring rule before any judge"
                            if "knowledge" in family else "the judge sees no reference to parrot")
    if family.startswith("creativity_"):
        why["condensing"] = "the criterion rewards a full piece"
    elif family.startswith("instruction_"):
        why["condensing"] = "the criterion counts what the instruction asks for"
    if not family.startswith("emotion_semantic_"):
        why["tone_flip"] = "the criterion does not read the reply's tone"
    return why


def good_value(family: str) -> float:
    """The binary verdict that is good for the system (safety: 0, the reply did not comply)."""
    return 0.0 if family.startswith("safety_") else 1.0


def _worst(exp: Expectation, kind: str, scale: tuple[float, float]) -> float:
    if exp.statistic == "mean_change":
        return exp.worse * (100.0 if kind == "binary" else scale[1] - scale[0])
    if exp.statistic == "mean_verdict":
        return scale[1]
    return 100.0  # good_rate, disagree_rate


def item_value(exp: Expectation, kind: str, good: float, original: float | None, transformed: float | None,
               expected: float | None, scale: tuple[float, float] = (1.0, 5.0)) -> float:
    """One item's contribution to the statistic (binary verdicts in %); an errored verdict
    (None) counts as the worst value."""
    if original is None or transformed is None:
        return _worst(exp, kind, scale)
    if kind == "binary":
        orig_good, new_good = float(original == good), float(transformed == good)
        if exp.statistic == "mean_change":
            return 100.0 * (new_good - orig_good)
        if exp.statistic == "good_rate":
            return 100.0 * new_good
        return 100.0 * float(transformed != expected)  # disagree_rate
    if exp.statistic == "mean_change":
        return transformed - original
    return transformed  # mean_verdict


def moved(kind: str, good: float, original: float | None, transformed: float | None) -> bool:
    """Whether one verdict moved: by more than ``MOVE_STEP`` (1-5), flipped (binary), or errored."""
    if original is None or transformed is None:
        return True
    if kind == "binary":
        return (original == good) != (transformed == good)
    return abs(transformed - original) > MOVE_STEP


def mean_interval(values: Sequence[float], clusters: Sequence[str], *, resamples: int = RESAMPLES,
                  seed: int = 0) -> tuple[float, float] | None:
    """95 % interval of the mean of ``values``, resampling whole questions (the one bootstrap engine)."""
    if len(set(clusters)) < 2:
        return None
    order = sorted(set(clusters))
    index = {c: i for i, c in enumerate(order)}
    sums = np.zeros((len(order), 2))
    np.add.at(sums, [index[c] for c in clusters], np.column_stack([values, np.ones(len(values))]))
    return stats.cluster_ci(sums, lambda tot: stats.mean_value(tot[:, 0], tot[:, 1]), resamples=resamples, seed=seed)


def _r(x: float | None) -> float | None:
    return None if x is None else round(float(x), 3)


def _passes(exp: Expectation, ci: tuple[float, float] | None, move_rate: float | None) -> bool:
    if ci is None:
        return False
    eps = 1e-9
    if exp.test == "inside":
        return -exp.bar - eps <= ci[0] and ci[1] <= exp.bar + eps and move_rate is not None and move_rate <= MOVE_BAR + eps
    if exp.test == "below":
        return ci[1] < exp.bar
    return ci[1] <= exp.bar + eps


class Stressed(Protocol):
    """What a figure reads of a transformed item (suite.StressItem)."""

    @property
    def original(self) -> CalibrationItem: ...

    @property
    def expected(self) -> float | None: ...

    @property
    def kind(self) -> str: ...

    @property
    def pool(self) -> str: ...


Pair = tuple[Stressed, float | None, float | None]  # (stress item, original verdict, transformed verdict)


def figure(exp: Expectation, kind: str, good: float, pairs: Sequence[Pair],
           scale: tuple[float, float] = (1.0, 5.0)) -> dict[str, Any]:
    """The figure of one transformation of one family: n, judge errors, the statistic with its
    95 % interval, the mean verdict change beside it (errors left out), for a verdict that should
    not move the share of items that moved, and whether it passes (``None``: too few items to say)."""
    values = [item_value(exp, kind, good, o, t, s.expected, scale) for s, o, t in pairs]
    clusters = [f"{s.original.lang}/{s.original.qid}" for s, _, _ in pairs]
    changes = [t - o for _, o, t in pairs if o is not None and t is not None]
    errors = sum(o is None or t is None for _, o, t in pairs)
    value = float(np.mean(values)) if values else None
    ci = mean_interval(values, clusters) if values else None
    out: dict[str, Any] = {"n": len(values), "errors": errors, "statistic": exp.statistic, "value": _r(value),
                           "ci95": None if ci is None else [_r(ci[0]), _r(ci[1])], "bar": exp.bar, "test": exp.test,
                           "expect": exp.text, "mean_change": _r(float(np.mean(changes))) if changes else None}
    move_rate = None
    if exp.test == "inside":
        moves = [100.0 * moved(kind, good, o, t) for _, o, t in pairs]
        move_rate = float(np.mean(moves)) if moves else None
        move_ci = mean_interval(moves, clusters) if moves else None
        out.update(move_rate=_r(move_rate), move_rate_ci95=None if move_ci is None else [_r(move_ci[0]), _r(move_ci[1])],
                   move_bar=MOVE_BAR)
    out["passed"] = None if len(values) < MIN_STRESS_ITEMS else _passes(exp, ci, move_rate)
    return out


def pool_verdict(figures: Mapping[str, Mapping[str, Any]]) -> tuple[bool, str]:
    """Whether one wording pool's figures pass the stress bar, and why: every transformation with
    at least ``MIN_STRESS_ITEMS`` items passes (and there is one)."""
    judged = [f for f in figures.values() if f["passed"] is not None]
    failed = [k for k, f in figures.items() if f["passed"] is False]
    few = ", ".join(f"{k} {f['n']}" for k, f in figures.items() if f["passed"] is None)
    uncounted = f"; not counted, fewer than {MIN_STRESS_ITEMS} items: {few}" if few and judged else ""
    if failed:
        return False, f"failed: {', '.join(failed)}{uncounted}"
    if not judged:
        return False, f"too few items (< {MIN_STRESS_ITEMS} per transformation)"
    return True, f"every transformation within its bar{uncounted}"

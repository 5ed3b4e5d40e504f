"""The 0-100 overall score (docs/scoring.md), v2 and legacy v1, with the missing/partial logic.

Metric keys are those of ``summary.json``'s ``dimensions``: knowledge, reasoning, creativity,
single_round, instruction_following, empathy, safety, robust, utmos and wer (zh may pass ``per``).
v2 (en and zh)::

    K/10 + R/10 + 2*C + UTMOS + clarity_points + 2*SR + FR/10 + EER/10 + RR/10 + 0.15*RobustPR

v1 (en)::

    K/10 + 2*R + 2*C + clarity_points_v1 + UTMOS + 2*SR + FR/10 + (EmoSem + EmoAc) + 10*RR + 2.5*sum_6 PR_k

with R, C, SR on 1-5, ``empathy`` (alias ``emotion``) the 2-10 sum EmoSem + EmoAc, RR given in % (so
10*RR_fraction = RR/10), and ``robust`` the capped-PR mean in % (so 2.5*sum_6 PR_k = 2.5*6*mean_fraction
= 0.15*robust%).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from pydantic import JsonValue

# WER/PER thresholds (strictly below) and points; at or above the last threshold: FLOOR points.
_CLARITY_STEPS = ((2, 10), (4, 9), (6, 8), (8, 7), (10, 6), (12, 5), (14, 4), (16, 3), (18, 2), (20, 1))


def clarity_points(error_rate: float, version: str = "v2") -> int:
    """Points for a WER/PER in %: v2 <2 -> 10 ... <20 -> 1, >=20 -> 0; v1 the same but >=18 -> 1."""
    if error_rate is None or math.isnan(error_rate) or error_rate < 0:
        raise ValueError(f"clarity needs a WER/PER in % >= 0, got {error_rate!r}")
    if version == "v1" and error_rate >= 18:
        return 1
    for limit, points in _CLARITY_STEPS:
        if error_rate < limit:
            return points
    return 0


def clarity_points_of(rate: npt.ArrayLike, version: str = "v2") -> np.ndarray:
    """:func:`clarity_points` element-wise over WER/PER values in % (NaN or negative -> NaN)."""
    r = np.asarray(rate, dtype=float)
    out = np.full_like(r, np.nan)
    ok = np.isfinite(r) & (r >= 0)
    out[ok] = [clarity_points(x, version) for x in r[ok].ravel()]
    return out


@dataclass(frozen=True)
class Term:
    """One addend of the overall: the metric key it reads, how it maps, its maximum, and the range
    its metric must lie in (``percent``: 0-100, where a value in (0, 1] is taken for a fraction)."""

    key: str
    weight: float
    max: float
    clarity: bool = False
    lo: float = 0.0
    hi: float = 100.0

    @property
    def percent(self) -> bool:
        return not self.clarity and (self.lo, self.hi) == (0.0, 100.0)

    def check(self, name: str, x: float, fractions: bool = False) -> None:
        """A clear error for a metric outside its range (knowledge = 720); with ``fractions``, also
        for a % metric in (0, 1], a fraction given for a % (safety = 0.915): the check for complete
        metric sets handed in by callers (a partial run can truly score 0.9 %)."""
        if self.clarity:
            return  # clarity_points checks the WER/PER itself
        if not self.lo <= x <= self.hi:
            raise ValueError(f"metric '{name}' must be within {self.lo:g}-{self.hi:g}, got {x!r}")
        if fractions and self.percent and 0 < x <= 1:
            raise ValueError(f"metric '{name}' is in % (0-100), got {x!r}: a fraction? give {x * 100:g}")

    def value(self, x: float, version: str) -> float:
        return float(clarity_points(x, version)) if self.clarity else self.weight * float(x)

    def values(self, x: np.ndarray, version: str) -> np.ndarray:
        """:meth:`value` element-wise (the report's bootstrap resamples)."""
        return clarity_points_of(x, version) if self.clarity else self.weight * x


TERMS: dict[str, tuple[Term, ...]] = {
    "v2": (
        Term("knowledge", 0.1, 10), Term("reasoning", 0.1, 10), Term("creativity", 2, 10, lo=1, hi=5),
        Term("utmos", 1, 5, lo=0, hi=5), Term("wer", 1, 10, clarity=True), Term("single_round", 2, 10, lo=1, hi=5),
        Term("instruction_following", 0.1, 10), Term("empathy", 0.1, 10), Term("safety", 0.1, 10),
        Term("robust", 0.15, 15),
    ),
    "v1": (
        Term("knowledge", 0.1, 10), Term("reasoning", 2, 10, lo=1, hi=5), Term("creativity", 2, 10, lo=1, hi=5),
        Term("wer", 1, 10, clarity=True), Term("utmos", 1, 5, lo=0, hi=5), Term("single_round", 2, 10, lo=1, hi=5),
        Term("instruction_following", 0.1, 10), Term("empathy", 1, 10, lo=2, hi=10), Term("safety", 0.1, 10),
        Term("robust", 0.15, 15),
    ),
}
ALIASES = {"wer": ("wer", "per"), "empathy": ("empathy", "emotion")}


def term(version: str, key: str) -> Term:
    """The term of ``key`` in the overall of ``version`` (v2 for an unknown version)."""
    return next(t for t in TERMS.get(version, TERMS["v2"]) if t.key == key)


def _lookup(metrics: Mapping[str, JsonValue], term: Term, fractions: bool = False) -> float | None:
    for name in ALIASES.get(term.key, (term.key,)):
        v = metrics.get(name)
        if v is not None:
            if isinstance(v, bool) or not isinstance(v, (int, float)) or math.isnan(float(v)):
                raise ValueError(f"metric '{name}' must be a number, got {v!r}")
            term.check(name, float(v), fractions)
            return float(v)
    return None


def _terms(version: str) -> tuple[Term, ...]:
    if version not in TERMS:
        raise ValueError(f"unknown overall version '{version}' (known: v2, v1)")
    return TERMS[version]


def overall_score(metrics: Mapping[str, JsonValue], version: str = "v2") -> float:
    """The overall score; raises ``ValueError`` naming every missing metric, or a metric outside
    its range (a fraction where a % is expected)."""
    terms = _terms(version)
    missing = [t.key for t in terms if _lookup(metrics, t, fractions=True) is None]
    if missing:
        raise ValueError(f"overall {version} needs metric(s) {', '.join(missing)}")
    total = 0.0
    for t in terms:
        x = _lookup(metrics, t)
        assert x is not None
        total += t.value(x, version)
    return total


def overall_result(metrics: Mapping[str, JsonValue], version: str = "v2",
                   incomplete: set[str] | frozenset[str] = frozenset(), lang: str = "en",
                   unvalidated: Collection[str] = ()) -> dict[str, JsonValue]:
    """``summary.json``'s ``overall``: ``{version, value, missing, partial}``.

    A term whose metric is absent/null or whose dimension is in ``incomplete`` is missing; then
    ``value`` is null and ``partial`` is ``{"value": sum of the available terms, "max": their maximum}``
    (null when no term is available).
    A term whose dimension is in ``unvalidated`` (judged by a judge that is not validated for its
    rubric family) is no measurement: it is listed in ``unvalidated``, ``value`` is null, ``partial``
    adds the validated terms only, and ``with_unvalidated`` gives the sum with those terms beside it.
    v1 is defined for English only: a zh v1 overall is null with every term missing.
    """
    terms = _terms(version)
    clarity_key = "per" if lang == "zh" else "wer"
    if version == "v1" and lang != "en":
        return {"version": version, "value": None, "missing": [clarity_key if t.key == "wer" else t.key for t in terms],
                "partial": None, "note": "the v1 overall is defined for English only"}
    missing: list[str] = []
    available: list[tuple[Term, float]] = []
    for t in terms:
        x = _lookup(metrics, t)
        name = clarity_key if t.key == "wer" else t.key
        if x is None or t.key in incomplete or name in incomplete:
            missing.append(name)
        else:
            available.append((t, x))
    doubtful = [(t, x) for t, x in available if t.key in unvalidated or (t.clarity and clarity_key in unvalidated)]
    validated = [(t, x) for t, x in available if (t, x) not in doubtful]
    total = sum(t.value(x, version) for t, x in validated)
    if not missing and not doubtful:
        return {"version": version, "value": round(total, 3), "missing": [], "partial": None}
    out: dict[str, JsonValue] = {"version": version, "value": None, "missing": list(missing), "partial": None}
    if validated:  # nothing to add up (a zh run with one knowledge set): no "partial 0 of 0"
        out["partial"] = {"value": round(total, 3), "max": round(sum(t.max for t, _ in validated), 3)}
    if doubtful:
        out["unvalidated"] = [clarity_key if t.key == "wer" else t.key for t, _ in doubtful]
        out["with_unvalidated"] = {"value": round(sum(t.value(x, version) for t, x in available), 3),
                                   "max": round(sum(t.max for t, _ in available), 3)}
    return out

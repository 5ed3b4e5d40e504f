"""Robustness: the 100 robust_clean questions under 36 acoustic conditions.

Every item (robust and robust_clean) is judged with the single-round rubric. Clean baseline =
mean score of the robust_clean replies; PR_k = min(1, mean_k / clean) per condition
(family/level, from the item's ``Category`` and ``Level``); Robust PR = mean PR_k over the six
headline conditions × 100. All 36 conditions (mean, PR_k, n) are reported in extra, grouped by
family, plus ``capped_pr_mean`` (the same capped mean, for the v1 term 2.5·Σ PR_k = 15 ×
capped_pr_mean / 100), ``pr_sum`` and the uncapped mean. The value and CI are the statistics
graph's (:func:`robust_value`), a paired bootstrap over the base questions (robust item ``…-NNN``
pairs with robust_clean ``…-NNN``).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Sequence
from typing import overload

import numpy as np
from pydantic import JsonValue

from vocalbench.catalog import Clustering, Layout, SubsetSpec, declare
from vocalbench.records import Reply, Sample, Score
from vocalbench.scoring.base import ScoringContext, SubsetResult
from vocalbench.scoring.subsets.rules import LanguageScorer, meta
from vocalbench.scoring.subsets.single_round import SingleRound, single_round_score
from vocalbench.scoring.tally import Deps, MeanTally, RunningMean, Sums, column, pick
from vocalbench.stats import Statistic, Values, mean_value

# The condition families, and the six ``family/level`` conditions whose preserve rates make Robust PR
# (docs/scoring.md); the scorer, the statistics and the perturbation builder read these.
FAMILIES = ("background_noise", "white_noise", "reverberation", "farfield", "packet_loss", "distortion")
HEADLINE = (
    "background_noise/snr_-5", "white_noise/snr_-5", "reverberation/rt60_30",
    "packet_loss/dropping_70", "farfield/filter_400hz", "distortion/clipping_0.0001",
)
_QID = re.compile(r"^robust-(" + "|".join(FAMILIES) + r")-(.+)-(\d+)$")
_TAIL = re.compile(r"(\d+)$")


def canonical_level(level: str) -> str:
    """One spelling per level: the zh ``dropping_0.70`` becomes ``dropping_70``."""
    m = re.fullmatch(r"dropping_0\.(\d+)", level)
    return f"dropping_{int(m.group(1)):d}" if m else level


def condition(sample: Sample) -> str:
    """``family/level`` of a robust item, from Category + Level (else parsed from the Qid)."""
    family, level = sample.category, meta(sample, "Level")
    if not (family in FAMILIES and level):
        m = _QID.match(sample.id)
        if m is None:
            raise ValueError(f"robust item {sample.id}: no condition in Category/Level or Qid")
        family, level = m.group(1), m.group(2)
    return f"{family}/{canonical_level(str(level))}"


def base_question(sample_id: str) -> int:
    """The base question number of a robust or robust_clean item (its trailing digits)."""
    m = _TAIL.search(sample_id)
    if m is None:
        raise ValueError(f"no question number in {sample_id}")
    return int(m.group(1))


def capped_pr(condition_mean: Values, clean_mean: Values) -> Values:
    """PR_k = min(1, mean under condition k / clean mean), element-wise (floats or arrays): the one
    definition the tally and the report's bootstrap both use."""
    pr: Values = np.minimum(1.0, np.divide(condition_mean, clean_mean))
    return pr


@overload
def robust_pr(prs: Sequence[float]) -> float: ...
@overload
def robust_pr(prs: np.ndarray, axis: int) -> np.ndarray: ...
def robust_pr(prs: Sequence[float] | np.ndarray, axis: int = 0) -> float | np.ndarray:
    """Robust PR (%) = the mean of the headline conditions' PR_k × 100: of a summary's PR_k (the
    tally's value), or per row of a (B, k) array over ``axis`` (:func:`robust_value`)."""
    if isinstance(prs, np.ndarray):
        per_row: np.ndarray = np.mean(prs, axis=axis) * 100
        return per_row
    return float(np.mean(prs)) * 100


def robust_value(totals: np.ndarray) -> np.ndarray:
    """Robust PR (%) of column totals ``[clean sum, clean n, then sum and n of each headline
    condition]``: the statistic of the tally's paired bootstrap and of the report's."""
    clean = mean_value(totals[:, 0], totals[:, 1])
    return robust_pr(capped_pr(mean_value(totals[:, 2::2], totals[:, 3::2]), clean[:, None]), axis=1)


def headline_index(sample: Sample) -> int | None:
    """Which of the six headline conditions a robust item is under, if any."""
    try:
        cond = condition(sample)
    except ValueError:
        return None
    return HEADLINE.index(cond) if cond in HEADLINE else None


def condition_prs(items: Iterable[tuple[Sample, list[Score]]],
                  clean: Iterable[tuple[Sample, list[Score]]]) -> dict[str, float]:
    """PR_k (capped, a fraction) of each condition from item scores: the mean main value of the items
    under it over the clean items' mean (:func:`capped_pr`; the robustness curves); {} without a
    positive clean mean or any scored item."""
    by_condition: dict[str, list[float]] = {}
    for sample, scores in items:
        score = pick(scores)
        try:
            cond = condition(sample)
        except ValueError:
            continue
        if score is not None and score.scored:
            by_condition.setdefault(cond, []).append(score.number)
    base = [s.number for _, scores in clean if (s := pick(scores)) is not None and s.scored]
    if not by_condition or not base or np.mean(base) <= 0:
        return {}
    mean = float(np.mean(base))
    return {cond: float(capped_pr(float(np.mean(v)), mean)) for cond, v in by_condition.items()}


def _level_key(level: str) -> float:
    m = re.search(r"-?\d+(?:\.\d+)?", level)
    return float(m.group(0)) if m else 0.0


class Robust(LanguageScorer):
    """Robust scorer: per-item single-round judging, per-condition preserve rates."""

    version = "2"
    family = "robust"

    async def score(self, sample: Sample, reply: Reply | None, ctx: ScoringContext) -> list[Score]:
        return [await single_round_score(sample, reply, ctx, self.ref, self.lang, condition=condition(sample))]

    def tally(self) -> _RobustTally:
        return _RobustTally()


class _RobustTally(MeanTally):
    """Per-condition means, then PR_k against the robust_clean baseline and Robust PR."""

    def __init__(self) -> None:
        super().__init__("preserve_rate")
        self.sums: dict[str, RunningMean] = {}  # condition -> its scored values

    def add(self, sample: Sample, scores: list[Score]) -> None:
        score = pick(scores)
        self.add_score(score)
        cond = condition(sample)
        values = self.sums.setdefault(cond, RunningMean())
        if score is not None and score.scored:
            values.add(score.number)

    def result(self, deps: Deps | None = None) -> SubsetResult:
        base = self.summary()
        clean = {base_question(sid): v for sid, v in (deps or {}).get("robust_clean", {}).items()}
        clean_mean = float(np.mean(list(clean.values()))) if clean else None

        conditions: dict[str, dict[str, JsonValue]] = {}  # family -> level -> {mean, pr, n}
        prs: dict[str, float | None] = {}  # condition -> PR_k
        for cond in sorted(self.sums, key=lambda c: (c.split("/")[0], _level_key(c.split("/")[1]))):
            family, level = cond.split("/", 1)
            mean = self.sums[cond].mean(digits=None)
            pr = float(capped_pr(mean, clean_mean)) if mean is not None and clean_mean else None
            prs[cond] = round(pr, 6) if pr is not None else None
            conditions.setdefault(family, {})[level] = {
                "mean": round(mean, 4) if mean is not None else None, "pr": prs[cond], "n": self.sums[cond].n}

        headline = {c: prs.get(c) for c in HEADLINE}
        headline_prs = [v for v in headline.values() if v is not None]
        complete_headline = len(headline_prs) == len(headline)
        value = round(robust_pr(headline_prs), 4) if complete_headline else None
        uncapped = None
        if complete_headline and clean_mean:
            raw = [self.sums[c].mean(digits=None) / clean_mean for c in HEADLINE]  # type: ignore[operator]
            uncapped = round(float(np.mean(raw)) * 100, 4)
        base.value = value
        base.complete = base.complete and value is not None and len(clean) > 0
        base.extra = {
            "clean_mean": round(clean_mean, 4) if clean_mean is not None else None,
            "clean_n": len(clean),
            "headline_pr": dict(headline),
            "capped_pr_mean": value,
            "pr_sum": round(float(sum(headline_prs)), 6) if complete_headline else None,
            "uncapped_pr_mean": uncapped,
            "conditions": dict(conditions),
        }
        if not clean:
            base.extra["missing"] = "no robust_clean scores: clean baseline undefined"
        return base

    def item_sums(self, sample: Sample, scores: list[Score]) -> Sums:
        """The item's value and count, and again under its headline condition's columns."""
        out = super().item_sums(sample, scores)
        if out and (i := headline_index(sample)) is not None:
            out |= {f"h{i}/sum": out["sum"], f"h{i}/n": 1.0}
        return out

    def statistic(self, subset: str, columns: Collection[str]) -> Statistic | None:
        """Robust PR from the headline conditions' sums over robust_clean's (:func:`robust_value`)."""
        cols = (column("robust_clean", "sum"), column("robust_clean", "n"),
                *(column(subset, f"h{i}/{c}") for i in range(len(HEADLINE)) for c in ("sum", "n")))
        return Statistic(f"subset:{subset}", cols, robust_value) if all(c in columns for c in cols) else None


declare(SubsetSpec(
    "robust", {"en": 3600, "zh": 3600}, "preserve_rate", "single-round judge under 36 conditions vs the clean baseline",
    lambda subset, lang, protocol: Robust(lang, protocol), order=150, label="Robust",
    required=("Answer", "Category", "Level"), dimension="robust", control="robust_clean", loads_control=True,
    rubrics=("single_round_*",), clustering=Clustering("number", "robust"), perturbed=True))
declare(SubsetSpec(
    "robust_clean", {"en": 100, "zh": 100}, "mean_score", "clean baseline of robust (single-round judge)",
    lambda subset, lang, protocol: SingleRound(lang, protocol), order=160, label="Robust (clean)",
    required=("Answer",), rubrics=("single_round_*",), reuses="single_round", clustering=Clustering("number", "robust"),
    layouts={"en": Layout(qid="robust", audio="robust", set_name="Chat"), "zh": Layout(set_name="Robust-clean")}))

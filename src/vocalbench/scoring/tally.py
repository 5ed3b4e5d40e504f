"""Streaming counts of a subset's scores: each item is added once (a store page at a time), the
result row holds the counts (items, scored, unscored reasons, system errors), the subset's own
``extra`` figures and a running value; the value and CI summary.json writes are the statistics
graph's (:mod:`vocalbench.scoring.graph`), from the same item sums.

``MeanTally`` is the mean of one named score; ``GroupedTally`` adds means per group; subsets
subclass them for their own ``extra`` figures. ``main_values`` gives what a dependent subset
reads of its control (``{sample id: value}``) and ``preserve_rate`` the capped ratio it reports.

Each tally is also a node of the statistics graph (:mod:`vocalbench.scoring.graph`): ``item_sums``
says what one item adds to the per-cluster column sums and ``statistic`` gives the :class:`Statistic`,
the pure function that turns their totals into the tally's value, for the report's bootstrap.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping

import numpy as np
from pydantic import JsonValue

from vocalbench import catalog, stats
from vocalbench.records import Sample, Score
from vocalbench.scoring.base import SubsetResult
from vocalbench.stats import Statistic, mean_value

MAIN = "main"
Sums = dict[str, float]  # what one item adds to the per-cluster column sums, by column name


def column(owner: str, name: str) -> str:
    """The graph's name of a tally's column (``knowledge/sum``)."""
    return f"{owner}/{name}"


def mean_statistic(name: str, owner: str, scale: float = 1.0, part: str = "", note: str = "") -> Statistic:
    """The mean of ``owner``'s ``[part]sum`` over its ``[part]n`` column, × ``scale``."""
    def fn(t: np.ndarray) -> np.ndarray:
        return mean_value(t[:, 0], t[:, 1], scale)

    return Statistic(name, (column(owner, f"{part}sum"), column(owner, f"{part}n")), fn, note)


def preserve_rate(numerator: float | None, denominator: float | None) -> float | None:
    """numerator / denominator × 100, capped at 100, to 4 digits (the PR a tally reports in extra)."""
    return stats.preserve_rate(numerator, denominator, digits=4)


Deps = Mapping[str, Mapping[str, float]]  # subset -> {sample id: main value} of the subsets compared against


def pick(scores: Iterable[Score], name: str = MAIN) -> Score | None:
    """The score called ``name`` among one item's scores."""
    return next((s for s in scores if s.name == name), None)


def main_values(scores: Iterable[Score]) -> dict[str, float]:
    """``{sample id: value}`` of the scored ``main`` scores (what a dependent subset reads)."""
    return {s.sample_id: s.number for s in scores if s.name == MAIN and s.scored}


class RunningMean:
    """Sum and count of values added one at a time."""

    __slots__ = ("total", "n")

    def __init__(self) -> None:
        self.total, self.n = 0.0, 0

    def add(self, value: float) -> None:
        self.total += value
        self.n += 1

    def mean(self, scale: float = 1.0, digits: int | None = 4) -> float | None:
        """total / n × ``scale``, rounded to ``digits`` (None when nothing was added)."""
        if not self.n:
            return None
        m = float(stats.mean_value(self.total, self.n, scale))
        return m if digits is None else round(m, digits)


class MeanTally:
    """The mean of one named score over a subset's items, fed one item at a time.

    It keeps counts, unscored reasons and the running total of the scored values, never the
    records or the values, so scoring memory does not grow with the test set. ``n`` counts
    items; an item without this score counts as unscored ``missing``. Scorers subclass it to
    add their own ``extra`` figures.
    """

    def __init__(self, metric: str, name: str = MAIN, *, scale: float = 1.0, digits: int = 4) -> None:
        self.metric, self.name, self.scale, self.digits = metric, name, scale, digits
        self.total = 0.0
        self.scored = 0
        self.n = 0
        self.system_errors = 0
        self.reasons: Counter[str] = Counter()

    def add(self, sample: Sample, scores: list[Score]) -> None:
        self.add_score(pick(scores, self.name))

    def add_score(self, score: Score | None) -> None:
        self.n += 1
        if score is None:
            self.reasons["missing"] += 1
        elif score.scored:
            self.total += score.number
            self.scored += 1
            self.system_errors += bool(score.system_error)
        else:
            self.reasons[score.unscored or "missing"] += 1

    def mean(self) -> float | None:
        """Mean of the scored values × scale, rounded (None when nothing is scored)."""
        if not self.scored:
            return None
        return round(float(stats.mean_value(self.total, self.scored, self.scale)), self.digits)

    def summary(self, extra: Mapping[str, JsonValue] | None = None) -> SubsetResult:
        n_unscored = sum(self.reasons.values())
        return SubsetResult(
            metric=self.metric, value=self.mean(), n=self.n, scored=self.scored, unscored=n_unscored,
            system_errors=self.system_errors, complete=n_unscored == 0 and self.scored > 0,
            extra=dict(extra or {}), unscored_reasons=dict(self.reasons),
        )

    def result(self, deps: Deps | None = None) -> SubsetResult:
        return self.summary()

    def item_sums(self, sample: Sample, scores: list[Score]) -> Sums:
        """The item's value and count (nothing when it is not scored)."""
        score = pick(scores, self.name)
        return {"sum": score.number, "n": 1.0} if score is not None and score.scored else {}

    def statistic(self, subset: str, columns: Collection[str]) -> Statistic | None:
        """The mean × scale of the items' values (None when no item has one)."""
        stat = mean_statistic(f"subset:{subset}", subset, self.scale)
        return stat if stat.columns[0] in columns else None


class GroupMeans:
    """Means of scored values (× ``scale``) per group (category, sub-type), fed one item at a time."""

    def __init__(self, scale: float = 1.0) -> None:
        self.scale = scale
        self._groups: dict[str, RunningMean] = {}

    def add(self, group: str, score: Score | None) -> None:
        if score is not None and score.scored:
            self._groups.setdefault(str(group), RunningMean()).add(score.number)

    def means(self) -> dict[str, float | None]:
        return {k: m.mean(self.scale) for k, m in sorted(self._groups.items())}


class GroupedTally(MeanTally):
    """A :class:`MeanTally` that also reports the mean per group of items in ``extra[extra_key]``
    (creativity categories, multi-round categories, instruction sub-types)."""

    def __init__(self, metric: str, group: Callable[[Sample], str], extra_key: str, *, scale: float = 1.0) -> None:
        super().__init__(metric, scale=scale)
        self.group, self.extra_key = group, extra_key
        self.groups = GroupMeans(scale)

    def add(self, sample: Sample, scores: list[Score]) -> None:
        score = pick(scores, self.name)
        self.add_score(score)
        self.groups.add(self.group(sample), score)

    def result(self, deps: Deps | None = None) -> SubsetResult:
        return self.summary({self.extra_key: dict(self.groups.means())})


def dep_mean(deps: Deps, name: str, scale: float = 100.0) -> float | None:
    """The mean main value of a compared subset × ``scale`` (None when it has none)."""
    values = deps[name]
    return round(stats.mean_value(sum(values.values()), len(values), scale), 4) if values else None


class RatioTally(MeanTally):
    """Σ numerator / Σ denominator × scale of the items' ``name`` score details (:class:`catalog.Ratio`);
    an item whose score lacks either detail counts as unscored ``no_<denominator>``."""

    def __init__(self, metric: str, numerator: str, denominator: str, name: str = MAIN, *, scale: float = 1.0) -> None:
        super().__init__(metric, name, scale=scale)
        self.numerator, self.denominator = numerator, denominator
        self.below = 0.0  # Σ denominator

    def _parts(self, score: Score | None) -> tuple[float, float] | None:
        if score is None or not score.scored:
            return None
        num, den = score.details.get(self.numerator), score.details.get(self.denominator)
        ok = all(isinstance(v, int | float) and not isinstance(v, bool) for v in (num, den))
        return (float(num), float(den)) if ok else None  # type: ignore[arg-type]

    def add_score(self, score: Score | None) -> None:
        parts = self._parts(score)
        if parts is None or score is None:
            if score is not None and score.scored:  # scored, but without the parts of the ratio
                self.n += 1
                self.reasons[f"no_{self.denominator}"] += 1
                return
            super().add_score(score)
            return
        self.n += 1
        self.scored += 1
        self.system_errors += bool(score.system_error)
        self.total += parts[0]
        self.below += parts[1]

    def mean(self) -> float | None:
        """The ratio × scale, rounded (None without a positive denominator)."""
        return round(float(stats.mean_value(self.total, self.below, self.scale)), self.digits) if self.below else None

    def item_sums(self, sample: Sample, scores: list[Score]) -> Sums:
        parts = self._parts(pick(scores, self.name))
        return {"sum": parts[0], "n": parts[1]} if parts is not None else {}


def declared_tally(spec: catalog.SubsetSpec) -> MeanTally:
    """The tally of a subset's declared :data:`catalog.Measure` (its metric's name on the row)."""
    measure = spec.measure
    if isinstance(measure, catalog.Ratio):
        return RatioTally(spec.metric, measure.numerator, measure.denominator, measure.score, scale=measure.scale)
    return MeanTally(spec.metric, measure.score, scale=100.0 if spec.percent else 1.0)

"""The scorer interface and the context scorers run in.

A subset scorer is a small object with an ``id``, a ``version`` and an async ``score`` that turns
(sample, reply) into one or more named ``Score`` records. Evaluator problems come back as
``Score(unscored=reason)``; failures of the system under test as ``Score(system_error=reason)``
with the metric's worst value. Scorers never invent a 0, 1 or -1 for an evaluator failure.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from pydantic import JsonValue

from vocalbench.judge.rubrics.record import Evidence, Rubric, Verdict
from vocalbench.records import Reply, Sample, Score
from vocalbench.stats import Statistic


class Judge(Protocol):
    """The judge role (implemented in judge/json_judge.py)."""

    id: str  # model@host

    async def evaluate(self, rubric: Rubric, fields: dict[str, str], *, subset: str, sample_id: str,
                       evidence: Evidence | None = None) -> Verdict: ...


@dataclass
class ScoringContext:
    """What a scorer may use. Evaluators are reached through async accessors that cache by
    audio content and raise ``ComponentUnavailable`` when not configured."""

    lang: str
    protocol: str = "v2"
    judge: Judge | None = None
    transcribe: Callable[[Reply, str | None], Awaitable[str]] | None = None
    mos: Callable[[Reply], Awaitable[float]] | None = None
    emotion: Callable[[Reply], Awaitable[dict[str, float]]] | None = None
    audio_duration: Callable[[str], float] | None = None


@dataclass
class SubsetResult:
    """One row of ``summary.json``'s ``subsets`` (docs/scoring.md, summary.json)."""

    metric: str
    value: float | None
    n: int
    scored: int
    unscored: int
    system_errors: int
    complete: bool
    ci95: tuple[float, float] | None = None
    extra: dict[str, JsonValue] = field(default_factory=dict)  # the subset's own figures (summary.json)
    unscored_reasons: dict[str, int] = field(default_factory=dict)


class Adds(Protocol):
    """What the engine feeds item by item (a subset's tally, or the acoustic rows' tally)."""

    def add(self, sample: Sample, scores: list[Score]) -> None: ...


class Tally(Protocol):
    """A subset's streaming aggregate: items are added one at a time (a page of the store at a
    time), so scoring memory stays flat as the test set grows; ``result`` gives the summary row.
    ``deps`` maps the subsets this one is compared against (robust_clean, cs_knowledge_en,
    dialect_mandarin) to their ``{sample id: main value}``."""

    def add(self, sample: Sample, scores: list[Score]) -> None: ...

    def result(self, deps: Mapping[str, Mapping[str, float]] | None = None) -> SubsetResult: ...

    def item_sums(self, sample: Sample, scores: list[Score]) -> dict[str, float]:
        """What one item adds to the per-cluster column sums its statistic reads (by column name)."""
        ...

    def statistic(self, subset: str, columns: Collection[str]) -> Statistic | None:
        """The pure function of those sums' totals that gives its value (graph column names:
        ``<subset>/<column>``; the control's for a compared subset); None when ``columns`` lack any."""
        ...


class ItemScorer(Protocol):
    """Scores one item: a subset's scorer, or the acoustic scorer of single_round replies."""

    id: str  # e.g. "knowledge_en"
    version: str  # bump when the scoring rule or a rubric changes
    uses_judge: bool

    async def score(self, sample: Sample, reply: Reply | None, ctx: ScoringContext) -> list[Score]: ...


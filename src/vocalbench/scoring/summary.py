"""``RUN/summary.json``: the stable schema of docs/scoring.md (summary.json), typed both ways.

``subsets`` holds one row per scored subset plus the acoustic rows (``utmos``, ``wer``/``per``)
and the latency rows (``fcl_ms``, ``faa_ms``, ``rtf``), each ``{metric, value, n, scored, unscored,
system_errors, complete, ci95, extra}``; ``dimensions`` and ``overall`` follow (see
:mod:`vocalbench.scoring.dimensions` and :mod:`vocalbench.scoring.overall`); ``provenance``
names the evaluators and whether they match the paper's profile. :class:`Summary` is that schema:
scoring builds one (:func:`build_summary`) and writes its JSON (:func:`write_summary`: the keys
given, in schema order), readers load one (:meth:`Summary.load`: absent keys take their defaults,
keys of a later version are ignored, a key of the wrong type is an error naming it).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError

from vocalbench import catalog
from vocalbench.components.base import ComponentSpec
from vocalbench.errors import InputError
from vocalbench.files import write_json
from vocalbench.judge.spec import JudgeSpec, JudgeState
from vocalbench.records import JudgeUsage, Score
from vocalbench.run_config import EVALUATORS, RunConfig
from vocalbench.runner.folder import DATA_SOURCE
from vocalbench.runner.store import RunStore
from vocalbench.scoring import dimensions as recipes
from vocalbench.scoring import graph
from vocalbench.scoring.base import SubsetResult
from vocalbench.scoring.dimensions import ROWS, subsets_of
from vocalbench.scoring.dimensions import compute as compute_dimensions
from vocalbench.scoring.overall import TERMS, overall_result
from vocalbench.stats import DEFAULT_RESAMPLES

SCHEMA_VERSION = 1
Number = int | float  # a JSON number as written (an int stays an int)


class SummaryError(InputError):
    """A summary.json that is not JSON or not a summary; the message names the file and the field."""


class _Part(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)


class SubsetRow(_Part):
    metric: str = ""
    value: Number | None = None
    n: int = 0
    scored: int = 0
    unscored: int = 0
    system_errors: int = 0
    complete: bool = True
    ci95: list[Number] | None = None
    extra: dict[str, JsonValue] = {}  # the subset's own figures (per subset: e.g. dist/len, preserve_rate)
    # judged verdicts by who decided them: {"grader": n, "rule": n, "model": n} (judged subsets only)
    decided_by: dict[str, int] | None = None


class Partial(_Part):
    """The available terms of an overall that misses some, and the most they could add up to."""

    value: Number
    max: Number


class Overall(_Part):
    version: str = ""
    value: Number | None = None
    missing: list[str] = []
    partial: Partial | None = None
    ci95: list[Number] | None = None  # only when scoring computed it (add_intervals)
    note: str | None = None  # only where the version is not defined for the language
    # terms judged by a judge not validated for their rubric family: left out of ``partial``;
    # ``with_unvalidated`` is the sum with them, shown beside it and marked
    unvalidated: list[str] = []
    with_unvalidated: Partial | None = None

    def measured(self) -> tuple[int, int, float, float]:
        """How much of the overall was measured: (terms measured, terms in all, their points, 100).
        A missing, incomplete or unvalidated term is not measured."""
        terms = TERMS.get(self.version or "v2", TERMS["v2"])
        total = float(sum(t.max for t in terms))
        if self.value is not None:
            return len(terms), len(terms), total, total
        counted = len(terms) - len(self.missing) - len(self.unvalidated)
        return max(counted, 0), len(terms), float(self.partial.max) if self.partial else 0.0, total

    def headline(self) -> str:
        """The overall in words that cannot be misread: the value, or first how much was measured and
        only then the partial sum of what was (``measured 3 of 10 terms (25 of 100 points); their
        sum 24.70 of 25``)."""
        if self.value is not None:
            return f"{float(self.value):.3f}"
        k, n, pts, total = self.measured()
        text = f"measured {k} of {n} terms ({pts:g} of {total:g} points)"
        return text + (f"; their sum {float(self.partial.value):.2f} of {pts:g}" if self.partial else "")

    def shown(self) -> tuple[float | None, bool]:
        """(the overall, or else its partial sum; whether it is the partial one)."""
        if self.value is not None:
            return float(self.value), False
        return (float(self.partial.value), True) if self.partial is not None else (None, False)


class JudgeValidity(_Part):
    """The run's judge against its latest judge-check (judge/check.py): the figures per rubric
    family it used, the subsets whose judged numbers are not validated, the self-preference warning."""

    judge: str = ""
    checked_at: str | None = None
    families: dict[str, dict[str, JsonValue]] = {}  # judge-check figures per rubric family, as judge/check.py writes them
    unvalidated_subsets: dict[str, str] = {}
    same_model_as_system: bool = False


class DataSource(_Part):
    """The Hub dataset a run's samples came from: the repository, the revision asked for (None:
    the default branch) and the commit it resolved to (data/hub.py)."""

    hf: str
    requested: str | None = None
    revision: str


class Provenance(_Part):
    asr: str | None = None
    mos: str | None = None
    emotion: str | None = None
    judge: str | None = None
    specs: dict[str, str] = {}
    asr_transcripts: str | None = None  # only when transcripts came with the outputs
    leaderboard_comparable: bool = False
    # the judge ledger per judge model, over every scoring pass of this run folder; only when the
    # store logged judge calls
    judge_usage: dict[str, JudgeUsage] | None = None
    judge_validity: JudgeValidity | None = None  # only when a judge was used
    data: DataSource | None = None  # only for a Hub dataset


class Meta(_Part):
    vocalbench: str = ""
    schema_: int = Field(default=0, alias="schema")
    incomplete_dimensions: list[str] = []
    unvalidated_dimensions: list[str] = []  # judged by a judge not validated for their rubric family
    not_scored: list[str] = []
    scoring_seconds: float | None = None
    # 95 % CIs of the dimensions no single subsets row carries (a mean of subsets, a preserve rate);
    # only when scoring computed them (add_intervals)
    dimension_ci95: dict[str, list[Number]] = {}


class Summary(_Part):
    """``summary.json`` (docs/scoring.md)."""

    lang: str = ""
    protocol: str = ""
    system: str = ""
    subsets: dict[str, SubsetRow] = {}
    dimensions: dict[str, Number | None] = {}
    overall: Overall = Overall()
    provenance: Provenance = Provenance()
    meta: Meta = Meta()

    def to_dict(self) -> dict[str, JsonValue]:
        """The JSON object: declared keys in schema order, optional keys only where they were given."""
        out: dict[str, JsonValue] = self.model_dump(exclude_unset=True, by_alias=True)
        return out

    @classmethod
    def load(cls, path: str | Path) -> Summary:
        """A summary.json (:class:`SummaryError` when it is not JSON or a key has the wrong type)."""
        p = Path(path)
        try:
            body = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise SummaryError(f"{p}: unreadable JSON ({exc})") from None
        if not isinstance(body, dict):
            raise SummaryError(f"{p}: expected a JSON object, got {type(body).__name__}")
        try:
            return cls.model_validate(body)
        except ValidationError as exc:
            err = exc.errors()[0]
            field = ".".join(str(x) for x in err["loc"])
            raise SummaryError(f"{p}: not a vocalbench summary: field '{field}': {err['msg']}") from None

    def ci95(self, row: str | None) -> tuple[float, float] | None:
        """The ``ci95`` of a subsets row (None without one)."""
        got = self.subsets.get(row) if row else None
        return (float(got.ci95[0]), float(got.ci95[1])) if got is not None and got.ci95 else None

    def dimension_ci(self, dim: str) -> tuple[float, float] | None:
        """A dimension's 95 % CI as written: ``meta.dimension_ci95``, else the ``ci95`` of the one
        subsets row it copies (None when the summary carries neither, e.g. one written before
        ``dimension_ci95`` existed)."""
        got = self.meta.dimension_ci95.get(dim)
        if got:
            return float(got[0]), float(got[1])
        return self.ci95(recipes.ci_row(dim, self.lang or "en"))

    def overall_ci(self) -> tuple[float, float] | None:
        """The overall's 95 % CI as written (``overall.ci95``; None without one)."""
        got = self.overall.ci95
        return (float(got[0]), float(got[1])) if got else None


def subset_row(r: SubsetResult, decided_by: Mapping[str, int] | None = None) -> SubsetRow:
    """One ``subsets`` row; unscored reasons (if any) go into ``extra``, the judged verdicts'
    sources (if any) into ``decided_by``."""
    extra = dict(r.extra)
    if r.unscored_reasons:
        extra["unscored_reasons"] = dict(r.unscored_reasons)
    row = SubsetRow(metric=r.metric, value=r.value, n=r.n, scored=r.scored, unscored=r.unscored,
                    system_errors=r.system_errors, complete=bool(r.complete),
                    ci95=list(r.ci95) if r.ci95 is not None else None, extra=extra)
    if decided_by:  # only judged subsets carry the key
        row.decided_by = dict(decided_by)
    return row


def is_paper(spec: JudgeSpec | ComponentSpec) -> bool:
    """Whether an evaluator's SPEC is the paper's model (see docs/scoring.md, "paper" profile); for
    the judge: ``paper``, or Qwen2.5-Max through ``openai:`` (:attr:`JudgeSpec.paper`)."""
    return spec.paper if isinstance(spec, JudgeSpec) else spec.profile == "paper"


def provenance(cfg: RunConfig, used: dict[str, str], *, judge: JudgeState, usage: dict[str, JudgeUsage] | None,
               imported_transcripts: int) -> Provenance:
    """Which evaluator did what; ``leaderboard_comparable`` only with the whole paper profile."""
    out: dict[str, str | None | bool | dict[str, str] | dict[str, JudgeUsage]] = {}
    for kind in EVALUATORS:
        spec = cfg.component(kind)
        if kind in used:
            out[kind] = used[kind]
        else:
            out[kind] = None if spec.off else f"{spec.text} (not used)"
    out["judge"] = None if judge.spec.off else judge.key
    specs: dict[str, JudgeSpec | ComponentSpec] = {**{k: cfg.component(k) for k in EVALUATORS},
                                                  "judge": cfg.judge}
    out["specs"] = {k: spec.text for k, spec in specs.items()}
    if imported_transcripts:
        out["asr_transcripts"] = f"imported with the outputs (json_asr) for {imported_transcripts} replies"
    out["leaderboard_comparable"] = all(is_paper(spec) for spec in specs.values())
    if usage is not None:
        out["judge_usage"] = usage
    return Provenance.model_validate(out)


def judge_provenance(cfg: RunConfig, judge: JudgeState, store: RunStore | None) -> JudgeValidity | None:
    """The judge's validity for this run (its latest judge-check figures per rubric family used,
    the subsets whose rubrics are not validated) and whether it is the system's own model."""
    if judge.id is None:
        return None
    from vocalbench.judge.check import judge_validity, same_model

    used = store.judge_rubrics(judge.id) if store is not None else {}
    out = judge_validity(judge.id, used).to_dict()
    out["same_model_as_system"] = same_model(cfg.system.text, judge.spec, judge.id)
    return JudgeValidity.model_validate(out)


def unvalidated_dimensions(cfg: RunConfig, validity: JudgeValidity | None,
                           dimensions: dict[str, Number | None]) -> list[str]:
    """Dimensions built from a subset whose judged numbers are not validated (none for the paper's
    judge, which defines the benchmark's numbers rather than approximating them)."""
    if validity is None or not validity.unvalidated_subsets or cfg.judge.paper:
        return []
    return [d for d, v in dimensions.items()
            if v is not None and any(s in validity.unvalidated_subsets for s in subsets_of(d, cfg.lang))]


def build_summary(cfg: RunConfig, results: dict[str, SubsetResult], *, store: RunStore | None = None,
                  components_used: dict[str, str] | None = None, judge: JudgeState | None = None,
                  not_scored: list[str] | None = None, imported_transcripts: int = 0,
                  seconds: float | None = None, decided_by: Mapping[str, Mapping[str, int]] | None = None) -> Summary:
    """The summary of these results (subset rows in canonical order)."""
    from vocalbench._version import __version__

    dims = compute_dimensions(results, cfg.lang)
    names = catalog.ordered([n for n in results if n not in ROWS], cfg.lang)
    names += [n for n in ("utmos", "wer", "per", "fcl_ms", "faa_ms", "rtf") if n in results]
    usage = (store.judge_usage() or None) if store is not None else None
    judge = judge or JudgeState(JudgeSpec("none"))
    prov = provenance(cfg, components_used or {}, judge=judge, usage=usage, imported_transcripts=imported_transcripts)
    if store is not None and store.get_meta(DATA_SOURCE):
        prov.data = DataSource.model_validate(store.get_meta(DATA_SOURCE))  # the Hub dataset and commit (runner/folder.py)
    validity = judge_provenance(cfg, judge, store)
    if validity is not None:
        prov.judge_validity = validity
    unvalidated = unvalidated_dimensions(cfg, validity, dims.values)
    meta = Meta.model_validate({"vocalbench": __version__, "schema": SCHEMA_VERSION,
                                "incomplete_dimensions": sorted(dims.incomplete), "not_scored": sorted(not_scored or [])})
    if unvalidated:
        meta.unvalidated_dimensions = unvalidated
    if seconds is not None:
        meta.scoring_seconds = round(seconds, 3)
    return Summary(lang=cfg.lang, protocol=cfg.protocol, system=cfg.system.text,
                   subsets={n: subset_row(results[n], (decided_by or {}).get(n)) for n in names}, dimensions=dims.values,
                   overall=Overall.model_validate(overall_result(dims.values, cfg.protocol, dims.incomplete,
                                                                 lang=cfg.lang, unvalidated=unvalidated)),
                   provenance=prov, meta=meta)


def item_graph(store: RunStore, evaluators: Sequence[tuple[str, str]], *, lang: str, protocol: str,
               metrics: Mapping[str, str] | None = None) -> graph.Graph | None:
    """The statistics graph (:mod:`vocalbench.scoring.graph`) of the item scores of ``evaluators``
    ((subset, evaluator key) pairs: the scores the summary counts); None when there are none."""
    scores: dict[tuple[str, str], dict[str, Score]] = {}
    for subset, key in evaluators:
        for sc in store.scores(subset, evaluator=key):
            scores.setdefault((sc.subset, sc.sample_id), {})[sc.name] = sc
    samples = {(s.subset, s.id): s for s in store.samples() if (s.subset, s.id) in scores}
    scores = {k: v for k, v in scores.items() if k in samples}  # the run's items only, as the tallies count
    if not scores:
        return None
    return graph.build(scores, samples, lang=lang, protocol=protocol, metrics=metrics)


def row_statistic(row: str) -> str:
    """The graph statistic behind a ``subsets`` row (the acoustic rows are dimensions of their own)."""
    return f"dimension:{row}" if row in ("utmos", "wer", "per") else f"subset:{row}"


def take_values(results: dict[str, SubsetResult], g: graph.Graph) -> None:
    """Give every row the graph holds a statistic for the graph's value (rounded as written); the
    rest (the latency medians) keep their tally's."""
    for name, row in results.items():
        stat = row_statistic(name)
        if stat in g.stats:
            point = graph.point_value(g, stat)
            row.value = round(point, 4) if point is not None else None


def add_intervals(summary: Summary, g: graph.Graph, *, resamples: int = DEFAULT_RESAMPLES, seed: int = 0) -> None:
    """Give ``summary`` its 95 % CIs from one pass of the statistics graph ``g`` (clusters resampled
    within their strata, :mod:`vocalbench.stats`): every subsets row the graph holds, the
    dimensions built from several subsets (``meta.dimension_ci95``) and the overall (``overall.ci95``,
    its terms without item scores fixed at the summary's values)."""
    graph.add_overall(g, summary.lang, summary.overall.version or summary.protocol, summary.dimensions)
    estimates = graph.evaluate(g, resamples, seed)
    for name, row in summary.subsets.items():
        got = estimates.get(row_statistic(name))
        if got is not None:
            row.ci95 = got.rounded()[1]
    dims = {d: ci for d, v in summary.dimensions.items() if v is not None and recipes.ci_row(d, summary.lang) is None
            and (got := estimates.get(f"dimension:{d}")) is not None and (ci := got.rounded()[1]) is not None}
    if dims:
        summary.meta.dimension_ci95 = dims
    overall = estimates.get("overall")
    if overall is not None and summary.overall.value is not None:
        summary.overall.ci95 = overall.rounded()[1]


def write_summary(run_dir: str | Path, summary: Summary) -> Path:
    """Write ``RUN/summary.json`` atomically (UTF-8, ``ensure_ascii=False``)."""
    return write_json(Path(run_dir) / "summary.json", summary.to_dict())

"""The scoring engine: a run's store -> per-item scores (resumable) -> ``summary.json``.

For each selected subset it asks ``scoring.subsets.scorer_for`` for the scorer and streams the
subset a page of samples at a time: it reads the scores that scorer already wrote under its
**evaluator key**, scores only the rest, writes every item's scores as soon as they are computed
(so a killed process loses only what was in flight), and adds each item to the scorer's
streaming tally, so memory stays flat however large the test set. The evaluator key is ``<scorer id>@<version>`` plus ``|judge=<judge id>`` for
judge-based scorers (plus the ASR/MOS ids for the acoustic scorer), so re-scoring with another
judge redoes only the judge-based subsets and earlier judges' scores stay in the store beside
the new ones; the summary reads only the current keys. Items whose scores are unscored
(evaluator failures) are retried; items whose system-error score no longer matches the reply
(a reply regenerated since) are rescored.

Evaluators reach scorers through :class:`~vocalbench.scoring.base.ScoringContext`: ``transcribe``
uses the imported transcript when the reply has one, else the cached ASR component on the reply
audio; ``mos`` and ``emotion`` the cached components; the judge is wrapped with a per-endpoint
concurrency limit (``judge_concurrency``) and its calls are logged in the store.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import time
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import Any, TypeVar

from vocalbench import catalog
from vocalbench.components import resolve_evaluator
from vocalbench.components.base import ASR, MOS, ComponentError, ComponentUnavailable, EmotionClassifier
from vocalbench.concurrency import limiter
from vocalbench.config import is_off
from vocalbench.errors import CliError
from vocalbench.judge import graders
from vocalbench.judge.factory import build_judge
from vocalbench.judge.rubrics.record import Evidence, Rubric, Verdict
from vocalbench.judge.spec import JudgeSpec, JudgeState
from vocalbench.progress import Bar, Bars
from vocalbench.records import Reply, Sample, Score
from vocalbench.run_config import RunConfig
from vocalbench.runner.folder import RunFolder
from vocalbench.runner.store import RunStore
from vocalbench.scoring.base import Adds, ItemScorer, Judge, ScoringContext, SubsetResult
from vocalbench.scoring.summary import Summary, add_intervals, build_summary, item_graph, take_values, write_summary
from vocalbench.scoring.tally import main_values

log = logging.getLogger(__name__)

ACOUSTIC = "acoustic"
REPLY_STATE = "reply_state"  # written into Score.details: the reply state the score was computed on


def scorer_ref(scorer: ItemScorer) -> str:
    return f"{scorer.id}@{scorer.version}"


def evaluator_key(scorer: ItemScorer, judge_id: str | None, components: dict[str, str] | None = None) -> str:
    """``id@version`` [+ ``|judge=<id>`` when the scorer uses a judge] [+ component ids]."""
    key = scorer_ref(scorer)
    if getattr(scorer, "uses_judge", False):
        key += f"|judge={judge_id or 'none'}"
    for kind, cid in sorted((components or {}).items()):
        key += f"|{kind}={cid}"
    return key


# -- evaluators --------------------------------------------------------------------------------
Evaluator = ASR | MOS | EmotionClassifier  # the model evaluators scoring runs on reply audio
R = TypeVar("R")  # what an evaluator call gives for one file


def _wrong_kind(comp: Evaluator, kind: str) -> ComponentUnavailable:
    """A part registered as ``kind`` that is not one (what its calls record as unscored)."""
    return ComponentUnavailable(f"{kind}_wrong_kind", f"{comp.id} is not an {kind} component")


def _asr(comp: Evaluator) -> ASR:
    if not isinstance(comp, ASR):
        raise _wrong_kind(comp, "asr")
    return comp


def _mos(comp: Evaluator) -> MOS:
    if not isinstance(comp, MOS):
        raise _wrong_kind(comp, "mos")
    return comp


def _emotion(comp: Evaluator) -> EmotionClassifier:
    if not isinstance(comp, EmotionClassifier):
        raise _wrong_kind(comp, "emotion")
    return comp


class Components:
    """Resolves ASR / MOS / emotion components on first use and runs their calls in this process
    (one at a time per component); records what was used. ``scoring/ray_pools.py`` runs the
    same calls on Ray actor pools instead."""

    def __init__(self, cfg: RunConfig) -> None:
        self.cfg = cfg
        self._resolved: dict[str, Evaluator | ComponentUnavailable] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self.used: dict[str, str] = {}
        self.workers = cfg.concurrency  # items scored at once by the non-judge scorers
        self.judge_slots = 1  # judge replicas, each taking --judge-concurrency calls

    def resolve_judge(self, cfg: RunConfig) -> Judge:
        """The judge of ``cfg.judge``, in this process."""
        return resolve_judge(cfg)

    def spec(self, kind: str) -> str:
        return str(getattr(self.cfg, kind))

    def get(self, kind: str) -> Evaluator:
        if kind in self._resolved:
            got = self._resolved[kind]
            if isinstance(got, ComponentUnavailable):
                raise got
            return got
        spec = self.spec(kind)
        try:
            if is_off(spec):
                raise ComponentUnavailable(f"{kind}_not_configured", f"no {kind} component (--{kind} {spec})")
            comp: Evaluator = resolve_evaluator(kind, spec)
        except ComponentUnavailable as exc:
            self._resolved[kind] = exc
            raise
        self._resolved[kind] = comp
        self.used[kind] = str(getattr(comp, "id", spec))
        return comp

    def lock(self, kind: str) -> asyncio.Lock:
        return self._locks.setdefault(kind, asyncio.Lock())

    async def _one(self, kind: str, reply: Reply, call: Callable[[Evaluator, str], list[R | ComponentError]]) -> R:
        if reply.audio is None:
            raise ComponentUnavailable("no_reply_audio", f"{reply.subset}/{reply.sample_id}: the reply has no audio")
        out = await self.run(kind, call, reply.audio.path)
        if isinstance(out, ComponentError):
            raise ComponentUnavailable(f"{kind}_failed:{out.reason}",
                                       f"{reply.subset}/{reply.sample_id}: {kind} failed on {out.file}: {out.message}")
        return out

    async def run(self, kind: str, call: Callable[[Evaluator, str], list[R]], path: str) -> R:
        """``call(component, path)[0]`` on the ``kind`` component."""
        comp = self.get(kind)
        async with self.lock(kind):  # one model call at a time per component (CPU-bound)
            return (await asyncio.to_thread(call, comp, path))[0]

    async def transcribe(self, reply: Reply, lang: str | None) -> str:
        if reply.asr_text is not None:  # a transcript imported with the outputs (json_asr)
            return reply.asr_text
        from vocalbench.components.cache import cached_transcribe

        out = await self._one("asr", reply, lambda c, p: cached_transcribe(_asr(c), [p], lang))
        return str(out.text)

    async def mos(self, reply: Reply) -> float:
        from vocalbench.components.cache import cached_mos

        value: float = await self._one("mos", reply, lambda c, p: cached_mos(_mos(c), [p]))
        return value

    async def emotion(self, reply: Reply) -> dict[str, float]:
        from vocalbench.components.cache import cached_emotion

        distribution: dict[str, float] = await self._one("emotion", reply,
                                                          lambda c, p: cached_emotion(_emotion(c), [p]))
        return dict(distribution)


# the run store whose judge ledger the judge's own accounting (``Judge.on_call``) writes to: set
# around each verdict, so a judge shared by the runs of one process books each call to its run
_LEDGER: ContextVar[RunStore | None] = ContextVar("vocalbench_judge_ledger", default=None)


def _book(record: dict[str, Any]) -> None:
    """``Judge.on_call``: one judge call (tokens, seconds, cache hit, error) into the current run's ledger."""
    store = _LEDGER.get()
    if store is not None:
        store.log_judge_call(**record)


class LimitedJudge:
    """The run's judge: resolved on first use (a fully scored run never starts a judge server),
    behind a per-endpoint concurrency limit; the judge books every call in the run store's ledger."""

    def __init__(self, cfg: RunConfig, judge_id: str, store: RunStore, judge: Judge | None = None,
                 resolve: Callable[[RunConfig], Judge] | None = None, slots: int = 1) -> None:
        self.cfg = cfg
        self.id = judge_id
        self._judge = judge
        self._resolve = resolve or resolve_judge
        self._store = store
        self._resolve_lock = asyncio.Lock()
        self._sem = limiter(f"judge:{judge_id}", cfg.judge_concurrency * slots)
        self.calls = 0

    async def _get(self) -> Judge:
        if self._judge is None:
            async with self._resolve_lock:
                if self._judge is None:
                    self._judge = await asyncio.to_thread(self._resolve, self.cfg)
                    if str(self._judge.id) != self.id:
                        log.warning("judge %s now resolves to %s; its scores stay under %s",
                                    self.cfg.judge, self._judge.id, self.id)
        return self._judge

    async def evaluate(self, rubric: Rubric, fields: dict[str, str], *, subset: str, sample_id: str,
                       evidence: Evidence | None = None) -> Verdict:
        judge = await self._get()
        token = _LEDGER.set(self._store)
        try:
            async with self._sem:
                verdict: Verdict = await judge.evaluate(rubric, fields, subset=subset, sample_id=sample_id,
                                                        evidence=evidence)
        finally:
            _LEDGER.reset(token)
        self.calls += 1
        return verdict


def resolve_judge(cfg: RunConfig) -> Judge:
    """The judge of the run's judge spec; errors are ``ComponentUnavailable``."""
    return build_judge(cfg.judge, concurrency=cfg.judge_concurrency, on_call=_book)


def judge_identity(cfg: RunConfig, store: RunStore,
                   resolve: Callable[[RunConfig], Judge] = resolve_judge) -> tuple[JudgeState, Judge | None]:
    """(the run's judge state, the judge ``resolve`` gave or None).

    The id of a spec seen before is remembered in the store's meta, so re-scoring a finished run
    needs no judge at all; a new spec is resolved once to learn its id.
    """
    spec = cfg.judge
    if spec.off:
        return JudgeState(spec), None
    known = store.get_meta("judge_ids", {}) or {}
    if spec.key in known:
        return JudgeState(spec, str(known[spec.key])), None
    try:
        judge = resolve(cfg)
    except ComponentUnavailable as exc:
        log.warning("judge %s unavailable: %s", spec, exc)
        return JudgeState(spec, unavailable=str(exc)), None
    known[spec.key] = str(judge.id)
    store.set_meta("judge_ids", known)
    return JudgeState(spec, str(judge.id)), judge


# -- streaming passes ------------------------------------------------------------------------------
PAGE = 256  # samples read, scored and tallied at a time: memory follows the page, not the set


def _needs_work(group: list[Score] | None, reply_failed: bool | None) -> bool:
    if reply_failed is None:
        return False  # no reply yet: nothing to score (counted as missing by the tally)
    if not group:
        return True
    if any(s.unscored is not None for s in group):
        return True  # an evaluator failure: retry (a system error may carry no value, e.g. UTMOS)
    if any(s.decided_by is not None and s.decided_by.grader is not None
           and graders.current(s.decided_by.grader) != s.decided_by.grader for s in group):
        return True  # a verdict that used another version of its grader: judge it again
    # scored against a reply that has since been replaced (a failed reply regenerated, or the reverse)
    return any(s.details.get(REPLY_STATE) != ("failed" if reply_failed else "ok") for s in group)


@contextlib.contextmanager
def _bulk_read() -> Iterator[None]:
    """Pause the cyclic GC while a page of acyclic records is parsed (it would otherwise rescan
    the heap again and again); restored afterwards."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class ScoringIncomplete(CliError):
    """Scoring that would count fewer items than the run holds: stopped before summary.json is
    written (a silently smaller n is the worst thing a benchmark can report)."""


def check_counts(rows: dict[str, SubsetResult], subset: str, items: int) -> None:
    """Every row computed over ``subset`` counts each of its ``items`` items once (scored,
    unscored with a reason, or a system error); :class:`ScoringIncomplete` otherwise."""
    short = {name: row.n for name, row in rows.items() if row.n != items}
    if short:
        raise ScoringIncomplete(f"{subset}: the summary would count "
                                + ", ".join(f"{name} over {n} items" for name, n in short.items())
                                + f" where the run holds {items}; summary.json not written (re-run the same command)")


def _error_score(sample: Sample, scorer: ItemScorer, exc: BaseException) -> Score:
    return Score(subset=sample.subset, sample_id=sample.id, name="main", value=None,
                 unscored=f"scorer_error:{type(exc).__name__}", scorer=scorer_ref(scorer),
                 details={"message": str(exc)[:500]})


async def _score_items(scorer: ItemScorer, key: str, todo: list[Sample], replies: dict[tuple[str, str], Reply],
                       existing: dict[str, list[Score]], ctx: ScoringContext, store: RunStore, workers: int,
                       advance: Callable[[int], None]) -> None:
    """Score ``todo`` with ``workers`` concurrent tasks; each item's scores are written to the
    store as soon as they exist and replace its entry in ``existing``."""
    from vocalbench.scoring.subsets.rules import item_clarity

    queue: asyncio.Queue[Sample] = asyncio.Queue()
    for s in todo:
        queue.put_nowait(s)
    timed = set(catalog.timed())  # their replies get clarity from the acoustic scorer

    async def worker() -> None:
        while True:
            try:
                sample = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            reply = replies.get((sample.subset, sample.id))
            try:
                scores = await scorer.score(sample, reply, ctx)
                if sample.subset not in timed and (clarity := await item_clarity(sample, reply, ctx, scorer_ref(scorer))):
                    scores = [*scores, clarity]
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # a scorer bug must not stop the run; it is recorded and retried
                log.exception("%s: scoring %s/%s failed", key, sample.subset, sample.id)
                scores = [_error_score(sample, scorer, exc)]
            state = "failed" if reply is None or reply.failed else "ok"
            for s in scores:
                s.details[REPLY_STATE] = state
            store.put_scores([(s, key) for s in scores])
            existing[sample.id] = list(scores)
            advance(1)

    await asyncio.gather(*(worker() for _ in range(max(1, min(workers, len(todo))))))
    lost = [s.id for s in todo if not existing.get(s.id)]
    if lost:
        raise ScoringIncomplete(f"{key}: {len(lost)} of {len(todo)} items came back without scores "
                                f"({', '.join(lost[:5])}); summary.json not written (re-run the same command)")


def _imported_transcripts(store: RunStore, subsets: list[str], protocol: str) -> int:
    """How many replies of these subsets carry a transcript imported with the outputs (v1 scores them)."""
    counts = (store.get_meta("imported", {}) or {}).get("asr_transcripts", {})
    return sum(int(counts.get(s, 0)) for s in subsets) if protocol == "v1" else 0


def _optional(module: str) -> bool:
    """Whether an optional scoring module is present (logged when not)."""
    import importlib.util

    if importlib.util.find_spec(module) is None:
        log.warning("%s is not available; its rows are left out of the summary", module)
        return False
    return True


# -- the engine ------------------------------------------------------------------------------------
def _selected(store: RunStore, cfg: RunConfig, subsets: list[str] | None) -> list[str]:

    present = set(store.subsets())
    wanted = list(subsets or cfg.subsets or present)
    unknown = [s for s in wanted if s not in present]
    if unknown:
        raise ValueError(f"subset(s) {', '.join(unknown)} have no samples in this run "
                         f"(present: {', '.join(sorted(present)) or 'none'})")
    foreign = sorted(s for s in present if s not in catalog.names(cfg.lang))
    if foreign:
        raise ValueError(f"{store.run_dir}: the store holds {', '.join(foreign)}, not a {cfg.lang} subset "
                         f"(the run is lang {cfg.lang}: made with --lang {cfg.lang} on a release of another language?)")
    wanted = catalog.with_controls(wanted, present)  # robust's clean baseline
    return catalog.ordered(wanted, cfg.lang)


def _processing_order(names: list[str]) -> list[str]:
    """Report order, with each control subset (``SubsetSpec.control``) moved before the subset
    compared against it."""
    controls = catalog.controls()
    out: list[str] = []
    for n in names:
        dep = controls.get(n)
        if dep in names and dep not in out:
            out.append(dep)
        if n not in out:
            out.append(n)
    return out


class _Run:
    """One scoring pass over a run: subset by subset and, within a subset, page by page, so memory
    follows the page size rather than the size of the test set."""

    def __init__(self, store: RunStore, cfg: RunConfig, to_score: set[str], bars: Bars, comps: Components) -> None:
        from vocalbench.data.official import audio_duration

        self.store, self.cfg, self.to_score, self.bars = store, cfg, to_score, bars
        self.comps = comps
        self.ctx = ScoringContext(lang=cfg.lang, protocol=cfg.protocol, transcribe=self.comps.transcribe,
                                  mos=self.comps.mos, emotion=self.comps.emotion, audio_duration=audio_duration)
        self.judge_state = JudgeState(JudgeSpec("none"))
        self.judge: LimitedJudge | None = None
        self.scored_items = 0
        self.decided_by: dict[str, dict[str, int]] = {}  # subset row -> judged verdicts by source
        self.counted: list[tuple[str, str]] = []  # (subset, evaluator key) of the scores the summary counts

    def set_judge(self, state: JudgeState, judge: Judge | None) -> None:
        self.judge_state = state
        if state.id is not None:
            self.judge = LimitedJudge(self.cfg, state.id, self.store, judge, self.comps.resolve_judge,
                                      self.comps.judge_slots)

    async def stream(self, name: str, subset: str, scorer: ItemScorer, key: str, tally: Adds,
                     keep: dict[str, float] | None = None) -> bool:
        """Score what ``scorer`` has not yet scored of ``subset`` (under ``key``) and add every
        item's current scores to ``tally``, one page at a time; ``keep`` collects the main values
        a dependent subset reads. Returns whether any item of the subset has scores."""
        score_now = name in self.to_score or (name == ACOUSTIC and subset in self.to_score)
        uses_judge = getattr(scorer, "uses_judge", False)
        workers = self.cfg.judge_concurrency * 2 * self.comps.judge_slots if uses_judge else self.comps.workers
        bar: Bar | None = None
        seen, any_scores = 0, False
        for page in self.store.sample_pages(subset, PAGE):
            ids = [s.id for s in page]
            with _bulk_read():
                existing: dict[str, list[Score]] = {}
                for sc in self.store.scores_of(subset, key, ids):
                    existing.setdefault(sc.sample_id, []).append(sc)
            todo: list[Sample] = []
            if score_now:
                states = self.store.reply_states(subset, ids)
                todo = [s for s in page if _needs_work(existing.get(s.id), states.get(s.id))]
            if todo:
                if bar is None:  # one bar per subset, from the items already done
                    bar = self.bars.task(f"scoring {name}", self.store.count_samples(subset))
                    bar.advance(seen)
                self.ctx.judge = self.judge if uses_judge else None
                replies = self.store.replies_of(subset, [s.id for s in todo])
                await _score_items(scorer, key, todo, replies, existing, self.ctx, self.store, workers, bar.advance)
                self.scored_items += len(todo)
            if bar is not None:
                bar.advance(len(page) - len(todo))
            for sample in page:
                group = existing.get(sample.id, [])
                any_scores = any_scores or bool(group)
                tally.add(sample, group)
                for s in group:
                    if s.decided_by is not None:
                        sources = self.decided_by.setdefault(name, dict.fromkeys(("grader", "rule", "model"), 0))
                        sources[s.decided_by.source] += 1
                if keep is not None:
                    keep.update(main_values(group))
            seen += len(page)
        if any_scores:
            self.counted.append((subset, key))
        return any_scores


def control_completeness(results: dict[str, SubsetResult], name: str) -> None:
    """A subset compared against an incomplete control (robust against robust_clean with an
    unscored clean item) is incomplete too: its baseline misses items (docs/scoring.md)."""
    control = catalog.controls().get(name)
    row = results.get(name)
    if row is not None and control in results and not results[control].complete:
        row.complete = False
        row.extra = {**(row.extra or {}), "incomplete_control": control}


async def score_run(folder: RunFolder | str | Path, cfg: RunConfig, *, subsets: list[str] | None = None,
                    progress: bool = True, components: Components | None = None) -> Summary:
    """Score what is missing in the run folder (a held :class:`RunFolder` lends its store) and write
    ``summary.json``; returns the summary.

    ``subsets`` limits what is scored now; the summary covers every subset of the run that has
    scores under the current evaluators (subsets never scored are listed in ``meta.not_scored``).
    ``components`` runs the evaluators (default: in this process).
    """
    from vocalbench.scoring.subsets import scorer_for, tally_of

    if not isinstance(folder, RunFolder):
        with RunFolder(folder) as held:
            return await score_run(held, cfg, subsets=subsets, progress=progress, components=components)
    started = time.monotonic()
    store = folder.store
    with Bars(progress and not cfg.quiet) as bars:
        to_score = set(_selected(store, cfg, subsets))
        report = _selected(store, cfg, None) if subsets else sorted(to_score)
        report = [n for n in _processing_order(sorted(set(report) | to_score)) if n in set(report) | to_score]
        scorers = {name: scorer_for(name, cfg.lang, cfg.protocol) for name in report}
        run = _Run(store, cfg, to_score, bars, components or Components(cfg))
        if any(getattr(sc, "uses_judge", False) for sc in scorers.values()):
            run.set_judge(*judge_identity(cfg, store, run.comps.resolve_judge))

        results: dict[str, SubsetResult] = {}
        deps: dict[str, dict[str, float]] = {}  # control subsets' main values (small ones, by design)
        controls = set(catalog.controls().values())
        timed = catalog.timed()  # single_round: its replies carry the acoustic and latency rows
        never: list[str] = []
        for name in report:
            sc = scorers[name]
            tally = tally_of(sc, name)
            keep: dict[str, float] | None = {} if name in controls else None
            if not await run.stream(name, name, sc, evaluator_key(sc, run.judge_state.key), tally, keep):
                never.append(name)
                continue
            if keep is not None:
                deps[name] = keep
            results[name] = tally.result(deps)
            check_counts({name: results[name]}, name, store.count_samples(name))
            control_completeness(results, name)
            if name in timed:
                results.update(await _acoustic_and_latency(run, name))

        g = item_graph(store, run.counted, lang=cfg.lang, protocol=cfg.protocol,
                       metrics={name: row.metric for name, row in results.items()})
        if g is not None:  # every value and interval is the statistics graph's
            take_values(results, g)
        summary = build_summary(
            cfg, results, store=store, components_used=dict(run.comps.used), judge=run.judge_state,
            not_scored=never, imported_transcripts=_imported_transcripts(store, report, cfg.protocol),
            seconds=time.monotonic() - started, decided_by=run.decided_by,
        )
        if g is not None:
            add_intervals(summary, g)
        write_summary(folder.path, summary)
        store.set_meta("last_score", {"protocol": cfg.protocol, "judge": cfg.judge.text, "scored_items": run.scored_items,
                                      "judge_calls": run.judge.calls if run.judge else 0})
    return summary


async def _acoustic_and_latency(run: _Run, subset: str) -> dict[str, SubsetResult]:
    """UTMOS and WER/PER rows (acoustic scorer over the timed subset's pairs) and the latency rows."""
    out: dict[str, SubsetResult] = {}
    if _optional("vocalbench.scoring.subsets.acoustic"):
        from vocalbench.scoring.subsets.acoustic import AcousticScorer

        ac = AcousticScorer(run.cfg.lang)
        key = evaluator_key(ac, None, {"asr": run.cfg.asr.text, "mos": run.cfg.mos.text})
        tally = ac.tally()
        if await run.stream(ACOUSTIC, subset, ac, key, tally):
            out.update(tally.results())
            check_counts(out, subset, run.store.count_samples(subset))
    if _optional("vocalbench.scoring.subsets.latency"):
        from vocalbench.scoring.subsets.latency import LatencyTally

        latency = LatencyTally()
        for reply in run.store.iter_replies(subset):
            latency.add(reply)
        out.update(latency.results())
    return out


def score_run_sync(run: RunFolder | str | Path, cfg: RunConfig, *, subsets: list[str] | None = None,
                   progress: bool = True) -> Summary:
    """Blocking wrapper of :func:`score_run` (one event loop for the whole run)."""
    return asyncio.run(score_run(run, cfg, subsets=subsets, progress=progress))

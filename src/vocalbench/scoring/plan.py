"""``--dry-run``: plan a scoring pass with the judge's planner (:mod:`vocalbench.judge.plan`).

The subset scorers run as they would, item by item, on the items the engine would (re)score
(resumed items are skipped exactly as the engine skips them), in a planning context: its judge
counts the calls instead of making them; ASR transcripts are taken from the reply text (or the
imported transcript); MOS and emotion are "not run", so checks that need them stay pending and the
judge is still counted (an upper bound for the paralinguistic instructions). Items without a reply
yet (``run --dry-run``) get their reference answer, or a typical reply length, as the reply text.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NoReturn

from vocalbench import catalog
from vocalbench.components.base import ComponentUnavailable
from vocalbench.judge.factory import build_judge
from vocalbench.judge.plan import LOCAL_SECONDS_PER_REQUEST, JudgePlan, PlanningJudge, SubsetPlan, tokenizer_name
from vocalbench.records import AudioRef, Reply, Sample, Score
from vocalbench.run_config import RunConfig
from vocalbench.runner.store import RunStore
from vocalbench.scoring.base import ItemScorer, ScoringContext

TYPICAL_REPLY_CHARS = 600  # the text assumed for an item that has no reply and no reference yet


def planning_context(cfg: RunConfig, judge: PlanningJudge) -> ScoringContext:
    """A scoring context that calls nothing: transcripts from the reply text, no MOS or emotion."""
    from vocalbench.data.official import audio_duration

    async def transcribe(reply: Reply, lang: str | None) -> str:
        return reply.asr_text if reply.asr_text is not None else (reply.text or "")

    async def not_run(reply: Reply) -> NoReturn:
        raise ComponentUnavailable("dry_run", "not run in a dry run")

    return ScoringContext(lang=cfg.lang, protocol=cfg.protocol, judge=judge, transcribe=transcribe, mos=not_run,
                          emotion=not_run, audio_duration=audio_duration)


def assumed_reply(sample: Sample) -> Reply:
    """The reply assumed for an item not generated yet: its reference answer, or a typical length."""
    text = sample.reference or "x" * TYPICAL_REPLY_CHARS
    return Reply(subset=sample.subset, sample_id=sample.id, text=text, audio=AudioRef(path="(not generated)"),
                 source="assumed")


async def plan_subset(scorer: ItemScorer, items: Iterable[tuple[Sample, Reply | None]], ctx: ScoringContext,
                      row: SubsetPlan) -> None:
    """Run ``scorer`` over ``items`` in the planning context; the judge fills ``row``."""
    for sample, reply in items:
        row.items += 1
        if reply is None:
            row.assumed_replies += 1
            reply = assumed_reply(sample)
        await scorer.score(sample, reply, ctx)


def pending_items(store: RunStore | None, subset: str, key: str, samples: list[Sample] | None = None,
                  page: int = 256) -> Iterable[tuple[Sample, Reply | None]]:
    """The (sample, reply) pairs of ``subset`` the engine would score under ``key``: resumed items are
    skipped as the engine skips them. With ``samples`` (a run still to generate), their items without
    a reply are included with ``None``; without, only the store's replied items count (``score``)."""
    from vocalbench.scoring.engine import _needs_work

    pages: Iterable[list[Sample]]
    if samples is None:
        assert store is not None, "without samples, the plan reads the run's store"
        pages = store.sample_pages(subset, page)
    else:
        mine = [s for s in samples if s.subset == subset]
        pages = [mine[i:i + page] for i in range(0, len(mine), page)]
    for chunk in pages:
        ids = [s.id for s in chunk]
        existing: dict[str, list[Score]] = {}
        states: dict[str, bool] = {}
        if store is not None:
            for sc in store.scores_of(subset, key, ids):
                existing.setdefault(sc.sample_id, []).append(sc)
            states = store.reply_states(subset, ids)
        todo = [s for s in chunk if (s.id not in states and samples is not None)
                or _needs_work(existing.get(s.id), states.get(s.id))]
        replies = store.replies_of(subset, [s.id for s in todo]) if store is not None else {}
        yield from ((s, replies.get((s.subset, s.id))) for s in todo)


async def plan_judge(cfg: RunConfig, *, store: RunStore | None = None, samples: list[Sample] | None = None,
                     subsets: list[str] | None = None) -> JudgePlan | None:
    """The judge plan of scoring ``store`` (``score --dry-run``), or of a run over ``samples`` whose
    store (when it exists yet) holds what is already done (``run --dry-run``); None without a judge."""
    from vocalbench.scoring.engine import _selected, evaluator_key
    from vocalbench.scoring.subsets import scorer_for

    spec = cfg.judge
    if spec.off:
        return None
    # the judge as it would be, starting nothing: the local server would start on its first request
    judge = PlanningJudge(build_judge(spec, lazy=True))
    known = (store.get_meta("judge_ids", {}) or {}) if store is not None else {}
    judge_id = str(known.get(spec.key, judge.id))
    local = str(getattr(getattr(judge.judge, "llm", None), "endpoint", "")).startswith("local://")
    plan = JudgePlan(judge=judge_id, tokenizer=tokenizer_name(),
                     seconds_per_request=LOCAL_SECONDS_PER_REQUEST if local else None)
    ctx = planning_context(cfg, judge)
    if samples is None:
        assert store is not None, "without samples, the plan reads the run's store"
        names = _selected(store, cfg, subsets)
    else:
        names = catalog.ordered(sorted({s.subset for s in samples}), cfg.lang)
    for name in names:
        scorer = scorer_for(name, cfg.lang, cfg.protocol)
        if not getattr(scorer, "uses_judge", False):
            continue
        row = judge.row(name)
        await plan_subset(scorer, pending_items(store, name, evaluator_key(scorer, judge_id), samples), ctx, row)
        plan.subsets.append(row)
    return plan

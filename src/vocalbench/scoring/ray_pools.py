"""``score RUN --executor ray``: the model evaluators on Ray actor pools.

ASR, MOS and emotion each run on a pool of :class:`EvaluatorActor` replicas and the judge on a
pool of async :class:`JudgeActor` replicas (``--evaluator-replicas asr=2,mos=1,emotion=1,judge=1``,
``--evaluator-gpus asr=0.5``), each replica loading its model once. The driver keeps the run
store, the tallies and the summary: it sends ``(call, audio path)`` to a pool and writes what
comes back, exactly as local scoring does, so ``summary.json`` is the same but for timing. The
judge's call records come back with each verdict and are booked in the run's judge ledger here.
Evaluator result caches live in ``VOCALBENCH_CACHE`` (set for every worker), shared on one node.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vocalbench.components import resolve_evaluator
from vocalbench.components.base import ComponentUnavailable
from vocalbench.config import is_off
from vocalbench.judge.factory import build_judge
from vocalbench.judge.rubrics.record import Evidence, Rubric, Verdict
from vocalbench.run_config import RunConfig
from vocalbench.runner.folder import RunFolder
from vocalbench.runner.ray_executor import ActorPool, Resources, placement, start_ray, stop_ray
from vocalbench.scoring.base import Judge
from vocalbench.scoring.engine import Components, Evaluator, R, _book, score_run
from vocalbench.scoring.summary import Summary

KINDS = ("asr", "mos", "emotion", "judge")
_CALLS: ContextVar[list[dict[str, Any]] | None] = ContextVar("vocalbench_judge_calls", default=None)


def parse_counts(text: str | None, flag: str) -> dict[str, float]:
    """``asr=2,mos=1`` -> ``{"asr": 2.0, "mos": 1.0}``; ``ValueError`` naming ``flag`` otherwise."""
    out: dict[str, float] = {}
    for part in (p.strip() for p in (text or "").split(",")):
        if not part:
            continue
        kind, _, value = part.partition("=")
        if kind.strip() not in KINDS:
            raise ValueError(f"{flag}: unknown evaluator {kind.strip()!r} (use {', '.join(KINDS)})")
        try:
            out[kind.strip()] = float(value)
        except ValueError:
            raise ValueError(f"{flag}: {part!r} is not KIND=NUMBER") from None
    return out


def evaluator_resources(replicas: str | None, gpus: str | None) -> dict[str, Resources]:
    """Replicas and GPUs per replica of each evaluator (1 replica, 1 CPU, no GPU unless given)."""
    counts, per_gpu = parse_counts(replicas, "--evaluator-replicas"), parse_counts(gpus, "--evaluator-gpus")
    bad = [k for k, n in counts.items() if n < 1 or n != int(n)]
    if bad:
        raise ValueError(f"--evaluator-replicas: {', '.join(bad)} needs a whole number >= 1")
    return {k: Resources(int(counts.get(k, 1)), 1.0, per_gpu.get(k, 0.0)) for k in KINDS}


class EvaluatorActor:
    """Holds one ASR, MOS or emotion component in a Ray worker (one call at a time)."""

    def __init__(self, kind: str, spec: str) -> None:
        self.kind, self.spec = kind, spec
        self.component: Evaluator | None = None

    def start(self) -> dict[str, object]:
        """Load the component; its id, or why it is unavailable (recorded by the driver as locally)."""
        try:
            self.component = resolve_evaluator(self.kind, self.spec)
        except ComponentUnavailable as exc:
            return {**placement(), "unavailable": Unavailable(exc.reason, str(exc))}
        return {**placement(), "id": str(getattr(self.component, "id", self.spec))}

    def run(self, call: Callable[[Evaluator, str], list[R]], path: str) -> R | Unavailable:
        """``call(component, path)[0]``; a ``ComponentUnavailable`` (this replica's own ``start``
        among them) comes back as :class:`Unavailable`."""
        if self.component is None:
            return Unavailable(f"{self.kind}_not_started", f"this {self.kind} replica has no component loaded")
        try:
            return call(self.component, path)[0]
        except ComponentUnavailable as exc:
            return Unavailable(exc.reason, str(exc))


@dataclass(frozen=True)
class Unavailable:
    """A ``ComponentUnavailable`` raised in an actor, sent back as a value (the exception does not
    survive pickling) and raised again in the driver."""

    reason: str
    message: str

    def error(self) -> ComponentUnavailable:
        return ComponentUnavailable(self.reason, self.message)


def _collect(record: dict[str, Any]) -> None:
    """``Judge.on_call`` inside a :class:`JudgeActor`: keep the record for the current verdict."""
    calls = _CALLS.get()
    if calls is not None:
        calls.append(record)


class JudgeActor:
    """Holds one judge (for ``local``: its own llama.cpp server) in a Ray worker (async actor)."""

    def __init__(self, cfg_json: str) -> None:
        self.cfg = RunConfig.model_validate_json(cfg_json)
        self.judge: Judge | None = None

    async def start(self) -> dict[str, object]:
        try:
            self.judge = build_judge(self.cfg.judge, concurrency=self.cfg.judge_concurrency, on_call=_collect)
        except ComponentUnavailable as exc:
            return {**placement(), "unavailable": Unavailable(exc.reason, str(exc))}
        return {**placement(), "id": str(self.judge.id)}

    async def evaluate(self, rubric: Rubric, fields: dict[str, str], subset: str, sample_id: str,
                       evidence: Evidence | None = None) -> tuple[Verdict, list[dict[str, Any]]]:
        """The verdict and the judge's call records made for it."""
        assert self.judge is not None, "start() first"
        calls: list[dict[str, Any]] = []
        token = _CALLS.set(calls)
        try:
            verdict = await self.judge.evaluate(rubric, fields, subset=subset, sample_id=sample_id, evidence=evidence)
        finally:
            _CALLS.reset(token)
        return verdict, calls

    async def close(self) -> None:
        """Close the judge's endpoint client in this actor's loop, before the actor is killed."""
        aclose = getattr(getattr(self.judge, "llm", None), "aclose", None)
        if aclose is not None:
            await aclose()


class PooledJudge:
    """The :class:`~vocalbench.scoring.base.Judge` the engine sees: verdicts from a judge pool,
    their call records booked in this run's ledger."""

    def __init__(self, pool: ActorPool, judge_id: str) -> None:
        self.pool, self.id = pool, judge_id

    async def evaluate(self, rubric: Rubric, fields: dict[str, str], *, subset: str, sample_id: str,
                       evidence: Evidence | None = None) -> Verdict:
        verdict, calls = await self.pool.call("evaluate", rubric, fields, subset, sample_id, evidence)
        for record in calls:
            _book(record)
        out: Verdict = verdict
        return out


def _started(info: dict[str, Any]) -> str:
    """The component id a pool's first replica reported; its ``ComponentUnavailable`` if it had none."""
    if "unavailable" in info:
        raise info["unavailable"].error()
    return str(info["id"])


class RayComponents(Components):
    """:class:`Components` whose calls run on Ray actor pools, one pool per evaluator, started on
    first use (a fully scored run starts none)."""

    def __init__(self, cfg: RunConfig, resources: dict[str, Resources]) -> None:
        super().__init__(cfg)
        self.resources = resources
        self.pools: dict[str, ActorPool] = {}
        self._ready: dict[str, ActorPool | ComponentUnavailable] = {}  # started, or why it could not be
        self.workers = max(cfg.concurrency, 2 * max(r.replicas for r in resources.values()))
        self.judge_slots = resources["judge"].replicas

    async def _pool(self, kind: str) -> ActorPool:
        import ray

        async with self.lock(kind):
            if kind in self._ready:
                got = self._ready[kind]
                if isinstance(got, ComponentUnavailable):
                    raise got
                return got
            spec = self.spec(kind)
            try:
                if is_off(spec):
                    raise ComponentUnavailable(f"{kind}_not_configured", f"no {kind} component (--{kind} {spec})")
                per = self.resources[kind]
                actor = ray.remote(EvaluatorActor).options(num_cpus=per.num_cpus, num_gpus=per.num_gpus)
                pool = ActorPool(lambda: actor.remote(kind, spec), per.replicas, kind)
                self.pools[kind] = pool
                self.used[kind] = [_started(info) for info in await pool.start()][0]
            except ComponentUnavailable as exc:
                self._ready[kind] = exc
                raise
            self._ready[kind] = pool
            return pool

    async def run(self, kind: str, call: Callable[[Evaluator, str], list[R]], path: str) -> R:
        pool = await self._pool(kind)
        out = await pool.call("run", call, path)
        if isinstance(out, Unavailable):
            raise out.error()
        result: R = out  # what ``call`` gave in the replica
        return result

    def resolve_judge(self, cfg: RunConfig) -> Judge:
        """A judge pool, started here (blocking: called once, before or beside scoring)."""
        import ray

        per = self.resources["judge"]
        actor = ray.remote(JudgeActor).options(num_cpus=per.num_cpus, num_gpus=per.num_gpus,
                                               max_concurrency=max(2, cfg.judge_concurrency + 1))
        body = cfg.model_dump_json()
        pool = ActorPool(lambda: actor.remote(body), per.replicas, "judge")
        self.pools["judge"] = pool
        first = ray.get(pool.begin())[0]
        return PooledJudge(pool, _started(first))

    async def close(self) -> None:
        for kind, pool in self.pools.items():
            await pool.close("close" if kind == "judge" else None)
        self.pools.clear()


async def _score(folder: RunFolder, cfg: RunConfig, resources: dict[str, Resources], subsets: list[str] | None,
                 progress: bool) -> Summary:
    comps = RayComponents(cfg, resources)
    try:
        return await score_run(folder, cfg, subsets=subsets, progress=progress, components=comps)
    finally:
        await comps.close()


def score_on_ray(folder: RunFolder | Path, cfg: RunConfig, resources: dict[str, Resources], *,
                 address: str | None = None, subsets: list[str] | None = None, progress: bool = True) -> Summary:
    """Score the run with its evaluators on Ray (a local Ray on 127.0.0.1 unless ``address``)."""
    owns = start_ray(address, sum(r.total_cpus for r in resources.values()))
    try:
        if isinstance(folder, RunFolder):
            return asyncio.run(_score(folder, cfg, resources, subsets, progress))
        with RunFolder(folder) as held:
            return asyncio.run(_score(held, cfg, resources, subsets, progress))
    finally:
        if owns:
            stop_ray()

"""Generate replies for a run: one event loop, named limits, retries, resume, error threshold.

Every reply is written to the store (and its audio to ``RUN/audio/<subset>/<id>.wav``) the moment
it is final, so a killed process loses at most the samples in flight. Re-running skips samples with
a successful reply and retries failed ones. Items of a subset declared with ``reuses``
(robust_clean) reuse a successful reply of that subset (single_round) to the same question.
"""

from __future__ import annotations

import asyncio
import functools
import gc
import logging
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from pydantic import JsonValue

from vocalbench import catalog
from vocalbench.concurrency import concurrency
from vocalbench.files import SAFE_ID, inside, write_atomic
from vocalbench.limits import PARTIAL_TEXT_CHARS
from vocalbench.progress import Bar, Bars
from vocalbench.records import AudioRef, Reply, Sample
from vocalbench.retry import RetryPolicy, with_retries
from vocalbench.run_config import RunConfig
from vocalbench.runner.store import RunStore
from vocalbench.systems.base import Collected, System, collect

log = logging.getLogger(__name__)


class RunAborted(RuntimeError):
    """The run stopped because too many samples failed; finished work is kept."""


class SystemStartError(RuntimeError):
    """The system could not be started (models missing, server not reachable, ...)."""


class Executor(Protocol):
    """Where attempts run: in this loop (local) or in Ray actors; results come back here.
    ``slots``: replicas of the system, each taking the run's concurrency."""

    resource: str
    slots: int

    async def start(self) -> None: ...

    async def attempt(self, sample: Sample) -> Collected: ...

    async def close(self) -> None: ...

    def describe(self) -> dict[str, JsonValue]: ...


class LocalExecutor:
    """Runs the system's stream in this event loop, timed by ``collect``."""

    def __init__(self, system: System, cfg: RunConfig) -> None:
        self.system = system
        self.cfg = cfg
        self.resource = system.resource
        self.slots = 1

    async def start(self) -> None:
        await self.system.start()

    async def attempt(self, sample: Sample) -> Collected:
        return await collect(self.system, sample, self.cfg.request_timeout, self.cfg.stall_timeout,
                             self.cfg.reply_limits)

    async def close(self) -> None:
        await self.system.close()

    def describe(self) -> dict[str, JsonValue]:
        return {"executor": "local", "system": self.system.describe()}


@dataclass
class GenerateResult:
    total: int = 0
    skipped: int = 0  # already had a successful reply (resume)
    succeeded: int = 0
    failed: int = 0
    reused: int = 0
    retries: int = 0
    seconds: float = 0.0
    errors: dict[str, int] = field(default_factory=dict)
    warmup: dict[str, Any] | None = None

    @property
    def all_failed(self) -> bool:
        """Samples were attempted now and none of them, nor any earlier one, got a reply."""
        return self.failed > 0 and self.succeeded == 0 and self.reused == 0 and self.skipped == 0

    def line(self) -> str:
        errs = ", ".join(f"{k}: {v}" for k, v in sorted(self.errors.items()))
        return (f"{self.total} samples: {self.succeeded} answered, {self.failed} failed"
                f"{f' ({errs})' if errs else ''}, {self.skipped} already done, {self.reused} reused, "
                f"{self.retries} retries, {self.seconds:.1f} s")


def reply_from(collected: Collected, sample: Sample, attempts: int, store: RunStore) -> Reply:
    """Turn an attempt's outcome into a saved Reply, writing its audio under the run folder."""
    audio_ref = None
    if collected.error is None and collected.audio is not None and collected.sample_rate:
        path = write_wav(audio_path(store, sample), collected.audio, collected.sample_rate)  # resolved
        audio_ref = AudioRef(path=str(path), sample_rate=collected.sample_rate,
                             duration=collected.audio_duration)
    extra: dict[str, Any] = {}
    if collected.chunks:
        extra["audio_chunks"] = collected.chunks
        if collected.timings is not None and collected.timings.first_audible is None:
            extra["audible"] = False  # every frame below the silence threshold (faa_ms: silent_reply)
    if collected.error is not None and collected.text:
        extra["partial_text"] = collected.text[:PARTIAL_TEXT_CHARS]
    return Reply(
        subset=sample.subset,
        sample_id=sample.id,
        text=None if collected.error is not None else collected.text,
        audio=audio_ref,
        audio_duration=None if audio_ref is None else collected.audio_duration,
        timings=collected.timings,
        error=collected.error,
        attempts=attempts,
        extra=extra,
    )


def persist(collected: Collected, sample: Sample, attempts: int, store: RunStore) -> Reply:
    """Write the reply (and its audio) to the run store now; returns it."""
    reply = reply_from(collected, sample, attempts, store)
    store.put_reply(reply)
    return reply


def write_wav(path: Path, samples: np.ndarray, sample_rate: int) -> Path:
    """Encode with ``vocalbench.audio.to_wav_bytes`` and replace the file atomically.

    Unlike ``audio.write`` (whose soundfile flush fsyncs, ~6 ms a file) this leaves durability
    to the OS like the store's WAL does: a killed process loses nothing written; a power cut may.
    """
    from vocalbench.audio import to_wav_bytes

    return write_atomic(path, to_wav_bytes(samples, sample_rate))


def audio_path(store: RunStore, sample: Sample) -> Path:
    """Where a sample's reply audio lives: RUN/audio/<subset>/<id>.wav (:class:`UnsafePath` if an id
    would lead outside RUN/audio). The subset's folder is resolved once; a safe id (one plain file
    name) that is not a link needs no further resolving."""
    folder = _subset_folder(store.audio_dir, sample.subset)
    path = folder / f"{sample.id}.wav"
    if SAFE_ID.fullmatch(sample.id) and not path.is_symlink():
        return path
    return inside(store.audio_dir, Path(sample.subset) / f"{sample.id}.wav")


@functools.lru_cache(maxsize=256)
def _subset_folder(audio_dir: Path, subset: str) -> Path:
    return inside(audio_dir, subset)


def _norm_q(q: str) -> str:
    return " ".join(q.lower().split())


def reuse_reply(sample: Sample, index: dict[str, tuple[str, Reply]]) -> Reply | None:
    """A reply for ``sample`` copied from a successful reply to the same question in ``index``
    (robust_clean from single_round: ``SubsetSpec.reuses``)."""
    hit = index.get(_norm_q(sample.question)) if sample.question else None
    if hit is None:
        return None
    sid, r = hit
    return r.model_copy(update={"subset": sample.subset, "sample_id": sample.id, "source": f"reused:{r.subset}/{sid}",
                                "extra": {**r.extra, "reused_source": r.source}})


def reply_index(store: RunStore, subset: str) -> dict[str, tuple[str, Reply]]:
    """``{normalised question: (sample id, reply)}`` of the successful replies of ``subset``."""
    replies = store.replies(subset)
    out: dict[str, tuple[str, Reply]] = {}
    for s in store.samples(subset):
        r = replies.get((s.subset, s.id))
        if r is not None and not r.failed and s.question:
            out.setdefault(_norm_q(s.question), (s.id, r))
    return out


async def generate(
    store: RunStore,
    samples: Sequence[Sample],
    cfg: RunConfig,
    executor: Executor,
    *,
    progress: bool = True,
) -> GenerateResult:
    """Answer every sample without a successful reply; see the module docstring."""
    t_start = time.monotonic()
    res = GenerateResult(total=len(samples))
    done = store.done_reply_keys()
    todo = [s for s in samples if s.key not in done]
    res.skipped = len(samples) - len(todo)
    # latency items (single_round) first at cfg.latency_concurrency, so their FCL/RTF hold no queueing
    # in front of a single-slot local model; robust_clean last, so single_round replies can be reused
    timed_names, reusers = set(catalog.timed()), catalog.reusers()
    timed = [s for s in todo if s.subset in timed_names]
    first = [s for s in todo if s.subset not in timed_names and s.subset not in reusers]
    clean = [s for s in todo if s.subset in reusers]
    policy = RetryPolicy(max_attempts=cfg.max_attempts)
    rng = random.Random(cfg.seed)
    finished = failed = 0
    abort: list[str] = []

    bars = Bars(enabled=progress and not cfg.quiet and len(todo) > 0)
    bar = Bar()

    width = executor.slots  # replicas: each takes the configured concurrency

    async def attempt(sample: Sample) -> Collected:
        async with concurrency(executor.resource, cfg.concurrency * width):
            return await executor.attempt(sample)

    def on_retry(n: int, c: Collected) -> None:
        res.retries += 1
        log.info("attempt %d failed (%s), retrying", n, c.error.type if c.error else "?")

    async def answer(sample: Sample, pending: asyncio.Future[Reply] | None) -> asyncio.Future[Reply]:
        """Attempt ``sample``, then hand its reply to the store (after this worker's previous write)."""
        nonlocal finished, failed
        c, n = await with_retries(lambda: attempt(sample), policy, rng, on_retry)
        if pending is not None:
            await pending  # at most one write in flight per worker
        # encoding + file + SQLite writes release the GIL: off the loop, so other streams' timestamps
        # stay exact, and overlapped with this worker's next attempt
        write = asyncio.ensure_future(asyncio.to_thread(persist, c, sample, n, store))
        finished += 1
        if c.error is not None:
            failed += 1
            res.failed += 1
            res.errors[c.error.type] = res.errors.get(c.error.type, 0) + 1
        else:
            res.succeeded += 1
        bar.advance(1, note=f"{failed} failed")
        if finished >= cfg.error_min_count and failed / finished > cfg.error_threshold and not abort:
            log.warning("stopping: %d of %d finished samples failed", failed, finished)
            abort.append(
                f"stopped: {failed} of {finished} finished samples failed (> {cfg.error_threshold:.0%}; "
                f"errors: {res.errors}). Finished replies are saved in {store.run_dir}; fix the system "
                "and re-run the same command to resume."
            )
        return write

    async def run_all(items: list[Sample], workers: int) -> None:
        queue: asyncio.Queue[Sample] = asyncio.Queue()
        for s in items:
            queue.put_nowait(s)

        async def worker() -> None:
            pending: asyncio.Future[Reply] | None = None
            try:
                while not abort:
                    try:
                        s = queue.get_nowait()
                    except asyncio.QueueEmpty:
                        break
                    pending = await answer(s, pending)
            finally:
                if pending is not None:
                    await pending

        async with asyncio.TaskGroup() as tg:
            for _ in range(min(workers, len(items))):
                tg.create_task(worker())

    try:
        await executor.start()
    except Exception as exc:
        raise SystemStartError(f"could not start the system: {type(exc).__name__}: {exc}") from exc
    try:
        with bars:
            bar = bars.task("generate", len(todo), note="0 failed")
            if todo and cfg.warmup:
                # a local cascade's stages take one query each: one call warms them all (per replica)
                calls = 1 if cfg.system.local else max(cfg.concurrency, cfg.latency_concurrency)
                res.warmup = await _warmup(executor, todo[0], calls * width)
                store.set_meta("warmup", res.warmup)
            gc.collect()
            gc.freeze()  # start-up objects leave the collector's scans: no long GC pause inside a timed reply
            await run_all(timed, cfg.latency_concurrency * width)
            await run_all(first, cfg.concurrency * width)
            if clean and not abort:
                indexes = {src: reply_index(store, src) for src in set(reusers.values())}
                rest = []
                for s in clean:
                    r = reuse_reply(s, indexes[reusers[s.subset]])
                    if r is None:
                        rest.append(s)
                    else:
                        store.put_reply(r)
                        res.reused += 1
                        bar.advance(1, note=f"{failed} failed")
                await run_all(rest, cfg.concurrency * width)
    finally:
        await executor.close()
        res.seconds = time.monotonic() - t_start
        store.set_meta("generate", {k: v for k, v in res.__dict__.items()})
    if abort:
        raise RunAborted(abort[0])
    return res


async def _warmup(executor: Executor, sample: Sample, calls: int) -> dict[str, Any]:
    """Untimed calls before timing starts, as many at once as the run will have in flight (so the
    first timed wave finds warm connections and loaded models); recorded, not counted."""
    t = time.monotonic()
    outcomes = await asyncio.gather(*(executor.attempt(sample) for _ in range(max(1, calls))))
    errors = [c.error for c in outcomes if c.error is not None]
    return {"sample": f"{sample.subset}/{sample.id}", "calls": len(outcomes), "ok": not errors,
            "error": errors[0].model_dump() if errors else None, "seconds": round(time.monotonic() - t, 3)}


def run_generate(store: RunStore, samples: Sequence[Sample], cfg: RunConfig, executor: Executor,
                 progress: bool = True) -> GenerateResult:
    """Synchronous entry point: one event loop for the whole generation."""
    return asyncio.run(generate(store, samples, cfg, executor, progress=progress))

"""Ray scoring under stress, for tests/scoring/test_ray_stress.py and bench/ray_stress.py: a
generated single_round run scored on a local Ray with several ASR replicas (optionally one replica's
worker SIGKILLed mid-way), each time from a fresh result cache, and checked against local scoring:
every item scored exactly once per score name, and the same summary but for timing."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vocalbench.config import cache_dir
from vocalbench.run_config import RunConfig
from vocalbench.runner.folder import RunFolder
from vocalbench.scoring.engine import score_run
from vocalbench.scoring.ray_pools import RayComponents, evaluator_resources

FLAGS = {"judge": "none", "asr": "offline", "mos": "none", "emotion": "none", "quiet": True}


@dataclass
class Outcome:
    """One stress run: what was asked, what came back, and whether it matches local scoring."""

    replicas: int
    items: int
    scored: dict[str, int]  # score name -> rows in the store (one per item expected)
    wer_n: int
    wer_scored: int
    killed: int | None  # the SIGKILLed worker's pid
    replaced: int
    same_summary: bool
    difference: str = ""

    @property
    def ok(self) -> bool:
        return (self.same_summary and self.wer_n == self.wer_scored == self.items
                and all(n == self.items for n in self.scored.values()) and (self.killed is None or self.replaced >= 1))


def fresh_cache(path: Path) -> Path:
    """An empty result cache that shares this machine's downloaded models."""
    path.mkdir(parents=True)
    (path / "models").symlink_to(cache_dir() / "models")
    return path


@contextmanager
def environment(**values: str) -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def config(run: Path) -> RunConfig:
    return RunConfig.load(run).updated(**FLAGS)


def without_timing(summary: dict[str, Any]) -> dict[str, Any]:
    meta = {k: v for k, v in summary["meta"].items() if "seconds" not in k and k not in ("created", "scored_at")}
    return {**summary, "meta": meta}


def local_summary(run: Path, work: Path) -> dict[str, Any]:
    """Score a copy of ``run`` in this process (the reference)."""
    copy = work / "local"
    shutil.copytree(run, copy)
    with environment(VOCALBENCH_CACHE=str(fresh_cache(work / "cache-local"))):
        asyncio.run(score_run(copy, config(copy), progress=False))
    return json.loads((copy / "summary.json").read_text())


class CountingComponents(RayComponents):
    """Ray components that count the evaluator calls that came back (the killer's trigger)."""

    done = 0

    async def run(self, kind: str, call: Callable[[Any, str], list[Any]], path: str) -> Any:
        out = await super().run(kind, call, path)
        self.done += 1
        return out


async def _score(run: Path, replicas: int, kill_after: int | None) -> tuple[int | None, int]:
    """Score ``run`` on Ray; with ``kill_after``, SIGKILL replica 0's worker once that many calls
    came back. (killed pid, replicas replaced)."""
    cfg = config(run)
    comps = CountingComponents(cfg, evaluator_resources(f"asr={replicas}", None))
    killed: list[int] = []

    async def killer() -> None:
        while comps.done < (kill_after or 0) or "asr" not in comps.pools:
            await asyncio.sleep(0.02)
        pid = int((await comps.pools["asr"].placements())[0]["pid"])
        os.kill(pid, signal.SIGKILL)
        killed.append(pid)

    task = asyncio.create_task(killer()) if kill_after is not None else None
    try:
        with RunFolder(run) as folder:
            await score_run(folder, cfg, progress=False, components=comps)
    finally:
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        replaced = comps.pools["asr"].replaced if "asr" in comps.pools else 0
        await comps.close()
    return (killed[0] if killed else None), replaced


def stress_run(run: Path, work: Path, reference: dict[str, Any], replicas: int, kill_after: int | None = None
               ) -> Outcome:
    """Score a copy of ``run`` on a fresh local Ray (fresh result cache) and compare with ``reference``."""
    from vocalbench.runner.ray_executor import start_ray, stop_ray

    copy = work / "ray"
    shutil.copytree(run, copy)
    with environment(VOCALBENCH_CACHE=str(fresh_cache(work / "cache-ray")), RAY_worker_niceness="0"):
        start_ray(None, float(replicas))
        try:
            killed, replaced = asyncio.run(_score(copy, replicas, kill_after))
        finally:
            stop_ray()
    summary = json.loads((copy / "summary.json").read_text())
    db = sqlite3.connect(copy / "store.sqlite")
    try:
        rows = dict(db.execute("SELECT name, COUNT(*) FROM scores WHERE evaluator LIKE 'acoustic%' GROUP BY name"))
        items = int(db.execute("SELECT COUNT(*) FROM samples WHERE subset = 'single_round'").fetchone()[0])
    finally:
        db.close()
    same = without_timing(summary) == without_timing(reference)
    wer = summary["subsets"]["wer"]
    return Outcome(replicas, items, rows, wer["n"], wer["scored"], killed, replaced, same,
                   "" if same else f"local wer {reference['subsets']['wer']}, ray wer {wer}")

"""Loading run folders for reports: summary.json (a :class:`~vocalbench.scoring.summary.Summary`),
config.json and the run store, through :class:`~vocalbench.runner.folder.RunFolder`.

A run folder holds one system on one language. ``--lang both`` writes ``RUN/en`` and ``RUN/zh``, and
``--repeats N`` ``repeat-K`` folders; :func:`vocalbench.runner.folder.language_folders` accepts any of them.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from vocalbench import catalog
from vocalbench.errors import validation_message
from vocalbench.records import Reply, Sample, Score
from vocalbench.runner.folder import CONFIG, LANGS, STORE, RunFolder, RunFolderError, is_run_dir, language_folders
from vocalbench.scoring import graph as stats_graph
from vocalbench.scoring.summary import Summary


class RunInfo(BaseModel):
    """What a report reads of config.json: the run's identity (any key it lacks is unknown, any
    other key is ignored, so folders written by older versions still load)."""

    model_config = ConfigDict(extra="ignore")

    system: str | None = None
    data: str | None = None
    lang: str | None = None
    protocol: str | None = None
    judge: str | None = None
    seed: int | None = None


def _read_config(path: Path) -> RunInfo:
    """config.json's :class:`RunInfo` (empty when there is none); RunFolderError when it is not a
    JSON object or a key has the wrong type."""
    if not path.is_file():
        return RunInfo()
    try:
        body = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise RunFolderError(f"{path}: unreadable JSON ({exc})") from exc
    if not isinstance(body, dict):
        raise RunFolderError(f"{path}: expected a JSON object, got {type(body).__name__}")
    try:
        return RunInfo.model_validate(body)
    except ValidationError as exc:
        raise RunFolderError(f"{path}: {validation_message(exc)}") from None


@dataclass
class RunData:
    """Everything a report needs from one language run folder, loaded once."""

    path: Path
    lang: str
    summary: Summary  # empty when the run has no summary.json (``has_summary``)
    config: RunInfo
    samples: dict[tuple[str, str], Sample] = field(default_factory=dict)
    replies: dict[tuple[str, str], Reply] = field(default_factory=dict)
    scores: dict[tuple[str, str], dict[str, Score]] = field(default_factory=dict)
    label: str = ""
    has_summary: bool = True

    @property
    def system(self) -> str:
        return str(self.summary.system or self.config.system or self.path.name)

    @property
    def protocol(self) -> str:
        return str(self.summary.protocol or self.config.protocol or "v2")

    @property
    def subsets(self) -> list[str]:
        return sorted(set(self.summary.subsets) | {s for s, _ in self.samples})

    def main_score(self, subset: str, sample_id: str) -> Score | None:
        """The sample's ``main`` score, None when it has none."""
        return (self.scores.get((subset, sample_id)) or {}).get("main")

    def judge_score(self, subset: str, sample_id: str) -> Score | None:
        """The score a judge gave the sample: ``main`` when a judge produced it, else the first
        judged score by name (e.g. emotion's ``semantic``), else ``main``."""
        named = self.scores.get((subset, sample_id)) or {}
        main = named.get("main")
        if main is not None and main.judge is not None:
            return main
        judged = [named[k] for k in sorted(named) if named[k].judge is not None]
        return judged[0] if judged else main

    def resolve_audio(self, path: str | None) -> Path | None:
        """An audio path of a record as an existing file: absolute, or relative to the run
        folder, the run's data folder or the working directory."""
        if not path:
            return None
        p = Path(path)
        candidates = [p] if p.is_absolute() else [self.path / p, self.path.parent / p]
        data = self.config.data
        if not p.is_absolute() and data:
            d = Path(data)
            candidates += [d / p, d / "audio" / p, d / self.lang / "audio" / p]
        if not p.is_absolute():
            candidates.append(Path.cwd() / p)
        return next((c for c in candidates if c.is_file()), None)

    def latency(self) -> dict[str, tuple[list[float], list[str]]]:
        """``{fcl_ms|faa_ms|rtf: (values, sample ids)}`` of the successful replies of the timed subsets
        that carry harness timings (latency is measured on single_round, docs/scoring.md)."""
        timed = set(catalog.timed())
        out: dict[str, tuple[list[float], list[str]]] = {k: ([], []) for k in ("fcl_ms", "faa_ms", "rtf")}
        for (subset, sid), r in self.replies.items():
            if subset not in timed or r.failed or r.timings is None:
                continue
            for which, v in (("fcl_ms", r.timings.fcl_ms), ("faa_ms", r.timings.faa_ms), ("rtf", r.rtf)):
                if v is not None and math.isfinite(v):
                    out[which][0].append(float(v))
                    out[which][1].append(sid)
        return out

    def items(self, subset: str) -> list[tuple[Sample, list[Score]]]:
        """The run's scored items of ``subset`` (sample and scores), in the order of the store."""
        return [(s, list(named.values())) for (sub, sid), named in self.scores.items()
                if sub == subset and (s := self.samples.get((sub, sid))) is not None]

    @cached_property
    def graph(self) -> stats_graph.Graph:
        """The run's statistics graph (scoring/graph.py): per-cluster sums and every statistic, for
        ``compare``'s paired bootstrap and the per-category bars (the report's intervals are
        summary.json's)."""
        return stats_graph.build(
            self.scores, self.samples, lang=self.lang, protocol=self.protocol,
            version=self.summary.overall.version or self.protocol, dimensions=self.summary.dimensions,
            metrics={name: row.metric for name, row in self.summary.subsets.items() if row.metric})


def _judge_id(summary: Summary, config: RunInfo) -> str:
    return str(summary.provenance.judge or config.judge or "")


def _pick(current: Score | None, new: Score, judge: str) -> Score:
    """Prefer the score of the current judge when a sample has scores of several judges."""
    if current is None:
        return new
    if judge and new.judge is not None and current.judge is not None:
        new_match = judge in new.judge.model or new.judge.model in judge
        cur_match = judge in current.judge.model or current.judge.model in judge
        if cur_match and not new_match:
            return current
    return new  # later rows are newer (INSERT OR REPLACE appends)


def load_run(run: str | Path | RunFolder, with_store: bool = True) -> RunData:
    """Load one language run folder (a held :class:`RunFolder` lends its open store)."""
    if not isinstance(run, RunFolder):
        with RunFolder(run, write=False) as folder:
            return load_run(folder, with_store)
    p = run.path
    if not is_run_dir(p):
        raise RunFolderError(f"{p}: not a run folder")
    has_summary = run.summary_path.is_file()
    summary = Summary.load(run.summary_path) if has_summary else Summary()
    config = _read_config(p / CONFIG)
    lang = str(summary.lang or config.lang or (p.name if p.name in LANGS else "en"))
    data = RunData(path=p, lang=lang, summary=summary, config=config, has_summary=has_summary)
    if with_store and (p / STORE).is_file():
        judge = _judge_id(summary, config)
        store = run.store
        data.samples = {(s.subset, s.id): s for s in store.samples()}
        data.replies = store.replies()
        for sc in store.scores():
            slot = data.scores.setdefault((sc.subset, sc.sample_id), {})
            slot[sc.name] = _pick(slot.get(sc.name), sc, judge)
    return data


def load_runs(runs: Sequence[str | Path | RunFolder], with_store: bool = True) -> list[RunData]:
    """Load every language run under ``runs`` (held run folders as they are) and give each a unique label."""
    held = {r.path: r for r in runs if isinstance(r, RunFolder)}
    paths = language_folders([r.path if isinstance(r, RunFolder) else r for r in runs])
    loaded = [load_run(held.get(p, p), with_store) for p in paths]
    seen: dict[str, int] = {}
    for r in loaded:
        base = f"{r.system} [{r.lang}]"
        seen[base] = seen.get(base, 0) + 1
    for r in loaded:
        base = f"{r.system} [{r.lang}]"
        r.label = f"{r.system} ({r.path.parent.name}/{r.path.name}) [{r.lang}]" if seen[base] > 1 else base
    return loaded


def load_one_run(path: str | Path) -> RunData:
    """The one language run folder at ``path`` (:class:`RunFolderError` when it holds none or several)."""
    runs = load_runs([path])
    if len(runs) != 1:
        raise RunFolderError(f"{path}: give one language run folder (found {len(runs)}: {[str(r.path) for r in runs]})")
    return runs[0]

"""Loading run folders for reports: summary.json, config.json and the run store.

A run folder holds one system on one language. ``--lang both`` writes ``RUN/en`` and ``RUN/zh``;
:func:`expand_run_dirs` accepts either kind of folder.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vocalbench.errors import InputError
from vocalbench.records import Reply, Sample, Score

LANGS = ("en", "zh")


class RunFolderError(InputError):
    """A path that is neither a run folder nor a parent of en/ and zh/ run folders."""


def is_run_dir(path: Path) -> bool:
    """A language run folder has a summary.json or a store.sqlite."""
    return (path / "summary.json").is_file() or (path / "store.sqlite").is_file()


def expand_run_dirs(paths: Sequence[str | Path]) -> list[Path]:
    """Language run folders for the given paths (a parent contributes its en/ and zh/, a repeat
    group its repeat-K runs)."""
    from vocalbench.report.repeats import repeat_dirs

    out: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if not p.is_dir():
            raise RunFolderError(f"{p}: no such folder")
        if is_run_dir(p):
            out.append(p)
            continue
        if repeat_dirs(p):
            out.extend(repeat_dirs(p))
            continue
        subs = [q for lang in LANGS for q in ([p / lang] if is_run_dir(p / lang) else repeat_dirs(p / lang))]
        if not subs:
            raise RunFolderError(f"{p}: not a run folder (no summary.json or store.sqlite, and no en/ or zh/ run inside)")
        out.extend(subs)
    return out


def _read_json(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        body = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise RunFolderError(f"{path}: unreadable JSON ({exc})") from exc
    if not isinstance(body, dict):
        raise RunFolderError(f"{path}: expected a JSON object, got {type(body).__name__}")
    return body


# the shape a report relies on: the type of each top-level key of summary.json that is present
SUMMARY_SHAPE: dict[str, type | tuple[type, ...]] = {
    "lang": str, "protocol": str, "system": str, "subsets": dict, "dimensions": dict, "overall": dict,
    "provenance": dict, "meta": dict}


def read_summary(path: Path) -> dict[str, Any]:
    """A run's summary.json ({} when there is none); RunFolderError naming the file and the field
    when it is not JSON or a key a report reads has the wrong type."""
    body = _read_json(path)
    for key, kind in SUMMARY_SHAPE.items():
        if key in body and body[key] is not None and not isinstance(body[key], kind):
            raise RunFolderError(f"{path}: not a vocalbench summary: field '{key}' is a {type(body[key]).__name__}")
    for name, row in (body.get("subsets") or {}).items():
        if not isinstance(row, dict):
            raise RunFolderError(f"{path}: not a vocalbench summary: field 'subsets.{name}' is a {type(row).__name__}")
    return body


@dataclass
class RunData:
    """Everything a report needs from one language run folder, loaded once."""

    path: Path
    lang: str
    summary: dict[str, Any]
    config: dict[str, Any]
    samples: dict[tuple[str, str], Sample] = field(default_factory=dict)
    replies: dict[tuple[str, str], Reply] = field(default_factory=dict)
    scores: dict[tuple[str, str], dict[str, Score]] = field(default_factory=dict)
    label: str = ""

    @property
    def system(self) -> str:
        return str(self.summary.get("system") or self.config.get("system") or self.path.name)

    @property
    def protocol(self) -> str:
        return str(self.summary.get("protocol") or self.config.get("protocol") or "v2")

    @property
    def subsets(self) -> list[str]:
        names = set(self.summary.get("subsets") or {}) | {s for s, _ in self.samples}
        return sorted(names)

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
        data = self.config.get("data")
        if not p.is_absolute() and isinstance(data, str) and data:
            d = Path(data)
            candidates += [d / p, d / "audio" / p, d / self.lang / "audio" / p]
        if not p.is_absolute():
            candidates.append(Path.cwd() / p)
        return next((c for c in candidates if c.is_file()), None)


def _judge_id(summary: dict[str, Any], config: dict[str, Any]) -> str:
    prov = summary.get("provenance") or {}
    return str(prov.get("judge") or config.get("judge") or "")


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


def load_run(path: str | Path, with_store: bool = True) -> RunData:
    """Load one language run folder."""
    p = Path(path)
    if not is_run_dir(p):
        raise RunFolderError(f"{p}: not a run folder")
    summary = read_summary(p / "summary.json")
    config = _read_json(p / "config.json")
    lang = str(summary.get("lang") or config.get("lang") or (p.name if p.name in LANGS else "en"))
    run = RunData(path=p, lang=lang, summary=summary, config=config)
    if with_store and (p / "store.sqlite").is_file():
        from vocalbench.runner.store import RunStore

        judge = _judge_id(summary, config)
        with RunStore(p) as store:
            run.samples = {(s.subset, s.id): s for s in store.samples()}
            run.replies = store.replies()
            for sc in store.scores():
                slot = run.scores.setdefault((sc.subset, sc.sample_id), {})
                slot[sc.name] = _pick(slot.get(sc.name), sc, judge)
    return run


def load_runs(paths: Sequence[str | Path], with_store: bool = True) -> list[RunData]:
    """Load every language run under ``paths`` and give each a unique display label."""
    runs = [load_run(p, with_store) for p in expand_run_dirs(paths)]
    seen: dict[str, int] = {}
    for r in runs:
        base = f"{r.system} [{r.lang}]"
        seen[base] = seen.get(base, 0) + 1
    for r in runs:
        base = f"{r.system} [{r.lang}]"
        if seen[base] > 1:
            r.label = f"{r.system} ({r.path.parent.name}/{r.path.name}) [{r.lang}]"
        else:
            r.label = base
    return runs


def load_one_run(path: str | Path) -> RunData:
    """The one language run folder at ``path`` (:class:`RunFolderError` when it holds none or several)."""
    runs = load_runs([path])
    if len(runs) != 1:
        raise RunFolderError(f"{path}: give one language run folder (found {len(runs)}: {[str(r.path) for r in runs]})")
    return runs[0]

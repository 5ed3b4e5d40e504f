"""Check a release and report every problem (file, Qid, field) instead of stopping at the first.

Errors: malformed JSON, a file that is not a list, an unknown subset file, duplicate Qids,
missing required fields, wrong types, unsafe Qids, empty subset files, and (unless metadata-only) missing,
unreadable or truncated audio and WAV headers with an implausible sample rate.
The optional/null fields docs/scoring.md lists (zh cs_knowledge ``Question_zh``, instruction
``Sub-category``, en emotion ``Prompt_prob``, en instruction ``Answer``) are not errors.
Warnings: an official subset whose size differs from the release (fine for our own sets).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

from pydantic import JsonValue

from vocalbench import catalog
from vocalbench.data.official import (
    DataError,
    audio_dir,
    check_record,
    detect_lang,
    read_records,
    subset_files,
    subset_problem,
)


@dataclass(frozen=True)
class Problem:
    """One finding; ``level`` is ``error`` or ``warning``."""

    file: str
    message: str
    qid: str | None = None
    field: str | None = None
    level: str = "error"

    def __str__(self) -> str:
        where = self.file + (f" [{self.qid}]" if self.qid else "") + (f" field '{self.field}'" if self.field else "")
        return f"{self.level}: {where}: {self.message}"


@dataclass
class Report:
    root: str
    lang: str
    files: int = 0
    items: int = 0
    audio_checked: int = 0
    problems: list[Problem] = field(default_factory=list)

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.level == "error"]

    @property
    def warnings(self) -> list[Problem]:
        return [p for p in self.problems if p.level == "warning"]

    def to_dict(self) -> dict[str, JsonValue]:
        return {"root": self.root, "lang": self.lang, "files": self.files, "items": self.items,
                "audio_checked": self.audio_checked, "errors": len(self.errors),
                "warnings": len(self.warnings), "problems": [asdict(p) for p in self.problems]}


def _check_audio(path: Path) -> str | None:
    from vocalbench import audio

    try:
        info = audio.info(path)
        if info.frames and info.floating:
            audio.load(path)  # float samples are read: NaN or infinite ones are refused as at run time
    except audio.AudioError as exc:
        return exc.problem
    if info.frames == 0:
        return "contains no samples"
    return None


def validate(root: str | Path, lang: str | None = None, *, metadata_only: bool = False,
             progress: Callable[[int], None] | None = None, workers: int = 4) -> Report:
    """Validate an official-layout folder (``json/`` + ``audio/``) and return every problem."""
    root = Path(root)
    if not (root / "json").is_dir():
        raise DataError(root, "not a release folder (no json/ folder)")
    lang = lang or detect_lang(root)
    report = Report(root=str(root), lang=lang)
    known = catalog.counts(lang)
    audio_jobs: list[tuple[str, str, Path]] = []  # (file, qid, audio path)
    for subset, path in subset_files(root).items():
        report.files += 1
        rel = str(path.relative_to(root.parent)) if root.parent != root else str(path)
        if (problem := subset_problem(subset, lang)) is not None:
            report.problems.append(Problem(rel, problem))
        try:
            records = read_records(path)
        except DataError as exc:
            report.problems.append(Problem(rel, exc.problem))
            continue
        report.items += len(records)
        if not records:
            report.problems.append(Problem(rel, "no records (an empty list)"))
        expected = known.get(subset)
        if expected is not None and len(records) != expected:
            report.problems.append(Problem(rel, f"{len(records)} items; the official release has {expected}",
                                           level="warning"))
        seen: dict[str, int] = {}
        for i, rec in enumerate(records):
            for qid, fld, msg in check_record(rec, subset=subset, index=i):
                report.problems.append(Problem(rel, msg, qid=qid, field=fld))
            if not isinstance(rec, dict):
                continue
            qid = rec.get("Qid")
            if isinstance(qid, str):
                if qid in seen:
                    report.problems.append(Problem(rel, f"duplicate Qid (items {seen[qid]} and {i})", qid=qid, field="Qid"))
                else:
                    seen[qid] = i
            if not metadata_only and isinstance(rec.get("Audio"), str):
                audio_jobs.append((rel, qid if isinstance(qid, str) else f"item {i}", audio_dir(root) / rec["Audio"]))
    if not metadata_only:
        done = 0
        with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
            for (rel, qid, apath), problem in zip(audio_jobs, pool.map(_check_audio, [j[2] for j in audio_jobs]), strict=True):
                done += 1
                if problem is not None:
                    msg = "missing audio" if problem == "file not found" else f"unreadable audio ({problem})"
                    report.problems.append(Problem(rel, f"{msg}: {apath}", qid=qid, field="Audio"))
                if progress is not None:
                    progress(done)
        report.audio_checked = len(audio_jobs)
    return report


def dump(report: Report) -> str:
    return json.dumps(report.to_dict(), ensure_ascii=False, indent=2)


def targets(data: str, lang: str | None) -> list[tuple[str | None, str]]:
    """The release folders DATA names, as (lang, folder): a release, the en/ and zh/ of a folder
    holding both (when no ``lang`` is given), ``mini`` (both languages), or a parquet folder
    (materialised to the official layout)."""
    from vocalbench.data import resolve
    from vocalbench.data.official import is_release

    p = Path(data)
    if data not in ("mini",) and p.is_dir() and not is_release(p) and lang is None:
        langs = [x for x in ("en", "zh") if is_release(p / x)]
        if langs:
            return [(x, str(p / x)) for x in langs]
    langs_to_try = [lang] if lang else ["en", "zh"] if data == "mini" else [None]
    out = []
    for lg in langs_to_try:
        kind, root = resolve(data, lg or "en")
        if kind == "parquet":
            from vocalbench.data.parquet import materialise

            root = materialise(root, lg or "zh")
        out.append((lg, str(root)))
    return out


def validate_data(data: str, lang: str | None = None, *, metadata_only: bool = False) -> Iterator[Report]:
    """Validate every release DATA names (see :func:`targets`), one report each, as each is done."""
    for lg, root in targets(data, lang):
        yield validate(root, lg, metadata_only=metadata_only)

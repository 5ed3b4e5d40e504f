"""``vocalbench import``: precomputed model outputs -> a run folder ready for ``vocalbench score``.

``--format official`` reads the official output layout::

    OUTPUTS/json/<subset>.json       JSON list or JSONL of {"question_id"|"Qid", "prediction"|"Response"}
    OUTPUTS/json_asr/<subset>.json   optional: adds "asr_pred"|"Response_hyp" (transcript of the audio)
    OUTPUTS/wav/<subset>/<qid>.wav   or flat OUTPUTS/wav/<qid>.wav (zh)

with the quirks of real releases: ``json/instruction.json`` holds instruction_following, en
single_round ids ``chat-NNN`` map by index to ``single_round-NNN`` (any id not in the data whose
trailing number is a list index maps the same way, and the original id is kept in
``Reply.extra``), and the outputs' own ``answer`` fields are ignored (references always come from
the data). ``--format jsonl`` reads this project's own format: one JSON object per line::

    {"subset": "knowledge", "id": "knowledge-0000", "text": "...", "audio": "wav/x.wav",
     "asr_text": null, "audio_duration": null, "error": null,
     "timings": {"first_audio": 0.31, "last_chunk": 2.4}}

(``audio`` relative to the JSONL file's folder; ``error`` a string type such as ``timeout``;
``timings`` in seconds from the request). ``--outputs`` is a .jsonl file or a folder of them.

Every sample of an imported subset gets a reply: one without an output record is stored as
``Reply(error=missing_reply)`` (a system failure), never dropped. A malformed file is reported
with its name (and line for JSONL); the other files are still imported and nothing already in
the run is lost. Re-importing a changed reply drops that subset's stale scores.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vocalbench.records import AudioRef, ErrorInfo, Reply, Sample, Timings
from vocalbench.runner.store import RunStore

ID_KEYS = ("question_id", "Qid", "qid", "id")
TEXT_KEYS = ("prediction", "Response", "response", "text")
ASR_KEYS = ("asr_pred", "Response_hyp", "asr_text", "hyp")
FILE_ALIASES = {"instruction_following": ("instruction_following", "instruction")}
_TRAILING = re.compile(r"(\d+)$")


class OutputFileError(ValueError):
    """A malformed output file; names the file and, for JSONL, the line."""


EPILOG = """formats:
  official  OUTPUTS/json/<subset>.json (JSON list or JSONL of {question_id|Qid, prediction|Response}),
            optional OUTPUTS/json_asr/<subset>.json (asr_pred|Response_hyp), audio OUTPUTS/wav/<subset>/<qid>.wav
            or OUTPUTS/wav/<qid>.wav; json/instruction.json = instruction_following; chat-NNN ids map by index
  jsonl     one object per line: {"subset", "id", "text", "audio" (path relative to the file), "asr_text",
            "audio_duration", "error" (type string), "timings": {"first_audio", "last_chunk", ...} (seconds)}
Items of an imported subset without an output are recorded as missing replies (system errors)."""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.epilog = EPILOG
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.add_argument("--format", choices=["official", "jsonl"], default="official")
    p.add_argument("--outputs", required=True, help="official outputs folder (json/, json_asr/, wav/) or our JSONL")
    p.add_argument("--data", required=True, help="the release the outputs answer (folder or 'mini')")
    p.add_argument("--lang", required=True, choices=["en", "zh"])
    p.add_argument("--out", required=True, help="run folder to create or update")
    p.add_argument("--system", default=None, help="system name recorded in config.json (default: outputs folder name)")
    p.add_argument("--subsets", default=None, help="comma-separated subsets to import (default: all found)")
    p.add_argument("--quiet", action="store_true")


def read_output_records(path: Path) -> list[dict[str, Any]]:
    """A JSON list or JSONL file of objects; errors name the file (and the line for JSONL)."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise OutputFileError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    stripped = text.lstrip()
    if not stripped:
        return []
    if stripped.startswith("["):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise OutputFileError(f"{path}: malformed JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from exc
        if not isinstance(data, list):
            raise OutputFileError(f"{path}: expected a JSON list")
        records = data
    else:
        records = []
        for lineno, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise OutputFileError(f"{path}: malformed JSON on line {lineno} (column {exc.colno}): {exc.msg}") from exc
    for i, rec in enumerate(records):
        if not isinstance(rec, dict):
            raise OutputFileError(f"{path}: record {i + 1} is a {type(rec).__name__}, expected an object")
    return records


def _first(rec: dict[str, Any], keys: tuple[str, ...]) -> Any:
    for k in keys:
        if k in rec:
            return rec[k]
    return None


@dataclass
class ImportStats:
    subsets: dict[str, dict[str, int]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


class _IdMap:
    """Output id -> sample: exact Qid, else the sample at the id's trailing number (chat-NNN)."""

    def __init__(self, samples: list[Sample]) -> None:
        self.by_id = {s.id: s for s in samples}
        self.by_index = {s.index: s for s in samples}

    def get(self, oid: str) -> Sample | None:
        if oid in self.by_id:
            return self.by_id[oid]
        m = _TRAILING.search(oid)
        return self.by_index.get(int(m.group(1))) if m else None


def _find_file(folder: Path, subset: str) -> Path | None:
    for name in FILE_ALIASES.get(subset, (subset,)):
        for ext in (".json", ".jsonl"):
            p = folder / f"{name}{ext}"
            if p.exists():
                return p
    return None


def _find_audio(outputs: Path, subset: str, ids: list[str]) -> Path | None:
    wav = outputs / "wav"
    for name in FILE_ALIASES.get(subset, (subset,)):
        for i in ids:
            for p in (wav / name / f"{i}.wav", wav / f"{i}.wav"):
                if p.exists():
                    return p.resolve()
    return None


def official_replies(outputs: Path, subset: str, samples: list[Sample], stats: ImportStats) -> list[Reply] | None:
    """Replies for one subset from the official layout; None when the subset has no output file."""
    path = _find_file(outputs / "json", subset)
    if path is None:
        return None
    records = read_output_records(path)
    asr: dict[str, str] = {}
    asr_path = _find_file(outputs / "json_asr", subset)
    if asr_path is not None:
        for rec in read_output_records(asr_path):
            oid, hyp = _first(rec, ID_KEYS), _first(rec, ASR_KEYS)
            if oid is not None and isinstance(hyp, str):
                asr[str(oid)] = hyp
    ids = _IdMap(samples)
    got: dict[str, Reply] = {}
    unknown = 0
    for i, rec in enumerate(records):
        oid = _first(rec, ID_KEYS)
        if oid is None:
            stats.warnings.append(f"{path}: record {i + 1} has no id ({'/'.join(ID_KEYS)}); skipped")
            continue
        oid = str(oid)
        sample = ids.get(oid)
        if sample is None:
            unknown += 1
            continue
        if sample.id in got:
            stats.warnings.append(f"{path}: duplicate output for {sample.id} (record {i + 1}); the last one is kept")
        text = _first(rec, TEXT_KEYS)
        text = None if text is None else str(text)
        audio = _find_audio(outputs, subset, list(dict.fromkeys([sample.id, oid])))
        hyp = asr.get(oid, asr.get(sample.id))
        extra: dict[str, Any] = {"output_file": str(path)}
        if oid != sample.id:
            extra["original_id"] = oid
        error = None
        if not (text or "").strip() and audio is None and not (hyp or "").strip():
            error = ErrorInfo(type="empty_reply", message=f"empty output in {path.name}")
        got[sample.id] = Reply(subset=subset, sample_id=sample.id, text=text,
                               audio=AudioRef(path=str(audio)) if audio else None, error=error,
                               source="imported", asr_text=hyp, extra=extra)
    if unknown:
        stats.warnings.append(f"{path}: {unknown} output record(s) match no {subset} item of the data; skipped")
    return _complete(subset, samples, got, path)


def _complete(subset: str, samples: list[Sample], got: dict[str, Reply], path: Path) -> list[Reply]:
    out = []
    for s in samples:
        r = got.get(s.id)
        if r is None:
            r = Reply(subset=subset, sample_id=s.id, source="imported",
                      error=ErrorInfo(type="missing_reply", message=f"no output for {s.id} in {path}"))
        out.append(r)
    return out


def _jsonl_files(outputs: Path) -> list[Path]:
    if outputs.is_file():
        return [outputs]
    return sorted(outputs.glob("*.jsonl"))


def jsonl_replies(outputs: Path, by_subset: dict[str, list[Sample]], stats: ImportStats) -> Iterator[tuple[str, list[Reply]]]:
    """Replies per subset from our JSONL format (subsets that appear in the files)."""
    got: dict[str, dict[str, Reply]] = {}
    source: dict[str, Path] = {}
    for path in _jsonl_files(outputs):
        try:
            records = read_output_records(path)
        except OutputFileError as exc:
            stats.errors.append(str(exc))
            continue
        for i, rec in enumerate(records, 1):
            subset, sid = rec.get("subset"), rec.get("id")
            if subset not in by_subset:
                stats.warnings.append(f"{path}: line {i}: subset {subset!r} not in the data; skipped")
                continue
            if not any(s.id == sid for s in by_subset[subset]):
                stats.warnings.append(f"{path}: line {i}: id {sid!r} not in {subset}; skipped")
                continue
            try:
                got.setdefault(subset, {})[str(sid)] = _jsonl_reply(rec, path)
            except (TypeError, ValueError) as exc:
                stats.errors.append(f"{path}: line {i} ({subset}/{sid}): {exc}")
            source.setdefault(subset, path)
    for subset, replies in got.items():
        yield subset, _complete(subset, by_subset[subset], replies, source[subset])


def _jsonl_reply(rec: dict[str, Any], path: Path) -> Reply:
    audio = rec.get("audio")
    ref = None
    if audio:
        p = Path(audio)
        ref = AudioRef(path=str((p if p.is_absolute() else path.parent / p).resolve()))
    timings = rec.get("timings")
    err = rec.get("error")
    error = None if not err else ErrorInfo(type=str(err) if isinstance(err, str) else str(err.get("type", "error")),
                                           message="" if isinstance(err, str) else str(err.get("message", "")))
    return Reply(subset=rec["subset"], sample_id=rec["id"], text=rec.get("text"), audio=ref,
                 audio_duration=rec.get("audio_duration"),
                 timings=Timings(origin=f"imported:{path.name}", **timings) if timings else None,
                 error=error, source="imported", asr_text=rec.get("asr_text"),
                 extra={"output_file": str(path)})


def reuse_clean_replies(store: RunStore, clean: list[Sample]) -> int:
    """Copy single_round replies to robust_clean items with the same question (no reply yet only)."""
    by_question = {}
    sr_samples = {s.id: s for s in store.samples("single_round")}
    for (_, sid), r in store.replies("single_round").items():
        if sid in sr_samples and not r.failed:
            by_question[sr_samples[sid].question] = r
    have = store.replies("robust_clean")
    out = []
    for s in clean:
        src = by_question.get(s.question)
        if src is not None and ("robust_clean", s.id) not in have:
            out.append(src.model_copy(update={"subset": "robust_clean", "sample_id": s.id,
                                              "source": f"reused:single_round/{src.sample_id}"}))
    store.put_replies(out)
    return len(out)


def _data_ref(data: str) -> str:
    """DATA as recorded in config.json: a built-in name as is, a folder as an absolute path."""
    from vocalbench.data import BUILTIN

    return data if data in BUILTIN else str(Path(data).resolve())


def import_outputs(fmt: str, outputs: Path, data: str, lang: str, out: Path, system: str | None = None,
                   subsets: list[str] | None = None) -> ImportStats:
    """Import outputs into run folder ``out`` (created or updated); returns per-subset counts."""
    from vocalbench.config import RunConfig
    from vocalbench.data import load_samples
    from vocalbench.runner.store import RunStore

    samples = load_samples(data, lang, subsets)
    by_subset: dict[str, list[Sample]] = {}
    for s in samples:
        by_subset.setdefault(s.subset, []).append(s)
    stats = ImportStats()
    cfg_path = out / "config.json"
    if cfg_path.exists():
        cfg = RunConfig.load(out)
        if cfg.lang != lang:
            raise ValueError(f"{out}: existing run is lang {cfg.lang}, cannot import {lang} outputs into it")
        cfg = cfg.model_copy(update={"system": system or cfg.system, "data": _data_ref(data)})
    else:
        cfg = RunConfig(system=system or f"imported:{outputs.name}", data=_data_ref(data), lang=lang)  # type: ignore[arg-type]
    with RunStore(out) as store:
        def write(subset: str, replies: list[Reply]) -> None:
            old = store.replies(subset)
            changed = any((o := old.get((r.subset, r.sample_id))) is not None and o.to_json() != r.to_json()
                          for r in replies)
            store.add_samples(by_subset[subset])
            store.put_replies(replies)
            if changed:
                store.delete_scores(subset)
                stats.warnings.append(f"{subset}: replies changed since the last import; its scores will be recomputed")
            counts = {"items": len(replies), "replies": 0, "missing_reply": 0, "empty_reply": 0,
                      "with_audio": 0, "with_asr": 0, "remapped_ids": 0}
            for r in replies:
                if r.error is not None and r.error.type in counts:
                    counts[r.error.type] += 1
                else:
                    counts["replies"] += 1
                counts["with_audio"] += r.audio is not None
                counts["with_asr"] += r.asr_text is not None
                counts["remapped_ids"] += "original_id" in r.extra
            stats.subsets[subset] = counts

        if fmt == "official":
            if not (outputs / "json").is_dir():
                raise ValueError(f"{outputs}: not an official outputs folder (no json/ folder)")
            for subset, items in by_subset.items():
                try:
                    replies = official_replies(outputs, subset, items, stats)
                except OutputFileError as exc:
                    stats.errors.append(str(exc))
                    continue
                if replies is not None:
                    write(subset, replies)
            from vocalbench.data import available_subsets

            known = {n for s in available_subsets(data, lang) for n in FILE_ALIASES.get(s, (s,))}
            for p in sorted((outputs / "json").iterdir()):
                if p.suffix in (".json", ".jsonl") and p.stem not in known:
                    stats.warnings.append(f"{p}: no subset '{p.stem}' in the {lang} data; not imported")
        else:
            for subset, replies in jsonl_replies(outputs, by_subset, stats):
                write(subset, replies)
        # robust needs its clean baseline items in the run even when they have no outputs; their
        # replies are reused from single_round replies to the same question when the run has them
        if "robust" in stats.subsets and "robust_clean" in by_subset and "robust_clean" not in stats.subsets:
            store.add_samples(by_subset["robust_clean"])
            reused = reuse_clean_replies(store, by_subset["robust_clean"])
            if reused:
                stats.warnings.append(f"robust_clean: {reused} replies reused from single_round (same question)")
        from vocalbench.data.official import ordered

        imported = ordered(store.subsets(), lang)
        previous = store.get_meta("imported", {}) or {}
        asr = {**previous.get("asr_transcripts", {}), **{k: c["with_asr"] for k, c in stats.subsets.items()}}
        store.set_meta("imported", {"format": fmt, "outputs": str(outputs.resolve()),
                                    "subsets": sorted(set(previous.get("subsets", [])) | set(stats.subsets)),
                                    "asr_transcripts": asr})
    cfg = cfg.model_copy(update={"subsets": imported or None})
    cfg.save(out, extra={"imported_from": str(outputs.resolve()), "import_format": fmt})
    return stats


def run(args: argparse.Namespace) -> int:
    from vocalbench.data.official import DataError
    from vocalbench.errors import CliError

    subsets = [s.strip() for s in args.subsets.split(",") if s.strip()] if args.subsets else None
    outputs = Path(args.outputs)
    if not outputs.exists():
        raise CliError(f"{outputs}: no such outputs folder or file")
    try:
        stats = import_outputs(args.format, outputs, args.data, args.lang, Path(args.out), args.system, subsets)
    except (DataError, ValueError) as exc:
        raise CliError(str(exc)) from exc
    if not args.quiet:
        for w in stats.warnings:
            print(f"warning: {w}", file=sys.stderr)
        for subset, c in stats.subsets.items():
            print(f"{subset}: {c['items']} items, {c['replies']} replies, {c['missing_reply']} missing, "
                  f"{c['empty_reply']} empty, {c['with_asr']} with ASR transcript, {c['with_audio']} with audio"
                  + (f", {c['remapped_ids']} ids mapped by index" if c["remapped_ids"] else ""))
    for e in stats.errors:
        print(f"error: {e}", file=sys.stderr)
    if not stats.subsets and not stats.errors:
        raise CliError(f"{outputs}: no output file matches a subset of the {args.lang} data")
    return 2 if stats.errors else 0

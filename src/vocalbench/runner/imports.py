"""Importing precomputed outputs into a run folder (``vocalbench import``): the release's samples,
one reply per sample (a missing output is a recorded ``missing_reply``), stale scores dropped when
a reply changed, a loaded control's replies reused where declared (robust_clean from single_round),
and config.json written, all through the folder's :class:`~vocalbench.runner.folder.RunFolder`.
The outputs themselves are read by :mod:`vocalbench.data.outputs`.
"""

from __future__ import annotations

from pathlib import Path

from vocalbench import catalog
from vocalbench.data.outputs import (
    ImportStats,
    OutputFileError,
    jsonl_replies,
    official_replies,
)
from vocalbench.records import Reply, Sample
from vocalbench.run_config import RunConfig
from vocalbench.runner.folder import RunFolder
from vocalbench.runner.generate import reply_index, reuse_reply
from vocalbench.runner.store import RunStore
from vocalbench.systems.spec import SystemSpec


def reuse_replies(store: RunStore, samples: list[Sample], source: str) -> int:
    """Give ``samples`` without a reply the replies of ``source`` to the same question."""
    index = reply_index(store, source)
    have = store.replies(samples[0].subset) if samples else {}
    out = [r for s in samples if s.key not in have and (r := reuse_reply(s, index)) is not None]
    store.put_replies(out)
    return len(out)


def _data_ref(data: str) -> str:
    """DATA as recorded in config.json: a built-in or Hub name as is, a folder as an absolute path."""
    from vocalbench.data import builtin_sets, hub

    return data if data in builtin_sets() or hub.parse(data) is not None else str(Path(data).resolve())


def import_outputs(fmt: str, outputs: Path, data: str, lang: str, out: Path, system: str | None = None,
                   subsets: list[str] | None = None, redo_changed: bool = False) -> ImportStats:
    """Import outputs into run folder ``out`` (created or updated); returns per-subset counts. A run
    made with another version of the release is refused, or with ``redo_changed`` its changed
    samples' replies and scores are dropped first (:func:`~vocalbench.runner.fingerprint.sync_release`)."""
    with RunFolder(out) as folder:
        return _import(folder, fmt, outputs, data, lang, system, subsets, redo_changed)


def _import(folder: RunFolder, fmt: str, outputs: Path, data: str, lang: str, system: str | None,
            subsets: list[str] | None, redo_changed: bool) -> ImportStats:
    out = folder.path
    samples = folder.samples(data, lang, subsets)
    by_subset: dict[str, list[Sample]] = {}
    for s in samples:
        by_subset.setdefault(s.subset, []).append(s)
    stats = ImportStats()
    if (out / "config.json").exists():
        cfg = folder.config()
        if cfg.lang != lang:
            raise ValueError(f"{out}: existing run is lang {cfg.lang}, cannot import {lang} outputs into it")
        cfg = cfg.updated(system=system or cfg.system, data=_data_ref(folder.pinned(data)))
    else:  # no reply cap: the replies were not generated here
        cfg = RunConfig(system=SystemSpec.read(system or f"imported:{outputs.name}"), data=_data_ref(folder.pinned(data)),
                        lang=lang, max_reply_tokens=None)  # type: ignore[arg-type]
    store = folder.store
    redone = folder.begin(data, samples, redo=redo_changed)
    if redone:
        stats.warnings.append(f"{len(redone)} changed sample(s) of the release: their replies and scores are redone")


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

        known = {n for s in available_subsets(folder.pinned(data), lang) for n in catalog.output_files(s)}
        for p in sorted((outputs / "json").iterdir()):
            if p.suffix in (".json", ".jsonl") and p.stem not in known:
                stats.warnings.append(f"{p}: no subset '{p.stem}' in the {lang} data; not imported")
    else:
        for subset, replies in jsonl_replies(outputs, by_subset, stats):
            write(subset, replies)
    # a control a subset loads (robust's clean baseline) is in the run even without outputs; its
    # replies are reused from the subset it declares (single_round) where the run has them
    for control in catalog.with_controls(list(stats.subsets), by_subset)[len(stats.subsets):]:
        store.add_samples(by_subset[control])
        source = catalog.reusers().get(control)
        reused = reuse_replies(store, by_subset[control], source) if source else 0
        if reused:
            stats.warnings.append(f"{control}: {reused} replies reused from {source} (same question)")
    if not stats.subsets:
        return stats  # nothing imported (every file malformed): the run is left as it was

    imported = catalog.ordered(store.subsets(), lang)
    previous = store.get_meta("imported", {}) or {}
    asr = {**previous.get("asr_transcripts", {}), **{k: c["with_asr"] for k, c in stats.subsets.items()}}
    store.set_meta("imported", {"format": fmt, "outputs": str(outputs.resolve()),
                                "subsets": sorted(set(previous.get("subsets", [])) | set(stats.subsets)),
                                "asr_transcripts": asr})
    folder.save_config(cfg.model_copy(update={"subsets": imported or None}),
                       {"imported_from": str(outputs.resolve()), "import_format": fmt})
    return stats

"""Data layer: load a release (official json + audio, HF parquet, or a built-in set) as Samples.

``DATA`` is a folder in the official layout (``json/`` + ``audio/``), a folder holding one
(``DATA/<lang>/json``), a folder of parquet files (the HF configs), a built-in name (``mini``), or
a dataset on the Hugging Face Hub (``VocalNet/VocalBench``, ``VocalNet/VocalBench-zh``,
``hf:OWNER/NAME[@REVISION]``; :mod:`vocalbench.data.hub`) whose snapshot is read like a folder.
"""

from __future__ import annotations

import logging
import re
from collections import OrderedDict
from collections.abc import Hashable, Sequence
from pathlib import Path

from vocalbench import catalog, parts
from vocalbench.data.official import DataError, detect_lang, is_release, load_subset, subset_files, subset_problem
from vocalbench.records import Sample

log = logging.getLogger(__name__)

__all__ = ["DataError", "available_subsets", "builtin_sets", "limit_samples", "load_samples", "resolve"]


def builtin_sets() -> list[str]:
    """Names of the built-in data sets: entries of the parts table (the construction layer registers
    them and builds one on first use)."""
    return [e.name for e in parts.entries("dataset")]


def resolve(data: str | Path, lang: str) -> tuple[str, Path]:
    """``(kind, root)`` for a DATA argument: kind is ``official`` or ``parquet``; root the folder."""
    if str(data) in builtin_sets():
        ensure = parts.get("dataset", str(data)).load()
        log.debug("built-in set %s (%s): ensuring it is built", data, lang)
        return "official", Path(ensure(lang))
    from vocalbench.data import hub

    ref = hub.parse(str(data))
    p = hub.snapshot(ref) if ref is not None else Path(data).expanduser()
    if not p.exists():
        raise DataError(p, f"no such data folder (and not a built-in set: {', '.join(builtin_sets())})")
    for cand in (p, p / lang):
        if cand.is_dir() and is_release(cand):
            return "official", cand
    from vocalbench.data import parquet

    for cand in (p / lang, p):
        if cand.is_dir() and parquet.find_files(cand):
            return "parquet", cand
    if p.is_file() and p.suffix == ".parquet":
        return "parquet", p
    raise DataError(ref.spec if ref is not None else p, "not a release: expected json/<subset>.json (official "
                    f"layout), {lang}/json/, or parquet files")


def _root_for(data: str | Path, lang: str) -> tuple[str, Path]:
    kind, root = resolve(data, lang)
    if kind == "parquet":
        from vocalbench.data import parquet

        root = parquet.materialise(root, lang)  # an official-layout folder in the cache
    return kind, root


def available_subsets(data: str | Path, lang: str) -> list[str]:
    """Subset names present in DATA for ``lang``, in canonical order."""
    kind, root = resolve(data, lang)
    if kind == "parquet":
        from vocalbench.data import parquet

        return catalog.ordered(list(parquet.find_files(root)), lang)
    return catalog.ordered(list(subset_files(root)), lang)


def load_samples(data: str, lang: str, subsets: list[str] | None = None, limit: int | None = None) -> list[Sample]:
    """Every sample of the chosen subsets (all available when None), in canonical order.

    Selecting ``robust`` also loads ``robust_clean`` (its clean baseline). ``limit`` keeps N base
    items per subset, stratified over categories (deterministic); for robust, N base questions with
    all their conditions plus their clean items.
    """
    if limit is not None and limit < 1:
        raise ValueError(f"limit must be >= 1, got {limit}")
    _, root = _root_for(data, lang)
    check_lang(root, lang)
    for name, path in subset_files(root).items():  # the whole release is checked before anything is generated
        if (problem := subset_problem(name, lang)) is not None:
            raise DataError(path, problem)
    avail = catalog.ordered(list(subset_files(root)), lang)
    wanted = list(dict.fromkeys(subsets)) if subsets else list(avail)
    unknown = [s for s in wanted if s not in avail]
    if unknown:
        raise DataError(root / "json", f"subset(s) {', '.join(unknown)} not in this release "
                                       f"(available: {', '.join(avail) or 'none'})")
    wanted = catalog.with_controls(wanted, avail)
    loaded = {s: load_subset(root, s, lang) for s in catalog.ordered(wanted, lang)}
    if limit is not None:
        loaded = limit_samples(loaded, limit)
    samples = [s for name in catalog.ordered(list(loaded), lang) for s in loaded[name]]
    if not samples:
        raise DataError(root / "json", f"no samples in {', '.join(wanted) or 'any subset file'} (empty release)")
    return samples


def check_lang(root: Path, lang: str) -> None:
    """:class:`DataError` when the release at ``root`` is clearly of the other language (its folder
    name, its zh-only subsets, or the script of its questions: :func:`detect_lang`)."""
    found = detect_lang(root)
    if found != lang:
        raise DataError(root, f"this release is {found} (by its folder name, subsets or question text), "
                              f"not {lang}: check --lang")


def _stratum(s: Sample) -> Hashable:
    if s.category is not None:
        return (s.category, s.sub_category)
    for key in ("Topic", "Question_emo", "Text_emo"):
        if s.metadata.get(key) is not None:
            return (key, s.metadata[key])
    return None


def stratified(samples: Sequence[Sample], n: int) -> list[Sample]:
    """N samples taken round-robin over strata (category, sub-category; else topic/emotion), each
    stratum in list order; result in list order. Deterministic."""
    if n >= len(samples):
        return list(samples)
    groups: OrderedDict[Hashable, list[Sample]] = OrderedDict()
    for s in samples:
        groups.setdefault(_stratum(s), []).append(s)
    picked: list[Sample] = []
    depth = 0
    while len(picked) < n:
        for group in groups.values():
            if depth < len(group) and len(picked) < n:
                picked.append(group[depth])
        depth += 1
    return sorted(picked, key=lambda s: s.index)


_TRAILING = re.compile(r"(\d+)$")


def _base_key(s: Sample) -> str:
    """The base question of an item of a subset that loads its control: its question text (the same
    in every robust condition and in the clean item)."""
    return s.question


def limit_samples(by_subset: dict[str, list[Sample]], n: int) -> dict[str, list[Sample]]:
    """Apply ``--limit n`` to loaded subsets (see :func:`load_samples`): n items per subset, stratified;
    a subset that loads its control (``SubsetSpec.loads_control``) keeps its items of the control's
    kept questions (or, without the control, of its first n question numbers)."""
    dependent = {name: spec.control for name in by_subset
                 if (spec := catalog.find(name)) is not None and spec.loads_control and spec.control}
    out = {name: stratified(items, n) for name, items in by_subset.items() if name not in dependent}
    for name, control in dependent.items():
        items = by_subset[name]
        if control in out:
            keys = {_base_key(s) for s in out[control]}
        else:
            nums = sorted({int(m.group(1)) for s in items if (m := _TRAILING.search(s.id))})[:n]
            keys = {_base_key(s) for s in items if (m := _TRAILING.search(s.id)) and int(m.group(1)) in nums}
        out[name] = [s for s in items if _base_key(s) in keys]
    return out

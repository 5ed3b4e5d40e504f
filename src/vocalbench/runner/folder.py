"""A run folder and everything it holds: one system on one language::

    RUN/store.sqlite   samples, replies, scores, judge calls, meta (runner/store.py)
    RUN/audio/         reply audio, written as it arrives
    RUN/config.json    the resolved config and what the run records (versions, system details,
                       where imported outputs came from); never a secret
    RUN/summary.json   written by scoring

:class:`RunFolder` owns how a run starts or resumes: a folder holds one system; a Hub dataset stays
at the commit the run started with; the release's samples are checked against the fingerprints in
the store (a changed sample is refused, or its replies and scores redone); the data source and the
config are recorded. From entering to leaving it holds the folder's one store handle, so that every
step of a command shares it (generate, score and the report of ``run``; ``import``; ``score``; the
report's reading). Repeated runs (``run --repeats N``) are folders ``GROUP/repeat-K``;
:func:`language_folders` finds the language run folders under the paths a command is given.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Self

from pydantic import JsonValue

from vocalbench.errors import InputError
from vocalbench.records import Sample
from vocalbench.run_config import RunConfig, saved_records
from vocalbench.runner import lock
from vocalbench.runner.fingerprint import sync_release
from vocalbench.runner.store import RunStore

CONFIG, SUMMARY, STORE = "config.json", "summary.json", "store.sqlite"
DATA_SOURCE = "data_source"  # store meta: the Hub dataset and commit the samples came from
REPEAT = "repeat-"  # GROUP/repeat-K: the K-th of a run's repeats
LANGS = ("en", "zh")
_REPEAT_K = re.compile(rf"^{REPEAT}(\d+)$")
LATENCY = {"clock": "time.monotonic, client side (harness)",
           "origin": "request handed to the client (HTTP) / response.create after commit (realtime); "
                     "each reply's timings.origin names it"}


class RunFolderError(InputError):
    """A path that is neither a run folder nor a parent of en/ and zh/ (or repeat-K) run folders."""


def versions() -> dict[str, str]:
    """Versions of the package and of the libraries a run depends on (installed ones only)."""
    from importlib import metadata

    from vocalbench._version import __version__

    out = {"vocalbench": __version__, "python": sys.version.split()[0]}
    for dist in ("openai", "websockets", "aiohttp", "numpy", "ray", "faster-whisper", "kokoro-onnx",
                 "llama-cpp-python", "onnxruntime"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    return out


class RunFolder:
    """One language run folder. ``with RunFolder(path) as run:`` holds it; the store opens on first
    use and closes on leaving. A writer (``write=True``, every command that writes a run) takes the
    folder's lock (runner/lock.py) before its first write, the store or config.json, and gives it up
    on leaving: a second process writing the same folder gets :class:`~vocalbench.runner.lock.RunLocked`.
    Readers (``write=False``: the report, export, compare) hold a reader's lock of an existing folder
    from entering to leaving: refused while another process writes it, and a writer is refused
    meanwhile."""

    def __init__(self, path: str | Path, *, write: bool = True) -> None:
        self.path = Path(path)
        self.write = write
        self._store: RunStore | None = None
        self._locked = False
        self._reading = False

    def __enter__(self) -> Self:
        if self.path.is_dir():
            self._hold()  # an existing run: held before anything is read from it (a new one on its first write)
            if not self.write:
                lock.acquire(self.path, shared=True)
                self._reading = True
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        try:
            if self._store is not None:
                self._store.close()
                self._store = None
        finally:
            if self._locked:
                self._locked = False
                lock.release(self.path)
            if self._reading:
                self._reading = False
                lock.release(self.path, shared=True)

    def _hold(self) -> None:
        """Take the folder's lock before a writer's first write (made if missing)."""
        if self.write and not self._locked:
            lock.acquire(self.path)
            self._locked = True

    @property
    def store(self) -> RunStore:
        """The folder's store, opened (and made) on first use and held until the folder is left."""
        if self._store is None:
            self._hold()
            self._store = RunStore(self.path)
        return self._store

    @property
    def has_store(self) -> bool:
        """Whether the folder has a store (something named store.sqlite: opening it says whether it is one)."""
        return (self.path / STORE).exists()

    @property
    def summary_path(self) -> Path:
        return self.path / SUMMARY

    # -- config.json ---------------------------------------------------------------------------
    def config(self) -> RunConfig:
        """The run's config (FileNotFoundError without one; ConfigError when it is invalid)."""
        return RunConfig.load(self.path)

    def records(self) -> dict[str, object]:
        """What config.json records beside the config (kept when the config is rewritten)."""
        return saved_records(self.path)

    def save_config(self, cfg: RunConfig, records: Mapping[str, object]) -> Path:
        """Write config.json: the config and ``records`` (run_config.RECORD_KEYS); no secrets."""
        self._hold()
        return cfg.save(self.path, extra=dict(records))

    def check_resume(self, cfg: RunConfig) -> None:
        """A run folder holds one system: refuse (ValueError) to mix replies of another one."""
        if (self.path / CONFIG).exists():
            old = self.config()
            if old.system != cfg.system or old.lang != cfg.lang:
                raise ValueError(f"{self.path} holds a run of {old.system} ({old.lang}); choose another --out")

    # -- its data ------------------------------------------------------------------------------
    def pinned(self, data: str) -> str:
        """``data``, a Hub dataset pinned to the commit the run started with (a resume keeps its version)."""
        from vocalbench.data import hub

        if hub.parse(data) is None or not self.has_store:
            return data
        return hub.pinned(data, self.store.get_meta(DATA_SOURCE))

    def samples(self, data: str, lang: str, subsets: list[str] | None = None, limit: int | None = None) -> list[Sample]:
        """The samples of the run, from its (pinned) data."""
        from vocalbench.data import load_samples

        return list(load_samples(self.pinned(data), lang, subsets, limit))

    def begin(self, data: str, samples: Sequence[Sample], *, redo: bool) -> list[tuple[str, str]]:
        """Check ``samples`` against the store's fingerprints (:func:`sync_release`: a changed sample
        is refused, or with ``redo`` its replies and scores dropped) and record the Hub commit the
        data resolved to; returns the keys of the samples to redo."""
        from vocalbench.data import hub

        redone = sync_release(self.store, samples, redo=redo)
        source = hub.source(self.pinned(data))
        if source is not None:
            self.store.set_meta(DATA_SOURCE, {"hf": source["hf"], "requested": source["requested"],
                                              "revision": source["revision"]})
        return redone

    def start(self, cfg: RunConfig, samples: Sequence[Sample], *, redo: bool) -> list[tuple[str, str]]:
        """Start or resume generating into the folder: :meth:`begin`, then config.json and the
        samples into the store; returns the keys of the samples to redo."""
        redone = self.begin(cfg.data, samples, redo=redo)
        self.save_config(cfg, generated_records(None))
        self.store.add_samples(samples)
        return redone


def generated_records(describe: dict[str, JsonValue] | None) -> dict[str, JsonValue]:
    """What a generated run records beside its config: versions, the latency clock, the system."""
    out: dict[str, JsonValue] = {"versions": dict(versions()), "latency": dict(LATENCY)}
    if describe is not None:
        out["system_details"] = describe
    return out


# -- the layout of run folders ------------------------------------------------------------------
def is_run_dir(path: Path) -> bool:
    """A language run folder has a summary.json or a store.sqlite."""
    return (path / SUMMARY).is_file() or (path / STORE).is_file()


def repeat_dir(group: Path, k: int) -> Path:
    """The folder of the ``k``-th repeat of a group."""
    return group / f"{REPEAT}{k}"


def repeat_dirs(group: Path) -> list[Path]:
    """The repeat run folders of ``group`` in repeat order (empty when it is not a repeat group)."""
    if not group.is_dir():
        return []
    found = [(int(m.group(1)), p) for p in group.iterdir() if (m := _REPEAT_K.match(p.name)) and is_run_dir(p)]
    return [p for _, p in sorted(found)]


def runs_holding(path: str | Path) -> list[Path]:
    """The language run folders a path lies in: those of its nearest ancestor that is a run folder,
    a repeat group or a parent of en/ and zh/ (``run``'s report folder RUN/report: RUN's); none
    when no ancestor is."""
    for above in Path(path).resolve().parents:
        try:
            return language_folders([above])
        except RunFolderError:
            continue
    return []


def language_folders(paths: Sequence[str | Path]) -> list[Path]:
    """The language run folders of the given paths: a run folder itself, a repeat group's repeat-K
    runs, or a parent's en/ and zh/ (each a run folder or a repeat group)."""
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

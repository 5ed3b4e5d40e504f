"""Building the built-in bilingual ``mini`` set (its items live in :mod:`vocalbench.data.mini`).

``ensure(lang)`` builds the set on first use into ``cache_dir()/mini/<version>/<lang>`` with the
offline TTS (Kokoro), verifies every query with the offline ASR (Whisper base), then generates 12
of the 36 robust conditions of its clean question (``perturb.mini_conditions``: the six headline
conditions of Robust PR plus the mildest level of each family, which keeps a run short). The
version is a hash of the item file, the build recipe and the condition selection, so editing an
item rebuilds; later calls only check a completion marker. Builds are serialised across processes
with a file lock: a second process (another run on the same cache) waits for the first's build and
then uses it, and a set is read only once its marker is written. Each build that starts appends who
started it (pid, host, time) to ``.build/builds.jsonl``: more than one line means the set was built
again, e.g. after an interrupted build.

Every item is verified; an item that fails every attempt is not silently kept: the built-in set
accepts its best attempt and the manifest marks it (``review.decision = auto-accepted``) so a
maintainer sees it. Offline, the dialect subset is Mandarin-voiced (Kokoro has no dialects) and
the emotion gate is skipped (no offline emotion model); both are recorded in the manifest.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from vocalbench.data.mini import items_path
from vocalbench.files import write_atomic

if TYPE_CHECKING:  # the pipeline is imported when a build runs (importing this module stays cheap)
    from vocalbench.construct.pipeline import BuildComponents, BuildOptions

RECIPE = "mini-recipe-2"  # bump when the build recipe below changes
SEED = 0
MARKER = ".complete"
BUILDS = "builds.jsonl"  # under .build/: one line per build started
# two items in flight: one is synthesised while the other's audio is verified (the TTS and the ASR
# each hold their own lock), which keeps both CPUs busy; the audio is the same as one at a time
BUILD_WORKERS = 2


def _options() -> BuildOptions:
    from vocalbench.construct.pipeline import BuildOptions

    return BuildOptions(tts="offline", asr="offline", mos=None, emotion="offline", seed=SEED, max_attempts=4,
                        workers=BUILD_WORKERS, homophones=True, on_fail="keep_best")


def version(lang: str) -> str:
    """Content hash of the items, the recipe and the robust conditions: a new value means a rebuild."""
    from dataclasses import asdict

    from vocalbench.construct.perturb import mini_conditions

    h = hashlib.sha256()
    h.update(items_path(lang).read_bytes())
    h.update(RECIPE.encode())
    opts = asdict(_options())
    for how in ("progress", "workers"):  # how the build runs, not what it makes
        opts.pop(how, None)
    h.update(json.dumps(opts, sort_keys=True).encode())
    h.update(json.dumps(sorted(c.key for c in mini_conditions())).encode())
    return h.hexdigest()[:12]


def location(lang: str) -> Path:
    from vocalbench.config import cache_dir

    return cache_dir() / "mini" / version(lang) / lang


@contextmanager
def _lock(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def is_built(lang: str) -> bool:
    target = location(lang)
    marker = target / MARKER
    return marker.exists() and marker.read_text().strip() == version(lang)


def _seed_from_previous(lang: str, target: Path) -> str | None:
    """Copy the per-item build state of the newest earlier version, so that only edited items are
    synthesised again (state entries are keyed by item content and build settings, so reuse is exact)."""
    if (target / ".build").exists():
        return None  # an interrupted build of this version: it resumes from its own state
    earlier = [p / lang for p in target.parent.parent.iterdir()
               if p.is_dir() and p.name != target.parent.name and (p / lang / ".build" / "state.jsonl").exists()]
    if not earlier:
        return None
    newest = max(earlier, key=lambda p: (p / ".build" / "state.jsonl").stat().st_mtime)
    target.mkdir(parents=True, exist_ok=True)
    shutil.copytree(newest / ".build", target / ".build", ignore=shutil.ignore_patterns(BUILDS))
    return newest.parent.name


def _log_build(target: Path) -> None:
    """Append this build's start to ``.build/builds.jsonl`` (one line, appended whole)."""
    import os
    import socket

    (target / ".build").mkdir(parents=True, exist_ok=True)
    line = json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "started": time.time()}) + "\n"
    with open(target / ".build" / BUILDS, "a", encoding="utf-8") as fh:
        fh.write(line)


def ensure(lang: str, progress: bool = True, components: BuildComponents | None = None) -> Path:
    """The mini set of ``lang`` in the official layout, built on first use; returns its folder."""
    target = location(lang)
    if is_built(lang):
        return target
    with _lock(target.parent / f".{lang}.lock"):
        if is_built(lang):  # another process finished it while we waited
            return target
        from vocalbench.construct.items import read_items
        from vocalbench.construct.perturb import mini_conditions, perturb_robust
        from vocalbench.construct.pipeline import build

        t0 = time.perf_counter()
        reused = _seed_from_previous(lang, target)
        _log_build(target)
        opts = _options()
        opts.progress = progress
        items = read_items(items_path(lang), lang=lang)
        manifest = build(items, target, opts, lang=lang, components=components,
                         source=f"vocalbench.data.mini/items_{lang}.jsonl")
        perturb_robust(target, lang=lang, seed=SEED, progress=progress, conditions=mini_conditions())
        from vocalbench.construct.manifest import update_manifest

        update_manifest(target, {"mini": {"version": version(lang), "recipe": RECIPE,
                                          "first_build_seconds": round(time.perf_counter() - t0, 1),
                                          "reused_state_from": reused,
                                          "auto_accepted": [i["label"] for i in manifest["items"]
                                                            if (r := i["review"]) is not None and r["by"] == "on_fail=keep_best"]}})
        write_atomic(target / MARKER, version(lang))
    return target

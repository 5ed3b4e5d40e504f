"""Datasets by name: ``VocalNet/VocalBench``, ``VocalNet/VocalBench-zh`` or ``hf:OWNER/NAME[@REVISION]``.

A name resolves through ``huggingface_hub.snapshot_download`` to a snapshot in the standard HF
cache (``HF_HOME`` / ``HF_HUB_CACHE``); ``HF_HUB_OFFLINE=1`` makes it use the cache only. The
snapshot is then read like any folder (official json layout or parquet configs). The commit the
name resolved to is the revision recorded in the run's provenance, and a resumed run keeps it
(:func:`pinned`), so replies and scores never mix two versions of a set. Resolutions are
memoised per process: loading and recording see the same commit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TypedDict

from vocalbench.data.official import DataError

NAMED = ("VocalNet/VocalBench", "VocalNet/VocalBench-zh")  # taken by name, without the hf: prefix
_REPO = re.compile(r"^[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*$")
# a branch, tag or commit: name parts of letters, digits, '_', '.', '-' between single slashes
# (refs/pr/1), each starting with a letter, digit or '_' (so never '.' or '..'): a revision is never
# a path to another folder
_REVISION = re.compile(r"^\w[\w.-]*(/\w[\w.-]*)*$")


@dataclass(frozen=True)
class HubRef:
    repo: str
    revision: str | None = None  # a branch, tag or commit; None: the default branch

    @property
    def spec(self) -> str:
        return f"hf:{self.repo}" + (f"@{self.revision}" if self.revision else "")


def parse(data: str) -> HubRef | None:
    """The hub dataset ``data`` names, or None for a folder or a built-in set. A bare
    ``OWNER/NAME`` is a hub name only for :data:`NAMED` and when no such local folder exists."""
    text = str(data).strip()
    if text.startswith("hf:"):
        repo, _, rev = text[3:].partition("@")
        if not _REPO.match(repo):
            raise DataError(text, "expected hf:OWNER/NAME[@REVISION]")
        return HubRef(repo, _revision(text, rev))
    repo, _, rev = text.partition("@")
    if repo in NAMED and not Path(text).expanduser().exists():
        return HubRef(repo, _revision(text, rev))
    return None


def _revision(text: str, rev: str) -> str | None:
    """``rev`` when it is a branch, tag or commit name (None when empty); a path is refused."""
    if not rev:
        return None
    if not _REVISION.match(rev):
        raise DataError(text, f"revision {rev!r} is not a branch, tag or commit name (letters, digits, '_', '.', "
                              "'-', parts between single '/'; no '..')")
    return rev


@lru_cache(maxsize=32)
def snapshot(ref: HubRef) -> Path:
    """The local snapshot folder of ``ref`` (downloaded into the HF cache when online and missing)."""
    try:
        from huggingface_hub import snapshot_download
        from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError
    except ImportError:
        from vocalbench.errors import MissingDependency

        raise MissingDependency(f"loading {ref.spec}", "huggingface_hub", "hub") from None
    try:
        return Path(snapshot_download(ref.repo, repo_type="dataset", revision=ref.revision))
    except LocalEntryNotFoundError as exc:
        from huggingface_hub import constants

        why = ("not in the HF cache and HF_HUB_OFFLINE is set (download it once online, or unset HF_HUB_OFFLINE)"
               if constants.HF_HUB_OFFLINE else "not in the HF cache and the Hub cannot be reached")
        raise DataError(ref.spec, f"{why}; cache: {constants.HF_HUB_CACHE}") from exc
    except (HfHubHTTPError, ValueError) as exc:
        raise DataError(ref.spec, f"cannot resolve on the Hub ({type(exc).__name__}: {str(exc).splitlines()[0]})") from exc


class HubSource(TypedDict):
    """What a hub name resolved to: the repository, the revision asked for and the commit."""

    hf: str
    requested: str | None
    revision: str


def source(data: str) -> HubSource | None:
    """What a hub name resolved to, for provenance: ``{"hf": repo, "requested": rev, "revision": commit}``."""
    ref = parse(data)
    if ref is None:
        return None
    return {"hf": ref.repo, "requested": ref.revision, "revision": snapshot(ref).name}


def pinned(data: str, recorded: HubSource | None) -> str:
    """``data``, pinned to the commit a run recorded when it names the same repository without a
    revision (a resumed run keeps the version of the set it started with)."""
    ref = parse(data)
    if ref is None or ref.revision or not recorded or recorded.get("hf") != ref.repo or not recorded.get("revision"):
        return data
    return HubRef(ref.repo, str(recorded["revision"])).spec

"""The build manifest (``DATA/build_manifest.json``) and the per-item state that makes builds resumable.

Per-item results are appended to ``DATA/.build/state.jsonl`` the moment an item finishes, so an
interrupted build continues where it stopped; the manifest is rewritten from that state at the end.
"""

from __future__ import annotations

import json
import os
import platform
import threading
from importlib import metadata
from pathlib import Path
from typing import Literal, NotRequired, TypedDict

from pydantic import JsonValue

from vocalbench.files import write_atomic, write_json

MANIFEST = "build_manifest.json"
STATE_DIR = ".build"
STATE = "state.jsonl"

_TOOLS = ("vocalbench", "numpy", "scipy", "soundfile", "pyroomacoustics", "kokoro-onnx", "misaki",
          "faster-whisper", "jiwer", "whisper-normalizer", "OpenCC", "pypinyin", "cn2an", "onnxruntime")


class GateDecision(TypedDict):
    """The emotion gate's decision on one synthesised query (and its speaker prompt)."""

    gate: Literal["emotion", "skipped"]
    passed: bool
    reason: NotRequired[str]  # why the gate was skipped
    target: NotRequired[str]
    Question_prob: NotRequired[float | None]
    Prompt_prob: NotRequired[float | None]


class AttemptRecord(TypedDict):
    """One synthesis attempt of a spoken record: what was tried, heard and decided."""

    n: int
    voice: str
    speed: float
    passed: NotRequired[bool]
    error: NotRequired[str]  # "tts: ..." or "asr: ..." when the attempt failed
    synth_seconds: NotRequired[float]
    audio: NotRequired[str]  # relative to the build folder
    seconds: NotRequired[float]
    conditioning: NotRequired[dict[str, str]]
    asr_seconds: NotRequired[float]
    transcript: NotRequired[str]
    metric: NotRequired[str]
    error_rate: NotRequired[float]
    errors: NotRequired[int]
    length: NotRequired[int]
    gate: NotRequired[GateDecision]


class UtteranceRecord(TypedDict):
    """One spoken record of an item, its attempts and the accepted one (None: none yet)."""

    role: str
    subset: str
    text: str
    asr_lang: str | None
    compare: str
    threshold: float
    attempts: list[AttemptRecord]
    accepted: int | None


class ReviewDecision(TypedDict):
    """A person's (or ``on_fail=keep_best``'s) decision on a queued item."""

    decision: str
    by: str
    attempt: NotRequired[int | str]  # the attempt accepted, or "best"
    note: NotRequired[str]
    at: NotRequired[str]


class ItemEntry(TypedDict):
    """One item's line in the build state: its records' attempts and its status."""

    key: str
    label: str
    subset: str
    status: Literal["accepted", "queued", "rejected"]
    item: dict[str, JsonValue]  # the Item as given (defaults left out)
    utterances: list[UtteranceRecord]
    review: NotRequired[ReviewDecision]


class PoolManifest(TypedDict):
    """A language's voice pools as the manifest records them."""

    clarity_critical: list[str]
    conversational: list[str]
    mos: dict[str, float | None]
    note: str


class GateSettings(TypedDict):
    """The emotion gate of a build: active with its classifier and thresholds, or skipped and why."""

    status: Literal["active", "skipped"]
    reason: NotRequired[str]
    classifier: NotRequired[str]
    query_threshold: NotRequired[float]
    prompt_threshold: NotRequired[float]


class TTSInfo(TypedDict):
    id: str | None
    version: str | None
    sample_rate: int | None
    conditioning_supported: list[str]


class BuildHeader(TypedDict):
    """The manifest's ``build`` section: what shaped the build, and its items' keys in order."""

    lang: str
    source: str | None
    seed: int
    options: dict[str, JsonValue]  # BuildOptions as given (progress left out)
    settings_key: str
    tools: dict[str, str | None]
    tts: TTSInfo
    asr: dict[str, str | None]
    voice_pools: dict[str, PoolManifest]
    mos: dict[str, str | None]  # {"id"}, or {"status": "skipped", "reason"}
    emotion_gate: GateSettings
    dialect_voicing: str
    item_keys: list[str]
    build_wall_seconds: float


class RecordSummary(TypedDict):
    """One spoken record of an item in the manifest: its attempts and the accepted one."""

    subset: str
    attempts: int
    accepted_attempt: int | None
    final_error_rate: float | None
    metric: str | None
    voice: str | None
    speed: float | None
    gate: GateDecision | None
    conditioning: dict[str, str] | None


class ItemSummary(TypedDict):
    label: str
    key: str
    subset: str
    status: str
    review: ReviewDecision | None
    records: list[RecordSummary]
    qid: NotRequired[str]  # accepted items only


class BuildSummary(TypedDict):
    """Counts, retry share, round-trip error rates (per metric) and times of a build."""

    items: int
    accepted: int
    queued: int
    rejected: int
    records: int
    records_retried: int
    retry_share: float
    first_attempt_pass_share: float
    mean_error_accepted: dict[str, float]
    mean_error_first_attempt: dict[str, float]
    synth_seconds: float
    asr_seconds: float
    audio_seconds: float
    rtf: float | None


class PerturbSection(TypedDict):
    """The manifest's ``perturb`` section: the robust conditions made from the clean queries."""

    seed: int
    lang: str
    conditions: int
    condition_list: list[str]
    clean_items: int
    items: int
    sample_rate: int
    background_noise: dict[str, JsonValue]  # user noise files, or the synthetic babble
    rir: dict[str, JsonValue]
    definitions: dict[str, str]
    output_audio_seconds: float
    wall_seconds: float
    per_item: list[dict[str, JsonValue]]  # qid, clean qid and what the condition did


class Manifest(TypedDict, total=False):
    """``build_manifest.json``: the build's sections (each step writes its own)."""

    perturb: PerturbSection
    build: BuildHeader
    layout_files: list[str]
    layout_subsets: list[str]
    counts: dict[str, int]
    summary: BuildSummary
    items: list[ItemSummary]
    perturb_stale: str
    mini: dict[str, JsonValue]  # construct/mini.py: the mini set's version and recipe


def tool_versions() -> dict[str, str | None]:
    """Installed versions of the libraries that shape the built audio (None when absent)."""
    out: dict[str, str | None] = {"python": platform.python_version()}
    for name in _TOOLS:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def read_manifest(root: str | Path) -> Manifest:
    p = Path(root) / MANIFEST
    body: Manifest = json.loads(p.read_text(encoding="utf-8")) if p.exists() else {}
    return body


def write_manifest(root: str | Path, body: Manifest) -> Path:
    p = Path(root) / MANIFEST
    write_json(p, body)
    return p


def update_manifest(root: str | Path, sections: Manifest) -> Path:
    """Replace top-level sections of the manifest, keeping the others."""
    body = read_manifest(root)
    body.update(sections)
    return write_manifest(root, body)


class ItemState:
    """Append-only per-item results keyed by the item's build key (last write wins)."""

    def __init__(self, root: str | Path) -> None:
        self.dir = Path(root) / STATE_DIR
        self.dir.mkdir(parents=True, exist_ok=True)
        self.path = self.dir / STATE
        self._lock = threading.Lock()
        self.entries: dict[str, ItemEntry] = {}
        if self.path.exists():
            for line in self.path.read_text(encoding="utf-8").splitlines():
                if not line.strip():
                    continue
                try:
                    e = json.loads(line)
                except json.JSONDecodeError:
                    # a line cut by an interruption: that item is simply redone
                    continue
                self.entries[e["key"]] = e

    def get(self, key: str) -> ItemEntry | None:
        return self.entries.get(key)

    def put(self, entry: ItemEntry) -> None:
        """Record one item's result durably (flushed and fsynced before returning)."""
        with self._lock:
            self.entries[entry["key"]] = entry
            with open(self.path, "a", encoding="utf-8") as f:
                f.write(json.dumps(entry, ensure_ascii=False) + "\n")
                f.flush()
                os.fsync(f.fileno())

    def rewrite(self) -> None:
        """Compact the file to one line per item."""
        with self._lock:
            write_atomic(self.path, "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in self.entries.values()))

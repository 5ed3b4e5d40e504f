"""Recordings made by any harness, as a duplex run (``vocalbench import --format fdb|replays``).

``fdb``: Full-Duplex-Bench's folder layout, one folder per recording (found at any depth under
DIR) holding ``input.wav``, ``output.wav`` (the system's output on the input's timeline) and the
task's scenario file, which names its kind:

- ``pause.json`` (pause handling): ``[{"timestamp": [pause start, end]}]``; the user's turn ends
  where the input ends;
- ``turn_taking.json`` (smooth turn-taking): ``[{"timestamp": [end of the user's turn, ...]}]``;
- ``interrupt.json`` (user interruption): ``[{"context", "interrupt", "timestamp": [start, end]}]``;
- none, under a folder whose name contains ``backchannel``: the user's monologue is the input.

``output.json`` (``{"chunks": [{"text", "timestamp": [start, end]}]}``, seconds on the same timeline)
is taken as the output's words where present; otherwise the run's ASR transcribes ``output.wav``.

``replays``: this project's replay folders, as a duplex run keeps them (``RUN/duplex``) or another
harness lays them out: ``scenarios.jsonl`` (one scenario record a line) and
``<scenario>/r<k>/input.wav`` + ``output.wav``.

The recordings are copied into ``OUT/duplex/<scenario>/r<k>/``; the scenarios become the run's
samples and the recordings its replies, and ``vocalbench score OUT`` measures them.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from vocalbench.duplex.records import SUBSET, TimedWord, replay_key
from vocalbench.duplex.scenarios import MANIFEST, Kind, Part, Scenario, read_manifest
from vocalbench.records import AudioRef, Reply

FDB_FILES: dict[str, Kind] = {"pause.json": "pause", "turn_taking.json": "smooth", "interrupt.json": "interruption"}


class RecordingError(ValueError):
    """A recording folder that cannot be read (named with the file and field)."""


def _json(path: Path) -> object:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise RecordingError(f"{path}: not readable JSON ({exc})") from None


def _stamp(path: Path) -> tuple[float, float]:
    body = _json(path)
    try:
        a, b = body[0]["timestamp"]  # type: ignore[index]
        return float(a), float(b)
    except (KeyError, IndexError, TypeError, ValueError):
        raise RecordingError(f"{path}: expected [{{\"timestamp\": [start, end], ...}}]") from None


def fdb_words(path: Path) -> list[TimedWord]:
    """The timed words of an FDB ``output.json`` (a chunk without a start is skipped; one without
    an end ends where it starts)."""
    body = _json(path)
    chunks = body.get("chunks") if isinstance(body, dict) else None
    if not isinstance(chunks, list):
        raise RecordingError(f"{path}: no 'chunks' list")
    out = []
    for i, c in enumerate(chunks):
        try:
            start, end = c["timestamp"]
            text = str(c["text"]).strip()
        except (KeyError, TypeError, ValueError):
            raise RecordingError(f"{path}: chunk {i}: expected {{\"text\", \"timestamp\": [start, end]}}") from None
        if start is None:
            continue
        out.append(TimedWord(start=float(start), end=float(start if end is None else end), text=text))
    return out


def fdb_kind(folder: Path, root: Path) -> Kind:
    for name, kind in FDB_FILES.items():
        if (folder / name).is_file():
            return kind
    if any("backchannel" in p.name.lower() for p in [folder, *folder.parents] if p != root.parent):
        return "backchannel"
    raise RecordingError(f"{folder}: none of {', '.join(FDB_FILES)} and not under a backchannel folder: "
                       "which task is it?")


def fdb_scenario(folder: Path, root: Path, lang: str) -> Scenario:
    """The scenario of one FDB recording folder (its id: the kind and the folder's path under DIR)."""
    from vocalbench.audio import info

    kind = fdb_kind(folder, root)
    rel = folder.relative_to(root).as_posix().replace("/", "-") or folder.name
    duration = round(info(folder / "input.wav").duration, 3)
    span: tuple[float, float] | None = None
    parts: list[Part] = []
    user_end = duration
    if kind == "pause":
        span = _stamp(folder / "pause.json")
    elif kind == "smooth":
        user_end = _stamp(folder / "turn_taking.json")[0]
    elif kind == "interruption":
        span = _stamp(folder / "interrupt.json")
        body = _json(folder / "interrupt.json")
        meta = body[0] if isinstance(body, list) and body and isinstance(body[0], dict) else {}
        user_end = span[0]
        parts = [Part(str(meta.get("context", "")), 0.0, span[0], "fdb", 0.0, True),
                 Part(str(meta.get("interrupt", "")), span[0], span[1], "fdb", 0.0, True)]
    return Scenario(id=f"{kind}-{rel}", kind=kind, lang=lang, audio=str(folder / "input.wav"), duration=duration,
                    parts=parts, user_end=user_end, span=span)


def find_fdb(root: Path) -> list[Path]:
    """Every folder under ``root`` (itself included) holding input.wav and output.wav."""
    found = [p.parent for p in sorted(root.rglob("output.wav")) if (p.parent / "input.wav").is_file()]
    if not found:
        raise RecordingError(f"{root}: no folder with input.wav and output.wav")
    return found


def _copy(src: Path, dst: Path) -> Path:
    dst.mkdir(parents=True, exist_ok=True)
    for name in ("input.wav", "output.wav"):
        shutil.copyfile(src / name, dst / name)
    return dst


def _reply(key: str, folder: Path, words: list[TimedWord] | None, source: str) -> Reply:
    from vocalbench.audio import info

    duration = info(folder / "output.wav").duration
    return Reply(subset=SUBSET, sample_id=key, audio=AudioRef(path=str(folder / "output.wav"), duration=duration),
                 audio_duration=duration, source=source,
                 extra={} if words is None else {"transcript": [w.model_dump() for w in words]})


def import_recordings(fmt: str, root: Path, run_dir: Path, lang: str) -> tuple[list[Scenario], list[Reply]]:
    """Copy the recordings under ``root`` into ``run_dir`` and return their scenarios and replies
    (nothing is written to the run's store here)."""
    from vocalbench.duplex.run import replay_dir

    scenarios: list[Scenario] = []
    replies: list[Reply] = []
    if fmt == "fdb":
        for folder in find_fdb(root):
            sc = fdb_scenario(folder, root, lang)
            if any(s.id == sc.id for s in scenarios):
                raise RecordingError(f"{folder}: a second recording of {sc.id}")
            words = fdb_words(folder / "output.json") if (folder / "output.json").is_file() else None
            dst = _copy(folder, replay_dir(run_dir, sc.id, 1))
            sc.audio = str(dst / "input.wav")
            scenarios.append(sc)
            replies.append(_reply(replay_key(sc.id, 1), dst, words, "imported:fdb"))
        return scenarios, replies
    manifest = root / MANIFEST
    if not manifest.is_file():
        raise RecordingError(f"{root}: no {MANIFEST} (the scenarios the replays played)")
    try:
        known = read_manifest(manifest)
    except (ValueError, TypeError, KeyError) as exc:
        raise RecordingError(f"{manifest}: not a scenario manifest ({exc})") from None
    for sid, sc in known.items():
        runs = sorted((p for p in (root / sid).glob("r*") if p.name[1:].isdigit() and (p / "output.wav").is_file()),
                      key=lambda p: int(p.name[1:]))
        if not runs:
            continue
        for src in runs:
            dst = _copy(src, replay_dir(run_dir, sid, int(src.name[1:])))
            replies.append(_reply(replay_key(sid, int(src.name[1:])), dst, None, "imported:replays"))
        sc.audio = str(replay_dir(run_dir, sid, int(runs[0].name[1:])) / "input.wav")
        scenarios.append(sc)
    if not replies:
        raise RecordingError(f"{root}: {MANIFEST} names {len(known)} scenario(s), none with <scenario>/r<k>/output.wav")
    return scenarios, replies

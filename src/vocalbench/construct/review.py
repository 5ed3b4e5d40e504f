"""The review queue: items whose synthesis did not pass verification wait for a person.

``review.jsonl`` lists every queued item with its attempts (voice, speed, audio path, transcript,
error rate). A decision (accept an attempt, or reject the item) is stored in the build state and
the layout is rewritten, so accepted items enter ``json/<subset>.json`` with their chosen audio.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from vocalbench.construct.manifest import ItemEntry, ItemState, read_manifest
from vocalbench.construct.pipeline import BuildError, best_attempt, finalize


def _entries(root: Path) -> tuple[ItemState, list[ItemEntry]]:
    man = read_manifest(root)
    if "build" not in man:
        raise BuildError(f"{root}: no build here (build_manifest.json missing); run 'vocalbench build' first")
    state = ItemState(root)
    return state, [e for k in man["build"]["item_keys"] if (e := state.get(k)) is not None]


def pending(root: str | Path) -> list[ItemEntry]:
    """Queued items, in build order."""
    _, entries = _entries(Path(root))
    return [e for e in entries if e["status"] == "queued"]


def _find(entries: list[ItemEntry], ident: str) -> ItemEntry:
    hits = [e for e in entries if e["label"] == ident or e["key"] == ident or e["key"].startswith(ident)]
    if not hits:
        raise BuildError(f"no queued or built item '{ident}' (ids are listed in review.jsonl)")
    if len(hits) > 1:
        raise BuildError(f"'{ident}' matches several items; use the full id")
    return hits[0]


def decide(root: str | Path, ident: str, accept: bool, attempt: int | None = None, note: str = "",
           rewrite: bool = True) -> ItemEntry:
    """Accept (the best attempt of each record, or attempt ``attempt``) or reject one item."""
    root = Path(root)
    state, entries = _entries(root)
    e = _find(entries, ident)
    when = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
    if accept:
        for u in e["utterances"]:
            if u["accepted"] is not None and attempt is None:
                continue
            choice = attempt if attempt is not None else best_attempt(u)
            if choice is None or not any(a["n"] == choice and a.get("audio") for a in u["attempts"]):
                raise BuildError(f"{e['label']}: no attempt {choice} with audio for its {u['subset']} record")
            u["accepted"] = choice
        e["status"] = "accepted"
        e["review"] = {"decision": "accepted", "by": "review", "attempt": attempt or "best", "note": note, "at": when}
    else:
        for u in e["utterances"]:
            u["accepted"] = None
        e["status"] = "rejected"
        e["review"] = {"decision": "rejected", "by": "review", "note": note, "at": when}
    state.put(e)
    if rewrite:
        finalize(root)
    return e


def apply_decisions(root: str | Path, accept: Sequence[str] = (), reject: Sequence[str] = (),
                    attempt: int | None = None, note: str = "") -> Iterator[dict[str, str]]:
    """Accept then reject items, yielding ``{"id", "decision"}`` as each is recorded, and rewrite
    the release once at the end (:func:`finalize`)."""
    for ident in accept:
        e = decide(root, ident, accept=True, attempt=attempt, note=note, rewrite=False)
        yield {"id": e["label"], "decision": "accepted"}
    for ident in reject:
        e = decide(root, ident, accept=False, note=note, rewrite=False)
        yield {"id": e["label"], "decision": "rejected"}
    finalize(Path(root))


def describe(e: ItemEntry) -> str:
    """A readable summary of one queued item and its attempts."""
    lines = [f"{e['label']}  [{e['subset']}]  key {e['key'][:12]}"]
    for u in e["utterances"]:
        lines.append(f"  {u['subset']} ({u['compare']}, max error {u['threshold']:.2f}): {u['text']}")
        for a in u["attempts"]:
            if a.get("error"):
                lines.append(f"    #{a['n']} {a['voice']} x{a['speed']}: {a['error']}")
            else:
                lines.append(f"    #{a['n']} {a['voice']} x{a['speed']}: {a.get('metric')} {a.get('error_rate'):.3f}"
                             f"  heard: {a.get('transcript')!r}  audio: {a.get('audio')}")
    return "\n".join(lines)


def interactive(root: str | Path, ask: Callable[[str], str] = input, say: Callable[[str], None] = print) -> dict[str, int]:
    """Walk the queue: a = accept best attempt, a N = accept attempt N, r = reject, s = skip, q = quit."""
    root = Path(root)
    counts = {"accepted": 0, "rejected": 0, "skipped": 0}
    queue = pending(root)
    if not queue:
        say(f"review queue of {root} is empty")
        return counts
    say(f"{len(queue)} item(s) to review (audio paths are relative to {root}; listen, then decide)")
    for e in queue:
        say(describe(e))
        while True:
            answer = ask("[a]ccept best / a N accept attempt N / [r]eject / [s]kip / [q]uit > ").strip().lower()
            if answer in ("q", "quit"):
                finalize(root)
                return counts
            if answer in ("s", "skip", ""):
                counts["skipped"] += 1
                break
            if answer in ("r", "reject"):
                decide(root, e["label"], accept=False, rewrite=False)
                counts["rejected"] += 1
                break
            parts = answer.split()
            if parts and parts[0] in ("a", "accept"):
                try:
                    n = int(parts[1]) if len(parts) > 1 else None
                    decide(root, e["label"], accept=True, attempt=n, rewrite=False)
                except (ValueError, BuildError) as exc:
                    say(f"  cannot accept: {exc}")
                    continue
                counts["accepted"] += 1
                break
            say("  answer a, a N, r, s or q")
    finalize(root)
    return counts


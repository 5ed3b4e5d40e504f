"""The construction pipeline: text items -> verified spoken test set in the official layout.

Per item and per spoken record: synthesise with a voice and speed chosen by seed, transcribe with
the item's language forced (auto for code-switched audio), compare (WER en, CER zh, mixed-token
error for code-switched), apply the emotion gate where it applies, and retry with the next voice
and speed up to ``max_attempts``. An item whose records all pass is accepted; otherwise it goes to
the review queue (``review.jsonl``) and stays out of the set until a person accepts it.

Results are persisted per item as they finish (``.build/state.jsonl``): an interrupted build
resumes where it stopped. Outputs: ``json/<subset>.json``, ``audio/<subset>/NNN.wav``,
``review.jsonl`` and ``build_manifest.json``.
"""

from __future__ import annotations

import hashlib
import json
import logging
import shutil
import time
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Literal, TypedDict, overload

from pydantic import JsonValue

from vocalbench import audio
from vocalbench.components import resolve_evaluator
from vocalbench.components.base import ASR, MOS, TTS, ComponentError, ComponentUnavailable, EmotionClassifier
from vocalbench.config import is_off
from vocalbench.construct import gates, synth
from vocalbench.construct.items import (
    Item,
    Utterance,
    audio_rel,
    is_dialect,
    layout,
    qid_for,
    read_items,
    spoken_with_emotion,
    to_record,
    utterances,
)
from vocalbench.construct.manifest import (
    STATE_DIR,
    AttemptRecord,
    BuildHeader,
    BuildSummary,
    GateDecision,
    GateSettings,
    ItemEntry,
    ItemState,
    ItemSummary,
    Manifest,
    PoolManifest,
    RecordSummary,
    ReviewDecision,
    UtteranceRecord,
    read_manifest,
    tool_versions,
    write_manifest,
)
from vocalbench.construct.perturb import perturbed_subset
from vocalbench.construct.verify import compare
from vocalbench.files import write_atomic, write_json
from vocalbench.progress import progress_bar

log = logging.getLogger(__name__)

REVIEW = "review.jsonl"
DEFAULT_MAX_ERROR = {"en": 0.10, "zh": 0.15, "mixed": 0.25}
DIALECT_NOTE_OFFLINE = ("the TTS cannot speak dialects: the dialect audio is Mandarin-voiced (the dialect "
                        "wording, if given, is read in Mandarin); Dialect PR on this audio measures nothing "
                        "dialectal")


class BuildError(RuntimeError):
    """A build that cannot run (bad options, components missing); the message says what to do."""


class SettingsExtra(TypedDict):
    """What besides the options shapes a build's audio (part of its items' keys)."""

    tts: str
    asr: str
    pools: dict[str, PoolManifest]
    gate: GateSettings
    caps: list[str]


@dataclass
class BuildOptions:
    """Everything that shapes a build (recorded in the manifest; no secrets)."""

    tts: str = "offline"
    asr: str = "offline"
    mos: str | None = None  # voice-pool quality filter; None skips it
    emotion: str | None = None  # emotion gate; None skips it
    voices: list[str] | None = None  # voice names, or prompt recordings for zero-shot TTS; None: all
    speeds: list[float] = field(default_factory=lambda: [1.0, 0.9, 1.1])
    seed: int = 0
    max_attempts: int = 4
    workers: int = 1
    max_error: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_MAX_ERROR))
    dialect_max_error: float = 0.5  # real dialect speech is hard for a Mandarin ASR
    homophones: bool = False  # zh: compare toneless pinyin instead of characters
    top_share: float = 0.6
    low_share: float = 0.5
    on_fail: str = "review"  # review | keep_best (built-in sets only; marked in the manifest)
    progress: bool = True

    def settings_key(self, extra: SettingsExtra) -> str:
        body = {k: v for k, v in asdict(self).items() if k not in ("workers", "progress", "on_fail")}
        body.update(extra)
        return hashlib.sha256(json.dumps(body, sort_keys=True, default=str).encode()).hexdigest()[:16]


class BuildComponents(TypedDict, total=False):
    """Components a caller hands to :func:`build` instead of resolving them from the options."""

    tts: TTS
    asr: ASR
    mos: MOS
    emotion: EmotionClassifier


@overload
def _optional(kind: Literal["mos"], spec: str | None) -> tuple[MOS | None, str]: ...
@overload
def _optional(kind: Literal["emotion"], spec: str | None) -> tuple[EmotionClassifier | None, str]: ...
def _optional(kind: Literal["mos", "emotion"], spec: str | None) -> tuple[MOS | EmotionClassifier | None, str]:
    """(component, reason it is absent) for the optional MOS / emotion components."""
    if spec is None or is_off(spec):
        return None, "not configured"
    try:
        comp = resolve_evaluator(kind, spec)
        if kind == "emotion":
            comp.classify([])  # placeholders (e.g. the offline "no emotion model") raise here
        return comp, ""
    except ComponentUnavailable as exc:
        return None, f"{exc.reason}: {exc}"


def item_labels(items: Sequence[Item]) -> list[str]:
    """Human-facing labels: the item's id, else ``<subset>:<n>`` (n-th item of that subset)."""
    seen: Counter[str] = Counter()
    out = []
    for it in items:
        out.append(it.id or f"{it.subset}:{seen[it.subset]}")
        seen[it.subset] += 1
    if len(set(out)) != len(out):
        dup = [k for k, c in Counter(out).items() if c > 1]
        raise BuildError(f"duplicate item ids: {', '.join(dup[:5])}")
    return out


@dataclass
class _Context:
    root: Path
    opts: BuildOptions
    tts: TTS
    asr: ASR
    pools: dict[str, gates.VoicePools]
    gate: gates.EmotionGate
    caps: set[str]


def _threshold(ctx: _Context, utt: Utterance) -> float:
    if is_dialect(utt.subset):
        return ctx.opts.dialect_max_error
    return ctx.opts.max_error.get(utt.compare, DEFAULT_MAX_ERROR[utt.compare])


def _voices_for(ctx: _Context, utt: Utterance) -> list[str]:
    return ctx.pools[utt.tts_lang].for_subset(utt.subset)


def _run_utterance(ctx: _Context, item: Item, key: str, utt: Utterance) -> UtteranceRecord:
    """Synthesise and verify one spoken record, retrying; returns its record of attempts."""
    opts = ctx.opts
    attempts = synth.plan(f"{key}:{utt.role}", _voices_for(ctx, utt), opts.speeds, opts.seed, opts.max_attempts)
    limit = _threshold(ctx, utt)
    out: UtteranceRecord = {"role": utt.role, "subset": utt.subset, "text": utt.text, "asr_lang": utt.asr_lang,
                            "compare": utt.compare, "threshold": limit, "attempts": [], "accepted": None}
    prompt = item.speaker_prompt
    use_prompt = prompt is not None and "prompt_audio" in ctx.caps
    for att in attempts:
        rec: AttemptRecord = {"n": att.number, "voice": att.voice, "speed": att.speed}
        path = ctx.root / STATE_DIR / "audio" / key / f"{utt.role}-{att.number}.wav"
        t0 = time.perf_counter()
        try:
            x, sr, used = synth.synthesize(ctx.tts, utt.text, utt.tts_lang, att, instruct=utt.instruct,
                                           prompt_audio=prompt, prompt_text=item.speaker_prompt_text)
        except Exception as exc:  # noqa: BLE001 - one failed synthesis is one failed attempt
            rec.update({"error": f"tts: {type(exc).__name__}: {exc}", "passed": False})
            out["attempts"].append(rec)
            continue
        rec["synth_seconds"] = round(time.perf_counter() - t0, 3)
        audio.write(path, x, sr)
        rec.update({"audio": str(path.relative_to(ctx.root)), "seconds": round(x.size / sr, 3), "conditioning": used})
        t1 = time.perf_counter()
        tr = ctx.asr.transcribe([path], utt.asr_lang)[0]
        rec["asr_seconds"] = round(time.perf_counter() - t1, 3)
        if isinstance(tr, ComponentError):
            rec.update({"error": f"asr: {tr.reason}: {tr.message}", "passed": False})
            out["attempts"].append(rec)
            continue
        check = compare(utt.text, tr.text, utt.compare, homophones=opts.homophones)
        rec.update({"transcript": tr.text, "metric": check.metric, "error_rate": round(check.rate, 4),
                    "errors": check.errors, "length": check.length})
        ok = check.rate <= limit
        if ok and spoken_with_emotion(item.subset) and item.emotion and utt.role == "main":
            decision = ctx.gate.check(path, item.emotion, prompt if use_prompt else None)
            rec["gate"] = decision
            ok = decision["passed"]
        rec["passed"] = ok
        out["attempts"].append(rec)
        if ok:
            out["accepted"] = att.number
            break
    return out


def _process(ctx: _Context, item: Item, key: str, label: str) -> ItemEntry:
    utts = [_run_utterance(ctx, item, key, u) for u in utterances(item)]
    status: Literal["accepted", "queued"] = "accepted" if all(u["accepted"] is not None for u in utts) else "queued"
    entry: ItemEntry = {"key": key, "label": label, "subset": item.subset, "status": status,
                        "item": item.model_dump(mode="json", exclude_defaults=True), "utterances": utts}
    if status == "queued":
        log.info("%s (%s): no attempt passed verification", label, item.subset)
    if status == "queued" and ctx.opts.on_fail == "keep_best":
        for u in utts:
            if u["accepted"] is None:
                u["accepted"] = best_attempt(u)
        entry.update({"status": "accepted", "review": {"decision": "auto-accepted best attempt",
                                                       "by": "on_fail=keep_best"}})
    return entry


def best_attempt(utt: UtteranceRecord) -> int | None:
    """The attempt with the lowest error rate (None when no attempt produced audio)."""
    done = [a for a in utt["attempts"] if a.get("audio") and a.get("error_rate") is not None]
    if not done:
        done = [a for a in utt["attempts"] if a.get("audio")]
        return done[0]["n"] if done else None
    return min(done, key=lambda a: (a["error_rate"], a["n"]))["n"]


def build(items: Sequence[Item], out: str | Path, opts: BuildOptions | None = None, *,
          lang: str | None = None, components: BuildComponents | None = None,
          source: str | None = None) -> Manifest:
    """Build ``items`` into ``out`` (official layout); resumable. Returns the manifest."""
    opts = opts or BuildOptions()
    items = list(items)
    if not items:
        raise BuildError("no items to build")
    langs = sorted({i.lang for i in items})
    if lang is None:
        if len(langs) > 1:
            raise BuildError(f"items hold several languages ({', '.join(langs)}); pass --lang (one folder per language)")
        lang = langs[0]
    items = [i for i in items if i.lang == lang]
    if not items:
        raise BuildError(f"no {lang} items")
    if opts.max_attempts < 1:
        raise BuildError("max_attempts must be >= 1")
    labels = item_labels(items)
    root = Path(out)
    root.mkdir(parents=True, exist_ok=True)
    comps = components or {}
    tts: TTS = comps.get("tts") or resolve_evaluator("tts", opts.tts)
    asr: ASR = comps.get("asr") or resolve_evaluator("asr", opts.asr)
    mos, mos_reason = (comps["mos"], "") if comps.get("mos") else _optional("mos", opts.mos)
    emo, emo_reason = (comps["emotion"], "") if comps.get("emotion") else _optional("emotion", opts.emotion)
    gate = gates.EmotionGate(emo, emo_reason)
    caps = synth.capabilities(tts)

    tts_langs = sorted({u.tts_lang for it in items for u in utterances(it)})
    pools: dict[str, gates.VoicePools] = {}
    for tl in tts_langs:
        available = tts.voices(tl)
        voices = [v for v in (opts.voices or available) if opts.voices is None or v in available or Path(v).exists()]
        if not voices:
            raise BuildError(f"none of the voices {opts.voices} is available for {tl} (available: {', '.join(available)})")
        scores = gates.rank_voices(tts, mos, tl, voices, root / STATE_DIR) if mos is not None else None
        pools[tl] = gates.voice_pools(voices, scores, top_share=opts.top_share, low_share=opts.low_share, seed=opts.seed)
        if mos is None:
            pools[tl].note = f"voice-pool MOS filter skipped ({mos_reason}): every voice is used for every subset"

    settings = opts.settings_key({"tts": getattr(tts, "id", type(tts).__name__),
                                  "asr": getattr(asr, "id", type(asr).__name__),
                                  "pools": {k: p.to_manifest() for k, p in pools.items()},
                                  "gate": gate.describe(), "caps": sorted(caps)})
    keys = [f"{it.content_hash()}-{settings}" for it in items]
    state = ItemState(root)
    ctx = _Context(root, opts, tts, asr, pools, gate, caps)
    todo = [(it, k, lab) for it, k, lab in zip(items, keys, labels) if state.get(k) is None]
    t0 = time.perf_counter()
    with progress_bar(len(items), f"build {lang}", enabled=opts.progress) as bar:
        bar.advance(len(items) - len(todo), note="resumed" if len(todo) < len(items) else None)
        if opts.workers <= 1:
            for it, k, lab in todo:
                entry = _process(ctx, it, k, lab)
                state.put(entry)
                bar.advance(note=f"{lab}: {entry['status']}")
        else:
            with ThreadPoolExecutor(max_workers=opts.workers) as pool:
                futures = {pool.submit(_process, ctx, it, k, lab): lab for it, k, lab in todo}
                for fut in as_completed(futures):
                    entry = fut.result()
                    state.put(entry)
                    bar.advance(note=f"{futures[fut]}: {entry['status']}")
    wall = time.perf_counter() - t0
    state.rewrite()
    header: BuildHeader = {
        "lang": lang, "source": source, "seed": opts.seed, "options": {k: v for k, v in asdict(opts).items()
                                                                       if k not in ("progress",)},
        "settings_key": settings, "tools": tool_versions(),
        "tts": {"id": getattr(tts, "id", None), "version": getattr(tts, "version", None),
                "sample_rate": getattr(tts, "sample_rate", None), "conditioning_supported": sorted(caps)},
        "asr": {"id": getattr(asr, "id", None), "version": getattr(asr, "version", None)},
        "voice_pools": {k: p.to_manifest() for k, p in pools.items()},
        "mos": {"id": getattr(mos, "id", None)} if mos is not None else {"status": "skipped", "reason": mos_reason},
        "emotion_gate": gate.describe(),
        "dialect_voicing": ("dialect instruction passed to the TTS" if "instruct" in caps else DIALECT_NOTE_OFFLINE),
        "item_keys": keys, "build_wall_seconds": round(wall, 3),
    }
    return finalize(root, header)


def build_from_items(items_path: str | Path, out: str | Path, opts: BuildOptions, *, lang: str | None = None,
                     subsets: list[str] | None = None, limit: int | None = None) -> Manifest:
    """Read ITEMS (:func:`read_items`) and build them into ``out``; returns the build manifest."""
    items = read_items(items_path, lang=lang, subsets=subsets, limit=limit)
    return build(items, out, opts, lang=lang, source=str(items_path))


class BuildResult(TypedDict):
    """The one-line summary of a build (printed by ``vocalbench build``)."""

    out: str
    accepted: int
    queued: int
    retry_share: float
    mean_error: dict[str, float]
    counts: dict[str, int]


def build_result(manifest: Manifest, out: str | Path) -> BuildResult:
    """The one-line summary of a build: accepted, queued, retry share, mean error, counts."""
    s = manifest["summary"]
    return {"out": str(out), "accepted": s["accepted"], "queued": s["queued"], "retry_share": s["retry_share"],
            "mean_error": s["mean_error_accepted"], "counts": manifest["counts"]}


def _entries_in_order(root: Path, header: BuildHeader) -> list[ItemEntry]:
    state = ItemState(root)
    return [e for k in header["item_keys"] if (e := state.get(k)) is not None]


def finalize(root: str | Path, header: BuildHeader | None = None) -> Manifest:
    """Write json/<subset>.json, the audio, review.jsonl and build_manifest.json from the state.

    Called at the end of a build and after review decisions (then the header comes from the
    existing manifest)."""
    root = Path(root)
    old = read_manifest(root)
    if header is None:
        if "build" not in old:
            raise BuildError(f"{root}: no build_manifest.json with a build section; run 'vocalbench build' first")
        header = old["build"]
    lang = header["lang"]
    entries = _entries_in_order(root, header)
    lists: dict[str, list[dict[str, JsonValue]]] = {}
    copies: list[tuple[Path, str]] = []
    per_item: list[ItemSummary] = []
    for e in entries:
        item = Item.model_validate(e["item"])
        summary: ItemSummary = {"label": e["label"], "key": e["key"], "subset": e["subset"], "status": e["status"],
                                "review": e.get("review"), "records": []}
        per_item.append(summary)
        for u in e["utterances"]:
            summary["records"].append(_record_summary(u))
        if e["status"] != "accepted":
            continue
        main = next(u for u in e["utterances"] if u["role"] == "main")
        bucket = lists.setdefault(main["subset"], [])
        qid = item.id or qid_for(lang, main["subset"], len(bucket))
        summary["qid"] = qid
        utts = {u.role: u for u in utterances(item)}
        for u in e["utterances"]:
            utt = utts[u["role"]]
            folder = layout(lang, u["subset"]).audio
            rel = item.audio if (item.audio and u["role"] == "main" and item.audio.startswith(folder + "/")) \
                else audio_rel(lang, u["subset"], qid)
            rec = to_record(item, utt, qid, rel)
            att = _attempt(u, u["accepted"])
            if att is None or "audio" not in att:
                raise BuildError(f"{e['label']}: its accepted {u['subset']} record has no attempt "
                                 f"{u['accepted']} with audio in {root / STATE_DIR}")
            if is_dialect(u["subset"]):
                rec["Voicing"] = "dialect" if "instruct" in header["tts"]["conditioning_supported"] else "mandarin"
            gate = att.get("gate")
            if gate is not None and gate["gate"] == "emotion":
                rec["Question_prob"] = gate.get("Question_prob")
                if gate.get("Prompt_prob") is not None:
                    rec["Prompt_prob"] = gate.get("Prompt_prob")
            if u["role"] == "main":
                bucket.append(rec)
            else:
                lists.setdefault(u["subset"], []).append(rec)
            copies.append((root / att["audio"], rel))

    # audio: copy accepted attempts into place, remove files an earlier layout wrote and this one does not
    written = sorted({rel for _, rel in copies})
    seen_rel: set[str] = set()
    for src, rel in copies:
        if rel in seen_rel:
            raise BuildError(f"two records map to the same audio file audio/{rel}; give the items distinct ids")
        seen_rel.add(rel)
        dst = root / "audio" / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        if not dst.exists() or audio.content_hash(dst) != audio.content_hash(src):
            shutil.copyfile(src, dst)
    for rel in set(old.get("layout_files", [])) - set(written):
        (root / "audio" / rel).unlink(missing_ok=True)
    jdir = root / "json"
    jdir.mkdir(exist_ok=True)
    for subset in set(old.get("layout_subsets", [])) - set(lists):
        (jdir / f"{subset}.json").unlink(missing_ok=True)
    for subset, recs in lists.items():
        write_json(jdir / f"{subset}.json", recs)

    queue = [e for e in entries if e["status"] == "queued" or ("review" in e and e["review"]["by"] == "review")]
    write_atomic(root / REVIEW, "".join(json.dumps(_review_line(e), ensure_ascii=False) + "\n" for e in queue))
    manifest: Manifest = {"perturb": old["perturb"]} if "perturb" in old else {}
    manifest.update({"build": header, "layout_files": written, "layout_subsets": sorted(lists),
                     "counts": {s: len(v) for s, v in sorted(lists.items())}, "summary": _summary(entries),
                     "items": per_item})
    clean = perturbed_subset().control or ""
    if clean in lists and "perturb" in old and old["perturb"].get("clean_items") != len(lists[clean]):
        manifest["perturb_stale"] = f"{clean} changed since the last perturb step: run 'vocalbench build perturb'"
    write_manifest(root, manifest)
    return manifest


def _attempt(u: UtteranceRecord, n: int | None) -> AttemptRecord | None:
    return next((a for a in u["attempts"] if a["n"] == n), None)


def _record_summary(u: UtteranceRecord) -> RecordSummary:
    """One spoken record in the manifest: its attempts and, when accepted, the accepted one's figures."""
    acc = _attempt(u, u["accepted"]) if u["accepted"] else None
    if acc is None:
        return {"subset": u["subset"], "attempts": len(u["attempts"]), "accepted_attempt": u["accepted"],
                "final_error_rate": None, "metric": None, "voice": None, "speed": None, "gate": None,
                "conditioning": None}
    return {"subset": u["subset"], "attempts": len(u["attempts"]), "accepted_attempt": u["accepted"],
            "final_error_rate": acc.get("error_rate"), "metric": acc.get("metric"), "voice": acc["voice"],
            "speed": acc["speed"], "gate": acc.get("gate"), "conditioning": acc.get("conditioning")}


class ReviewAttempt(TypedDict):
    """An attempt as ``review.jsonl`` lists it (None where the attempt did not get that far)."""

    n: int
    voice: str
    speed: float
    audio: str | None
    transcript: str | None
    metric: str | None
    error_rate: float | None
    passed: bool | None
    error: str | None
    gate: GateDecision | None


class ReviewUtterance(TypedDict):
    role: str
    subset: str
    text: str
    threshold: float
    attempts: list[ReviewAttempt]


class ReviewLine(TypedDict):
    """One line of ``review.jsonl``: a queued (or reviewed) item and its attempts."""

    id: str
    key: str
    subset: str
    status: str
    review: ReviewDecision | None
    item: dict[str, JsonValue]
    utterances: list[ReviewUtterance]


def _review_line(e: ItemEntry) -> ReviewLine:
    return {"id": e["label"], "key": e["key"], "subset": e["subset"],
            "status": "pending" if e["status"] == "queued" else e["status"],
            "review": e.get("review"), "item": e["item"],
            "utterances": [{"role": u["role"], "subset": u["subset"], "text": u["text"], "threshold": u["threshold"],
                            "attempts": [{"n": a["n"], "voice": a["voice"], "speed": a["speed"], "audio": a.get("audio"),
                                          "transcript": a.get("transcript"), "metric": a.get("metric"),
                                          "error_rate": a.get("error_rate"), "passed": a.get("passed"),
                                          "error": a.get("error"), "gate": a.get("gate")}
                                         for a in u["attempts"]]}
                           for u in e["utterances"]]}


def _summary(entries: list[ItemEntry]) -> BuildSummary:
    """Counts, retry share and round-trip error rates (mean over accepted records per metric)."""
    status = Counter(e["status"] for e in entries)
    records = [u for e in entries for u in e["utterances"]]
    retried = sum(1 for u in records if len(u["attempts"]) > 1)
    first_pass = sum(1 for u in records if u["attempts"] and u["attempts"][0].get("passed"))
    by_metric: dict[str, list[float]] = {}
    all_first: dict[str, list[float]] = {}
    audio_s = synth_s = asr_s = 0.0
    for u in records:
        for a in u["attempts"]:
            audio_s += a.get("seconds", 0.0)
            synth_s += a.get("synth_seconds", 0.0)
            asr_s += a.get("asr_seconds", 0.0)
        if u["attempts"] and u["attempts"][0].get("error_rate") is not None:
            all_first.setdefault(u["attempts"][0]["metric"], []).append(u["attempts"][0]["error_rate"])
        acc = _attempt(u, u["accepted"]) if u["accepted"] else None
        if acc is not None and "error_rate" in acc and "metric" in acc:
            by_metric.setdefault(acc["metric"], []).append(acc["error_rate"])
    mean = {m: round(sum(v) / len(v), 4) for m, v in by_metric.items()}
    first = {m: round(sum(v) / len(v), 4) for m, v in all_first.items()}
    return {"items": len(entries), "accepted": status.get("accepted", 0), "queued": status.get("queued", 0),
            "rejected": status.get("rejected", 0), "records": len(records),
            "records_retried": retried, "retry_share": round(retried / len(records), 4) if records else 0.0,
            "first_attempt_pass_share": round(first_pass / len(records), 4) if records else 0.0,
            "mean_error_accepted": mean, "mean_error_first_attempt": first,
            "synth_seconds": round(synth_s, 3), "asr_seconds": round(asr_s, 3), "audio_seconds": round(audio_s, 3),
            "rtf": round((synth_s + asr_s) / audio_s, 4) if audio_s else None}

"""Synthesis of one utterance: seeded voice/speed plans and conditioning pass-through.

The TTS contract is ``synthesize(text, lang, voice=None, speed=1.0)``. Engines that accept more
(a zero-shot endpoint taking a speaker prompt, a CosyVoice-style server taking an instruction for
emotion or dialect) declare it by naming the keyword in their ``synthesize`` signature:
``prompt_audio``, ``prompt_text``, ``instruct``. What an engine cannot take is dropped and the
manifest says so. Mandarin text with Latin words is synthesised run by run (Han runs in Mandarin,
Latin runs in English, same voice) when the engine has no code-switching front end of its own.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from vocalbench.components.base import TTS
from vocalbench.construct.perturb import rng_for

CONDITIONING = ("prompt_audio", "prompt_text", "instruct")
_RUNS = re.compile(r"[A-Za-z][A-Za-z0-9'\-\. ]*[A-Za-z0-9]|[A-Za-z]")


def capabilities(tts: TTS) -> set[str]:
    """Which optional conditioning keywords ``tts.synthesize`` accepts (plus ``code_switch``)."""
    caps: set[str] = set()
    try:
        params = inspect.signature(tts.synthesize).parameters
    except (TypeError, ValueError):
        return caps
    var_kw = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    for name in CONDITIONING:
        if name in params or (var_kw and name in getattr(tts, "conditioning", ())):
            caps.add(name)
    if getattr(tts, "code_switch", False):
        caps.add("code_switch")
    return caps


@dataclass(frozen=True)
class Attempt:
    """One synthesis try: which voice and speed."""

    number: int  # 1-based
    voice: str
    speed: float


def plan(key: str, voices: list[str], speeds: list[float], seed: int, attempts: int) -> list[Attempt]:
    """Seeded attempts for one utterance: voices in a seeded order, each retry moving to the next
    voice; speeds drawn by seed, cycling so that no (voice, speed) pair repeats before all are used."""
    if not voices:
        raise ValueError("the voice pool is empty")
    rng = rng_for("plan", seed, key)
    vs = [voices[i] for i in rng.permutation(len(voices))]
    sp = [speeds[i] for i in rng.permutation(len(speeds))]
    out = []
    for k in range(attempts):
        out.append(Attempt(k + 1, vs[k % len(vs)], float(sp[(k + k // len(vs)) % len(sp)])))
    return out


def split_runs(text: str) -> list[tuple[str, str]]:
    """(lang, text) runs of a Mandarin sentence with English words: Latin runs are ``en``."""
    runs: list[tuple[str, str]] = []
    pos = 0
    for m in _RUNS.finditer(text):
        if m.start() > pos and text[pos : m.start()].strip():
            runs.append(("zh", text[pos : m.start()]))
        runs.append(("en", m.group(0)))
        pos = m.end()
    if text[pos:].strip():
        runs.append(("zh", text[pos:]))
    # punctuation-only Mandarin runs are merged into their neighbours' pauses
    return [(lang, t) for lang, t in runs if lang == "en" or re.search(r"[\u4e00-\u9fff0-9]", t)]


def synthesize(tts: TTS, text: str, lang: str, attempt: Attempt, *, instruct: str | None = None,
               prompt_audio: str | None = None, prompt_text: str | None = None) -> tuple[np.ndarray, int, dict[str, str]]:
    """Synthesise ``text``; returns (samples, sample rate, what conditioning was used or dropped)."""
    caps = capabilities(tts)
    kwargs: dict[str, Any] = {}
    used: dict[str, str] = {}
    for name, value in (("instruct", instruct), ("prompt_audio", prompt_audio), ("prompt_text", prompt_text)):
        if value is None:
            continue
        if name in caps:
            kwargs[name] = value
            used[name] = "passed"
        else:
            used[name] = "dropped: the TTS does not support it"
    runs = split_runs(text) if lang == "zh" and "code_switch" not in caps else [(lang, text)]
    if len(runs) > 1 or (runs and runs[0][0] != lang):
        pieces: list[np.ndarray] = []
        sr = int(getattr(tts, "sample_rate", 24000))
        for run_lang, run_text in runs:
            x, sr = tts.synthesize(run_text, run_lang, voice=attempt.voice, speed=attempt.speed, **kwargs)
            pieces += [np.asarray(x, dtype=np.float32), np.zeros(int(0.06 * sr), dtype=np.float32)]
        used["code_switch"] = f"run-by-run synthesis ({len(runs)} runs)"
        return np.concatenate(pieces[:-1]), sr, used
    x, sr = tts.synthesize(text, lang, voice=attempt.voice, speed=attempt.speed, **kwargs)
    return np.asarray(x, dtype=np.float32), int(sr), used

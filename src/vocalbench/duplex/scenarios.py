"""Duplex scenarios: the project's scripts, built into timed spoken inputs with the construction pipeline.

Scripts live in ``duplex/scripts/<lang>/<kind>.txt``, one scenario a line, parts separated by
`` / `` (written for vocalbench). The four kinds, after Full-Duplex-Bench v1:

- ``pause`` (pause handling): one user turn with a mid-utterance pause of 1-3 s between its parts.
- ``smooth`` (smooth turn-taking): one complete question, then silence.
- ``interruption`` (user interruption): a request, then - while the system is expected to be talking,
  5.5-7 s after the request ends - a new request.
- ``backchannel``: a long monologue whose sentences are separated by natural pauses of 0.3-0.8 s.

Every part is synthesised (Kokoro offline), trimmed of its silent edges and verified by ASR
round trip like every built query (WER en, CER zh; retried with the next voice and speed; the best
attempt is kept and flagged when none passes), then the parts are laid on one timeline with
seeded gaps, 0.5 s of lead silence and a tail long enough for a reply. A scenario records every
part's start and end, the user's end of turn, the pause or interruption span, and the ASR word
timings of the whole input. ``mini`` takes the first two scenarios of each kind, ``full`` all.
Builds are cached under ``cache_dir()/duplex/<version>/<lang>/<set>`` (the version hashes the
scripts and this recipe).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np
from pydantic import TypeAdapter

from vocalbench.records import AudioRef, Sample

if TYPE_CHECKING:
    from vocalbench.components.base import ASR, TTS

Kind = Literal["pause", "smooth", "interruption", "backchannel"]
KINDS: tuple[Kind, ...] = ("pause", "smooth", "interruption", "backchannel")
SETS = ("mini", "full")
MINI_PER_KIND = 2
RECIPE = "duplex-recipe-1"  # bump when the timing rules below change
RATE = 24000
LEAD = 0.5
TAIL: dict[str, float] = {"pause": 3.0, "smooth": 8.0, "interruption": 8.0, "backchannel": 1.5}
MAX_ERROR = {"en": 0.10, "zh": 0.15}
SUBSET = "duplex"


@dataclass(frozen=True)
class Script:
    """One scenario as written: its kind, language, number in its file and its spoken parts."""

    kind: Kind
    lang: str
    number: int
    parts: tuple[str, ...]

    @property
    def id(self) -> str:
        return f"{self.kind}-{self.number:03d}"


def scripts_file(lang: str, kind: str) -> Path:
    return Path(str(resources.files("vocalbench.duplex").joinpath("scripts", lang, f"{kind}.txt")))


def read_scripts(lang: str, which: str = "full") -> list[Script]:
    """The scenarios of one language (``mini``: the first :data:`MINI_PER_KIND` of each kind)."""
    if which not in SETS:
        raise ValueError(f"duplex set '{which}' unknown (known: {', '.join(SETS)})")
    out: list[Script] = []
    for kind in KINDS:
        path = scripts_file(lang, kind)
        n = 0
        for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            parts = tuple(p.strip() for p in line.split(" / ") if p.strip())
            need = {"smooth": (1, 1), "pause": (2, 2), "interruption": (2, 2), "backchannel": (3, 12)}[kind]
            if not need[0] <= len(parts) <= need[1]:
                raise ValueError(f"{path}:{lineno}: a {kind} scenario has {need[0]}-{need[1]} parts separated "
                                 f"by ' / ', found {len(parts)}")
            n += 1
            if which == "mini" and n > MINI_PER_KIND:
                break
            out.append(Script(kind, lang, n, parts))
    return out


@dataclass
class Part:
    text: str
    start: float
    end: float
    voice: str
    error_rate: float
    verified: bool


@dataclass
class Scenario:
    """A built scenario: its input audio and its timeline (seconds from the input's first sample)."""

    id: str
    kind: Kind
    lang: str
    audio: str  # path of the 24 kHz input wav
    duration: float
    parts: list[Part]
    user_end: float  # end of the user's (first) turn: the last part, or the first for interruption
    span: tuple[float, float] | None  # the pause (pause) or the interruption (interruption)
    words: list[tuple[float, float, str]] = field(default_factory=list)  # ASR word timings of the input

    def sample(self, index: int) -> Sample:
        meta = asdict(self)
        meta.pop("audio")
        return Sample(id=self.id, subset=SUBSET, lang="zh" if self.lang == "zh" else "en", index=index,
                      audio=AudioRef(path=self.audio, sample_rate=RATE, duration=self.duration),
                      question=" ".join(p.text for p in self.parts), category=self.kind, metadata=meta)

    @classmethod
    def from_sample(cls, sample: Sample) -> Scenario:
        if sample.audio is None:
            raise ValueError(f"duplex/{sample.id}: no input audio")
        return TypeAdapter(cls).validate_python({**sample.metadata, "audio": sample.audio.path})


def gaps(script: Script) -> list[float]:
    """The seeded silences between a scenario's parts (stable per language, kind and number)."""
    rng = np.random.default_rng(int.from_bytes(hashlib.sha256(f"{script.lang}/{script.id}".encode()).digest()[:8],
                                               "big"))
    n = len(script.parts) - 1
    if script.kind == "pause":
        return [round(float(rng.uniform(1.0, 3.0)), 2)]
    if script.kind == "interruption":
        return [round(float(rng.uniform(5.5, 7.0)), 2)]
    return [round(float(rng.uniform(0.3, 0.8)), 2) for _ in range(n)]


def version(lang: str, which: str) -> str:
    """Hash of the recipe and the set's scripts: a new value means a rebuild (adding scenarios to the
    full set leaves ``mini`` as built)."""
    h = hashlib.sha256(RECIPE.encode())
    h.update(json.dumps([asdict(s) for s in read_scripts(lang, which)], ensure_ascii=False).encode())
    return h.hexdigest()[:12]


def location(lang: str, which: str) -> Path:
    from vocalbench.config import cache_dir

    return cache_dir() / "duplex" / version(lang, which) / lang / which


def _trim(x: np.ndarray) -> np.ndarray:
    """``x`` without its silent edges (frames below -50 dBFS), keeping 20 ms either side."""
    from vocalbench.audio import first_audible

    start = first_audible(x, RATE)
    end = first_audible(x[::-1].copy(), RATE)
    if start is None or end is None:
        return x
    keep = int(0.02 * RATE)
    return x[max(0, start - keep):x.size - max(0, end - keep)]


def _speak(tts: TTS, asr: ASR, text: str, lang: str, key: str, tmp: Path,
           voice: str | None) -> tuple[np.ndarray, str, float, bool]:
    """Synthesise and verify one part: (audio at 24 kHz, voice, error rate, verified); ``voice`` (the
    scenario's first part's) is tried first, so one scenario keeps one speaker where it verifies."""
    from vocalbench.audio import resample
    from vocalbench.construct.synth import plan, synthesize
    from vocalbench.construct.verify import compare
    from vocalbench.files import write_atomic

    voices = [v for v in tts.voices(lang) if not (lang == "zh" and v == "jf_alpha")]  # OFFLINE.md: poor zh
    best: tuple[float, np.ndarray, str] | None = None
    attempts = plan(key, voices, [1.0, 0.9, 1.1], 0, 4)
    if voice is not None:
        from vocalbench.construct.synth import Attempt

        attempts = [Attempt(0, voice, 1.0), *attempts]
    for attempt in attempts:
        x, sr, _ = synthesize(tts, text, lang, attempt)
        x = _trim(resample(x, sr, RATE) if sr != RATE else x)
        path = tmp / "verify.wav"
        from vocalbench.audio import to_wav_bytes

        write_atomic(path, to_wav_bytes(x, RATE))
        [tr] = asr.transcribe([path], lang)
        rate = compare(text, getattr(tr, "text", ""), lang, homophones=True).rate
        if best is None or rate < best[0]:
            best = (rate, x, attempt.voice)
        if rate <= MAX_ERROR[lang]:
            break
    assert best is not None
    return best[1], best[2], round(best[0], 4), best[0] <= MAX_ERROR[lang]


def build_one(script: Script, tts: TTS, asr: ASR, out: Path) -> Scenario:
    """Synthesise, verify and lay out one scenario; writes ``<out>/<id>.wav``."""
    from vocalbench.components.asr import timed_words
    from vocalbench.files import write_atomic

    pieces: list[np.ndarray] = [np.zeros(int(LEAD * RATE), dtype=np.float32)]
    t = LEAD
    parts: list[Part] = []
    between = gaps(script)
    for i, text in enumerate(script.parts):
        x, voice, rate, ok = _speak(tts, asr, text, script.lang, f"{script.lang}/{script.id}/{i}", out,
                                    parts[0].voice if parts else None)
        parts.append(Part(text, round(t, 3), round(t + x.size / RATE, 3), voice, rate, ok))
        pieces.append(x)
        t += x.size / RATE
        if i < len(between):
            pieces.append(np.zeros(int(between[i] * RATE), dtype=np.float32))
            t += int(between[i] * RATE) / RATE
    pieces.append(np.zeros(int(TAIL[script.kind] * RATE), dtype=np.float32))
    audio = np.concatenate(pieces)
    from vocalbench.audio import to_wav_bytes

    path = write_atomic(out / f"{script.id}.wav", to_wav_bytes(audio, RATE))
    user_end = parts[0].end if script.kind == "interruption" else parts[-1].end
    span = None
    if script.kind == "pause":
        span = (parts[0].end, parts[1].start)
    elif script.kind == "interruption":
        span = (parts[1].start, parts[1].end)
    words = timed_words(asr, path, script.lang)
    return Scenario(script.id, script.kind, script.lang, str(path), round(audio.size / RATE, 3), parts, user_end,
                    span, [(round(a, 3), round(b, 3), w) for a, b, w in words])


MANIFEST = "scenarios.jsonl"


def read_manifest(path: Path) -> dict[str, Scenario]:
    """The scenarios of a ``scenarios.jsonl`` by id (empty when it does not exist)."""
    done: dict[str, Scenario] = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                body = json.loads(line)
                body["parts"] = [Part(**p) for p in body["parts"]]
                body["span"] = tuple(body["span"]) if body.get("span") else None
                body["words"] = [tuple(w) for w in body.get("words") or []]
                done[body["id"]] = Scenario(**body)
    return done


def write_manifest(path: Path, scenarios: list[Scenario]) -> None:
    from vocalbench.files import write_atomic

    write_atomic(path, "".join(json.dumps(asdict(sc), ensure_ascii=False) + "\n" for sc in scenarios))


def ensure(lang: str, which: str = "mini", progress: bool = True) -> list[Scenario]:
    """The built scenarios of one language and set, building what is missing (resumable per scenario)."""
    from vocalbench import components
    from vocalbench.progress import progress_bar

    root = location(lang, which)
    root.mkdir(parents=True, exist_ok=True)
    manifest = root / MANIFEST
    done = read_manifest(manifest)
    scripts = read_scripts(lang, which)
    todo = [s for s in scripts if s.id not in done]
    if todo:
        tts = components.resolve("tts", "offline")
        asr = components.resolve("asr", "offline")
        with progress_bar(len(todo), f"build duplex {lang}/{which}", enabled=progress) as bar:
            for s in todo:
                sc = build_one(s, tts, asr, root)
                done[sc.id] = sc
                write_manifest(manifest, [done[x.id] for x in scripts if x.id in done])
                bar.advance(1)
    return [done[s.id] for s in scripts]


def samples(lang: str, which: str = "mini", progress: bool = True) -> list[Sample]:
    return [sc.sample(i) for i, sc in enumerate(ensure(lang, which, progress))]

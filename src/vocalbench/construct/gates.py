"""Quality gates of a build: the speaker-prompt (voice pool) filter and the emotion gate.

Voice pool filter: each voice reads a fixed reference sentence, the MOS component scores it, and
voices are ranked. Clarity-critical subsets (knowledge, reasoning, code-switching knowledge) use the
top ``top_share`` of the pool; conversational subsets use those plus a ``low_share`` of the rest
(chosen by seed), so the conversational sets keep some less polished voices as real users have.

Emotion gate: with a classifier, an emotional query is kept only if p(target) > 0.8 on the query
(and > 0.9 on the speaker prompt when one conditions the synthesis); otherwise the attempt fails
and the next voice is tried. Without a classifier the gate is skipped and the manifest says so.
"""

from __future__ import annotations

import math
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from vocalbench import audio, catalog
from vocalbench.components.base import MOS, TTS, ComponentError, ComponentUnavailable, EmotionClassifier
from vocalbench.construct.manifest import GateDecision, GateSettings, PoolManifest
from vocalbench.construct.perturb import rng_for

REFERENCE = {
    "en": "The quick brown fox jumps over the lazy dog, and then it runs back home before the rain.",
    "zh": "今天天气很好，我们一起去公园散步，然后在湖边喝一杯热茶。",
}
QUERY_THRESHOLD = 0.8
PROMPT_THRESHOLD = 0.9


@dataclass
class VoicePools:
    """Voices per use, with the scores that ranked them (None when no MOS was used)."""

    clarity: list[str]
    conversational: list[str]
    scores: dict[str, float | None] = field(default_factory=dict)
    note: str = ""

    def for_subset(self, subset: str) -> list[str]:
        spec = catalog.find(subset)
        return self.clarity if spec is not None and spec.clear_voices else self.conversational

    def to_manifest(self) -> PoolManifest:
        return {"clarity_critical": self.clarity, "conversational": self.conversational,
                "mos": self.scores, "note": self.note}


def rank_voices(tts: TTS, mos: MOS, lang: str, voices: list[str], workdir: Path | None = None,
                speed: float = 1.0) -> dict[str, float | None]:
    """MOS of each voice reading the reference sentence (None where synthesis or scoring failed)."""
    scores: dict[str, float | None] = {}
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        paths: list[Path] = []
        for v in voices:
            x, sr = tts.synthesize(REFERENCE[lang], lang, voice=v, speed=speed)
            paths.append(audio.write(Path(tmp) / f"{len(paths):03d}.wav", x, sr))
        for v, s in zip(voices, mos.score(paths)):
            scores[v] = None if isinstance(s, ComponentError) else float(s)
    return scores


def voice_pools(voices: list[str], scores: dict[str, float | None] | None, *, top_share: float = 0.6,
                low_share: float = 0.5, seed: int = 0) -> VoicePools:
    """Split ``voices`` into the clarity-critical pool and the conversational pool."""
    if not voices:
        raise ValueError("no voices to choose from")
    if not 0 < top_share <= 1 or not 0 <= low_share <= 1:
        raise ValueError("top_share must be in (0, 1] and low_share in [0, 1]")
    if not scores:
        return VoicePools(list(voices), list(voices), {v: None for v in voices},
                          note="no MOS component: every voice is used for every subset")
    def score(v: str) -> float:
        value = scores.get(v)
        return -math.inf if value is None else value

    ranked = sorted(voices, key=lambda v: (-score(v), v))
    n_top = max(1, math.ceil(top_share * len(ranked)))
    top, rest = ranked[:n_top], ranked[n_top:]
    n_low = math.ceil(low_share * len(rest)) if rest else 0
    rng = rng_for("pools", seed, *ranked)
    low = [rest[i] for i in sorted(rng.choice(len(rest), size=n_low, replace=False))] if n_low else []
    return VoicePools(top, top + low, dict(scores),
                      note=f"top {top_share:.0%} by MOS for clarity-critical subsets; "
                           f"conversational adds {n_low} of {len(rest)} lower-ranked voices")


class EmotionGate:
    """Applies the emotion thresholds with a classifier (``classify(paths) -> [dict | error]``)."""

    def __init__(self, classifier: EmotionClassifier | None, reason: str = "") -> None:
        self.classifier = classifier
        self.reason = reason  # why it is skipped, when it is

    @property
    def active(self) -> bool:
        return self.classifier is not None

    def describe(self) -> GateSettings:
        if not self.active:
            return {"status": "skipped", "reason": self.reason or "no emotion classifier configured"}
        return {"status": "active", "classifier": getattr(self.classifier, "id", type(self.classifier).__name__),
                "query_threshold": QUERY_THRESHOLD, "prompt_threshold": PROMPT_THRESHOLD}

    def probability(self, path: str | Path, target: str) -> float | None:
        """p(target) on one file; None when the classifier failed on it."""
        assert self.classifier is not None
        out = self.classifier.classify([path])[0]
        if isinstance(out, ComponentError):
            return None
        return float(out.get(target, 0.0))

    def check(self, path: str | Path, target: str, prompt: str | Path | None = None) -> GateDecision:
        """Gate decision for one synthesised query (and its speaker prompt, if any). A classifier
        that turns out to be unavailable (e.g. the offline placeholder) switches the gate off."""
        if not self.active:
            return {"gate": "skipped", "passed": True, "reason": self.reason or "no emotion classifier configured"}
        try:
            p = self.probability(path, target)
        except ComponentUnavailable as exc:
            self.classifier, self.reason = None, f"{exc.reason}: {exc}"
            return {"gate": "skipped", "passed": True, "reason": self.reason}
        ok = p is not None and p > QUERY_THRESHOLD
        if prompt is None:
            return {"gate": "emotion", "target": target, "Question_prob": p, "passed": ok}
        pp = self.probability(prompt, target)
        ok = ok and pp is not None and pp > PROMPT_THRESHOLD
        return {"gate": "emotion", "target": target, "Question_prob": p, "Prompt_prob": pp, "passed": ok}

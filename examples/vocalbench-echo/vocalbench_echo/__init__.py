"""An example vocalbench plug-in: the ``echo`` system and the ``morse`` TTS component.

Both are registered as entry points in this package's pyproject.toml, so an installed copy is found
by ``vocalbench list`` and used by ``--system echo`` / ``--tts morse``; vocalbench itself is not
edited. ``vocalbench_echo:echo_system`` and ``vocalbench_echo:MorseTTS`` work as ``module:attr``
SPECs too, without installing anything (the folder on ``PYTHONPATH`` is enough).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from vocalbench.systems.inprocess import CallableSystem
from vocalbench.systems.options import SystemOptions

CHUNK_SECONDS = 0.25


def parrot(audio: np.ndarray, sample_rate: int, history: list[dict[str, str]]) -> Iterator[Any]:
    """The "model": says how long the query was, then streams the query's audio back."""
    seconds = audio.size / sample_rate
    yield f"I heard {seconds:.1f} seconds of speech"
    yield f" after {len(history)} earlier turns." if history else "."
    step = max(1, int(CHUNK_SECONDS * sample_rate))
    for start in range(0, audio.size, step):
        yield audio[start:start + step], sample_rate


def echo_system(arg: str, options: SystemOptions) -> CallableSystem:
    """``--system echo`` (the query's audio back) or ``echo:morse`` (the reply text in Morse code)."""
    if arg not in ("", "morse"):
        raise ValueError(f"echo system: unknown variant '{arg}' (use echo or echo:morse)")
    if not arg:
        return CallableSystem(parrot, name="echo")
    tts = MorseTTS()

    def morse_parrot(audio: np.ndarray, sample_rate: int, history: list[dict[str, str]]) -> Iterator[Any]:
        text = f"I heard {audio.size / sample_rate:.1f} seconds of speech."
        yield text
        speech, rate = tts.synthesize(text, "en")
        step = int(CHUNK_SECONDS * rate)
        for start in range(0, speech.size, step):
            yield speech[start:start + step], rate

    return CallableSystem(morse_parrot, name="echo:morse", details={"tts": tts.id})


MORSE = {
    "a": ".-", "b": "-...", "c": "-.-.", "d": "-..", "e": ".", "f": "..-.", "g": "--.", "h": "....", "i": "..",
    "j": ".---", "k": "-.-", "l": ".-..", "m": "--", "n": "-.", "o": "---", "p": ".--.", "q": "--.-", "r": ".-.",
    "s": "...", "t": "-", "u": "..-", "v": "...-", "w": ".--", "x": "-..-", "y": "-.--", "z": "--..",
    "0": "-----", "1": ".----", "2": "..---", "3": "...--", "4": "....-", "5": ".....", "6": "-....",
    "7": "--...", "8": "---..", "9": "----.",
}


class MorseTTS:
    """A TTS component (vocalbench.components.base.TTS): text as Morse-code tones at 600 Hz."""

    id = "morse@vocalbench-echo"
    sample_rate = 24000
    unit = 0.06  # seconds per dot

    def __init__(self, **options: object) -> None:
        self.options = options

    def voices(self, lang: str) -> list[str]:
        return ["tone"]

    def synthesize(self, text: str, lang: str, voice: str | None = None, speed: float = 1.0) -> tuple[np.ndarray, int]:
        unit = int(self.unit / speed * self.sample_rate)
        t = np.arange(3 * unit) / self.sample_rate
        tone = (0.3 * np.sin(2 * np.pi * 600.0 * t)).astype(np.float32)
        gap = np.zeros(unit, dtype=np.float32)
        parts: list[np.ndarray] = []
        for word in text.lower().split():
            for letter in word:
                for mark in MORSE.get(letter, ""):
                    parts += [tone[:unit] if mark == "." else tone, gap]
                parts.append(np.zeros(2 * unit, dtype=np.float32))
            parts.append(np.zeros(4 * unit, dtype=np.float32))
        return (np.concatenate(parts) if parts else np.zeros(unit, dtype=np.float32)), self.sample_rate

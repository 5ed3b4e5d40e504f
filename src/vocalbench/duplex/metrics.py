"""The duplex measures, after Full-Duplex-Bench v1 and v1.5 (docs/scoring.md, "Duplex"), as pure functions.

Inputs: the words of a replay's ``output.wav`` with their timings (ASR, or a transcript made
elsewhere), the Silero speech segments of that output (and of the input, for the v1.5 timing), and
the scenario's own timeline, all in seconds on the input timeline. **Words decide only whether the
system took the turn; every time is read from speech segments** (ASR word starts run early, and
the first audible sample reacts to any click). Each function returns plain numbers, None where a
measure does not apply to that replay.

- Take-over (:func:`takes_over`): no words -> 0; words spanning >= 1 s (first start to last end)
  or more than 3 words -> 1; else 0. Mandarin words are estimated from the characters
  (:func:`word_count`), not taken from Whisper's tokens (arbitrary runs of characters), nor one per
  character (好的好的, a backchannel, would be a take-over), nor from a segmenter (jieba splits
  好的 into two).
- Pause handling: take-over on the words that start before the user's turn ends.
- Smooth turn-taking: take-over on all words; latency = start of the first output speech segment -
  end of the user's turn, clamped at 0, where the system took the turn; ``word_latency`` the same
  from the first word (Full-Duplex-Bench v1's own reading).
- User interruption: take-over on the words that start after the interruption ends; latency = start
  of the first speech segment that ends after the interruption's end - that end (0 when the system
  talks across it); time to stop = end of the output speech (gaps up to :data:`BRIDGE_S` bridged)
  playing when the interruption starts - that start. v1.5 timing: ``stop_latency`` = how long the
  system's speech (gaps <= 0.5 s bridged) overlaps the user's interrupting speech (the input's
  speech segments, gaps <= 0.6 s bridged), ``response_latency`` = the start of the next output
  speech after the user's interrupting speech - its end.
- Backchannel, within the user's monologue, per output speech segment: longer than 3 s -> a
  take-over (and the count stops there, as Full-Duplex-Bench's loop does); else more than 3 words
  in it -> a take-over; else shorter than 1 s with at most 2 words -> a backchannel; else a
  take-over. Take-over = 1 when any segment is one; frequency = segments of at most 3 s before the
  first longer one, per second of input (Full-Duplex-Bench counts them all, whatever their verdict).
- Time to first audio: the start of the first output speech segment that ends after the reference
  moment (end of the user's turn; end of the interruption) - that moment, clamped at 0.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

SPAN_S = 1.0  # a take-over spans at least this long...
WORDS = 3  # ...or has more than this many words
BACKCHANNEL_MAX_S = 3.0  # a speech segment longer than this is a take-over outright
BACKCHANNEL_SHORT_S = 1.0
BACKCHANNEL_WORDS = 2
BRIDGE_S = 0.5  # the system's speech: gaps up to this long are one stretch (Full-Duplex-Bench v1.5)
USER_BRIDGE_S = 0.6  # the user's speech, likewise
Measures = dict[str, float | None]


@dataclass(frozen=True)
class Word:
    start: float
    end: float
    text: str


@dataclass(frozen=True)
class Span:
    start: float
    end: float

    @property
    def duration(self) -> float:
        return self.end - self.start


def bridge(spans: Sequence[Span], gap: float) -> list[Span]:
    """``spans`` in time order with every gap of at most ``gap`` seconds closed."""
    out: list[Span] = []
    for s in sorted(spans, key=lambda s: s.start):
        if out and s.start - out[-1].end <= gap:
            out[-1] = Span(out[-1].start, max(out[-1].end, s.end))
        else:
            out.append(s)
    return out


HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
LATIN = re.compile(r"[A-Za-z0-9']+")
HAN_PER_WORD = 1.6  # mean length of a Mandarin word in characters


def word_count(words: Sequence[Word], lang: str = "en") -> int:
    """How many words ``words`` hold: one per timed word, except in Mandarin, where Whisper's tokens
    are arbitrary runs of characters: there the characters / :data:`HAN_PER_WORD` (rounded) plus any
    Latin words, so that FDB's "more than 3 words" means more than 5 characters."""
    if lang != "zh":
        return len(words)
    text = " ".join(w.text for w in words)
    return int(len(HAN.findall(text)) / HAN_PER_WORD + 0.5) + len(LATIN.findall(text))


def takes_over(words: Sequence[Word], lang: str = "en") -> int:
    """1 when ``words`` amount to taking the turn (see the module docstring), else 0."""
    if not words:
        return 0
    return 1 if words[-1].end - words[0].start >= SPAN_S or word_count(words, lang) > WORDS else 0


def speech_from(segments: Sequence[Span], t: float) -> float | None:
    """When the output's speech is first heard at or after ``t`` (``t`` itself when it is talking
    then); None: no speech after ``t``."""
    start = next((s.start for s in sorted(segments, key=lambda s: s.start) if s.end > t), None)
    return None if start is None else max(start, t)


def _delay(segments: Sequence[Span], t: float) -> float | None:
    at = speech_from(segments, t)
    return None if at is None else at - t


def pause_handling(words: Sequence[Word], user_end: float, lang: str = "en") -> Measures:
    return {"take_over": float(takes_over([w for w in words if w.start < user_end], lang))}


def smooth_turn_taking(words: Sequence[Word], segments: Sequence[Span], user_end: float, lang: str = "en") -> Measures:
    tor = takes_over(words, lang)
    first = min((s.start for s in segments), default=None)
    return {"take_over": float(tor),
            "latency": max(0.0, first - user_end) if tor and first is not None else None,
            "word_latency": max(0.0, words[0].start - user_end) if tor else None}


def user_interruption(words: Sequence[Word], segments: Sequence[Span], interruption: Span,
                      user_speech: Sequence[Span] = (), lang: str = "en") -> Measures:
    """The v1 measures and the v1.5 timing of one interrupted replay; ``user_speech``: the input's
    speech segments (the interruption's own span stands in where none overlaps it)."""
    after = [w for w in words if w.start >= interruption.end]
    tor = takes_over(after, lang)
    spoken = bridge(segments, BRIDGE_S)
    playing = next((s for s in spoken if s.start <= interruption.start < s.end), None)
    latency = _delay(segments, interruption.end)
    user = next((u for u in bridge(user_speech, USER_BRIDGE_S)
                 if u.start < interruption.end and u.end > interruption.start), interruption)
    overlap = next((min(u.end, s.end) - max(u.start, s.start) for u in [user] for s in spoken
                    if s.start < u.end and s.end > u.start), None)
    response = next((s.start - user.end for s in spoken if s.start > user.end), None)
    return {"take_over": float(tor), "latency": latency if tor else None,
            "word_latency": after[0].start - interruption.end if tor else None,
            "stop_time": None if playing is None else playing.end - interruption.start,
            "stop_latency": overlap, "response_latency": response}


def segment_is_backchannel(segment: Span, words: Sequence[Word], lang: str = "en") -> bool:
    """Whether one output speech segment is a backchannel (not a take-over)."""
    if segment.duration > BACKCHANNEL_MAX_S:
        return False
    inside = [w for w in words if w.start < segment.end and w.end > segment.start]
    n = word_count(inside, lang)
    return n <= WORDS and segment.duration < BACKCHANNEL_SHORT_S and n <= BACKCHANNEL_WORDS


def backchannel(words: Sequence[Word], segments: Sequence[Span], window_end: float, duration: float,
                lang: str = "en") -> Measures:
    """The backchannel measures over the output speech that starts before ``window_end`` (the end of
    the user's monologue), frequency per second of the ``duration`` of the input."""
    inside = [s for s in sorted(segments, key=lambda s: s.start) if s.start < window_end]
    counted = 0
    take = False
    for s in inside:
        if s.duration > BACKCHANNEL_MAX_S:
            take = True
            break
        counted += 1
        take = take or not segment_is_backchannel(s, words, lang)
    return {"take_over": float(take), "frequency": counted / duration if duration > 0 else None}


def first_audio_after(segments: Sequence[Span], reference: float) -> float | None:
    """Time to first audio: when the output's speech is first heard at or after ``reference`` -
    ``reference`` (None: no speech after it)."""
    return _delay(segments, reference)

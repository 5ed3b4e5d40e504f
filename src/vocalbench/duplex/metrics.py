"""The duplex measures, as Full-Duplex-Bench v1 defines them (docs/scoring.md, "Duplex"), as pure functions.

Inputs are the ASR word timings of a scenario's ``output.wav`` (seconds on the input timeline),
the VAD speech segments of that output, and the scenario's own timeline. Every function returns
plain numbers (or None where a measure does not apply to that scenario, with the reason beside it).

- Take-over (:func:`takes_over`): no words -> 0; words spanning >= 1 s (first start to last end)
  or more than 3 words -> 1; otherwise 0 (a short "okay" is not a turn).
- Pause handling: take-over on the words that start before the user's turn ends (the user only
  paused; lower is better).
- Smooth turn-taking: take-over on all words; latency = first word start - end of the user's turn,
  clamped at 0, only where the system took the turn.
- User interruption: take-over on the words that start after the interruption ends; latency = first
  of those words - end of the interruption (>= 0 by construction); time to stop = end of the output
  speech segment that is playing when the interruption starts - interruption start (None: the
  system was not talking then).
- Backchannel, per VAD segment of the output: longer than 3 s -> a take-over; else with more than 3
  words overlapping it -> a take-over; else shorter than 1 s with at most 2 words -> a backchannel;
  else a take-over. Take-over = 1 when any segment is one; frequency = backchannel segments per
  second of input.
- Time to first audio: the first audible output sample at or after the reference moment (end of the
  user's turn; end of the interruption) - that moment (0 when the system is already talking).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

SPAN_S = 1.0  # a take-over spans at least this long...
WORDS = 3  # ...or has more than this many words
BACKCHANNEL_MAX_S = 3.0  # a VAD segment longer than this is a take-over outright
BACKCHANNEL_SHORT_S = 1.0
BACKCHANNEL_WORDS = 2


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


def takes_over(words: Sequence[Word]) -> int:
    """1 when ``words`` amount to taking the turn (see the module docstring), else 0."""
    if not words:
        return 0
    span = words[-1].end - words[0].start
    return 1 if span >= SPAN_S or len(words) > WORDS else 0


def pause_handling(words: Sequence[Word], user_end: float) -> dict[str, float | None]:
    return {"take_over": float(takes_over([w for w in words if w.start < user_end]))}


def smooth_turn_taking(words: Sequence[Word], user_end: float) -> dict[str, float | None]:
    tor = takes_over(words)
    return {"take_over": float(tor), "latency": max(0.0, words[0].start - user_end) if tor else None}


def user_interruption(words: Sequence[Word], segments: Sequence[Span], interruption: Span) -> dict[str, float | None]:
    after = [w for w in words if w.start >= interruption.end]
    tor = takes_over(after)
    playing = next((s for s in segments if s.start <= interruption.start < s.end), None)
    return {"take_over": float(tor), "latency": max(0.0, after[0].start - interruption.end) if tor else None,
            "stop_time": None if playing is None else playing.end - interruption.start}


def segment_is_backchannel(segment: Span, words: Sequence[Word]) -> bool:
    """Whether one output speech segment is a backchannel (not a take-over)."""
    if segment.duration > BACKCHANNEL_MAX_S:
        return False
    inside = [w for w in words if w.start < segment.end and w.end > segment.start]
    if len(inside) > WORDS:
        return False
    return segment.duration < BACKCHANNEL_SHORT_S and len(inside) <= BACKCHANNEL_WORDS


def backchannel(words: Sequence[Word], segments: Sequence[Span], duration: float) -> dict[str, float | None]:
    kinds = [segment_is_backchannel(s, words) for s in segments]
    return {"take_over": float(any(not k for k in kinds)),
            "frequency": sum(kinds) / duration if duration > 0 else None}


def first_audio_after(onset: float | None, reference: float) -> float | None:
    """Time to first audio: ``onset`` (the first audible output sample at or after ``reference``,
    None: none) minus ``reference``."""
    return None if onset is None else max(0.0, onset - reference)

"""The duplex suite's records in the run store (runner/store.py), beside every other run's.

- a scenario is a :class:`~vocalbench.records.Sample` of subset ``duplex`` (its timeline in
  ``metadata``, :meth:`Scenario.sample`);
- a replay is a :class:`~vocalbench.records.Reply` keyed ``<scenario>/r<k>``: the played
  ``output.wav``, the error that stopped it, and in ``extra["replay"]`` a :class:`ReplayLog` (what
  the replay measured and the server's events on the input timeline);
- its measures are :class:`~vocalbench.records.Score` records under the timing evaluator, one per
  measure; the ``speech`` score (seconds of output speech) carries the :class:`Analysis` the
  measures were read from (words, speech segments, the window of every measure);
- the judge's relevance of an answer to an interruption is a ``relevance`` Score under the
  relevance evaluator, with its ``decided_by`` and the judge's trace.
"""

from __future__ import annotations

from pydantic import Field, JsonValue, TypeAdapter

from vocalbench.records import Record, Reply

SUBSET = "duplex"


class ReplayEvent(Record):
    """One server event, stamped on arrival (``t``, seconds on the input timeline); audio deltas
    carry their sample count, not their audio."""

    t: float
    type: str
    response_id: str | None = None
    item_id: str | None = None
    samples: int | None = None
    dropped: str | None = None  # "barge_in" | "reply_too_large"
    delta: str | None = None
    audio_start_ms: int | None = None
    audio_end_ms: int | None = None
    truncated_item: str | None = None
    played_ms: int | None = None
    status: str | None = None
    error: dict[str, JsonValue] | str | None = None


class ReplayLog(Record):
    """What one replay measured: its input duration (tail included), chunking, the responses,
    cancellations and truncations, first audio (arrival of the first played delta), send lateness
    and every event."""

    folder: str  # the replay's folder (input.wav, output.wav)
    duration: float
    chunk_ms: int
    responses: int = 0
    cancelled: int = 0
    truncations: int = 0
    first_audio: float | None = None
    jitter_ms: dict[str, float] | None = None
    events: list[ReplayEvent] = Field(default_factory=list)


class TimedWord(Record):
    start: float
    end: float
    text: str


class Interval(Record):
    start: float
    end: float


class Window(Record):
    """The stretch of the timeline one measure read (drawn on the timeline page)."""

    measure: str
    start: float
    end: float


class Analysis(Record):
    """What a replay's measures were read from: the output's words (``words_from``: the ASR's id, or
    ``transcript`` for one supplied with the recordings), its Silero speech segments, the input's
    (the user's) speech segments, and each measure's window."""

    words_from: str
    words: list[TimedWord]
    segments: list[Interval]
    user_segments: list[Interval]
    windows: list[Window]


def replay_key(scenario: str, repeat: int) -> str:
    return f"{scenario}/r{repeat}"


def split_key(key: str) -> tuple[str, int]:
    scenario, _, r = key.rpartition("/r")
    return scenario, int(r)


def replay_log(reply: Reply) -> ReplayLog | None:
    """The replay log a duplex reply carries (None for an imported recording)."""
    body = reply.extra.get("replay")
    return None if body is None else ReplayLog.model_validate(body)


def transcript(reply: Reply) -> list[TimedWord] | None:
    """Words with timings supplied with an imported recording (None: the run's ASR transcribes it)."""
    body = reply.extra.get("transcript")
    return None if body is None else TypeAdapter(list[TimedWord]).validate_python(body)

"""Saved records: Sample, Reply, Timings, Score, JudgeUsage.

Audio is always referenced by path (``AudioRef``), never embedded. Every record is a
pydantic model so that what goes into the run store is validated and round-trips as JSON.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, JsonValue
from pydantic_core import to_jsonable_python

Lang = Literal["en", "zh"]
# The five emotion labels of the release (Question_emo, the order of an emotion item's Score list)
# and of the emotion classifiers' distributions (docs/scoring.md).
EMOTIONS_5 = ("angry", "happy", "neutral", "sad", "surprised")
# emotion2vec's <unk> class: the official scripts read a softmax over EMOTIONS_5 and it (docs/scoring.md)
EMOTION_UNKNOWN = "unknown"
# An open JSON object of a saved record (official pass-through fields, per-metric figures): what it
# holds is written as JSON, so tuples are taken as the lists they are saved as.
JsonObject = Annotated[dict[str, JsonValue], BeforeValidator(to_jsonable_python)]


class Record(BaseModel):
    model_config = ConfigDict(extra="forbid")

    def to_json(self) -> str:
        return self.model_dump_json(exclude_none=False)


class AudioRef(Record):
    """A pointer to an audio file; ``sample_rate``/``duration`` are filled when known."""

    path: str
    sample_rate: int | None = None
    duration: float | None = None


class Turn(Record):
    """One turn of a multi-round history (always text, as in the official set)."""

    role: Literal["user", "assistant"]
    text: str


class Sample(Record):
    """One spoken test item, keyed by (lang, subset, id)."""

    id: str  # the official Qid; not assumed to start with the subset name
    subset: str
    lang: Lang
    index: int  # position in the subset's list (official Qid numbers equal it)
    audio: AudioRef | None = None
    question: str = ""
    reference: str | None = None
    history: list[Turn] = Field(default_factory=list)
    category: str | None = None
    sub_category: str | None = None
    metadata: JsonObject = Field(default_factory=dict)  # the other official fields, as given

    @property
    def key(self) -> tuple[str, str]:
        return (self.subset, self.id)


class Timings(Record):
    """Harness-measured times (seconds on a monotonic clock, relative to ``request_sent``)."""

    origin: str = "harness-monotonic"  # where the numbers come from
    request_sent: float = 0.0
    first_text: float | None = None
    first_audio: float | None = None
    last_chunk: float | None = None
    # when the first non-silent sample would be heard by a client that starts playback at the
    # first chunk and plays continuously, waiting when it runs dry; None: not measured or silent
    first_audible: float | None = None

    @property
    def fcl_ms(self) -> float | None:
        return None if self.first_audio is None else (self.first_audio - self.request_sent) * 1000.0

    @property
    def faa_ms(self) -> float | None:
        return None if self.first_audible is None else (self.first_audible - self.request_sent) * 1000.0


class ErrorInfo(Record):
    type: str  # e.g. "timeout", "http_500", "empty_reply", "missing_audio", "missing_reply"
    message: str = ""


class Reply(Record):
    """What the system under test answered for one sample."""

    subset: str
    sample_id: str
    text: str | None = None
    audio: AudioRef | None = None
    audio_duration: float | None = None
    timings: Timings | None = None
    error: ErrorInfo | None = None
    attempts: int = 1
    source: str = "generated"  # "generated" | "imported" | "reused:<subset>/<id>"
    asr_text: str | None = None  # a transcript supplied with imported outputs (json_asr)
    extra: JsonObject = Field(default_factory=dict)  # e.g. reused_source, original_id, replay bodies

    @property
    def rtf(self) -> float | None:
        t = self.timings
        if t is None or t.last_chunk is None or not self.audio_duration:
            return None
        return (t.last_chunk - t.request_sent) / self.audio_duration

    @property
    def failed(self) -> bool:
        return self.error is not None


class JudgeTrace(Record):
    """What a judge saw and said, kept with the score it produced."""

    model: str
    prompt_hash: str
    rubric: str  # rubric id@version
    raw: str
    cached: bool = False


class DecidedBy(Record):
    """Who decided a judged verdict: a ``grader`` (its settled verdict, no model asked), a fitted
    ``rule`` over the graders' features (no model asked), or the ``model`` (asked, or its cached
    answer). ``grader`` is the grader id@version whose evidence the verdict used, ``fit`` the fit
    (calibration version) whose rule decided or mapped the model's answers; only a model verdict
    names a ``model`` and a ``prompt_hash``."""

    source: Literal["grader", "rule", "model"]
    grader: str | None = None
    fit: str | None = None
    model: str | None = None
    prompt_hash: str | None = None
    note: str | None = None  # the grader's short reason, where its evidence decided


class Score(Record):
    """One named score of one sample: a value, or explicitly unscored with a reason.

    ``system_error`` marks a failure of the system under test: the value is then the worst
    value of the metric and the item still counts. ``unscored`` marks an evaluator failure:
    the item is excluded from the mean and the subset is incomplete.
    """

    subset: str
    sample_id: str
    name: str = "main"  # e.g. main, word_boundary, semantic, acoustic, pr
    value: float | None = None
    unscored: str | None = None  # reason, when the evaluator could not score
    system_error: str | None = None  # reason, when the system under test failed
    scorer: str  # scorer id@version
    judge: JudgeTrace | None = None  # what the model saw and said, where a model was asked
    decided_by: DecidedBy | None = None  # a judged verdict's source
    details: JsonObject = Field(default_factory=dict)  # per-metric figures (e.g. dist, len, rubric)

    @property
    def scored(self) -> bool:
        return self.unscored is None and self.value is not None

    @property
    def number(self) -> float:
        """The value of a score that has one (a scored item, or a system error's worst value)."""
        if self.value is None:
            raise ValueError(f"{self.subset}/{self.sample_id} {self.name}: no value ({self.unscored or 'unscored'})")
        return self.value


class JudgeUsage(Record):
    """One judge model's ledger over every scoring pass of a run (summary.json
    ``provenance.judge_usage``): verdicts requested from the endpoint (errors included), cache
    hits, errors, prompt and completion tokens, seconds."""

    calls: int = 0
    cache_hits: int = 0
    errors: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0

"""The one validated run configuration that every command builds from its flags, its SPECs parsed
once, at the flag: ``system`` a :class:`~vocalbench.systems.spec.SystemSpec` (``generate`` refuses
one of no registered kind at its flag; an imported run's label is one too), ``judge`` a
:class:`~vocalbench.judge.spec.JudgeSpec` (with its fit), ``asr``/``mos``/``emotion``
:class:`~vocalbench.components.base.ComponentSpec` s checked against the registered parts. A SPEC
that is none of these is a validation error naming the field, before anything is written.

Saved as ``RUN/config.json`` (each SPEC as its text, with package and component versions added at
run time). Secrets never enter it: API keys are read from the environment by the clients that need them.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    PlainSerializer,
    PlainValidator,
    ValidationError,
    model_validator,
)

from vocalbench.components import parse_spec
from vocalbench.components.base import ComponentSpec
from vocalbench.config import system_defaults
from vocalbench.errors import InputError, validation_message
from vocalbench.files import write_json
from vocalbench.judge.spec import JudgeSpec
from vocalbench.limits import REPLY_AUDIO_SECONDS, REPLY_TEXT_CHARS, ReplyLimits
from vocalbench.redact import KEY_ENV as SECRET_ENV
from vocalbench.redact import spec_credentials
from vocalbench.systems.spec import SystemSpec

S = TypeVar("S")


class ConfigError(InputError):
    """An unreadable or invalid ``RUN/config.json``; the message names the file and the key."""


def _no_keys(v: object) -> str:
    """A SPEC's text, refused when it carries an API key or a URL with credentials."""
    if not isinstance(v, str):
        raise ValueError(f"expected a SPEC string, got {type(v).__name__}")
    for name in SECRET_ENV:
        secret = os.environ.get(name)
        if secret and secret in v:
            raise ValueError("a SPEC must not contain an API key; pass keys through environment variables")
    found = spec_credentials(v)
    if found:
        raise ValueError(f"a SPEC's URL must not carry credentials ({found}); pass keys through environment "
                         "variables")
    return v


def _spec(kind: type[S], parse: Callable[[str], S]) -> PlainValidator:
    """Validate a SPEC field: an instance of its type as it is, a string parsed once."""
    return PlainValidator(lambda v: v if isinstance(v, kind) else parse(_no_keys(v)))


_AS_TEXT = PlainSerializer(str, return_type=str)
SystemField = Annotated[SystemSpec, _spec(SystemSpec, SystemSpec.read), _AS_TEXT]
JudgeField = Annotated[JudgeSpec, _spec(JudgeSpec, JudgeSpec.parse), PlainSerializer(lambda s: s.text, return_type=str)]
AsrField = Annotated[ComponentSpec, _spec(ComponentSpec, lambda t: parse_spec("asr", t)), _AS_TEXT]
MosField = Annotated[ComponentSpec, _spec(ComponentSpec, lambda t: parse_spec("mos", t)), _AS_TEXT]
EmotionField = Annotated[ComponentSpec, _spec(ComponentSpec, lambda t: parse_spec("emotion", t)), _AS_TEXT]
EVALUATORS = ("asr", "mos", "emotion")  # the component SPECs of a run


class RunConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    system: SystemField = SystemSpec("offline")
    data: str = "mini"
    lang: Literal["en", "zh"] = "en"
    subsets: list[str] | None = None  # None: every subset of the language
    judge: JudgeField = JudgeSpec("local")
    judge_fit: str | None = None  # a calibrated judge's fit (--fit FIT, from `vocalbench judge-fit`)
    asr: AsrField = Field(default_factory=lambda: parse_spec("asr", "offline"))
    mos: MosField = Field(default_factory=lambda: parse_spec("mos", "offline"))
    emotion: EmotionField = Field(default_factory=lambda: parse_spec("emotion", "offline"))
    protocol: Literal["v2", "v1"] = "v2"
    limit: int | None = Field(default=None, ge=1)
    concurrency: int = Field(default_factory=lambda given: _kind_default(given, "concurrency"), ge=1)
    # single_round replies give FCL/RTF: they are generated first, at this concurrency, so queueing
    # in front of a local single-slot model does not count as latency
    latency_concurrency: int = Field(default=1, ge=1)
    judge_concurrency: int = Field(default=2, ge=1)
    executor: Literal["local", "ray"] = "local"
    ray_address: str | None = None
    # None on an imported run: no cap applied (the replies were not generated here)
    max_reply_tokens: int | None = Field(default_factory=lambda given: _kind_default(given, "max_reply_tokens"), ge=8)
    error_threshold: float = Field(default=0.5, gt=0, le=1)  # stop generating past this failed share
    error_min_count: int = Field(default=10, ge=1)  # ...once at least this many samples finished
    max_attempts: int = Field(default=4, ge=1)  # per sample: 1 try + retries (429, 5xx, timeouts, broken streams)
    request_timeout: float = Field(default=180.0, gt=0)  # seconds per attempt
    stall_timeout: float = Field(default=60.0, gt=0)  # seconds without any event from the system
    # a reply over these fails as reply_too_large (vocalbench.limits); the audio bytes limit is fixed
    max_reply_chars: int = Field(default=REPLY_TEXT_CHARS, ge=1)
    max_reply_audio_seconds: float = Field(default=REPLY_AUDIO_SECONDS, gt=0)
    warmup: bool = True  # one untimed call per system before timing
    history_mode: Literal["text-turns"] = "text-turns"  # multi-round history is sent to systems as text turns
    seed: int = 0
    quiet: bool = False

    @model_validator(mode="after")
    def _fit(self) -> RunConfig:
        """The judge carries its fit: ``--fit`` (``judge_fit``), else one its SPEC names (``local:FIT``)."""
        if self.judge.off and self.judge_fit:
            raise ValueError(f"--fit {self.judge_fit}: there is no judge to fit (--judge {self.judge.text})")
        if self.judge_fit is None:
            self.judge_fit = self.judge.fit
        elif self.judge.fit != self.judge_fit:
            self.judge = self.judge.with_fit(self.judge_fit)
        return self

    @property
    def reply_limits(self) -> ReplyLimits:
        """The limits on one reply's text and audio."""
        return ReplyLimits(text_chars=self.max_reply_chars, audio_seconds=self.max_reply_audio_seconds)

    def component(self, kind: str) -> ComponentSpec:
        """The SPEC of one of the run's evaluator components (``asr``, ``mos``, ``emotion``)."""
        spec: ComponentSpec = getattr(self, kind)
        return spec

    def updated(self, **changes: object) -> RunConfig:
        """A copy with ``changes`` (SPECs as text or parsed), validated like the flags."""
        return type(self).model_validate({**self.model_dump(), **changes})

    def save(self, run_dir: str | Path, extra: dict[str, object] | None = None) -> Path:
        body = {**self.model_dump(), **(extra or {})}
        return write_json(Path(run_dir) / "config.json", body)

    @classmethod
    def load(cls, run_dir: str | Path) -> RunConfig:
        """The run's config; a key that is neither a field nor one of :data:`RECORD_KEYS` is an error
        (:class:`ConfigError`, as are unreadable JSON and invalid values)."""
        p = Path(run_dir) / "config.json"
        if not p.exists():
            raise FileNotFoundError(f"{run_dir}: not a run folder (no config.json)")
        body = _read_body(p)
        unknown = sorted(set(body) - set(cls.model_fields) - RECORD_KEYS)
        if unknown:
            raise ConfigError(f"{p}: unknown key(s) {', '.join(unknown)} (fields: {', '.join(cls.model_fields)}; "
                              f"records: {', '.join(sorted(RECORD_KEYS))})")
        try:
            return cls.model_validate({k: v for k, v in body.items() if k in cls.model_fields})
        except ValidationError as exc:
            raise ConfigError(f"{p}: {validation_message(exc)}") from None

    @classmethod
    def from_options(cls, **given: object) -> RunConfig:
        """A config from the options given (None: not given, so the default applies, the system
        kind's for ``concurrency`` and ``max_reply_tokens``)."""
        return cls.model_validate({k: v for k, v in given.items() if v is not None})


def saved_records(run_dir: str | Path) -> dict[str, object]:
    """The :data:`RECORD_KEYS` already in ``RUN/config.json`` (kept when the config is rewritten)."""
    p = Path(run_dir) / "config.json"
    body = _read_body(p) if p.exists() else {}
    return {k: v for k, v in body.items() if k in RECORD_KEYS}


def _kind_default(given: dict[str, Any], option: str) -> int:
    """An option not given takes the default of the kind of system under test (:func:`system_defaults`)."""
    return system_defaults(str(given.get("system", "")))[option]


def _read_body(p: Path) -> dict[str, JsonValue]:
    """config.json as a dict; :class:`ConfigError` naming the file when it is not one."""
    try:
        body = json.loads(p.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{p}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{p}: malformed JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
    if not isinstance(body, dict):
        raise ConfigError(f"{p}: expected a JSON object, got {type(body).__name__}")
    return body


# What config.json records beside the fields: written by generate (versions, latency, system
# details), import (where the outputs came from) and the duplex suite (its session's turn
# detection, chunk size and protocol), kept when score rewrites the config.
RECORD_KEYS = frozenset({"versions", "latency", "system_details", "imported_from", "import_format", "duplex"})


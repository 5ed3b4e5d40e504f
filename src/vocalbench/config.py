"""The one validated run configuration that every command builds from its flags.

Saved as ``RUN/config.json`` (with package and component versions added at run time). Secrets
never enter it: API keys are read from the environment by the clients that need them.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from vocalbench.errors import InputError, validation_message
from vocalbench.files import write_json
from vocalbench.limits import REPLY_AUDIO_SECONDS, REPLY_TEXT_CHARS, ReplyLimits
from vocalbench.redact import KEY_ENV as SECRET_ENV
from vocalbench.redact import spec_credentials


class ConfigError(InputError):
    """An unreadable or invalid ``RUN/config.json``; the message names the file and the key."""


class RunConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    system: str = "offline"
    data: str = "mini"
    lang: Literal["en", "zh"] = "en"
    subsets: list[str] | None = None  # None: every subset of the language
    judge: str = "local"
    judge_fit: str | None = None  # a calibrated judge's fit (--fit FIT, from `vocalbench judge-fit`)
    asr: str = "offline"
    mos: str = "offline"
    emotion: str = "offline"
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

    @field_validator("system", "judge", "asr", "mos", "emotion")
    @classmethod
    def _no_keys(cls, v: str) -> str:
        for name in SECRET_ENV:
            secret = os.environ.get(name)
            if secret and secret in v:
                raise ValueError("a SPEC must not contain an API key; pass keys through environment variables")
        found = spec_credentials(v)
        if found:
            raise ValueError(f"a SPEC's URL must not carry credentials ({found}); pass keys through environment "
                             "variables")
        return v

    @property
    def reply_limits(self) -> ReplyLimits:
        """The limits on one reply's text and audio."""
        return ReplyLimits(text_chars=self.max_reply_chars, audio_seconds=self.max_reply_audio_seconds)

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


def _read_body(p: Path) -> dict[str, object]:
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

# Policies that depend on the kind of system under test (the one place they are decided).
LOCAL_REPLY_CAP = 64  # tokens: a CPU cascade answers the whole built-in set within minutes
NETWORK_REPLY_CAP = 1024  # tokens: no practical limit on a spoken reply
# queries a local cascade can overlap, one per stage (ASR, LLM, TTS): ``--concurrency 3``. Not the
# default: on the 2-core machines here it has not been shown faster (the stages share the cores)
LOCAL_PIPELINE = 3


def is_local_system(system: str) -> bool:
    """The local cascades (offline, cascade:...): one llama.cpp slot and the CPU."""
    return system == "offline" or system.startswith("cascade:")


def system_defaults(system: str) -> dict[str, int]:
    """The options that depend on the kind of system, the one place they are decided: samples in
    flight (1 for the local cascades: overlapping queries across their stages, ``--concurrency``
    :data:`LOCAL_PIPELINE`, gives the same replies but was not faster on a 2-core machine; 8 for
    network systems) and the reply token cap (64 for the local cascades, which keeps the built-in
    run short on a CPU; 1024 for network systems)."""
    local = is_local_system(system)
    return {"concurrency": 1 if local else 8, "max_reply_tokens": LOCAL_REPLY_CAP if local else NETWORK_REPLY_CAP}


OFF = ("none", "off")  # component SPECs that turn the component off


def is_off(spec: str | None) -> bool:
    """Whether a component SPEC turns the component off (``none`` or ``off``)."""
    return spec is not None and spec.strip() in OFF


def cache_dir() -> Path:
    """Where models, synthesised audio and evaluator results are cached (VOCALBENCH_CACHE)."""
    base = os.environ.get("VOCALBENCH_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "vocalbench"
    )
    p = Path(base)
    p.mkdir(parents=True, exist_ok=True)
    return p

"""The judge SPEC, typed: parsed once from ``--judge SPEC [--fit FIT]`` (or a run's config) into a
:class:`JudgeSpec` that every judge user reads (the scoring engine, the dry-run planner, the Ray
judge pool, judge-check, judge-fit and the summary's provenance).

SPECs: ``local`` (the embedded calibrated judge; the older ``local:FIT`` is ``local`` with a fit),
``gguf:PATH`` (any GGUF model, or a packaged one by name, on the embedded llama.cpp server),
``local-json`` (the local model writing JSON verdicts), ``openai:MODEL[@BASE_URL]``, ``paper`` (the
paper's judge), ``none`` (``off``): no judge, and plug-ins (``plugin``): the name of a
``vocalbench.judges`` entry point or ``module:attr`` naming a judge factory (docs/extending.md).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal, get_args

from vocalbench import parts
from vocalbench.config import OFF

JudgeKind = Literal["local", "gguf", "local-json", "openai", "paper", "none", "plugin"]
KINDS: tuple[str, ...] = get_args(JudgeKind)
PAPER_MODEL = "qwen-max-2025-01-25"  # Qwen2.5-Max, the paper's judge
PAPER_BASE_URL = "https://dashscope-intl.aliyuncs.com/compatible-mode/v1"
SPECS = "local, gguf:PATH, local-json, openai:MODEL[@BASE_URL], paper, none, a plug-in's NAME, module:attr"


@dataclass(frozen=True)
class JudgeSpec:
    """Which judge: its ``kind``, ``model`` (gguf: a file or packaged model; openai: the model
    name), ``endpoint`` (openai: the base URL) and ``fit`` (a fit file from ``vocalbench
    judge-fit``, or ``unfitted``, making a log-prob judge a calibrated one)."""

    kind: JudgeKind
    model: str | None = None
    endpoint: str | None = None
    fit: str | None = None

    @classmethod
    def parse(cls, text: str, fit: str | None = None) -> JudgeSpec:
        """``--judge`` (and ``--fit``) as a spec; ValueError naming the SPEC when it is not one."""
        spec = text.strip()
        head, sep, rest = spec.partition(":")
        if spec in OFF:
            if fit:
                raise ValueError(f"--fit {fit}: there is no judge to fit (--judge {spec})")
            return cls("none")
        if spec == "local" or (head == "local" and sep and rest):
            return cls("local", fit=fit or rest or None)
        if spec in ("local-json", "paper"):
            return cls("local-json" if spec == "local-json" else "paper", fit=fit)
        if head == "gguf" and rest:
            return cls("gguf", model=rest, fit=fit)
        if head == "openai" and rest:
            model, _, endpoint = rest.partition("@")
            if model:
                return cls("openai", model=model, endpoint=endpoint or None, fit=fit)
        if ("judge", spec) in parts.plugins():
            return cls("plugin", model=spec, fit=fit)
        named = parts.direct("judge", spec)  # a judge factory named as module:attr
        if named is not None:
            if named[0].problem:
                raise ValueError(f"judge SPEC '{text}' cannot be loaded: {named[0].problem}")
            return cls("plugin", model=spec, fit=fit)
        raise ValueError(f"unknown judge SPEC '{text}' (use one of: {SPECS})")

    @property
    def text(self) -> str:
        """The SPEC itself (without its fit): what ``--judge`` takes."""
        if self.kind == "gguf":
            return f"gguf:{self.model}"
        if self.kind == "openai":
            return f"openai:{self.model}" + (f"@{self.endpoint}" if self.endpoint else "")
        if self.kind == "plugin":
            return str(self.model)
        return self.kind

    @property
    def key(self) -> str:
        """SPEC and fit: what names this judge before it is built (a run remembers its id by it)."""
        return self.text + (f" --fit {self.fit}" if self.fit else "")

    def __str__(self) -> str:
        return self.key

    @property
    def off(self) -> bool:
        return self.kind == "none"

    @property
    def paper(self) -> bool:
        """The paper's judge: ``paper``, or Qwen2.5-Max named through ``openai:`` (any endpoint)."""
        return self.kind == "paper" or (self.kind == "openai" and self.model == PAPER_MODEL)

    def with_fit(self, fit: str | None) -> JudgeSpec:
        return replace(self, fit=fit)


@dataclass(frozen=True)
class JudgeState:
    """A run's judge as scoring knows it: its spec and, once built (or remembered by the run), its
    ``id``; ``id`` is None for no judge, or for one that could not be built (``unavailable``: why)."""

    spec: JudgeSpec
    id: str | None = None
    unavailable: str | None = None

    @property
    def key(self) -> str:
        """The judge's part of a judged scorer's evaluator key (and the summary's judge)."""
        if self.id is not None:
            return self.id
        return f"unavailable:{self.spec.text}" if self.unavailable is not None else "none"

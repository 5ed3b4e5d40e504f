"""Judge layer: everything that turns a reply into a verdict on a rubric.

- ``rubrics/``: the rubric texts (our own words, versioned) and the :class:`~vocalbench.judge.rubrics.record.Rubric`,
  :class:`~vocalbench.judge.rubrics.record.Evidence` and :class:`~vocalbench.judge.rubrics.record.Verdict` records;
- ``graders/``: deterministic graders that settle or inform a verdict before any model is asked;
- ``json_judge.py`` (a model writing JSON verdicts, for API judges) and ``calibrated.py`` (single-token
  verdicts mapped by a fitted rule, the local default); ``factory.py`` builds either from a judge SPEC;
- ``calibration/`` (the labelled calibration set), ``fit.py`` (``vocalbench judge-fit``) and
  ``check.py`` (``vocalbench judge-check``).

The layer sits between components (the chat clients it asks) and scoring (which asks it for
verdicts); the judge kinds register here, so ``resolve("judge", SPEC)`` finds them once this
package is imported.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from vocalbench import parts
from vocalbench.components import LLAMA_MODULES

_M = "vocalbench.judge"


def register_all(register: Callable[..., Any]) -> None:
    """Register the judge kinds (lazy: targets are import strings)."""
    register("judge", "local", f"{_M}.factory:local_judge",
             "Qwen2.5-Coder-1.5B-Instruct on a local llama.cpp server, calibrated single-token verdicts; "
             "offline default", "llm", LLAMA_MODULES)
    register("judge", "gguf", f"{_M}.factory:gguf_judge",
             "any GGUF model (gguf:PATH, or a packaged one: gguf:qwen2.5-0.5b) on its own local llama.cpp server, "
             "calibrated single-token verdicts (--fit FIT from `vocalbench judge-fit`)", "llm", LLAMA_MODULES)
    register("judge", "local-json", f"{_M}.factory:local_json_judge",
             "the same local model writing JSON verdicts like an API judge (uncalibrated; for comparison)", "llm",
             LLAMA_MODULES)
    register("judge", "openai", f"{_M}.factory:openai_judge",
             "any OpenAI-compatible chat endpoint (openai:MODEL[@BASE_URL]); key VOCALBENCH_JUDGE_API_KEY",
             None, ("openai",))
    register("judge", "paper", f"{_M}.factory:paper_judge",
             "Qwen2.5-Max (qwen-max-2025-01-25) on DashScope's compatible mode, the paper's judge", None,
             ("openai",))


register_all(parts.register)

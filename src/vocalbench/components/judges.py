"""The judge factories the parts table names (``--judge local | local-json | openai:MODEL[@URL] | paper``).

They live apart from the judge classes, so :mod:`vocalbench.components.judge` (the JSON judge) and
:mod:`vocalbench.components.calibrated_judge` (its calibrated subclass) import one way. ``lazy``
asks for a judge that starts nothing yet: the local server starts on its first request (a dry run
only renders prompts); API judges connect on a request anyway.
"""

from __future__ import annotations

from typing import Any

from vocalbench.components.calibrated_judge import CalibratedJudge, Calibration, shipped_calibration
from vocalbench.components.judge import Judge
from vocalbench.components.llm import OpenAIChat, local_chat

PAPER_MODEL = "qwen-max-2025-01-25"
PAPER_BASE_URL = "https://dashscope-intl.aliyuncs.com/compatible-mode/v1"


def local_judge(calibration: str | None = None, *, lazy: bool = False, **opts: Any) -> Judge:
    """The embedded judge: the local llama.cpp model, answering single tokens whose probabilities
    are mapped by the shipped calibration, or by the fit in ``calibration`` (``--judge local:FIT``;
    components/calibrated_judge.py, docs/judge.md)."""
    cal = Calibration.load(calibration) if calibration else shipped_calibration()
    return CalibratedJudge(local_chat(lazy=lazy), cal, **opts)


def local_json_judge(*, lazy: bool = False, **opts: Any) -> Judge:
    """The local llama.cpp model answering JSON like an API judge (uncalibrated; for comparison)."""
    return Judge(local_chat(lazy=lazy), **opts)


def openai_judge(model: str, base_url: str | None = None, *, lazy: bool = False, **opts: Any) -> Judge:
    """A judge on any OpenAI-compatible endpoint; key from VOCALBENCH_JUDGE_API_KEY or OPENAI_API_KEY."""
    timeout = opts.pop("timeout", 120.0)
    return Judge(OpenAIChat(model, base_url, timeout=timeout), **opts)


def paper_judge(*, lazy: bool = False, **opts: Any) -> Judge:
    """The paper's judge, Qwen2.5-Max, on DashScope's OpenAI-compatible mode (needs a key and network)."""
    return openai_judge(PAPER_MODEL, PAPER_BASE_URL, **opts)

"""The judge factories the parts table names (``--judge local | gguf:PATH | local-json |
openai:MODEL[@URL] | paper``, each optionally with ``--fit FIT``).

They live apart from the judge classes, so :mod:`vocalbench.judge.json_judge` (the JSON judge) and
:mod:`vocalbench.judge.calibrated` (its calibrated subclass) import one way. ``lazy``
asks for a judge that starts nothing yet: the local server starts on its first request (a dry run
only renders prompts); API judges connect on a request anyway.

``fit`` makes any judge whose endpoint returns log-probabilities a calibrated one: a path to a fit
written by ``vocalbench judge-fit``, or ``UNFITTED`` for the default rule (each family's main answer
alone), which is what ``judge-fit`` starts from.
"""

from __future__ import annotations

from typing import Any

from vocalbench.components.base import ChatLLM
from vocalbench.components.llm import OpenAIChat, local_chat
from vocalbench.judge.calibrated import CalibratedJudge, Calibration, shipped_calibration
from vocalbench.judge.json_judge import Judge

PAPER_MODEL = "qwen-max-2025-01-25"
PAPER_BASE_URL = "https://dashscope-intl.aliyuncs.com/compatible-mode/v1"
UNFITTED = "unfitted"


def calibrated(llm: ChatLLM, fit: str, **opts: Any) -> CalibratedJudge:
    """``llm`` as a calibrated judge under the fit in the file ``fit`` (or the default rule)."""
    model = llm.id.rpartition("@")[0]
    cal = Calibration(UNFITTED, model) if fit == UNFITTED else Calibration.load(fit)
    if cal.model != model:
        raise ValueError(f"{fit}: fitted for the model '{cal.model}', not '{model}' (fit this one with "
                         f"`vocalbench judge-fit`)")
    return CalibratedJudge(llm, cal, **opts)


def local_judge(calibration: str | None = None, *, fit: str | None = None, lazy: bool = False,
                **opts: Any) -> Judge:
    """The embedded judge: the local llama.cpp model, answering single tokens whose probabilities
    are mapped by the shipped calibration, or by the fit in ``fit`` (``--fit FIT``; the older
    spelling ``--judge local:FIT`` is the same; judge/calibrated.py, docs/judge.md)."""
    chosen = fit or calibration
    if chosen:
        return calibrated(local_chat(lazy=lazy), chosen, **opts)
    return CalibratedJudge(local_chat(lazy=lazy), shipped_calibration(), **opts)


def gguf_judge(model: str, *, fit: str | None = None, lazy: bool = False, **opts: Any) -> Judge:
    """Any GGUF model (a file path, or a packaged model's name such as ``qwen2.5-0.5b``) on its own
    local llama.cpp server, as a calibrated judge: under ``fit``, else the default rule."""
    from vocalbench.components.llm_server import MODELS

    llm = local_chat(model if model in MODELS else f"gguf:{model}", lazy=lazy)
    return calibrated(llm, fit or UNFITTED, **opts)


def local_json_judge(*, fit: str | None = None, lazy: bool = False, **opts: Any) -> Judge:
    """The local llama.cpp model answering JSON like an API judge (uncalibrated; for comparison)."""
    if fit:
        raise ValueError("local-json writes its verdicts itself; a fit needs a calibrated judge (local, gguf:PATH)")
    return Judge(local_chat(lazy=lazy), **opts)


def openai_judge(model: str, base_url: str | None = None, *, fit: str | None = None, lazy: bool = False,
                 **opts: Any) -> Judge:
    """A judge on any OpenAI-compatible endpoint; key from VOCALBENCH_JUDGE_API_KEY or OPENAI_API_KEY.
    With ``fit`` it answers single tokens with log-probabilities (vLLM, llama.cpp, OpenAI) mapped by
    the fit; without, it writes JSON verdicts with the official prompts."""
    timeout = opts.pop("timeout", 120.0)
    llm = OpenAIChat(model, base_url, timeout=timeout)
    return calibrated(llm, fit, **opts) if fit else Judge(llm, **opts)


def paper_judge(*, fit: str | None = None, lazy: bool = False, **opts: Any) -> Judge:
    """The paper's judge, Qwen2.5-Max, on DashScope's OpenAI-compatible mode (needs a key and network)."""
    return openai_judge(PAPER_MODEL, PAPER_BASE_URL, fit=fit, **opts)

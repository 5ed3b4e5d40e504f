"""Scoring layer: subset scorers, the engine, aggregation, the overall score and summary.json."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# What each subset measures (shown by ``vocalbench list subsets``); the metric names are those of
# summary.json (METRICS.md).
DESCRIPTIONS: dict[str, tuple[str, str]] = {
    "knowledge": ("accuracy", "reference substring of the normalised reply"),
    "chinese_knowledge": ("accuracy", "reference substring, else binary judge"),
    "foreign_knowledge": ("accuracy", "reference substring, else binary judge"),
    "general_knowledge": ("accuracy", "reference substring, else binary judge"),
    "reasoning": ("accuracy", "binary judge or 1-5 rubric > 3 (v1: rubric mean)"),
    "creativity": ("mean_score", "1-5 judge per category"),
    "single_round": ("mean_score", "1-5 judge of helpfulness (+ UTMOS, WER/PER, latency of its replies)"),
    "multi_round": ("accuracy", "binary judge given the history (v1: 1-5 rubric)"),
    "instruction_following": ("following_rate", "binary judge; paralinguistic items also need ASR/emotion/speed"),
    "emotion": ("eer", "semantic judge >= 3 and acoustic emotion rating >= 3 (v1: sum of means)"),
    "safety": ("refusal_rate", "binary judge: refused or redirected"),
    "robust": ("preserve_rate", "single-round judge under 36 conditions vs the clean baseline"),
    "robust_clean": ("mean_score", "clean baseline of robust (single-round judge)"),
    "cs_knowledge": ("accuracy", "zh/en answer hit, else judge"),
    "cs_knowledge_en": ("accuracy", "English control of cs_knowledge"),
    "cs_open_ended": ("mean_score", "two 1-5 judges: understanding and mixed-language quality"),
    "dialect": ("accuracy", "dialect-spoken knowledge (our own set); PR vs dialect_mandarin"),
    "dialect_mandarin": ("accuracy", "the same questions in Mandarin"),
}


def register_all(register: Callable[..., Any]) -> None:
    """Register every subset per language as ``subset`` entries named ``<lang>/<subset>``."""
    from vocalbench.data.official import SUBSETS

    for lang, names in SUBSETS.items():
        for name in names:
            metric, how = DESCRIPTIONS.get(name, ("", ""))
            register("subset", f"{lang}/{name}", "vocalbench.scoring.subsets:scorer_for",
                     f"{metric}: {how}" if metric else name)

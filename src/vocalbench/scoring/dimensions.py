"""Subset results -> the ``dimensions`` of ``summary.json`` (DESIGN.md), null when not run.

knowledge: en ``knowledge``; zh the mean of chinese/foreign/general_knowledge. empathy: the
emotion subset (EER in v2, the 2-10 sum in v1). code_switching / dialect: preserve rates
``min(100, acc(mixed) / acc(control) * 100)``. utmos, wer|per, rtf, fcl_ms: the acoustic and
latency rows. A dimension built from an incomplete subset is reported in ``incomplete``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from vocalbench.scoring.base import SubsetResult

ZH_KNOWLEDGE = ("chinese_knowledge", "foreign_knowledge", "general_knowledge")
DIRECT = {  # dimension: subset (or acoustic/latency row) it copies
    "reasoning": "reasoning", "creativity": "creativity", "single_round": "single_round",
    "multi_round": "multi_round", "instruction_following": "instruction_following", "empathy": "emotion",
    "safety": "safety", "robust": "robust", "utmos": "utmos", "rtf": "rtf", "fcl_ms": "fcl_ms",
}
RATIOS = {"code_switching": ("cs_knowledge", "cs_knowledge_en"), "dialect": ("dialect", "dialect_mandarin")}


def dimension_order(lang: str) -> list[str]:
    clarity = "per" if lang == "zh" else "wer"
    return ["knowledge", "reasoning", "creativity", "single_round", "multi_round", "instruction_following",
            "empathy", "safety", "robust", "utmos", clarity, "code_switching", "dialect", "rtf", "fcl_ms"]


@dataclass
class Dimensions:
    values: dict[str, float | None]
    incomplete: set[str] = field(default_factory=set)
    sources: dict[str, list[str]] = field(default_factory=dict)


def preserve_rate(mixed: float | None, control: float | None) -> float | None:
    """``min(100, mixed / control * 100)``; None when either is missing or the control is 0."""
    if mixed is None or control is None or control <= 0:
        return None
    return min(100.0, mixed / control * 100.0)


def compute(results: dict[str, SubsetResult], lang: str, digits: int = 3) -> Dimensions:
    """The dimensions dict from subset/acoustic/latency rows keyed by name."""
    clarity = "per" if lang == "zh" else "wer"
    dims = Dimensions(values={k: None for k in dimension_order(lang)})

    def take(dim: str, names: list[str], value: float | None) -> None:
        dims.values[dim] = None if value is None else round(float(value), digits)
        dims.sources[dim] = names
        if value is not None and any(not results[n].complete for n in names if n in results):
            dims.incomplete.add(dim)

    if lang == "zh":
        present = [n for n in ZH_KNOWLEDGE if n in results and results[n].value is not None]
        if present:
            take("knowledge", present, sum(results[n].value for n in present) / len(present))  # type: ignore[misc]
            if len(present) < len(ZH_KNOWLEDGE):
                dims.incomplete.add("knowledge")
    elif "knowledge" in results:
        take("knowledge", ["knowledge"], results["knowledge"].value)
    for dim, name in DIRECT.items():
        if name in results:
            take(dim, [name], results[name].value)
    if clarity in results:
        take(clarity, [clarity], results[clarity].value)
    for dim, (mixed, control) in RATIOS.items():
        if mixed in results and control in results:
            take(dim, [mixed, control], preserve_rate(results[mixed].value, results[control].value))
    return dims

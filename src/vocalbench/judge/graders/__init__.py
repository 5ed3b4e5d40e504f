"""Rules first: deterministic graders per rubric family, asked before any model.

A grader is a small pure function ``(fields, meta) -> Evidence``: ``fields`` are exactly what the
judge is shown (question, reference, reply, ...), ``meta`` what the scorer knows beside them (the
rubric id, the instruction type). It returns a settled ``verdict`` where the answer is
mechanical (an extracted final number that differs from the reference's, a repeat that covers the
whole sentence), named ``features`` otherwise (reference recall, refusal cues, ...), or neither.

Only the calibrated ``local`` judge uses them: its fitted rule for the family decides whether a
settled verdict is taken as it is (no model call) and how the features weigh beside the model's
answers (judge/calibrated.py, docs/judge.md). Judges that keep the official prompts
(``paper``, ``openai:``, ``local-json``) never see them. Graders are written and tuned on the dev
split of the calibration set only.

Families register with :func:`grader`; :func:`grade` looks one up by rubric id.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from vocalbench.judge.calibrated import family_of
from vocalbench.judge.rubrics.record import Evidence

Grader = Callable[[Mapping[str, str], Mapping[str, str]], Evidence]

_GRADERS: dict[str, tuple[str, Grader]] = {}


def grader(*families: str, version: str) -> Callable[[Grader], Grader]:
    """Register ``fn`` as the grader of these rubric families (``id@version`` goes into every
    Evidence it returns, and into the fit's version)."""

    def register(fn: Grader) -> Grader:
        for family in families:
            _GRADERS[family] = (f"{fn.__module__.rsplit('.', 1)[-1]}.{fn.__name__}@{version}", fn)
        return fn

    return register


def grade(rubric_id: str, fields: Mapping[str, str], meta: Mapping[str, str] | None = None) -> Evidence | None:
    """The evidence of the family's grader for one item, or None when the family has none."""
    entry = _GRADERS.get(family_of(rubric_id))
    if entry is None:
        return None
    gid, fn = entry
    found = fn(fields, {"rubric": rubric_id, **(meta or {})})
    return Evidence(gid, found.verdict, dict(found.features), found.note)


def graders() -> dict[str, str]:
    """``{family: grader id@version}`` of every registered grader."""
    return {family: gid for family, (gid, _) in sorted(_GRADERS.items())}


def found(verdict: float | None = None, note: str = "", **features: float) -> Evidence:
    """What a grader returns (its id is filled in by :func:`grade`)."""
    return Evidence("", verdict, {k: float(v) for k, v in features.items()}, note)


# the grader modules register their families on import
from vocalbench.judge.graders import (  # noqa: E402, F401
    answers,
    constraints,
    cues,
    names,
    refusal,
    repeat,
)

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

# the grader modules register their families on import
from vocalbench.judge.graders import answers, constraints, cues, names, refusal, repeat  # noqa: F401
from vocalbench.judge.graders.registry import Grader, current, found, grade, grader, graders

__all__ = ["Grader", "current", "found", "grade", "grader", "graders"]

"""What the judge is given and what it answers: a :class:`Rubric` (loaded from its Markdown file by
:func:`vocalbench.judge.rubrics.load`) and a :class:`Verdict`.

They are the judge layer's records: the judges, graders and scorers all speak them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from vocalbench.records import JudgeTrace


@dataclass
class Verdict:
    """A judge's answer to one rubric: ``value`` (1/0 for binary, lo..hi for scale) or ``error``
    (a short unscored reason such as ``judge_unparseable`` or ``judge_unavailable``)."""

    value: float | None
    trace: JudgeTrace | None = None
    error: str | None = None


@dataclass(frozen=True)
class Evidence:
    """What a deterministic grader found in an item before any judge is asked
    (judge/graders): a settled ``verdict`` (1/0, or a lo..hi score) that the calibrated local
    judge may return without a model call, named ``features`` its fitted rule may weigh beside
    the model's answers, and a short ``note`` saying why. Judges that keep the official prompts
    (``paper``, ``openai:``, ``local-json``) ignore it."""

    grader: str  # id@version of the grader
    verdict: float | None = None
    features: Mapping[str, float] = field(default_factory=dict)
    note: str = ""


@dataclass(frozen=True)
class Rubric:
    id: str
    version: str
    kind: Literal["scale", "binary"]
    system: str
    template: str
    lo: int = 1
    hi: int = 5
    answer: str | None = None  # the JSON answer schema shown to the judge; None: the default
    verdict_key: str = "verdict"
    labels: tuple[str, str] = ("yes", "no")
    checks: tuple[str, ...] = ()  # focused yes/no questions the calibrated local judge also asks

    @property
    def ref(self) -> str:
        return f"{self.id}@{self.version}"

    @property
    def hash(self) -> str:
        body = "\x1f".join([self.id, self.version, self.kind, self.system, self.template, str(self.lo), str(self.hi),
                            self.answer or "", self.verdict_key, "|".join(self.labels), *self.checks])
        return hashlib.sha256(body.encode()).hexdigest()[:16]

    def render(self, fields: dict[str, str]) -> list[dict[str, str]]:
        """Chat messages for these fields; a missing field is an error, not an empty string."""
        try:
            user = self.template.format(**fields)
        except KeyError as exc:
            raise KeyError(f"rubric {self.ref}: field {exc} not given") from None
        return [{"role": "system", "content": self.system}, {"role": "user", "content": user}]

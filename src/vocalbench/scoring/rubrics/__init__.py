"""Judge rubrics: this project's own text, versioned.

Each rubric is a Markdown file ``<id>.md`` in this folder with a small header::

    id: single_round
    version: 1
    kind: scale            # scale (lo..hi) or binary (yes/no)
    lo: 1
    hi: 5
    ---
    <system prompt>
    ---
    <user template with {fields}>

Changing a rubric's text changes its ``hash`` (and its version should be bumped), which is part
of every judge cache key, so old verdicts are never reused for a new rubric.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Literal

FOLDER = Path(__file__).parent


@dataclass(frozen=True)
class Rubric:
    id: str
    version: str
    kind: Literal["scale", "binary"]
    system: str
    template: str
    lo: int = 1
    hi: int = 5

    @property
    def ref(self) -> str:
        return f"{self.id}@{self.version}"

    @property
    def hash(self) -> str:
        body = "\x1f".join([self.id, self.version, self.kind, self.system, self.template, str(self.lo), str(self.hi)])
        return hashlib.sha256(body.encode()).hexdigest()[:16]

    def render(self, fields: dict[str, str]) -> list[dict[str, str]]:
        """Chat messages for these fields; a missing field is an error, not an empty string."""
        try:
            user = self.template.format(**fields)
        except KeyError as exc:
            raise KeyError(f"rubric {self.ref}: field {exc} not given") from None
        return [{"role": "system", "content": self.system}, {"role": "user", "content": user}]


@cache
def load(rubric_id: str) -> Rubric:
    path = FOLDER / f"{rubric_id}.md"
    if not path.exists():
        raise KeyError(f"no rubric '{rubric_id}' in {FOLDER}")
    text = path.read_text(encoding="utf-8")
    header, system, template = (part.strip("\n") for part in text.split("\n---\n", 2))
    meta = dict(line.split(":", 1) for line in header.splitlines() if ":" in line)
    meta = {k.strip(): v.split("#")[0].strip() for k, v in meta.items()}
    if meta.get("id") != rubric_id:
        raise ValueError(f"{path}: header id '{meta.get('id')}' does not match the file name")
    kind = meta.get("kind", "scale")
    if kind not in ("scale", "binary"):
        raise ValueError(f"{path}: kind must be scale or binary, not '{kind}'")
    return Rubric(
        id=rubric_id,
        version=meta.get("version", "1"),
        kind=kind,  # type: ignore[arg-type]
        system=system.strip(),
        template=template.strip(),
        lo=int(meta.get("lo", 1)),
        hi=int(meta.get("hi", 5)),
    )


def available() -> list[str]:
    return sorted(p.stem for p in FOLDER.glob("*.md"))

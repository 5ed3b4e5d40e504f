"""Judge rubrics: this project's own text, versioned.

Each rubric is a Markdown file ``<id>.md`` in this folder with a small header::

    id: single_round
    version: 1
    kind: scale            # scale (lo..hi) or binary (yes/no)
    lo: 1
    hi: 5
    answer: {"reply_answer": "<...>", "same": "yes" or "no"}   # optional answer schema
    verdict_key: same       # binary: the JSON key that holds the verdict (default: verdict)
    labels: yes|no          # binary: the value meaning yes, then the one meaning no
    ---
    <system prompt>
    ---
    <user template with {fields}>
    ---                     # optional: checks, one yes/no question per line
    <check question>

Checks are what the calibrated local judge (judge/calibrated.py) asks besides the
rubric's own question: a small model answers focused yes/no questions ("Is the advice
accurate?") much more reliably than a holistic 1-5 rating, and the fitted decision rule combines
the answers. Judges that write JSON verdicts ignore them.

Small judges decide binary questions much more reliably when they first extract the relevant fact
(``reply_answer``) or pick a named label (``refusal``/``compliance``) than when they write a free
reason before a yes/no, so binary rubrics may declare their own answer schema.

Changing a rubric's text changes its ``hash`` (and its version should be bumped), which is part
of every judge cache key, so old verdicts are never reused for a new rubric.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from vocalbench.judge.rubrics.record import Rubric

__all__ = ["FOLDER", "Rubric", "available", "load"]

FOLDER = Path(__file__).parent


@cache
def load(rubric_id: str) -> Rubric:
    path = FOLDER / f"{rubric_id}.md"
    if not path.exists():
        raise KeyError(f"no rubric '{rubric_id}' in {FOLDER}")
    text = path.read_text(encoding="utf-8")
    parts = [part.strip("\n") for part in text.split("\n---\n", 3)]
    if len(parts) < 3:
        raise ValueError(f"{path}: expected a header, a system prompt and a template separated by '---' lines")
    header, system, template = parts[:3]
    checks = tuple(line.strip() for line in (parts[3] if len(parts) > 3 else "").splitlines() if line.strip())
    meta = dict(line.split(":", 1) for line in header.splitlines() if ":" in line)
    meta = {k.strip(): v.split("  #")[0].strip() for k, v in meta.items()}
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
        answer=meta.get("answer") or None,
        verdict_key=meta.get("verdict_key", "verdict"),
        labels=_labels(path, meta.get("labels", "yes|no")),
        checks=checks,
    )


def _labels(path: Path, value: str) -> tuple[str, str]:
    parts = [p.strip().lower() for p in value.split("|")]
    if len(parts) != 2 or not all(parts) or parts[0] == parts[1]:
        raise ValueError(f"{path}: labels must be two different values 'YES|NO', not '{value}'")
    return parts[0], parts[1]


def available() -> list[str]:
    return sorted(p.stem for p in FOLDER.glob("*.md"))

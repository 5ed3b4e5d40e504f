"""The graders' registry: :func:`grader` registers a family's grader, :func:`grade` asks it,
:func:`graders` and :func:`current` name the registered versions (``id@version``)."""

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


def grade(rubric_id: str, fields: Mapping[str, str], meta: Mapping[str, str] | None = None, *,
          semantic: bool = True) -> Evidence | None:
    """The evidence of the family's grader for one item, or None when the family has none. With
    ``semantic`` (what the calibrated judge reads) the sentence encoder's relevance features
    (graders/semantic.py) join the grader's, and its version joins the grader's id
    (``cues.advice_cues@3+sem2``); without it (tests of a grader alone) the grader's features only."""
    entry = _GRADERS.get(family_of(rubric_id))
    if entry is None:
        return None
    gid, fn = entry
    found = fn(fields, {"rubric": rubric_id, **(meta or {})})
    feats = dict(found.features)
    if semantic:
        from vocalbench.judge.graders import semantic as sem

        feats.update(sem.features(fields))
        gid = f"{gid}+{sem.version()}"
    return Evidence(gid, found.verdict, feats, found.note)


def graders() -> dict[str, str]:
    """``{family: grader id@version}`` of every registered grader."""
    return {family: gid for family, (gid, _) in sorted(_GRADERS.items())}


def current(ref: str) -> str | None:
    """The current id@version of the grader that ``ref`` (id@any version) names, with the semantic
    features' version where ``ref`` has one; None when gone."""
    from vocalbench.judge.graders import semantic as sem

    name, _, version = ref.rpartition("@")
    gid = next((gid for gid, _ in _GRADERS.values() if gid.rpartition("@")[0] == name), None)
    return f"{gid}+{sem.version()}" if gid is not None and "+" in version else gid


def found(verdict: float | None = None, note: str = "", **features: float) -> Evidence:
    """What a grader returns (its id is filled in by :func:`grade`)."""
    return Evidence("", verdict, {k: float(v) for k, v in features.items()}, note)

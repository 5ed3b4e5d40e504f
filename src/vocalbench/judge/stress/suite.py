"""The stress suite's items, its run over a judge, and each family's figures per wording pool."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from vocalbench.judge.calibration import CalibrationItem
from vocalbench.judge.stress import transforms as tf
from vocalbench.judge.stress.bars import (
    MIN_STRESS_ITEMS,
    SAFETY_ECHO_LABEL,
    Pair,
    figure,
    good_value,
    not_applied,
    pool_verdict,
    transformations,
)
from vocalbench.judge.stress.wordings import POOLS

HIGH_SCALE = 4.0  # condensing: 1-5 replies labelled at least this
EMPATHIC = 3.0  # tone flip: empathy replies labelled at least this
DRIFT_SCALE = 3.0  # drift: 1-5 replies labelled at least this (an answer worth losing)
WORDED = ("padding", "padding_question", "echo", "drift", "parroting", "tone_flip")  # made once per pool


@dataclass(frozen=True)
class StressItem:
    """A transformed test item, the original it came from, and the wording pool of its added
    sentences (``""``: a transformation that adds none, the same in both pools)."""

    kind: str
    item: CalibrationItem
    original: CalibrationItem
    expected: float | None = None  # safety: the label the criterion gives the transformed reply
    pool: str = ""


def _with_reply(item: CalibrationItem, kind: str, reply: str, pool: str) -> CalibrationItem:
    suffix = f"~{kind}" + (f"@{pool}" if pool else "")
    return replace(item, id=f"{item.id}{suffix}", fields={**item.fields, "reply": reply})


def _other(it: CalibrationItem, fam_items: Sequence[CalibrationItem], salt: str) -> CalibrationItem | None:
    """A reply to another question of the same family and language, drawn per item."""
    others = [o for o in fam_items if o.qid != it.qid and o.lang == it.lang]
    if not others:
        return None
    return others[int(hashlib.sha256(f"{salt}{it.id}".encode()).hexdigest(), 16) % len(others)]


def _transform(kind: str, it: CalibrationItem, fam_items: Sequence[CalibrationItem], family_kind: str,
               which: str) -> tuple[str, float | None] | None:
    """(transformed reply, expected label or None) of one item, or None when it does not apply."""
    lang, reply, question = it.lang, it.fields["reply"], it.fields.get("question", "")
    reference = it.fields.get("reference", it.fields.get("answer_zh", ""))
    scale = family_kind == "scale"
    good = good_value(it.family)
    if kind == "padding":
        return tf.pad(reply, question, lang, it.id, restate=not it.family.startswith("instruction_"), which=which), None
    if kind == "padding_question":
        return tf.pad(reply, question, lang, it.id, restate=True, which=which), None
    if kind == "off_topic":
        src = _other(it, fam_items, "")
        return None if src is None else (src.fields["reply"], src.label)
    if kind == "echo":
        expected = SAFETY_ECHO_LABEL[lang] if it.family.startswith("safety_") else None
        return tf.echo(question, lang, it.id, which), expected
    if kind == "drift":
        src = _other(it, fam_items, "drift:")
        if src is None or (it.label < DRIFT_SCALE if scale else it.label != good):
            return None
        drifted = tf.drift(reply, src.fields["reply"], lang, it.id, which)
        return None if drifted is None else (drifted, None)
    if kind == "parroting":
        return (tf.parrot(reference, lang, it.id, which), None) if reference.strip() else None
    if kind == "condensing":
        if it.label < HIGH_SCALE if scale else it.label != good:
            return None
        short = tf.condense(reply, reference or question, lang)
        return None if short is None else (short, None)
    if kind == "tone_flip":
        if it.label < EMPATHIC:
            return None
        return tf.flip_tone(reply, question, it.fields.get("emotion", ""), lang, it.id, which), None
    raise ValueError(f"unknown stress transformation {kind!r}")


def stress_items(items: Sequence[CalibrationItem], kinds: Mapping[str, str], limit: int | None = None,
                 pools: Sequence[str] = POOLS) -> list[StressItem]:
    """The transformed items of labelled (test) ``items``; ``kinds``: family -> binary|scale. A
    transformation that adds wordings is made once per pool in ``pools``. ``limit``: at most that
    many per family, transformation and pool (a paid judge; the family is then a partial run)."""
    by_family: dict[str, list[CalibrationItem]] = {}
    for it in items:
        if it.fields.get("reply", "").strip():
            by_family.setdefault(it.family, []).append(it)
    out: list[StressItem] = []
    for family, fam_items in sorted(by_family.items()):
        ordered = sorted(fam_items, key=lambda i: hashlib.sha256(i.id.encode()).hexdigest())
        for kind in transformations(family, kinds[family]):
            for which in (pools if kind in WORDED else ("",)):
                made: list[StressItem] = []
                for it in ordered:
                    if limit is not None and len(made) >= limit:
                        break
                    got = _transform(kind, it, ordered, kinds[family], which or "design")
                    if got is not None:
                        made.append(StressItem(kind, _with_reply(it, kind, got[0], which), it, got[1], which))
                out += made
    return out


def full_sizes(items: Sequence[CalibrationItem], kinds: Mapping[str, str]) -> dict[str, dict[str, int]]:
    """Items per family and transformation of a full run (what a ``limit`` may cut short)."""
    out: dict[str, dict[str, int]] = {}
    for s in stress_items(items, kinds, pools=POOLS[:1]):
        fam = out.setdefault(s.original.family, {})
        fam[s.kind] = fam.get(s.kind, 0) + 1
    return out


def pair_results(stressed: Sequence[StressItem], verdict_of: Callable[[str], float | None]) -> dict[str, list[Pair]]:
    """(stress item, original verdict, transformed verdict) by family; a verdict the judge could
    not give is None (an error counts as a failure of its transformation, it is never dropped)."""
    out: dict[str, list[Pair]] = {}
    for s in stressed:
        out.setdefault(s.original.family, []).append((s, verdict_of(s.original.id), verdict_of(s.item.id)))
    return out


def family_stress(family: str, kind: str, results: Sequence[Pair], *, pools: Sequence[str] = POOLS,
                  full: Mapping[str, int] | None = None, scale: tuple[float, float] = (1.0, 5.0)) -> dict[str, Any]:
    """Every transformation's figure for one family per wording pool, and whether the family passes
    the stress bar: on the check wordings, every transformation with at least ``MIN_STRESS_ITEMS``
    items passes, and no transformation was cut short of its ``full`` size (a partial run)."""
    good = good_value(family)
    wanted = transformations(family, kind)
    by_pool: dict[str, Any] = {}
    for which in pools:
        figs = {name: figure(exp, kind, good, [r for r in results if r[0].kind == name and r[0].pool in (which, "")],
                             scale) for name, exp in wanted.items()}
        passed, why = pool_verdict(figs)
        by_pool[which] = {"passed": passed, "why": why, "transformations": figs}
    shown = "check" if "check" in by_pool else pools[0]
    cut = {name: f"{f['n']} of {full[name]}" for name, f in by_pool[shown]["transformations"].items()
           if full is not None and f["n"] < full.get(name, 0)}
    if cut:
        passed, why = False, "not validated: partial stress run (" + ", ".join(f"{k} {v}" for k, v in cut.items()) + ")"
    elif shown != "check":
        passed, why = False, "not validated: the check wordings were not run (only they validate)"
    else:
        passed, why = by_pool["check"]["passed"], "check wordings: " + by_pool["check"]["why"]
    return {"passed": passed, "why": why, "pool": shown, "partial": bool(cut),
            "errors": sum(f["errors"] for p in by_pool.values() for f in p["transformations"].values()),
            "transformations": by_pool[shown]["transformations"], "pools": by_pool,
            "applies": {name: exp.text for name, exp in wanted.items()}, "not_applied": not_applied(family)}


def _mark(f: Mapping[str, Any]) -> str:
    return "ok" if f.get("passed") else "FAIL" if f.get("passed") is False else f"n<{MIN_STRESS_ITEMS}"


def figure_text(name: str, f: Mapping[str, Any]) -> str:
    """One transformation's figure: ``padding +0.12 [0.05, 0.20] moved 4 % (140, 0 errors) ok``."""
    ci = f.get("ci95")
    moved = f" moved {f['move_rate']:.0f} %" if f.get("move_rate") is not None else ""
    value = f"{f['value']:+.2f}" if f.get("statistic") == "mean_change" else f"{f['value']:.2f}"  # a change, or a level
    return (f"{name} {value}" + (f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else "") + moved
            + f" ({f['n']}, {f.get('errors', 0)} errors) {_mark(f)}")


def stress_line(stress: Mapping[str, Any], which: str | None = None) -> str:
    """One line for a family's stress figures (of the wording pool ``which``; default: the one that
    decided), each with its interval, n and error count."""
    figs = stress.get("pools", {}).get(which, {}).get("transformations", {}) if which else stress.get(
        "transformations", {})
    return "; ".join(figure_text(name, f) for name, f in figs.items() if f.get("value") is not None)


# -- running a judge over the transformed items ---------------------------------------------------
async def run_stress(judge: Any, items: Sequence[CalibrationItem], originals: Mapping[str, float | None], *,
                     limit: int | None = None, pools: Sequence[str] = POOLS, concurrency: int = 2,
                     progress: Callable[[int], None] | None = None,
                     answers: Mapping[str, dict[str, Any]] | None = None
                     ) -> tuple[dict[str, dict[str, Any]], list[Any]]:
    """Judge the transformed versions of ``items`` as a run would (``judge_check.judge_items``) and
    return the stress figures per family, and the outcomes. ``originals``: the judge's verdicts on
    untransformed items by id (from the agreement check, so nothing is judged twice; None: an
    error); the originals of transformed items not among them are judged too."""
    from vocalbench.judge import check as judge_check
    from vocalbench.judge import rubrics

    loaded = {it.family: rubrics.load(it.rubric) for it in items}
    kinds = {fam: r.kind for fam, r in loaded.items()}
    stressed = stress_items(items, kinds, limit, pools)
    full = full_sizes(items, kinds) if limit is not None else None
    missing = list({s.original.id: s.original for s in stressed if s.original.id not in originals}.values())
    outcomes = await judge_check.judge_items(judge, [*missing, *(s.item for s in stressed)], concurrency=concurrency,
                                             progress=progress, answers=answers)
    verdicts = {**originals, **{o.item.id: o.value for o in outcomes}}
    paired = pair_results(stressed, verdicts.get)
    return {fam: family_stress(fam, kinds[fam], paired.get(fam, []), pools=pools,
                               full=None if full is None else full.get(fam, {}),
                               scale=(float(loaded[fam].lo), float(loaded[fam].hi)))
            for fam in sorted(kinds)}, outcomes


def stress_count(items: Sequence[CalibrationItem], judged: Mapping[str, object], limit: int | None = None,
                 pools: Sequence[str] = POOLS) -> int:
    """How many items ``run_stress`` judges for these items (for a progress bar), given the
    ``judged`` originals."""
    from vocalbench.judge import rubrics

    stressed = stress_items(items, {it.family: rubrics.load(it.rubric).kind for it in items}, limit, pools)
    return len(stressed) + len({s.original.id for s in stressed if s.original.id not in judged})

"""Fit a calibrated judge's decision rules on labelled dev items (``vocalbench judge-fit``).

Per rubric family, on the dev split only:

1. **Settling.** The family's grader (judge/graders) settles some items by itself. Its settled
   verdicts are taken as they are (no model call) when, on the dev items it settles, they agree
   with the labels at least ``SETTLE_MIN`` of the time (binary families) and it settles at least
   ``MIN_SETTLED`` of them.
2. **The rule** for the remaining items: a combination of named features (the model's main answer
   ``main``, its checks ``check1``.., and the grader's ``g:*`` features; calibrated_judge.features).
   Binary: an L2-regularised logistic regression, then the threshold on its score with the highest
   Cohen's kappa on the dev items (ties: the smallest bias, then the threshold nearest the middle).
   Scale: a ridge regression.
3. **Which features** a rule uses is chosen by cross-validation on the dev items (folds by
   question, so replies to one question never sit on both sides): the model's main answer alone;
   the model's answers; the grader's features alone; the main answer with the grader's features;
   everything. The set with the lowest cross-validated loss wins, except that a cheaper set
   (without the model, then with fewer model questions; the grader's features cost nothing, so
   of two sets asking the model the same questions the one with the lower loss) within one
   standard error of it is preferred: a rule that needs no model call is faster and depends on
   nothing but text.

The fit reads raw model answers (kept in each verdict's trace, shipped for the local judge beside
the fit) and recomputes the grader's evidence, so it never calls the model itself.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import date

import numpy as np

from vocalbench.judge import rubrics
from vocalbench.judge.calibrated import (
    GRADER_PREFIX,
    MAIN,
    Calibration,
    RuleFit,
    features,
    is_model_feature,
)
from vocalbench.judge.calibration import CalibrationItem
from vocalbench.judge.graders.semantic import AGAINST as sem_against
from vocalbench.judge.graders.semantic import GATE_ONLY as sem_gate_only
from vocalbench.judge.rubrics.record import Evidence
from vocalbench.stats import cohen_kappa

L2 = 1.0  # regularisation of the weights (features are probabilities, shares or 1-5 scores)
SETTLE_MIN = 0.9  # agreement of a grader's settled verdicts with the dev labels for them to be taken
MIN_SETTLED = 10
FOLDS = 5


@dataclass(frozen=True)
class DevItem:
    """One labelled dev item as the fit sees it."""

    family: str
    kind: str  # binary | scale
    label: float
    raw: dict[str, object] | None  # the model's answers (None: not asked)
    evidence: Evidence | None
    cluster: str  # the question (folds never split one)
    designed: str = ""  # a designed reply's transformation (fit.designed), "" for a labelled one


def fit_threshold(scores: Sequence[float], labels: Sequence[float]) -> float:
    """The threshold t (verdict yes iff score >= t) that maximises kappa on these items."""
    values = sorted(set(scores))
    mid = (values[0] + values[-1]) / 2
    candidates = [(a + b) / 2 for a, b in zip(values, values[1:])] + [values[0], values[-1] + 1e-9]
    n = len(labels)

    def key(t: float) -> tuple[float, float, float]:
        judged = [1.0 if s >= t else 0.0 for s in scores]
        kappa = cohen_kappa(labels, judged) if len(set(judged)) > 1 or len(set(labels)) > 1 else 0.0
        kappa = 0.0 if kappa != kappa else kappa
        bias = abs(sum(judged) - sum(labels)) / n
        return (round(kappa, 9), -bias, -abs(t - mid))

    best: float = max(candidates, key=key)
    return round(best, 6)


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float = L2, steps: int = 50) -> tuple[np.ndarray, float]:
    """(weights, bias) of an L2-regularised logistic regression, by Newton's method."""
    n, d = x.shape
    a = np.hstack([x, np.ones((n, 1))])
    w = np.zeros(d + 1)
    reg = np.diag([l2] * d + [0.0])
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-np.clip(a @ w, -60, 60)))
        grad = a.T @ (p - y) + reg @ w
        hess = a.T @ (a * (p * (1 - p))[:, None]) + reg + 1e-9 * np.eye(d + 1)
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.max(np.abs(step)) < 1e-8:
            break
    return w[:d], float(w[d])


def fit_ridge(x: np.ndarray, y: np.ndarray, l2: float = L2) -> tuple[np.ndarray, float]:
    """(weights, bias) of a ridge regression (the intercept is not penalised)."""
    n, d = x.shape
    a = np.hstack([x, np.ones((n, 1))])
    reg = np.diag([l2] * d + [0.0])
    w = np.linalg.solve(a.T @ a + reg, a.T @ y)
    return w[:d], float(w[d])


def _matrix(rows: Sequence[Mapping[str, float]], names: Sequence[str]) -> np.ndarray:
    return np.asarray([[r.get(n, 0.0) for n in names] for r in rows], dtype=float).reshape(len(rows), len(names))


# grader features that only ever speak against a reply (a contradiction of the reference, a
# misread feeling, a refusal to answer, the question restated): a fit may weigh them down or not
# at all, never up
AGAINST = frozenset(GRADER_PREFIX + n for n in ("contradicts", "misreads", "dismissive", "off_task", "hedges",
                                                "hedge", "asks_back", "declines", "refuses", "failed", *sem_against))
# features that only ever speak for a reply (it takes up the question, recalls the reference, is
# about what was asked): a fit may weigh them up or not at all, never down
FOR = frozenset(GRADER_PREFIX + n for n in ("topic", "answer_recall", "ref_recall", "key_recall", "answer_match",
                                            "number_match", "char_recall", "word_recall", "all_passed", "coverage",
                                            "premise", "mirrors", "opens_warm", "empathy", "imagery", "form",
                                            "sem_rel_q", "sem_answer", "sem_rel_ref"))


def fit_rule(kind: str, rows: Sequence[Mapping[str, float]], labels: Sequence[float], names: Sequence[str]
             ) -> tuple[dict[str, float], float, float]:
    """(weights by name, bias, threshold) of the rule over the features ``names``; a feature in
    ``AGAINST`` that comes out with a positive weight, or in ``FOR`` with a negative one, is left
    out and the rule fitted again."""
    weights, bias, threshold = _fit_rule(kind, rows, labels, names)
    wrong = [n for n, w in weights.items() if (n in AGAINST and w > 0) or (n in FOR and w < 0)]
    if wrong:
        kept = [n for n in names if n not in wrong]
        return fit_rule(kind, rows, labels, kept) if kept else ({}, bias, threshold)
    return weights, bias, threshold


def _fit_rule(kind: str, rows: Sequence[Mapping[str, float]], labels: Sequence[float], names: Sequence[str]
              ) -> tuple[dict[str, float], float, float]:
    x, y = _matrix(rows, names), np.asarray(labels, dtype=float)
    if kind == "binary":
        if len(set(labels)) < 2:
            return {}, (1.0 if labels and labels[0] == 1.0 else -1.0), 0.0
        w, b = fit_logistic(x, y)
        threshold = fit_threshold(list(x @ w + b), list(y))
    else:
        w, b = fit_ridge(x, y)
        threshold = 0.5
    return {n: round(float(v), 6) for n, v in zip(names, w)}, round(b, 6), round(threshold, 6)


def _loss(kind: str, z: float, threshold: float, label: float) -> float:
    if kind == "binary":
        return float((z >= threshold) != bool(label))
    return (min(5.0, max(1.0, z)) - label) ** 2


def cross_validated(kind: str, rows: Sequence[Mapping[str, float]], labels: Sequence[float], names: Sequence[str],
                    clusters: Sequence[str]) -> tuple[float, float]:
    """(mean loss, its standard error) of fitting on ``names`` in ``FOLDS`` folds by cluster."""
    fold_of = {c: int(hashlib.sha256(c.encode()).hexdigest(), 16) % FOLDS for c in sorted(set(clusters))}
    losses: list[float] = []
    for k in range(FOLDS):
        train = [i for i, c in enumerate(clusters) if fold_of[c] != k]
        held = [i for i, c in enumerate(clusters) if fold_of[c] == k]
        if not held or not train:
            continue
        weights, bias, threshold = fit_rule(kind, [rows[i] for i in train], [labels[i] for i in train], names)
        for i in held:
            z = bias + sum(w * rows[i].get(n, 0.0) for n, w in weights.items())
            losses.append(_loss(kind, z, threshold, labels[i]))
    if not losses:
        return float("inf"), 0.0
    arr = np.asarray(losses)
    return float(arr.mean()), float(arr.std(ddof=1) / np.sqrt(len(arr))) if len(arr) > 1 else 0.0


def candidate_sets(names: Sequence[str]) -> list[tuple[str, list[str]]]:
    """Feature sets to choose from, cheapest first (no model; the main answer; more questions)."""
    grader = [n for n in names if not is_model_feature(n)]
    model = [n for n in names if is_model_feature(n)]
    out: list[tuple[str, list[str]]] = []
    if grader:
        out.append(("grader", grader))
    if MAIN in model:
        out.append(("main", [MAIN]))
        if grader:
            out.append(("main+grader", [MAIN, *grader]))
    if len(model) > 1:
        out.append(("model", model))
        if grader:
            out.append(("all", [*model, *grader]))
    return out


def settles(items: Sequence[DevItem]) -> tuple[bool, int, float | None]:
    """(take the grader's settled verdicts, how many dev items it settles, their agreement)."""
    settled = [it for it in items if it.evidence is not None and it.evidence.verdict is not None]
    if not settled:
        return False, 0, None
    agree = sum(float(it.evidence.verdict) == it.label for it in settled) / len(settled)  # type: ignore[union-attr,arg-type]
    ok = items[0].kind == "binary" and len(settled) >= MIN_SETTLED and agree >= SETTLE_MIN
    return ok, len(settled), round(agree, 4)


# designed replies that answer nothing: the gate learns them apart from every other reply
GATED = ("off_topic", "echo", "drift")
# features the gate does not read: the grader's settled verdict (decided before any rule), and the
# whole reply's cosine with the question, which pleasantries around an answer dilute (the gate
# reads the answering sentences, ``sem_answer``, instead)
NOT_GATING = frozenset({GRADER_PREFIX + "settled", GRADER_PREFIX + "sem_rel_q"})


# features only the gate weighs: they say a reply answers nothing only beside the others (a reply
# that restates the question before answering it restates it too)
GATE_ONLY = frozenset(GRADER_PREFIX + n for n in sem_gate_only)


def fit_gate(kind: str, items: Sequence[DevItem]) -> tuple[dict[str, float], float, dict[str, object]]:
    """(weights, bias, record) of the gate: a logistic regression of "answers nothing" (the designed
    off-topic, echoed and drifting replies) against every other reply, on the grader's and the
    semantic features (never the model's: it was not asked about designed replies). Signs are
    those of a verdict turned around: a feature that speaks for a reply may only lower the
    gate, one that speaks against it only raise it."""
    rows = [features(None, it.evidence) for it in items]
    names = sorted({n for r in rows for n in r if not is_model_feature(n) and n not in NOT_GATING})
    y = [1.0 if it.designed in GATED else 0.0 for it in items]
    for _ in range(len(names) + 1):
        x = _matrix(rows, names)
        w, b = fit_logistic(x, np.asarray(y))
        weights = dict(zip(names, (float(v) for v in w)))
        wrong = [n for n, v in weights.items() if (n in AGAINST and v < 0) or (n in FOR and v > 0)]
        if not wrong:
            break
        names = [n for n in names if n not in wrong]
    p = 1.0 / (1.0 + np.exp(-np.clip(_matrix(rows, names) @ np.asarray([weights[n] for n in names]) + b, -60, 60)))
    hit = [(pi >= 0.5) == bool(yi) for pi, yi in zip(p, y)]
    record: dict[str, object] = {"gate_items": int(sum(y)), "gate_accuracy": round(float(np.mean(hit)), 4),
                                 "gate_natural_gated": round(float(np.mean(
                                     [pi >= 0.5 for pi, it in zip(p, items) if not it.designed])), 4)}
    return {n: round(v, 6) for n, v in weights.items() if n in names and v != 0.0}, round(b, 6), record


def fit_family(items: Sequence[DevItem]) -> tuple[RuleFit, dict[str, object]]:
    """The family's rule and a record of how it was chosen (settling, the gate, the losses of every
    set). Designed replies that answer nothing train the gate (safety has none: its criterion
    labels such replies by what they give); the rule is fitted on every other reply."""
    kind = items[0].kind
    gate: dict[str, float] = {}
    gate_bias, gate_record = 0.0, dict[str, object]()
    if any(it.designed in GATED for it in items) and not items[0].family.startswith("safety_"):
        gate, gate_bias, gate_record = fit_gate(kind, items)
        items = [it for it in items if it.designed not in GATED]
    settle, n_settled, agreement = settles(items)
    rest = [it for it in items if not (settle and it.evidence is not None and it.evidence.verdict is not None)]
    grader_id = next((it.evidence.grader for it in items if it.evidence is not None), "")
    rows = [features(it.raw, it.evidence) for it in rest]
    labels = [it.label for it in rest]
    clusters = [it.cluster for it in rest]
    with_model = [r for r, it in zip(rows, rest) if it.raw is not None]
    names = sorted({n for r in rows for n in r if n not in GATE_ONLY}, key=lambda n: (n.startswith(GRADER_PREFIX), n))
    if len(with_model) < len(rows):  # the model was not asked for every item: grader features only
        names = [n for n in names if not is_model_feature(n)]
    record: dict[str, object] = {"settle": settle, "settled_dev": n_settled, "settled_agreement": agreement,
                                 "rest_dev": len(rest), **gate_record}
    gate_value = 1.0 if kind == "scale" else 0.0
    if kind == "binary" and rest and len(set(labels)) < 2:
        # the unsettled dev items are all one class: a constant is no rule (it would decide them
        # unread); the model answers them, read as p_yes >= 0.5 (no answers are needed to fit that)
        rule = RuleFit("binary", weights={MAIN: 1.0}, settle=settle, n_dev=len(items), grader=grader_id, gate=gate,
                       gate_bias=gate_bias, gate_value=gate_value)
        return rule, {**record, "features": "main (the unsettled dev items are all one class)"}
    if not rest or not names:
        rule = RuleFit(kind, weights={} if settle else {MAIN: 1.0}, settle=settle, n_dev=len(items),  # type: ignore[arg-type]
                       grader=grader_id, gate=gate, gate_bias=gate_bias, gate_value=gate_value)
        return rule, {**record, "features": "none"}
    scored = [(name, cols, *cross_validated(kind, rows, labels, cols, clusters))
              for name, cols in candidate_sets(names)]
    best = min(scored, key=lambda s: s[2])
    # the cheapest within one standard error of the best, cost being the model questions asked (the
    # grader's features cost nothing): among sets of one cost, the lowest loss
    near = [s for s in scored if s[2] <= best[2] + best[3]]
    chosen = min(near, key=lambda s: (sum(is_model_feature(n) for n in s[1]), s[2]))
    weights, bias, threshold = fit_rule(kind, rows, labels, chosen[1])
    record.update(features=chosen[0], cv={s[0]: {"loss": round(s[2], 4), "se": round(s[3], 4)} for s in scored})
    rule = RuleFit(kind, weights={n: w for n, w in weights.items() if w != 0.0}, bias=bias,  # type: ignore[arg-type]
                   threshold=threshold, settle=settle, n_dev=len(items), grader=grader_id, gate=gate,
                       gate_bias=gate_bias, gate_value=gate_value)
    return rule, record


def fit_rules(model: str, items: Sequence[DevItem]) -> tuple[Calibration, dict[str, dict[str, object]]]:
    """A calibration for ``model`` fitted on these dev items, and how each family's rule was chosen."""
    by_family: dict[str, list[DevItem]] = {}
    for it in items:
        by_family.setdefault(it.family, []).append(it)
    families: dict[str, RuleFit] = {}
    records: dict[str, dict[str, object]] = {}
    for fam, fam_items in sorted(by_family.items()):
        families[fam], records[fam] = fit_family(fam_items)
    body = json.dumps({k: {**vars(v), "weights": dict(v.weights)} for k, v in families.items()}, sort_keys=True)
    rubric_hashes = "".join(sorted(rubrics.load(r).hash for r in rubrics.available()))
    digest = hashlib.sha256((model + body + rubric_hashes).encode()).hexdigest()[:6]
    cal = Calibration(version=f"cal-{digest}", model=model, families=families,
                      fitted_on=f"{len(items)} dev items of the calibration set, {date.today().isoformat()}")
    return cal, records


# families whose fit does not learn from designed replies (below): binary reasoning's open items go
# to the model, and a designed reply has no recorded answer of it
NOT_AUGMENTED = ("reasoning_binary_",)
DESIGNED_SHARE = 0.2  # designed replies per transformation, as a share of the family's dev items


def designed(items: Sequence[CalibrationItem]) -> list[CalibrationItem]:
    """Dev replies transformed by the stress suite with its **design** wordings only (the check
    wordings are never seen by a fit), labelled by construction, at most ``DESIGNED_SHARE`` of a
    family's dev items per transformation (drawn by item id):

    - padding, padding with the question, condensing: the original's label (nothing was added
      or taken away that the criterion reads);
    - another question's reply, an echo of the question: the scale's lowest value or "no"; for
      safety the label its criterion gives them (the swapped reply's own; an echo per language);
    - drift (one own sentence, then another question's reply): at most 2 on a 1-5 scale, "no" for binary;
    - tone flip: one point below the original, and at most 2 on a 1-5 scale (the empathy rubrics
      put a dismissive or ill-fitting tone at 2).

    Not parroting: the reference's words around a wrong answer differ from a right answer only in
    whether they agree with the reference, which neither the graders nor the encoder can read (the
    model checks' job); as training data it would only teach the rule to distrust recall.

    A natural labelled set has few such replies, so without them no fit could learn that a fluent
    reply about something else, or the question restated, is not an answer. They keep their
    question's cluster, so cross-validation folds never split them from it."""
    from vocalbench.judge.stress import stress_items

    dev = [it for it in items if it.split == "dev" and not it.family.startswith(NOT_AUGMENTED)]
    kinds = {it.family: rubrics.load(it.rubric).kind for it in dev}
    per_family: dict[str, int] = {}
    for it in dev:
        per_family[it.family] = per_family.get(it.family, 0) + 1
    made = stress_items(dev, kinds, pools=("design",))
    made.sort(key=lambda s: hashlib.sha256(s.item.id.encode()).hexdigest())
    taken: dict[tuple[str, str], int] = {}
    out: list[CalibrationItem] = []
    for s in made:
        fam, orig = s.original.family, s.original
        key = (fam, s.kind)
        if taken.get(key, 0) >= max(1, int(DESIGNED_SHARE * per_family[fam])):
            continue
        rubric = rubrics.load(orig.rubric)
        lo = float(rubric.lo) if rubric.kind == "scale" else 0.0
        if s.kind in ("padding", "padding_question", "condensing"):
            label = orig.label
        elif s.kind in ("off_topic", "echo"):
            label = s.expected if s.expected is not None and fam.startswith("safety_") else lo
        elif s.kind == "drift":
            label = min(orig.label, 2.0) if rubric.kind == "scale" else 0.0
        elif s.kind == "tone_flip":
            label = max(lo, min(orig.label - 1.0, 2.0))
        else:
            continue
        taken[key] = taken.get(key, 0) + 1
        out.append(replace(s.item, label=label, source="designed", reason=f"design-pool {s.kind}"))
    return out


def dev_items(items: Sequence[CalibrationItem], answers: Mapping[str, dict[str, object]],
              augment: bool = True) -> list[DevItem]:
    """The fit's view of labelled items: the grader's evidence (semantic features included) and
    the model's recorded answer; with ``augment``, also the replies of :func:`designed`."""
    from vocalbench.judge import graders

    extra = designed(items) if augment else []
    return [DevItem(it.family, rubrics.load(it.rubric).kind, it.label, answers.get(it.id),
                    graders.grade(it.rubric, it.fields, it.meta), f"{it.lang}/{it.qid}",
                    it.id.split("~", 1)[1].split("@")[0] if it.source == "designed" else "")
            for it in [*items, *extra]]


def settling_families(dev: Sequence[CalibrationItem]) -> set[str]:
    """The families whose grader's settled verdicts pass the bar on these dev items."""
    by_family: dict[str, list[DevItem]] = {}
    for d in dev_items(dev, {}):
        by_family.setdefault(d.family, []).append(d)
    return {fam for fam, its in by_family.items() if settles(its)[0]}


def needing_the_model(items: Sequence[CalibrationItem], dev: Sequence[CalibrationItem]) -> list[CalibrationItem]:
    """The items a fit (or a check) needs the model's answer for: all but those a settling grader
    settles (such items never reach the model)."""
    settling = settling_families(dev)
    out = []
    for it, d in zip(items, dev_items(items, {})):
        if not (it.family in settling and d.evidence is not None and d.evidence.verdict is not None):
            out.append(it)
    return out

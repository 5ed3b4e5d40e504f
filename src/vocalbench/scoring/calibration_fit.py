"""Fit a calibrated judge's decision rules on labelled dev items (``judge-check --fit``).

The inputs of a rule are the item's features (the main answer's p_yes or expected score, then
each check's p_yes; ``calibrated_judge.features``). Binary families: an L2-regularised logistic
regression of the label on the features, then the threshold on its score with the highest Cohen's
kappa on the dev items (ties: the smallest bias, then the threshold nearest the middle). Scale
families: a ridge regression of the label on the features. Which features a rule uses, the main
answer alone or all of them, is chosen per family by leave-one-out on the dev items: with a few
dozen labels, the checks help some families and make others overfit. The fit reads the raw answers kept in
each verdict's trace, so it never calls the model itself. A family with fewer than ``MIN_DEV``
labelled dev items takes the rule of the same rubric in the other language (the checks ask the
same questions), recorded as the rule's ``source``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from datetime import date

import numpy as np

from vocalbench.components.calibrated_judge import Calibration, RuleFit, features
from vocalbench.scoring import rubrics
from vocalbench.scoring.judge_check import Outcome, cohen_kappa

L2 = 1.0  # regularisation of the weights (features are probabilities or 1-5 scores)
MIN_DEV = 8  # a family with fewer labelled dev items borrows the rule of its other-language sibling


def fit_threshold(scores: Sequence[float], labels: Sequence[float]) -> float:
    """The threshold t (verdict yes iff score >= t) that maximises kappa on these items."""
    values = sorted(set(scores))
    mid = (values[0] + values[-1]) / 2
    candidates = [(a + b) / 2 for a, b in zip(values, values[1:])] + [values[0], values[-1] + 1e-9]
    n = len(labels)

    def key(t: float) -> tuple[float, float, float]:
        judged = [1.0 if s >= t else 0.0 for s in scores]
        kappa = cohen_kappa(labels, judged) or 0.0
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


def _fit_subset(kind: str, x: np.ndarray, y: np.ndarray, cols: list[int], n_features: int, n_dev: int) -> RuleFit:
    """The rule fitted on the feature columns ``cols`` (the other weights are 0)."""
    sub = x[:, cols]
    if kind == "binary":
        w, b = fit_logistic(sub, y)
        scores = list(sub @ w + b)
        threshold = fit_threshold(scores, list(y))
    else:
        w, b = fit_ridge(sub, y)
        threshold = 0.5
    weights = [0.0] * n_features
    for c, v in zip(cols, w):
        weights[c] = round(float(v), 6)
    return RuleFit(kind, weights=tuple(weights), bias=round(b, 6), threshold=round(threshold, 6),  # type: ignore[arg-type]
                   n_dev=n_dev)


def _loo_loss(kind: str, x: np.ndarray, y: np.ndarray, cols: list[int]) -> float:
    """Leave-one-out loss of fitting on ``cols``: disagreements (binary) or squared error (scale)."""
    n, d = x.shape
    loss = 0.0
    for k in range(n):
        keep = np.arange(n) != k
        if kind == "binary" and len(set(y[keep])) < 2:
            return float("inf")
        rule = _fit_subset(kind, x[keep], y[keep], cols, d, n - 1)
        z = rule.score(list(x[k]))
        if kind == "binary":
            loss += float((z >= rule.threshold) != bool(y[k]))
        else:
            loss += (min(5.0, max(1.0, z)) - float(y[k])) ** 2
    return loss


def fit_family(kind: str, feats: list[list[float]], labels: list[float]) -> RuleFit:
    """The family's rule: the main answer alone, or all features, whichever predicts the dev labels
    better in leave-one-out (ties: the main answer alone, the simpler rule)."""
    x, y = np.asarray(feats, dtype=float), np.asarray(labels, dtype=float)
    if kind == "binary" and len(set(labels)) < 2:  # one class only: nothing to fit, keep the default rule
        return RuleFit("binary", n_dev=len(labels))
    d = x.shape[1]
    candidates = [[0]] + ([list(range(d))] if d > 1 else [])
    losses = [_loo_loss(kind, x, y, cols) for cols in candidates]
    best = candidates[int(np.argmin(losses))]
    return _fit_subset(kind, x, y, best, d, len(labels))


def _sibling(family: str) -> str:
    """The same rubric family in the other language (``creativity_zh`` -> ``creativity_en``)."""
    if family.endswith("_zh"):
        return family[:-3] + "_en"
    if family.endswith("_en"):
        return family[:-3] + "_zh"
    return family


def fit_rules(base: Calibration, outcomes: Sequence[Outcome]) -> Calibration:
    """A new calibration for ``base.model`` fitted on these judged dev items."""
    by_family: dict[str, tuple[str, list[list[float]], list[float]]] = {}
    for o in outcomes:
        if o.value is None:
            continue
        kind = rubrics.load(o.item.rubric).kind
        entry = by_family.setdefault(o.item.family, (kind, [], []))
        entry[1].append(features(json.loads(o.raw)))
        entry[2].append(o.item.label)
    families = {fam: fit_family(kind, feats, labels) for fam, (kind, feats, labels) in sorted(by_family.items())}
    for fam, (_, _, labels) in by_family.items():
        sibling = _sibling(fam)
        if len(labels) < MIN_DEV and sibling in by_family and len(by_family[sibling][2]) >= MIN_DEV:
            rule = families[sibling]
            families[fam] = RuleFit(rule.kind, rule.weights, rule.bias, rule.threshold, rule.n_dev, source=sibling)
    body = json.dumps({k: vars(v) for k, v in families.items()}, sort_keys=True)
    rubric_hashes = "".join(sorted(rubrics.load(r).hash for r in rubrics.available()))
    digest = hashlib.sha256((body + rubric_hashes).encode()).hexdigest()[:6]
    n = sum(len(v[2]) for v in by_family.values())
    return Calibration(version=f"cal-{digest}", model=base.model, families=families,
                       fitted_on=f"{n} dev items of the calibration set, {date.today().isoformat()}")

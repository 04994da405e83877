"""Fitting a workspace's calibration on its reviewed examples, by grouped cross-validation (plain Python).

The judge is run once over the examples as shipped (``prepare``): the pipeline's offline methods
give each example its verdict (the "before"), the judge's support logit and, through the judge's
linear-stacker hook (``Judge.stack_inputs`` / ``stacker_head``), the stacker's input rows. A fit
(``fit_params``) then refits, on the training examples only:

1. the stacker: a logistic regression on the same standardised inputs, classes balanced, with an
   L2 pull toward the shipped weights (``CALIBRATION_STACKER_L2``), so a few dozen examples can move
   it only where they agree;
2. the Platt scaling (a, b) of its logit, on logits the stacker gave examples it was not fitted on
   (an inner grouped split), with Platt's smoothed targets and a pull toward (1, 0);
3. the decision threshold: the calibrated confidence, in ``CALIBRATION_THRESHOLD_RANGE``, that
   maximises 2-class balanced accuracy against the reviewers on the training examples (ties: the
   one nearest the threshold in force).

``cross_validate`` fits on all folds but one and labels the held-out fold with the pipeline's own
rule (``scoring.label_claim``: the numeric and structural overrides still apply), so every "after"
figure of an example comes from parameters that never saw its answer. The "before" figures are the
shipped judge's, which never saw any. ``decide`` keeps a candidate only when it wins by the stated
margins (``audit/constants/``).
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field, replace

import numpy as np

from audit import constants
from audit.constants import Thresholds
from audit.evaluation.bench_eval import balanced_accuracy, expected_calibration_error
from audit.pipeline import scoring
from audit.pipeline.calibration import Calibration
from audit.pipeline.entailment_model import LinearHead
from audit.pipeline.judges import Judge, JudgePair

SUPPORTED, REFUTED, NEI = scoring.SUPPORTED, scoring.REFUTED, scoring.NEI


class CalibrationError(Exception):
    """The examples or the judge cannot be calibrated (one sentence says why)."""


@dataclass
class Examples:
    """Reviewed examples as plain values: the wording, the evidence, the reviewer's label, the group."""

    ids: list[int]
    claims: list[str]
    evidence: list[list[dict]]
    labels: list[str]  # the reviewers' labels
    groups: list[str]  # no group straddles a fold (the answer)

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def supported(self) -> np.ndarray:
        return np.array([lab == SUPPORTED for lab in self.labels], dtype=bool)


@dataclass
class Prepared:
    """The shipped judge's view of the examples, computed once."""

    examples: Examples
    thresholds: Thresholds  # the workspace's thresholds without a calibration
    judge: Judge
    verdicts: list  # the pipeline's ClaimVerdict of each example, shipped judge
    logit: np.ndarray  # the shipped support logit (nan: no evidence, no logit)
    blocked: (
        np.ndarray
    )  # a check (numbers, structure, conflict) keeps it from SUPPORTED whatever its confidence
    X: np.ndarray | None = None  # the stacker's inputs (judges with the hook)
    names: list[str] = field(default_factory=list)
    head: LinearHead | None = None  # the shipped stacker head

    @property
    def usable(self) -> np.ndarray:
        return ~np.isnan(self.logit)


@dataclass(frozen=True)
class Params:
    a: float
    b: float
    threshold: float
    head: LinearHead | None = None


def _entailment_result(verdict):
    return next((m for m in verdict.methods if m.method == "entailment"), None)


def prepare(examples: Examples, thresholds: Thresholds, judge: Judge, progress=None) -> Prepared:
    """Run the judge as shipped over the examples: verdicts, logits, blocks and stacker inputs."""
    from audit.pipeline.audit import verify_claims
    from audit.pipeline.methods import verify_context
    from audit.pipeline.methods.entailment import EntailmentMethod

    plain = replace(thresholds, calibration=None)
    verdicts = verify_claims(
        [(c, ev) for c, ev in zip(examples.claims, examples.evidence)],
        thresholds=plain,
        overrides={"entailment": EntailmentMethod(judge=judge)},
        progress=progress,
    )
    logit = np.full(len(examples), np.nan)
    for i, v in enumerate(verdicts):
        result = _entailment_result(v)
        z = (result.details or {}).get("logit") if result is not None and v.evidence else None
        if isinstance(z, (int, float)) and math.isfinite(z):
            logit[i] = float(z)
    if not np.isfinite(logit).any():
        raise CalibrationError(
            f"the {judge.name} judge gives no support logit for these examples; nothing to calibrate"
        )
    blocked = np.array([_blocked(v, plain) for v in verdicts], dtype=bool)
    prep = Prepared(examples, plain, judge, verdicts, logit, blocked)
    head = judge.stacker_head(plain.verification_depth)
    if head is not None:
        rows = np.flatnonzero(prep.usable)
        pairs = [JudgePair(examples.claims[i], _texts(examples.evidence[i])) for i in rows]
        X_rows, names = judge.stack_inputs(pairs, verify_context(plain))
        X = np.zeros((len(examples), X_rows.shape[1]))
        X[rows] = X_rows
        prep.X, prep.names, prep.head = X, names, head
    return prep


def _texts(evidence: list[dict]) -> list[str]:
    return [str(e.get("text") or "") for e in evidence if str(e.get("text") or "").strip()]


def _relabel(verdict, thresholds: Thresholds, confidence: float, threshold: float):
    """The pipeline's label of ``verdict`` had the judge said ``confidence`` and SUPPORTED needed ``threshold``."""
    results = {m.method: m for m in verdict.methods}
    ent = results.get("entailment")
    if ent is not None:
        results["entailment"] = replace(ent, score=confidence)
    t = replace(thresholds, audit_score_threshold=threshold)
    return scoring.label_claim(verdict.claim, verdict.evidence, results, t)


def _blocked(verdict, thresholds: Thresholds) -> bool:
    """True when a check other than the judge keeps the claim from SUPPORTED at any confidence."""
    if not verdict.evidence:
        return True
    return _relabel(verdict, thresholds, 1.0, 0.5).label != SUPPORTED


# --- fitting ----------------------------------------------------------------------------------


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(x, -40, 40)))


def _penalised_loss(design, target, weight, prior, pull, theta) -> float:
    eta = design @ theta
    loss = weight * (np.logaddexp(0.0, eta) - target * eta)
    return float(loss.sum() + 0.5 * np.sum(pull * (theta - prior) ** 2))


def _newton(design: np.ndarray, target: np.ndarray, weight: np.ndarray, prior: np.ndarray, pull: np.ndarray):
    """Minimise sum w * logloss(target, design @ theta) + 1/2 * sum pull * (theta - prior)^2.

    Newton steps halved until the objective falls (it is convex, so this converges from the prior).
    """
    theta = prior.astype(np.float64).copy()
    loss = _penalised_loss(design, target, weight, prior, pull, theta)
    for _ in range(100):
        p = _sigmoid(design @ theta)
        grad = design.T @ (weight * (p - target)) + pull * (theta - prior)
        hess = (design * (weight * p * (1 - p))[:, None]).T @ design + np.diag(pull)
        step = np.linalg.solve(hess + 1e-9 * np.eye(len(theta)), grad)
        for _ in range(30):
            candidate = theta - step
            new_loss = _penalised_loss(design, target, weight, prior, pull, candidate)
            if new_loss <= loss:
                break
            step = step / 2.0
        else:
            break
        theta, improvement, loss = candidate, loss - new_loss, new_loss
        if improvement < 1e-10 * max(1.0, abs(loss)):
            break
    return theta


def fit_head(X: np.ndarray, y: np.ndarray, shipped: LinearHead, l2: float) -> LinearHead:
    """The stacker head refitted on (X, y), classes balanced, pulled toward ``shipped`` (standardised inputs)."""
    Z = (np.asarray(X, dtype=np.float64) - shipped.mean) / shipped.scale
    design = np.hstack([Z, np.ones((len(Z), 1))])
    pos = y.sum()
    weight = np.where(y, len(y) / (2.0 * max(pos, 1)), len(y) / (2.0 * max(len(y) - pos, 1)))
    prior = np.append(shipped.coef, shipped.intercept)
    pull = np.full(len(prior), l2)
    pull[-1] = l2 / 10.0  # the intercept moves more freely: the workspace's mix of claims differs
    theta = _newton(design, y.astype(np.float64), weight, prior, pull)
    return LinearHead(shipped.mean, shipped.scale, theta[:-1], float(theta[-1]))


def fit_platt(
    z: np.ndarray, y: np.ndarray, l2: float = constants.CALIBRATION_PLATT_L2
) -> tuple[float, float]:
    """Platt scaling (a, b) of logits ``z`` to the labels ``y``, Platt's smoothed targets, pulled toward (1, 0)."""
    pos = y.sum()
    target = np.where(y, (pos + 1.0) / (pos + 2.0), 1.0 / (len(y) - pos + 2.0))
    design = np.stack([z, np.ones_like(z)], axis=1)
    a, b = _newton(design, target, np.ones(len(z)), np.array([1.0, 0.0]), np.array([l2, l2]))
    return float(a), float(b)


def _bacc2(y: np.ndarray, pred: np.ndarray) -> float:
    """2-class balanced accuracy of boolean predictions against boolean labels (classes present only)."""
    recalls = [float((pred[y == c] == c).mean()) for c in (True, False) if (y == c).any()]
    return float(np.mean(recalls)) if recalls else 0.0


def threshold_grid() -> np.ndarray:
    low, high = constants.CALIBRATION_THRESHOLD_RANGE
    return np.round(np.arange(low, high + 1e-9, constants.CALIBRATION_THRESHOLD_STEP), 6)


def best_threshold(p: np.ndarray, y: np.ndarray, blocked: np.ndarray, current: float) -> float:
    """The threshold of the grid with the best 2-class bAcc of ``p >= t`` (and not blocked); ties: nearest ``current``."""
    grid = threshold_grid()
    scores = np.array([_bacc2(y, (p >= t) & ~blocked) for t in grid])
    best = scores.max()
    candidates = grid[np.isclose(scores, best)]
    return float(candidates[np.argmin(np.abs(candidates - current))])


def fold_of(groups: list[str], k: int) -> np.ndarray:
    """Fold index of each example: its group's, groups dealt round-robin in the order of their hashes."""
    order = sorted(set(groups), key=lambda g: hashlib.sha256(g.encode()).hexdigest())
    index = {g: n % k for n, g in enumerate(order)}
    return np.array([index[g] for g in groups], dtype=int)


def _logits(prep: Prepared, head: LinearHead | None, rows: np.ndarray) -> np.ndarray:
    if head is None or prep.X is None:
        return prep.logit[rows]
    return head.logit(prep.X[rows])


def fit_params(prep: Prepared, train: np.ndarray) -> Params:
    """Fit the stacker, the Platt scaling and the threshold on the examples ``train`` (indices)."""
    y = prep.examples.supported
    rows = train[prep.usable[train]]
    if len(rows) == 0 or y[rows].all() or not y[rows].any():
        raise CalibrationError(
            "the training examples need claims reviewers found SUPPORTED and claims they did not"
        )
    head = None
    inner_z = prep.logit[rows]
    if prep.head is not None:
        head = fit_head(prep.X[rows], y[rows], prep.head, constants.CALIBRATION_STACKER_L2)
        # the Platt scaling reads logits of examples the stacker was not fitted on
        groups = [prep.examples.groups[i] for i in rows]
        inner = fold_of(groups, min(3, len(set(groups))))
        inner_z = np.zeros(len(rows))
        for k in np.unique(inner):
            fit_rows, held = rows[inner != k], inner == k
            if len(fit_rows) and y[fit_rows].any() and not y[fit_rows].all():
                inner_z[held] = fit_head(
                    prep.X[fit_rows], y[fit_rows], prep.head, constants.CALIBRATION_STACKER_L2
                ).logit(prep.X[rows[held]])
            else:
                inner_z[held] = head.logit(prep.X[rows[held]])
    a, b = fit_platt(inner_z, y[rows])
    p = np.zeros(len(train))
    p[prep.usable[train]] = _sigmoid(a * inner_z + b)
    threshold = best_threshold(
        p, y[train], prep.blocked[train] | ~prep.usable[train], prep.thresholds.audit_score_threshold
    )
    return Params(a, b, threshold, head)


def predict(prep: Prepared, params: Params | None, rows: np.ndarray) -> tuple[list[str], np.ndarray]:
    """(labels, confidences) of the examples ``rows`` under ``params`` (None: the shipped judge)."""
    if params is None:
        return [prep.verdicts[i].label for i in rows], np.array([prep.verdicts[i].confidence for i in rows])
    z = _logits(prep, params.head, rows)
    labels, conf = [], np.zeros(len(rows))
    for n, i in enumerate(rows):
        verdict = prep.verdicts[i]
        if not prep.usable[i]:
            labels.append(verdict.label)
            conf[n] = verdict.confidence
            continue
        v = _relabel(verdict, prep.thresholds, float(_sigmoid(params.a * z[n] + params.b)), params.threshold)
        labels.append(v.label)
        conf[n] = v.confidence
    return labels, conf


# --- figures ----------------------------------------------------------------------------------


def figures(labels_true: list[str], labels: list[str], conf: np.ndarray, low_confidence: float) -> dict:
    """bAcc (2- and 3-class), ECE of the confidence, agreement, and the cases the intake would open."""
    y = np.array([lab == SUPPORTED for lab in labels_true])
    pred = np.array([lab == SUPPORTED for lab in labels])
    opened = np.array(
        [lab == REFUTED or (lab == NEI and c < low_confidence) for lab, c in zip(labels, conf)], dtype=bool
    )
    return {
        "n": len(labels),
        "bacc": round(_bacc2(y, pred), 4),
        "bacc3": round(balanced_accuracy(labels_true, labels), 4),
        "ece": round(expected_calibration_error(y.astype(int), conf, constants.CALIBRATION_ECE_BINS), 4),
        "agreement": round(float(np.mean([a == b for a, b in zip(labels_true, labels)])), 4)
        if labels
        else 0.0,
        "cases": int(opened.sum()),
        "cases_on_supported": int((opened & y).sum()),  # opened although the reviewers found it SUPPORTED
        "false_supported": int((pred & ~y).sum()),  # said SUPPORTED where the reviewers did not
    }


@dataclass
class Outcome:
    """What a cross-validated calibration run found and what it decided."""

    params: Params | None  # fitted on every example (None when declined)
    metrics: dict
    kept: bool
    reason: str


def cross_validate(prep: Prepared, folds: int = constants.CALIBRATION_FOLDS) -> dict:
    """Out-of-fold figures of the fitting procedure against the shipped judge, per fold and pooled."""
    ex = prep.examples
    k = max(2, min(folds, len(set(ex.groups))))
    fold = fold_of(ex.groups, k)
    n = len(ex)
    before_labels, before_conf = predict(prep, None, np.arange(n))
    after_labels: list[str | None] = [None] * n
    after_conf = np.zeros(n)
    per_fold = []
    low = prep.thresholds.low_confidence_threshold
    for f in range(k):
        test, train = np.flatnonzero(fold == f), np.flatnonzero(fold != f)
        params = fit_params(prep, train)
        labels, conf = predict(prep, params, test)
        for i, lab, c in zip(test, labels, conf):
            after_labels[i], after_conf[i] = lab, c
        truth = [ex.labels[i] for i in test]
        per_fold.append(
            {
                "fold": f + 1,
                "n": len(test),
                "threshold": params.threshold,
                "before": figures(truth, [before_labels[i] for i in test], before_conf[test], low),
                "after": figures(truth, labels, conf, low),
            }
        )
    before = figures(ex.labels, before_labels, before_conf, low)
    after = figures(ex.labels, after_labels, after_conf, low)
    y = ex.supported
    low_gain = _bootstrap_low(
        y,
        np.array([lab == SUPPORTED for lab in before_labels]),
        np.array([lab == SUPPORTED for lab in after_labels]),
        ex.groups,
    )
    return {
        "n": n,
        "groups": len(set(ex.groups)),
        "folds": k,
        "before": before,
        "after": after,
        "gain_bacc": round(after["bacc"] - before["bacc"], 4),
        "gain_ece": round(before["ece"] - after["ece"], 4),
        "bootstrap_low": round(low_gain, 4),
        "per_fold": per_fold,
        # each example's label and confidence from parameters that never saw its answer
        "oof_labels": after_labels,
        "oof_confidence": [float(c) for c in after_conf],
    }


def _bootstrap_low(y: np.ndarray, before: np.ndarray, after: np.ndarray, groups: list[str]) -> float:
    """The lower end of the paired bootstrap interval (over groups) of the 2-class bAcc gain."""
    names = sorted(set(groups))
    members = {g: [] for g in names}
    for i, g in enumerate(groups):
        members[g].append(i)
    index = [np.array(members[g]) for g in names]
    rng = np.random.default_rng(0)  # the same examples give the same decision
    gains = []
    for _ in range(constants.CALIBRATION_BOOTSTRAP_ROUNDS):
        rows = np.concatenate([index[j] for j in rng.integers(0, len(names), len(names))])
        gains.append(_bacc2(y[rows], after[rows]) - _bacc2(y[rows], before[rows]))
    return float(np.quantile(gains, (1.0 - constants.CALIBRATION_BOOTSTRAP_CONFIDENCE) / 2.0))


def decide(metrics: dict) -> tuple[bool, str]:
    """Keep the candidate only when it wins out of fold by the stated margins (``audit/constants/``)."""
    gain, ece_loss, low = metrics["gain_bacc"], -metrics["gain_ece"], metrics["bootstrap_low"]
    if gain < constants.CALIBRATION_MIN_BACC_GAIN:
        return False, (
            f"held-out 2-class bAcc {metrics['before']['bacc']:.3f} -> {metrics['after']['bacc']:.3f}: "
            f"a gain of {gain:+.3f}, below the margin of {constants.CALIBRATION_MIN_BACC_GAIN:.3f}"
        )
    if low <= 0:
        return False, (
            f"held-out bAcc gain {gain:+.3f}, but its {constants.CALIBRATION_BOOTSTRAP_CONFIDENCE:.0%} bootstrap "
            f"interval reaches {low:+.3f}: not shown to be better"
        )
    if ece_loss > constants.CALIBRATION_MAX_ECE_LOSS:
        return False, (
            f"held-out ECE {metrics['before']['ece']:.3f} -> {metrics['after']['ece']:.3f}: worse by more than "
            f"{constants.CALIBRATION_MAX_ECE_LOSS:.3f}"
        )
    return True, (
        f"held-out 2-class bAcc {metrics['before']['bacc']:.3f} -> {metrics['after']['bacc']:.3f} "
        f"({gain:+.3f}, bootstrap low {low:+.3f}), ECE {metrics['before']['ece']:.3f} -> "
        f"{metrics['after']['ece']:.3f}"
    )


def calibrate(prep: Prepared, *, version: int, folds: int = constants.CALIBRATION_FOLDS) -> Outcome:
    """Cross-validate the fitting procedure, decide, and when kept fit it on every example."""
    metrics = cross_validate(prep, folds)
    metrics.pop("oof_labels"), metrics.pop("oof_confidence")
    kept, reason = decide(metrics)
    params = fit_params(prep, np.arange(len(prep.examples))) if kept else None
    if params is not None:
        metrics["params"] = {"a": params.a, "b": params.b, "threshold": params.threshold}
    return Outcome(params, metrics, kept, reason)


def as_calibration(prep: Prepared, params: Params, version: int) -> Calibration:
    """The runtime ``Calibration`` of fitted ``params`` (for the judge and depth ``prep`` ran)."""
    stacker = None
    if params.head is not None:
        h = params.head
        stacker = {
            "mean": [float(x) for x in h.mean],
            "scale": [float(x) for x in h.scale],
            "coef": [round(float(x), 8) for x in h.coef],
            "intercept": round(float(h.intercept), 8),
            "names": list(prep.names),
        }
    return Calibration(
        version=version,
        judge=prep.judge.name,
        judge_version=prep.judge.version,
        depth=prep.thresholds.verification_depth,
        threshold=round(params.threshold, 4),
        a=round(params.a, 6),
        b=round(params.b, 6),
        stacker=stacker,
    )

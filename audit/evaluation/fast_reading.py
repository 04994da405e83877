"""The fast depth's reading, measured and fitted on DEV (``python manage.py fit_nli --fast-head``, ``nli_fit.fast_head``).

At the fast depth the NLI judge reads fewer evidence texts per claim than at the full depth
(``NLI_FAST_SENTENCES`` sentences and ``NLI_FAST_WINDOWS`` two-sentence windows against
``NLI_SENTENCES`` and ``NLI_WINDOWS``), and its support head (``NLIStacker.fast``) reads the words-only
``FAST_FEATURES`` beside that reading. This module:

1. computes both inputs exactly as the fast depth computes them at request time: the features words
   only (``featurize`` without the encoder) and the cross-encoder's reading of the DEV claims and of the
   stacker's generated rows, once under the reading given as ``before`` and once under the fast reading;
2. fits the fast head on each, out of fold (grouped 5-fold CV over the README group keys, the generated
   rows in every training fold, as ``nli_fit.fit_stacker`` fits it), and prints how each ranks (the
   AUROC of P(supported) with its interval resampled over answers, and the paired change), and what each
   catches at the same review load (the catch rate at a macro false-alarm rate of at most
   ``RANKING_FALSE_ALARM``) and at the judge's decision point, which the fast depth shares;
3. verifies the contrast suite (``contrast.py``) at the fast depth under each reading, each with a fast
   head fitted on its own reading (every DEV claim and the generated rows), and prints each one's
   accuracy per family and the claims each gets right that the other does not: what a cheaper reading
   lets through, which DEV's ranking alone did not show;
4. with ``write``, refits the fast head and its Platt calibration on every DEV claim under the fast
   reading and writes them into the shipped ``stacker.json``; the full depth's heads, calibration and
   decision point are left as they are.

Nothing here reads the held-out part of the benchmark.
"""

from __future__ import annotations

import copy
import hashlib
from dataclasses import dataclass

import numpy as np

from audit.constants import RANKING_FALSE_ALARM
from audit.evaluation.bench_data import claim_evidence_texts, group_key
from audit.evaluation.catch_rate import bootstrap_report, format_report, paired_difference
from audit.evaluation.entailment_fit import C_SUPPORT, N_FOLDS, fit_head, stacker_weights
from audit.evaluation.learned_fit import platt
from audit.evaluation.ranking import (
    auroc_report,
    catch_at_false_alarm,
    format_ranking,
    paired_auroc_difference,
)
from audit.pipeline.features import FAST_FEATURES, FEATURE_NAMES, featurize
from audit.pipeline.nli_judge import candidate_texts, nli_features, text_coverage

Reading = tuple[int, int]  # (sentences, two-sentence windows) read per claim


@dataclass(frozen=True)
class FastRows:
    """The fast head's inputs (``FAST_FEATURES`` then ``NLI_FEATURE_NAMES``) of the DEV claims and of
    the generated rows, under one reading."""

    reading: Reading
    dev: np.ndarray
    extra: np.ndarray
    pairs_per_claim: float


def read_pairs(pairs: list[tuple[str, str]], model, desc: str) -> dict[tuple[str, str], np.ndarray]:
    """The cross-encoder's probabilities of each distinct (text, claim) pair, read in batches of 512
    with a progress bar."""
    from tqdm import tqdm

    probs: dict[tuple[str, str], np.ndarray] = {}
    bar = tqdm(total=len(pairs), desc=desc, unit="pair", disable=None)
    for start in range(0, len(pairs), 512):
        chunk = pairs[start : start + 512]
        probs.update(zip(chunk, model.probabilities(chunk)))
        bar.update(len(chunk))
    bar.close()
    return probs


def fast_inputs(
    records: list[dict], extra_rows: list[dict], model, idf: dict, readings: list[Reading], log=print
) -> list[FastRows]:
    """The fast head's inputs of ``records`` and ``extra_rows`` under each of ``readings``: the features
    computed words only, the cross-encoder run once over the union of the texts the readings read."""
    rows = records + extra_rows
    X, prepared = featurize([(r["claim"], claim_evidence_texts(r)) for r in rows], None, idf)
    X = X[:, [FEATURE_NAMES.index(n) for n in FAST_FEATURES]]
    texts = {rd: [candidate_texts(p, sentences=rd[0], windows=rd[1]) for p in prepared] for rd in readings}
    flat = list(
        dict.fromkeys((t, p.claim) for ts in texts.values() for p, tt in zip(prepared, ts) for t in tt)
    )
    probs = read_pairs(flat, model, "read DEV and generated claims (cross-encoder)")
    out = []
    for rd in readings:
        N = np.stack(
            [
                nli_features(np.array([probs[(t, p.claim)] for t in ts]).reshape(-1, 3), text_coverage(p, ts))
                for p, ts in zip(prepared, texts[rd])
            ]
        )
        XN = np.concatenate([X, N], axis=1)
        per_claim = float(np.mean([len(ts) for ts in texts[rd][: len(records)]]))
        out.append(FastRows(rd, XN[: len(records)], XN[len(records) :], per_claim))
        log(f"reading {rd[0]} sentence(s) + {rd[1]} window(s): {per_claim:.2f} texts per DEV claim")
    return out


def fit_fast_head(records: list[dict], X: np.ndarray, extra_rows: list[dict], extra_X: np.ndarray):
    """The fast support head fitted as ``nli_fit._heads`` fits it: the generated rows beside these."""
    rows = records + extra_rows
    y = np.array([r["label"] == "SUPPORTED" for r in rows], dtype=int)
    return fit_head(np.concatenate([X, extra_X]), y, C_SUPPORT, stacker_weights(rows, y))


def out_of_fold(
    records: list[dict], X: np.ndarray, extra_rows: list[dict], extra_X: np.ndarray
) -> np.ndarray:
    """The fast head's out-of-fold support logit of every row of ``X`` (``records``; grouped folds)."""
    from sklearn.model_selection import GroupKFold

    groups = np.array([group_key(r) for r in records])
    z = np.zeros(len(records))
    for train, test in GroupKFold(n_splits=N_FOLDS).split(X, groups=groups):
        head = fit_fast_head([records[i] for i in train], X[train], extra_rows, extra_X)
        z[test] = head.logit(X[test])
    return z


def calibrated_out_of_fold(records: list[dict], rows: FastRows, extra_rows: list[dict]) -> np.ndarray:
    """Out-of-fold calibrated P(supported): each outer fold's head is Platt-scaled on its own inner
    out-of-fold logits, as the shipped head is."""
    from sklearn.model_selection import GroupKFold

    groups = np.array([group_key(r) for r in records])
    y = np.array([r["label"] == "SUPPORTED" for r in records], dtype=int)
    p = np.zeros(len(records))
    for train, test in GroupKFold(n_splits=N_FOLDS).split(rows.dev, groups=groups):
        inner = [records[i] for i in train]
        a, b = platt(out_of_fold(inner, rows.dev[train], extra_rows, rows.extra), y[train])
        head = fit_fast_head(inner, rows.dev[train], extra_rows, rows.extra)
        p[test] = 1.0 / (1.0 + np.exp(-(a * head.logit(rows.dev[test]) + b)))
    return p


def describe(records: list[dict], p: np.ndarray, name: str, cut: float) -> str:
    """How one out-of-fold P(supported) of the claims ranks and catches, with intervals over answers:
    the AUROC, the catch rate at one review load, and the labels at ``cut``."""
    datasets = [r["dataset"] for r in records]
    gold = np.array([r["label"] == "SUPPORTED" for r in records])
    groups = np.array([group_key(r) for r in records])
    ranking = format_ranking(
        auroc_report(datasets, gold, p, groups),
        catch_at_false_alarm(datasets, gold, p, groups),
        RANKING_FALSE_ALARM,
        title=f"\n{name}: AUROC of P(supported) (out of fold), and the catch rate at one review load",
    )
    labels = format_report(
        bootstrap_report(datasets, gold, p >= cut, groups),
        title=f"{name}: SUPPORTED at the decision point P >= {cut:.2f}",
    )
    return f"{ranking}\n{labels}"


def compare(
    records: list[dict], before: np.ndarray, after: np.ndarray, names: tuple[str, str], cut: float
) -> str:
    """How two out-of-fold P(supported) of the same claims rank and catch, with paired intervals:
    the AUROC, the catch rate at one review load, and the labels at ``cut`` (the judge's decision point,
    which the fast depth shares with the full one)."""
    datasets = [r["dataset"] for r in records]
    gold = np.array([r["label"] == "SUPPORTED" for r in records])
    groups = np.array([group_key(r) for r in records])
    lines = [describe(records, p, name, cut) for name, p in zip(names, (before, after))]
    diff = paired_auroc_difference(datasets, gold, before, after, groups)["MACRO"]
    lines.append(
        f"\npaired change of the macro AUROC ({names[1]} - {names[0]}): {100 * diff[0]:+.1f} "
        f"[{100 * diff[1]:+.1f}, {100 * diff[2]:+.1f}]"
    )
    change = paired_difference(datasets, gold, before >= cut, after >= cut, groups)
    lines.append(
        f"paired change at the decision point {cut:.2f}: "
        + "; ".join(
            f"{k} {100 * v[0]:+.1f} [{100 * v[1]:+.1f}, {100 * v[2]:+.1f}]" for k, v in change.items()
        )
    )
    return "\n".join(lines)


def ship_fast_head(stacker, records: list[dict], extra_rows: list[dict], rows: FastRows) -> None:
    """Put into ``stacker`` the fast head fitted on ``rows`` (every DEV claim and the generated rows)
    with its Platt calibration on out-of-fold logits, and a version naming both the full depth's
    artefact (``full_version``, kept across refits) and this head."""
    y = np.array([r["label"] == "SUPPORTED" for r in records], dtype=int)
    stacker.fast = fit_fast_head(records, rows.dev, extra_rows, rows.extra)
    stacker.fast_calibration = platt(out_of_fold(records, rows.dev, extra_rows, rows.extra), y)
    base = str(stacker.meta.get("full_version") or stacker.version)
    digest = hashlib.sha256(rows.dev.tobytes() + rows.extra.tobytes()).hexdigest()[:12]
    stacker.meta = {
        **stacker.meta,
        "full_version": base,
        "version": hashlib.sha256(f"{base}+fast:{digest}".encode()).hexdigest()[:12],
        "fast_reading": list(rows.reading),
    }


def contrast_by_reading(
    stacker,
    records: list[dict],
    extra_rows: list[dict],
    readings: dict[str, FastRows],
    model,
    suite: list[dict] | None = None,
) -> str:
    """The contrast suite at the fast depth under each named reading, its fast head fitted on that
    reading (``ship_fast_head`` into a copy of ``stacker``): the table per family and, for two
    readings, the claims each gets right that the other does not."""
    from audit.evaluation.contrast import format_columns, load_suite, suite_labels
    from audit.pipeline.nli_judge import NLIJudge

    suite = load_suite() if suite is None else suite
    labels: dict[str, list[str]] = {}
    for name, rows in readings.items():
        fitted = copy.copy(stacker)
        ship_fast_head(fitted, records, extra_rows, rows)
        judge = NLIJudge(stacker=fitted, model=model, fast_reading=rows.reading)
        labels[name] = suite_labels(judge, rows=suite, depth="fast")
    return format_columns(suite, labels)

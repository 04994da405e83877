"""The logic of the pipeline's management commands (plain Python; the commands are thin wrappers).

verify_claims / verify_answers / evaluate / bench — interfaces in docs/ARCHITECTURE.md. Progress bars go to
stderr; a bad input line gets one line naming its number and the reason, the other lines are
still processed, and the command then exits non-zero.
"""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from audit.evaluation.bench_data import BadLine, claim_evidence_texts, group_key, read_jsonl
from audit.evaluation.operating_points_fit import write_operating_points
from audit.evaluation.progress import text_bar

if TYPE_CHECKING:
    from audit.pipeline.encodings import FileStore
    from audit.pipeline.retrieval import KnowledgeBase

CLAIM_FIELDS = ("id", "claim", "evidence")
ANSWER_FIELDS = ("id", "answer", "contexts")
EXIT_BAD_INPUT = 1
EXIT_NO_INPUT = 2


class InputError(Exception):
    """The input as a whole cannot be used (missing or unreadable file)."""


def claim_evidence(rec: dict) -> list[dict]:
    """The evidence of a benchmark claim as passages: id, title (a page title or URL: one source) and text."""
    return [
        {
            "id": str(e.get("id") or f"e{i}"),
            "title": str(e.get("title") or ""),
            "text": str(e.get("text") or ""),
        }
        if isinstance(e, dict)
        else {"id": f"e{i}", "text": str(e)}
        for i, e in enumerate(rec.get("evidence") or [])
        if (e.get("text") if isinstance(e, dict) else e)
    ]


def _read(path: str, required: tuple[str, ...], err) -> tuple[list[tuple[int, dict]], int]:
    if not Path(path).is_file():
        raise InputError(f"{path}: no such file")
    try:
        good, bad = read_jsonl(path, required)
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read ({exc})") from exc
    valid = []
    for no, rec in good:
        problem = _check_record(rec, required)
        if problem:
            bad.append(BadLine(no, problem))
        else:
            valid.append((no, rec))
    for b in sorted(bad, key=lambda b: b.line_no):
        print(f"{path}: line {b.line_no}: {b.reason}; skipped", file=err)
    return valid, len(bad)


def _check_record(rec: dict, required: tuple[str, ...]) -> str | None:
    if "claim" in required and not isinstance(rec.get("claim"), str):
        return "field 'claim' must be a string"
    if "evidence" in required and not isinstance(rec.get("evidence"), list):
        return "field 'evidence' must be a list"
    if "answer" in required and not isinstance(rec.get("answer"), str):
        return "field 'answer' must be a string"
    if "contexts" in required and not isinstance(rec.get("contexts"), list):
        return "field 'contexts' must be a list"
    return None


def _run_lines(command: str, input_path: str, output_path: str, fields: tuple[str, ...], err, write) -> int:
    """Read the good lines, call ``write(rows, out_file, bar)``; report bad lines; the exit code."""
    try:
        rows, n_bad = _read(input_path, fields, err)
    except InputError as exc:
        print(f"{command}: {exc}", file=err)
        return EXIT_NO_INPUT
    bar = text_bar(len(rows), command, err)
    with open(output_path, "w", encoding="utf-8") as out:
        write(rows, out, bar)
    bar.update(len(rows) - bar.n)
    bar.close()
    if n_bad:
        print(f"{command}: {n_bad} bad line(s) skipped; {len(rows)} processed", file=err)
    return EXIT_BAD_INPUT if n_bad else 0


def run_verify_claims(input_path: str, output_path: str, *, err=None, overrides=None) -> int:
    from audit.pipeline.audit import verify_claims

    def write(rows, out, bar):
        verdicts = verify_claims(
            [(rec["claim"], claim_evidence(rec)) for _, rec in rows], progress=bar.update, overrides=overrides
        )
        for (_, rec), v in zip(rows, verdicts):
            out.write(
                json.dumps({"id": rec["id"], "label": v.label, "confidence": round(v.confidence, 4)}) + "\n"
            )

    return _run_lines("verify_claims", input_path, output_path, CLAIM_FIELDS, err or sys.stderr, write)


def answer_output(rec: dict, result) -> dict:
    return {
        "id": rec["id"],
        "faithfulness": round(result.metrics["faithfulness"], 4),
        "audit_score": round(result.audit_score, 4),
        "flagged": bool(result.flagged),
        "claims": [
            {"text": v.claim.text, "label": v.label, "confidence": round(v.confidence, 4)}
            for v in result.claims
        ],
    }


def run_verify_answers(input_path: str, output_path: str, *, err=None, overrides=None) -> int:
    from audit.pipeline.audit import audit_answer

    def write(rows, out, bar):
        for _, rec in rows:
            result = audit_answer(
                rec.get("query") or "",
                rec["answer"],
                rec["contexts"],
                domain=rec.get("domain") or "",
                overrides=overrides,
            )
            out.write(json.dumps(answer_output(rec, result)) + "\n")
            bar.update(1)

    return _run_lines("verify_answers", input_path, output_path, ANSWER_FIELDS, err or sys.stderr, write)


# --- evaluate -----------------------------------------------------------------------------
README_KEYWORD_2CLASS_BACC = {  # shared/benchmarks/README.md, "Reference baselines", DEV
    "attrbench-hagrid": 77.4,
    "attrbench-stanford-gensearch": 71.0,
    "expertqa": 56.8,
    "scifact": 60.0,
    "scifact-rationale": 51.2,
    "summedits-scitldr": 47.6,
    "wice": 66.8,
}


# long: the evaluate command's report, printed in the order it reads; its parts share the folds and the judge
def run_evaluate(
    claims_path: str,
    answers_path: str,
    *,
    out=None,
    err=None,
    n_folds: int = 5,
    with_answers: bool = True,
    judge: str | None = None,
    llm=None,
    limit: int | None = None,
    threshold: float | None = None,
    strictness: str | None = None,
    operating_points_out: Path | None = None,
) -> int:
    """Grouped-CV evaluation of the whole offline pipeline on the DEV files.

    ``judge`` names the entailment judge (``constants.JUDGES``; default the workspace default). A
    judge fitted on DEV (features) is refitted on 4/5 of the groups and every claim (and answer)
    is verified by the fold model that never saw its group, through the same ``verify_claims`` /
    ``audit_answer`` code the commands use; no figure comes from rows a model was fitted on. A judge
    not fitted on DEV (cross-encoder) verifies every claim as it is; judge ``llm`` is the nli judge
    (refitted per fold) with ``llm``'s isolated judge weighed in, and prints whether the LLM helps. ``limit`` keeps every
    n-th group's claims only (a quicker, smaller comparison; the same claims for every judge).
    ``threshold`` replaces ``audit_score_threshold`` (the confidence SUPPORTED needs); ``strictness``
    sets the operating point (``constants.STRICTNESS_POINTS``). Every run prints the catch rate,
    false-alarm rate and 2-class bAcc per dataset and macro with 95 % intervals resampled over answers
    (``catch_rate.py``); ``operating_points_out`` also writes the operating points computed from the
    out-of-fold P(supported) there (judges that give a calibrated P only).
    """
    from sklearn.model_selection import GroupKFold

    from audit.constants import AUDIT_SCORE_THRESHOLD, JUDGE, JUDGES
    from audit.evaluation import bench_eval as be
    from audit.evaluation.entailment_fit import (
        CachedEmbed,
        compute_idf,
        dev_features,
        fit,
        load_dev,
        refute_rows,
    )
    from audit.pipeline.audit import audit_answer, verify_claims
    from audit.pipeline.features import FEATURE_NAMES
    from audit.pipeline.judges import get_judge
    from audit.pipeline.methods.entailment import EntailmentMethod

    out, err = out or sys.stdout, err or sys.stderr
    judge = judge or JUDGE
    if judge not in JUDGES:
        print(f"evaluate: unknown judge {judge!r}; use one of {', '.join(JUDGES)}", file=err)
        return EXIT_NO_INPUT
    for path in (claims_path, answers_path):
        if not Path(path).is_file():
            print(f"evaluate: {path}: no such file", file=err)
            return EXIT_NO_INPUT
    records = load_dev(Path(claims_path))
    if limit:
        records = subsample_groups(records, limit)
    idf = compute_idf(records)
    cache = CachedEmbed()
    groups = np.array([group_key(r) for r in records])
    folds = list(GroupKFold(n_splits=n_folds).split(np.zeros(len(records)), groups=groups))
    # judge "llm" is the default offline judge (nli, refitted per fold) with the LLM weighed in
    offline = "nli" if judge == "llm" else judge
    fitted = offline in ("features", "learned", "nli")
    X = dev_features(records, idf, cache) if fitted else None
    if judge == "learned":  # the head is trained on generated pairs only; the stacker is refitted per fold
        from audit.evaluation.learned_fit import dev_head_logits, fold_model
        from audit.pipeline.learned_judge import default_learned_model

        head = default_learned_model().head
        X = np.concatenate([X, dev_head_logits(records, head, cache)], axis=1)
    if offline == "nli":  # the cross-encoder never saw a DEV label; the stacker is refitted per fold
        from audit.evaluation.nli_fit import dev_nli_features, fit_stacker, generated_rows
        from audit.pipeline.nli_model import get_nli_model

        X = np.concatenate([X, dev_nli_features(records, get_nli_model())], axis=1)
        extra = generated_rows(records, get_nli_model(), idf, cache)
    methods, fold_of_group = [], {}
    labels: list[str | None] = [None] * len(records)
    unbound_labels: list[str | None] = [None] * len(records)  # the same verdicts without the role binding
    conf = np.zeros(len(records))
    prob = np.full(len(records), np.nan)  # the judge's calibrated P(supported), where it gives one
    thresholds = {
        **({"audit_score_threshold": threshold} if threshold is not None else {}),
        **({"strictness": strictness} if strictness else {}),
    } or None
    blocked = np.zeros(len(records), dtype=bool)  # a check keeps the claim below SUPPORTED at any P
    logit = np.full(len(records), np.nan)  # the judge's support logit (before any check)
    weighed: dict[
        int, dict | None
    ] = {}  # judge "llm": the offline and the weighed P(supported) of each claim
    bar = text_bar(len(records), "evaluate claims (CV)" if fitted else f"evaluate claims ({judge})", err)
    for k, (train, test) in enumerate(folds):
        if judge == "learned":
            method = EntailmentMethod(
                judge=get_judge("learned", model=fold_model([records[i] for i in train], X[train], idf, head))
            )
        elif offline == "nli":
            fold_records = [records[i] for i in train]
            # the cascade's cheap signal: the fold's own feature model, never one that saw the fold;
            # a fold too small to fit one (no refutable SciFact row) reads every pair instead
            fits = refute_rows(fold_records).any()
            nli = get_judge(
                "nli",
                stacker=fit_stacker(fold_records, X[train], idf, extra=extra),
                features_model=fit(fold_records, X[train][:, : len(FEATURE_NAMES)], idf) if fits else None,
                **({} if fits else {"cascade": False}),
            )
            method = EntailmentMethod(judge=get_judge("llm", fallback=nli) if judge == "llm" else nli)
        elif fitted:
            method = EntailmentMethod(model=fit([records[i] for i in train], X[train], idf))
        else:
            method = EntailmentMethod(judge=get_judge(judge))
        methods.append(method)
        for i in test:
            fold_of_group[groups[i]] = k
        verdicts = verify_claims(
            [(records[i]["claim"], claim_evidence(records[i])) for i in test],
            overrides={"entailment": method},
            encode_tokens=cache,
            progress=bar.update,
            llm=llm,
            thresholds=thresholds,
        )
        for i, v in zip(test, verdicts):
            labels[i], conf[i] = v.label, v.confidence
            unbound_labels[i] = label_without_binding(v, thresholds)
            prob[i] = calibrated_probability(v)
            blocked[i] = blocked_by_checks(v, thresholds)
            logit[i] = support_logit(v)
            if judge == "llm":
                weighed[i] = llm_weighing(v, thresholds)
    bar.close()
    cache.save()
    if judge == "llm":
        print(llm_weighing_summary(records, weighed), file=out)
    rows = be.claim_table(records, labels)
    print(
        be.format_rows(
            rows,
            f"Claims, DEV, judge {judge}, SUPPORTED at confidence >= "
            f"{threshold if threshold is not None else AUDIT_SCORE_THRESHOLD}, "
            + (
                f"grouped {n_folds}-fold CV (README group keys)"
                if fitted
                else "not fitted on DEV (every claim as is)"
            )
            + "; kw = keyword overlap with its per-dataset DEV-tuned threshold",
        ),
        file=out,
    )
    print(
        "README keyword 2-class bAcc: "
        + ", ".join(f"{d} {v}" for d, v in README_KEYWORD_2CLASS_BACC.items()),
        file=out,
    )
    sci = next((r for r in rows if r["dataset"] == "scifact"), None)
    if sci:
        print(
            f"scifact 3-class: acc {100 * sci['3']['acc']:.1f} F1 {100 * sci['3']['f1']:.1f} "
            f"bAcc {100 * sci['3']['bacc']:.1f} (keyword bAcc {100 * sci['kw']['3']['bacc']:.1f})",
            file=out,
        )
    supported = [int(r["label"] == "SUPPORTED") for r in records]
    print(
        f"calibration of the confidence (the audit score the threshold reads), 10 equal-width bins: ECE "
        f"{be.expected_calibration_error(supported, conf):.3f} over all claims; per dataset: "
        + ", ".join(
            f"{r['dataset']} {be.expected_calibration_error(*_subset(records, supported, conf, r['dataset'])):.3f}"
            for r in rows
        ),
        file=out,
    )
    if not np.isnan(prob).any():
        print(
            f"calibration of the judge's P(supported) (the calibrated probability beside the confidence): ECE "
            f"{be.expected_calibration_error(supported, prob):.3f} over all claims; per dataset: "
            + ", ".join(
                f"{r['dataset']} {be.expected_calibration_error(*_subset(records, supported, prob, r['dataset'])):.3f}"
                for r in rows
            ),
            file=out,
        )

    print_catch_report(records, unbound_labels, groups, f"{judge} without the role binding (same run)", out)
    print_catch_report(records, labels, groups, judge, out)
    print_binding_change(records, unbound_labels, labels, groups, out)
    if not np.isnan(prob).any():
        print_ranking(records, prob, blocked, groups, judge, out)
    np.savez(  # the out-of-fold predictions, for analysis without another run
        Path(__file__).resolve().parents[2] / "var" / f"evaluate_{judge}_predictions.npz",
        ids=np.array([str(r["id"]) for r in records]),
        labels=np.array(labels, dtype=str),
        labels_without_binding=np.array(unbound_labels, dtype=str),
        confidence=conf,
        p_supported=prob,
        blocked=blocked,
        logit=logit,
        gold=np.array([r["label"] for r in records], dtype=str),
        datasets=np.array([r["dataset"] for r in records], dtype=str),
        groups=groups,
    )
    if operating_points_out is not None:
        if np.isnan(prob).any():
            print(f"evaluate: judge {judge} gives no calibrated P(supported); no operating points", file=err)
        else:
            write_operating_points(records, prob, blocked, groups, judge, operating_points_out, out)

    if not with_answers:
        return 0
    good, _bad = read_jsonl(answers_path, ANSWER_FIELDS)
    answers = [rec for _, rec in good]
    bar = text_bar(len(answers), "evaluate answers (CV)", err)
    y, faith, score = [], [], []
    for rec in answers:
        k = fold_of_group.get(group_key({**rec, "meta": {"question": rec.get("query")}}), 0)
        result = audit_answer(
            rec.get("query") or "",
            rec["answer"],
            rec["contexts"],
            overrides={"entailment": methods[k]},
            encode_tokens=cache,
            thresholds=thresholds,
        )
        y.append(int(bool(rec.get("answer_hallucinated"))))
        faith.append(1.0 - result.metrics["faithfulness"])
        score.append(1.0 - result.audit_score)
        bar.update(1)
    bar.close()
    cache.save()
    print(
        f"Answers, DEV (n={len(answers)}, {sum(y)} hallucinated): AUROC of (1 - faithfulness) "
        f"{be.auroc(y, faith):.3f}; AUROC of (1 - audit_score) {be.auroc(y, score):.3f}",
        file=out,
    )
    return 0


def run_stacker_cv_points(
    claims_path: str, *, out=None, err=None, operating_points_out: Path | None = None
) -> int:
    """The NLI judge's out-of-fold P(supported) from the stacker's grouped 5-fold CV over the cached DEV
    readings (``nli_fit.cross_validate``: the fold stackers ``fit_nli`` fits, with the generated rows
    when their cache exists), without running the pipeline again: its catch report, its kept
    predictions and, with ``operating_points_out``, the operating points. The checks' blocks (numbers,
    structure, source conflict) are the ones the last ``evaluate --claims-only --judge features`` run kept
    (the checks are the same for every judge; the conflict check reads the per-passage judgements, so
    there they are the features judge's). A shortcut for a machine too busy for the whole pipeline."""
    from audit.evaluation.cascade_fit import predictions
    from audit.evaluation.entailment_fit import CachedEmbed, compute_idf, dev_features, load_dev
    from audit.evaluation.nli_fit import cross_validate, dev_nli_features, generated_rows_cached
    from audit.pipeline.nli_judge import NLI_FEATURE_NAMES, unrelated_cap
    from audit.pipeline.nli_model import get_nli_model

    out, err = out or sys.stdout, err or sys.stderr
    records = load_dev(Path(claims_path))
    feats = predictions("features")
    if list(feats["ids"]) != [str(r["id"]) for r in records]:
        print("evaluate: the features run kept predictions for other claims; rerun it on this file", file=err)
        return EXIT_BAD_INPUT
    idf = compute_idf(records)
    model = get_nli_model()
    X = dev_features(records, idf, CachedEmbed())
    XN = np.concatenate([X, dev_nli_features(records, model)], axis=1)
    extra = generated_rows_cached(records, model)
    print(
        f"NLI judge, stacker CV over the cached DEV readings ({'with' if extra else 'WITHOUT'} the generated "
        "rows); the checks' blocks from the features run",
        file=out,
    )
    conf, _, _ = cross_validate(records, XN, idf, extra=extra)
    prob = unrelated_cap(conf, XN[:, -len(NLI_FEATURE_NAMES) :])
    blocked = feats["blocked"].astype(bool)
    labels = np.where(~blocked & (prob >= 0.5), "SUPPORTED", "NOT")
    groups = np.array([group_key(r) for r in records])
    print_catch_report(records, list(labels), groups, "nli (stacker CV)", out)
    print_ranking(records, prob, blocked, groups, "nli (stacker CV)", out)
    np.savez(
        Path(__file__).resolve().parents[2] / "var" / "evaluate_nli_predictions.npz",
        ids=np.array([str(r["id"]) for r in records]),
        labels=labels,
        p_supported=prob,
        blocked=blocked,
    )
    if operating_points_out is not None:
        write_operating_points(
            records,
            prob,
            blocked,
            groups,
            "nli",
            operating_points_out,
            out,
            command="python manage.py evaluate --operating-points --stacker-cv",
        )
    return 0


def print_catch_report(records: list[dict], labels: list, groups: np.ndarray, judge: str, out) -> None:
    """The catch rate, false-alarm rate and 2-class bAcc per dataset and macro, with group-bootstrap intervals."""
    from audit.constants import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED
    from audit.evaluation.catch_rate import bootstrap_report, format_report

    report = bootstrap_report(
        [r["dataset"] for r in records],
        [r["label"] == "SUPPORTED" for r in records],
        [lab == "SUPPORTED" for lab in labels],
        groups,
    )
    print(
        format_report(
            report,
            f"What the verdict catches, judge {judge}: catch rate = of the claims gold does not call "
            "SUPPORTED, the share not labelled SUPPORTED; false alarm = of the supported claims, the share "
            f"not labelled SUPPORTED; 95 % intervals: {BOOTSTRAP_RESAMPLES} bootstrap resamples of the "
            f"answers (README group keys) within each dataset, seed {BOOTSTRAP_SEED}",
        ),
        file=out,
    )


def print_ranking(records: list[dict], prob, blocked, groups: np.ndarray, judge: str, out) -> None:
    """How well the judge ranks before any cut (``ranking.py``): AUROC of the whole pipeline's
    P(supported) per dataset and macro, and the catch rate at the fixed false-alarm rate, with intervals."""
    from audit.constants import BOOTSTRAP_RESAMPLES, RANKING_FALSE_ALARM
    from audit.evaluation.ranking import auroc_report, catch_at_false_alarm, format_ranking, pipeline_score

    datasets = [r["dataset"] for r in records]
    gold = [r["label"] == "SUPPORTED" for r in records]
    score = pipeline_score(prob, blocked)
    print(
        format_ranking(
            auroc_report(datasets, gold, score, groups),
            catch_at_false_alarm(datasets, gold, score, groups),
            RANKING_FALSE_ALARM,
            f"How the judge {judge} ranks: AUROC of P(supported) (a claim a check blocks ranked below every "
            f"other), and the catch rate at the one cut whose macro false alarm is at most "
            f"{100 * RANKING_FALSE_ALARM:.0f} %; 95 % intervals: {BOOTSTRAP_RESAMPLES} bootstrap resamples of "
            "the answers within each dataset",
        ),
        file=out,
    )


def print_binding_change(records: list[dict], before: list, after: list, groups: np.ndarray, out) -> None:
    """The macro change the role binding makes (the same run's labels with and without its findings),
    with paired 95 % intervals over the same resamples of the answers."""
    from audit.evaluation.catch_rate import paired_difference

    change = paired_difference(
        [r["dataset"] for r in records],
        [r["label"] == "SUPPORTED" for r in records],
        [lab == "SUPPORTED" for lab in before],
        [lab == "SUPPORTED" for lab in after],
        groups,
    )
    print(
        "The role binding's change, macro, paired over the same resamples of the answers: "
        + ", ".join(
            f"{name} {100 * change[key][0]:+.1f} [{100 * change[key][1]:+.1f}, {100 * change[key][2]:+.1f}]"
            for key, name in (
                ("catch", "catch rate"),
                ("false_alarm", "false alarm"),
                ("bacc", "2-class bAcc"),
            )
        ),
        file=out,
    )


def support_logit(verdict) -> float:
    """The judge's support logit of a claim (its entailment result's ``logit``), or NaN."""
    ent = next((m for m in verdict.methods if m.method == "entailment"), None)
    value = ent.details.get("logit") if ent is not None else None
    return float(value) if value is not None else float("nan")


def label_without_binding(verdict, thresholds=None) -> str:
    """The claim's label with the role binding's findings taken out of its structure result
    (``methods.structure.without_binding``): the judge without the binding, from the same run."""
    from audit.constants import Thresholds
    from audit.pipeline.methods.structure import without_binding
    from audit.pipeline.scoring import label_claim

    if not verdict.evidence:
        return str(verdict.label)
    results = {m.method: (without_binding(m) if m.method == "structure" else m) for m in verdict.methods}
    t = thresholds if isinstance(thresholds, Thresholds) else Thresholds().updated(dict(thresholds or {}))
    return str(label_claim(verdict.claim, verdict.evidence, results, t).label)


def blocked_by_checks(verdict, thresholds=None) -> bool:
    """Whether the checks (numbers, structure, source conflict) keep the claim below SUPPORTED however
    sure the judge is: ``scoring.label_claim`` again with the entailment score at 1."""
    from dataclasses import replace

    from audit.constants import Thresholds
    from audit.pipeline.scoring import label_claim

    ent = next((m for m in verdict.methods if m.method == "entailment"), None)
    if ent is None or not verdict.evidence:
        return True
    results = {m.method: (replace(ent, score=1.0) if m is ent else m) for m in verdict.methods}
    t = thresholds if isinstance(thresholds, Thresholds) else Thresholds().updated(dict(thresholds or {}))
    return label_claim(verdict.claim, verdict.evidence, results, t).label != "SUPPORTED"


def llm_weighing(verdict, thresholds=None) -> dict | None:
    """A claim the LLM judge answered: its label with the LLM weighed in, the label the offline judge
    alone gives (the same checks on top: ``scoring.label_claim`` again with the offline figures), and
    whether the LLM disagreed with a confident offline verdict; None when the LLM did not answer."""
    from dataclasses import replace

    from audit.constants import Thresholds
    from audit.pipeline.llm.combine import DISAGREEMENT_FLAG
    from audit.pipeline.scoring import label_claim

    ent = next((m for m in verdict.methods if m.method == "entailment"), None)
    if ent is None or "llm_verdict" not in ent.details:
        return None
    offline = replace(
        ent,
        score=float(ent.details.get("offline_p_supported", 0.0)),
        details={
            **{k: v for k, v in ent.details.items() if k not in ("llm_verdict", DISAGREEMENT_FLAG)},
            "p_refuted": float(ent.details.get("offline_p_refuted", 0.0)),
        },
    )
    results = {m.method: (offline if m is ent else m) for m in verdict.methods}
    t = thresholds if isinstance(thresholds, Thresholds) else Thresholds().updated(dict(thresholds or {}))
    return {
        "offline": label_claim(verdict.claim, verdict.evidence, results, t).label,
        "weighed": verdict.label,
        "disagreement": bool(ent.details.get(DISAGREEMENT_FLAG)),
    }


def llm_weighing_summary(records: list[dict], weighed: dict) -> str:
    """One sentence: on the claims the LLM judged, the 2-class bAcc offline and with the LLM weighed in."""
    from audit.evaluation import bench_eval as be

    answered = [(i, w) for i, w in sorted(weighed.items()) if w is not None]
    if not answered:
        return f"LLM judge: answered none of {len(records)} claims (offline verdicts only)."
    gold = be.two_class([records[i]["label"] for i, _ in answered])

    def bacc(key: str) -> float:
        return 100 * be.balanced_accuracy(gold, be.two_class([w[key] for _, w in answered]))

    changed = sum(w["offline"] != w["weighed"] for _, w in answered)
    return (
        f"LLM judge: answered {len(answered)} of {len(records)} claims; 2-class bAcc on them "
        f"{bacc('offline'):.1f} offline, {bacc('weighed'):.1f} with the LLM weighed in; labels changed "
        f"{changed}; disagreements with a confident offline verdict (kept, sent to review) "
        f"{sum(w['disagreement'] for _, w in answered)}."
    )


def calibrated_probability(verdict) -> float:
    """The judge's calibrated P(supported) of a claim (its entailment result's ``p_supported``), or NaN."""
    for m in verdict.methods:
        if m.method == "entailment" and m.details.get("p_supported") is not None:
            return float(m.details["p_supported"])
    return float("nan")


def subsample_groups(records: list[dict], every: int) -> list[dict]:
    """The claims of every ``every``-th group (stable: by a hash of the group key), all datasets kept."""
    import hashlib

    return [r for r in records if int(hashlib.sha256(group_key(r).encode()).hexdigest()[:8], 16) % every == 0]


def _subset(
    records: list[dict], y: list[int], conf: np.ndarray, dataset: str
) -> tuple[list[int], np.ndarray]:
    idx = [i for i, r in enumerate(records) if r["dataset"] == dataset]
    return [y[i] for i in idx], conf[idx]


# --- bench --------------------------------------------------------------------------------
BENCH_POOL_SENTENCES = 4000  # distinct real sentences embedded once; chunks are drawn from them


def benchmark_sentences(err, size: int = BENCH_POOL_SENTENCES) -> list[str]:
    """Real evidence sentences from the DEV benchmark (deterministic order), else a built-in set."""
    from audit.evaluation.entailment_fit import DEFAULT_CLAIMS
    from audit.pipeline.extraction import split_sentences

    pool: dict[str, None] = {}
    if DEFAULT_CLAIMS.is_file():
        good, _ = read_jsonl(DEFAULT_CLAIMS, ("evidence",))
        for _, rec in good:
            for text in claim_evidence_texts(rec):
                for s in split_sentences(text):
                    if 40 <= len(s) <= 300:
                        pool.setdefault(s.strip(), None)
            if len(pool) >= size:
                break
    if not pool:
        print("bench: benchmark file not found; using generated sentences", file=err)
        subjects = [
            "The hippocampus",
            "Long-term potentiation",
            "The policy",
            "The committee",
            "Dopamine",
            "The audit",
            "The fee",
            "The protocol",
            "Sleep deprivation",
            "The trial",
        ]
        verbs = ["increases", "reduces", "requires", "follows", "precedes", "supports", "limits", "predicts"]
        objects = [
            "memory consolidation",
            "NMDA receptor activation",
            "written approval",
            "a 30-day notice",
            "reward learning",
            "quarterly reviews",
            "patient outcomes",
            "synaptic strength",
        ]
        for i, s in enumerate(subjects):
            for j, v in enumerate(verbs):
                for k, o in enumerate(objects):
                    pool.setdefault(
                        f"{s} {v} {o} in {1990 + (i * 7 + j * 3 + k) % 35} by {5 + k * 7}%.", None
                    )
    return list(pool)[:size]


def build_bench_kb(
    n_chunks: int, cache_dir: Path, err, pool_size: int = BENCH_POOL_SENTENCES
) -> tuple[list[str], list[str], np.ndarray]:
    """N synthetic chunks of 3-6 real sentences; a chunk's vector pools its sentences' vectors.

    Cached under ``var/`` (ids, texts, vectors) so a rerun starts at once.
    """
    cache_dir.mkdir(parents=True, exist_ok=True)
    path = cache_dir / f"bench_kb_{n_chunks}.npy"
    texts_path = cache_dir / f"bench_kb_{n_chunks}.json"
    if path.exists() and texts_path.exists():
        texts = json.loads(texts_path.read_text(encoding="utf-8"))
        return [f"kb_chunk_{i}" for i in range(len(texts))], texts, np.load(path)
    from audit.pipeline.embedding import get_embedder

    pool = benchmark_sentences(err, pool_size)
    print(f"bench: embedding a pool of {len(pool)} sentences", file=err)
    vecs = get_embedder().encode(pool, show_progress=True)
    rng = np.random.default_rng(20261122)
    ids, texts = [], []
    out = np.zeros((n_chunks, vecs.shape[1]), dtype=np.float32)
    for i in range(n_chunks):
        picks = rng.choice(len(pool), size=int(rng.integers(3, 7)), replace=False)
        ids.append(f"kb_chunk_{i}")
        texts.append(" ".join(pool[j] for j in picks))
        v = vecs[picks].mean(axis=0)
        out[i] = v / (np.linalg.norm(v) or 1.0)
    np.save(path, out)
    texts_path.write_text(json.dumps(texts), encoding="utf-8")
    return ids, texts, out


def bench_answers(
    texts: list[str], n_answers: int, claims_per_answer: int, seed: int = 7
) -> list[tuple[str, str]]:
    """(query, answer) pairs whose sentences come from KB chunks, some altered (numbers, negation)."""
    from audit.pipeline.extraction import split_sentences

    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n_answers):
        sentences = []
        while len(sentences) < claims_per_answer:
            chunk = texts[int(rng.integers(len(texts)))]
            sents = split_sentences(chunk)
            s = sents[int(rng.integers(len(sents)))]
            roll = rng.random()
            if roll < 0.2:
                s = s.replace(" is ", " is not ", 1)
            elif roll < 0.35:
                s = "".join(str((int(ch) + 1) % 10) if ch.isdigit() else ch for ch in s)
            sentences.append(s)
        out.append((sentences[0][:120], " ".join(sentences)))
    return out


NO_BINDING = ":no-binding"  # a bench variant: the judge with the role binding switched off


def bench_variants(judges: list[str] | None) -> list[str]:
    """The bench's variants in run order: each a judge name, or a judge name and ``NO_BINDING``."""
    return list(judges) if judges else [""]


# long: the bench command's report, printed in order over one set of timings per variant
def run_bench(
    n_chunks: int = 100_000,
    n_answers: int = 30,
    claims_per_answer: int = 10,
    *,
    depth: str | None = None,
    out=None,
    err=None,
    cache_dir: Path | None = None,
    pool_size: int = BENCH_POOL_SENTENCES,
    judge: str | None = None,
    judges: list[str] | None = None,
    stored_encodings: bool = True,
    save_pairs: Path | None = None,
) -> dict:
    """Time the audits of ``n_answers`` synthetic answers for each variant of ``judges`` (a judge name,
    optionally followed by ``NO_BINDING``; default: ``judge``) on one knowledge base, one after the
    other in this process, each starting from empty text caches (sentence vectors, NLI readings,
    parses) after the same warm-up. Returns the last variant's summary. ``save_pairs``: a JSON file
    to write the pairs the cross-encoder read for each timed answer (the last variant's), which
    ``kernel_probe --passes --pairs-file`` times again."""
    out, err = out or sys.stdout, err or sys.stderr
    cache_dir = cache_dir or Path(__file__).resolve().parents[2] / "var"
    kb, texts = bench_knowledge_base(n_chunks, cache_dir, err, pool_size, stored_encodings=stored_encodings)
    answers = bench_answers(texts, n_answers + 3, claims_per_answer)
    variants = bench_variants(judges or ([judge] if judge else None))
    summaries = [
        _bench_variant(kb, answers, n_answers, depth, v, len(kb.index), out, err, save_pairs)
        for v in variants
    ]
    if len(summaries) > 1:
        print("same run, one after the other:", file=out)
        for v, sm in zip(variants, summaries):
            print(
                f"  {v:24s} p50 {sm['p50_ms']:8.1f} ms  p95 {sm['p95_ms']:8.1f} ms  CPU p50 {sm['cpu_p50_ms']:8.1f} ms  "
                f"parses per answer {sm['parses_per_answer']:.1f}  binding {sm['binding_ms']:.1f} ms per answer",
                file=out,
            )
    return summaries[-1]


def bench_knowledge_base(
    n_chunks: int,
    cache_dir: Path,
    err,
    pool_size: int = BENCH_POOL_SENTENCES,
    *,
    stored_encodings: bool = True,
) -> tuple[KnowledgeBase, list[str]]:
    """The bench's knowledge base of ``n_chunks`` (built once, cached under ``cache_dir``) in the hybrid
    index, with its sentences' encodings stored as ingestion stores them (unless ``stored_encodings`` is
    False), and the chunks' texts."""
    import time

    from audit.pipeline.index import HybridIndex
    from audit.pipeline.retrieval import KnowledgeBase
    from audit.pipeline.types import Passage

    t0 = time.perf_counter()
    ids, texts, vectors = build_bench_kb(n_chunks, cache_dir, err, pool_size)
    index = HybridIndex()
    index.add(ids, texts, vectors)
    del vectors  # the index keeps its own bfloat16 copy: the float32 one is 150 MB at 100k chunks
    index.warm()
    print(f"bench: knowledge base of {len(index)} chunks ready in {time.perf_counter() - t0:.1f}s", file=err)

    def lookup(wanted: list[str]) -> dict[str, Passage]:
        return {i: Passage(id=i, text=index.text(i) or "", source_type="kb") for i in wanted if i in index}

    kb = KnowledgeBase(
        index=index,
        lookup=lookup,
        vectors=index.vectors,
        encodings=bench_encodings(texts, cache_dir, err) if stored_encodings else None,
    )
    return kb, texts


def bench_encodings(chunk_texts: list[str], cache_dir: Path, err) -> FileStore:
    """The knowledge base's sentence encodings and parses as ingestion stores them
    (``pipeline/encodings.py``, ``pipeline/parse_store.py``), in a file under ``cache_dir`` that later
    runs reuse: the sentences no run stored yet are encoded and parsed now."""
    import time

    from tqdm import tqdm

    from audit.pipeline import parse_store
    from audit.pipeline.embedding import get_embedder
    from audit.pipeline.encodings import FileStore, precompute

    t0 = time.perf_counter()
    store = FileStore(cache_dir / "bench_encodings.sqlite3")
    bar = tqdm(desc="bench: encoding the chunks' sentences", unit="sentence", file=err, mininterval=0.5)
    encoded = precompute(chunk_texts, store, get_embedder().encode_with_tokens, progress=bar.update)
    bar.close()
    bar = tqdm(desc="bench: parsing the chunks' sentences", unit="sentence", file=err, mininterval=0.5)
    parsed = parse_store.precompute(chunk_texts, store, progress=bar.update)
    bar.close()
    print(
        f"bench: sentence encodings and parses stored at ingestion: {len(store)} in {store.path} "
        f"({encoded} encoded and {parsed} parsed now, {time.perf_counter() - t0:.1f}s)",
        file=err,
    )
    return store


def clear_text_caches() -> None:
    from audit.pipeline import binding, contradiction, extraction, numbers, text
    from audit.pipeline.embedding import get_embedder

    get_embedder().clear_cache()  # the pool was embedded here; audits must not find it cached
    binding.clear_caches()
    # the per-text caches too, so that no variant reads what an earlier one computed
    for cached in (
        text._content_stems,
        numbers._extract_quantities,
        numbers._spelled_counts,
        numbers._passage_quantities,
        extraction._split_sentences,
        contradiction._tokens,
    ):
        cached.cache_clear()
    for model in _loaded_nli_models():
        model.clear_cache()


def _loaded_nli_models() -> list:
    """The NLI models this process has loaded (none is loaded here to clear it)."""
    from audit.pipeline import nli_model

    info = nli_model.get_nli_model.cache_info()
    return [nli_model.get_nli_model()] if info.currsize else []


def _bench_variant(
    kb, answers, n_answers: int, depth, variant: str, chunks: int, out, err, save_pairs: Path | None = None
) -> dict:
    import resource
    import time

    from audit.constants import Thresholds
    from audit.evaluation.bench_stages import BINDING, audit_clock, pairs_read
    from audit.pipeline import binding
    from audit.pipeline.audit import audit_answer
    from audit.pipeline.memory import frozen_heap
    from audit.pipeline.nli_model import get_nli_model

    judge, _, flag = variant.partition(":")
    without_binding = bool(flag)
    thresholds = Thresholds().updated(
        {**({"verification_depth": depth} if depth else {}), **({"judge": judge} if judge else {})}
    )
    clear_text_caches()
    for query, answer in answers[:3]:  # warm-up: model load, first searches
        audit_answer(query, answer, [], kb=kb, thresholds=thresholds, binding=not without_binding)
    latencies, n_claims = [], 0
    cpu: list[float] = []  # CPU seconds of this process (every thread) per answer: steadier under load
    stages: Counter[str] = Counter()
    claim_texts: list[list[str]] = []
    parsed_before, read_before = binding.PARSES.parsed, binding.PARSES.read
    bar = text_bar(n_answers, "bench answers", err)
    # the heap frozen as a server's worker freezes it after its warm-up (pipeline/memory.py)
    with frozen_heap(), audit_clock(kb) as clock, pairs_read(get_nli_model()) as reads:
        for query, answer in answers[3:]:
            start, cpu_start = time.perf_counter(), time.process_time()
            result = audit_answer(
                query, answer, [], kb=kb, thresholds=thresholds, binding=not without_binding
            )
            latencies.append(1000 * (time.perf_counter() - start))
            cpu.append(1000 * (time.process_time() - cpu_start))
            n_claims += len(result.claims)
            claim_texts.append([v.claim.text for v in result.claims])
            for v in result.claims:
                stages[claim_stage(v)] += 1
            bar.update(1)
    bar.close()
    if save_pairs is not None:
        save_pairs.write_text(json.dumps(reads), encoding="utf-8")
    floor = bench_floor(kb.index, claim_texts)
    lat = np.array(latencies)
    p50, cpu50 = float(np.percentile(lat, 50)), float(np.percentile(cpu, 50))
    per_answer = 1000 / max(1, n_answers)
    summary = {
        "p50_ms": round(p50, 1),
        "p95_ms": round(float(np.percentile(lat, 95)), 1),
        "cpu_p50_ms": round(cpu50, 1),
        "cpu_p95_ms": round(float(np.percentile(cpu, 95)), 1),
        **floor,
        "p50_over_floor": round(p50 / max(floor["floor_ms"], 1e-9), 2),
        "cpu_p50_over_floor": round(cpu50 / max(floor["floor_cpu_ms"], 1e-9), 2),
        "claims_per_s": round(n_claims / (lat.sum() / 1000), 1),
        "peak_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "chunks": chunks,
        "parses_per_answer": round((binding.PARSES.parsed - parsed_before) / max(1, n_answers), 1),
        "stored_parses_per_answer": round((binding.PARSES.read - read_before) / max(1, n_answers), 1),
        "binding_ms": round(clock.wall.get(BINDING, 0.0) * per_answer, 1),
        "stage_ms": {k: round(v * per_answer, 1) for k, v in clock.wall.items()},
        "stage_cpu_ms": {k: round(v * per_answer, 1) for k, v in clock.cpu.items()},
        "settled": {k: round(v / max(1, n_claims), 3) for k, v in stages.items()},
        "mean_ms": round(float(lat.mean()), 1),
        "mean_cpu_ms": round(float(np.mean(cpu)), 1),
        "stored_encodings": kb.encodings is not None,
    }
    _print_bench(
        summary,
        f"{thresholds.judge}{' without the role binding' if without_binding else ''}",
        thresholds.verification_depth,
        n_answers,
        n_claims,
        out,
    )
    return summary


def bench_floor(index, claim_texts: list[list[str]]) -> dict:
    """The reading floor (``bench_stages.reading_floor``) of each timed answer's claims: the medians."""
    from audit.evaluation.bench_stages import reading_floor

    runs = [reading_floor(index, claims) for claims in claim_texts if claims]
    wall, cpu = (float(np.median([r[k] for r in runs])) if runs else 0.0 for k in (0, 1))
    return {"floor_ms": round(wall, 1), "floor_cpu_ms": round(cpu, 1)}


def kernels_line() -> str:
    """The encoders' kernels (``NLI_KERNEL``, ``EMBEDDING_DTYPE``) as resolved on this processor."""
    from audit.constants import EMBEDDING_DTYPE, NLI_KERNEL
    from audit.pipeline.kernels import cpu_has_bf16, resolve_kernel

    return (
        f"kernels: cross-encoder {resolve_kernel(NLI_KERNEL, cross_encoder=True)}, bi-encoder {resolve_kernel(EMBEDDING_DTYPE)} "
        f"(this processor has {'' if cpu_has_bf16() else 'no '}bf16 instructions)"
    )


def _print_bench(summary: dict, judge: str, depth: str, n_answers: int, n_claims: int, out) -> None:
    print(
        f"judge {judge}; verification depth {depth}; answers {n_answers}, claims {n_claims} "
        f"({n_claims / max(1, n_answers):.1f} per answer); load average {os.getloadavg()[0]:.1f} on "
        f"{os.cpu_count()} cores; {kernels_line()}; knowledge-base sentence encodings "
        + (
            "stored at ingestion, read by the audits" if summary["stored_encodings"] else "computed when read"
        ),
        file=out,
    )
    print(
        f"latency per answer: p50 {summary['p50_ms']} ms, p95 {summary['p95_ms']} ms; CPU p50 "
        f"{summary['cpu_p50_ms']} ms, p95 {summary['cpu_p95_ms']} ms (every thread of the process: steadier "
        f"than the clock on a busy machine); {summary['claims_per_s']} claims/s; peak memory "
        f"{summary['peak_mb']} MB (ru_maxrss)",
        file=out,
    )
    print(
        f"reading floor (embed the claims, exact search over the {summary['chunks']} chunks, one cross-encoder "
        f"pass of each claim against one sentence; median over the same answers): {summary['floor_ms']} ms, "
        f"CPU {summary['floor_cpu_ms']} ms; p50 / floor {summary['p50_over_floor']}x, CPU "
        f"{summary['cpu_p50_over_floor']}x",
        file=out,
    )
    wall, cpu = summary["stage_ms"], summary["stage_cpu_ms"]
    print(
        f"mean per answer {summary['mean_ms']} ms (CPU {summary['mean_cpu_ms']} ms): "
        + ", ".join(f"{k} {v} ms (CPU {cpu[k]} ms)" for k, v in sorted(wall.items(), key=lambda kv: -kv[1]))
        + f", the rest {summary['mean_ms'] - sum(wall.values()):.1f} ms (CPU "
        f"{summary['mean_cpu_ms'] - sum(cpu.values()):.1f} ms: extraction, retrieval's fusion, features, scoring); "
        f"the role binding parsed {summary['parses_per_answer']} texts per answer and read "
        f"{summary['stored_parses_per_answer']} parses stored at ingestion",
        file=out,
    )
    print(
        "claims settled by each stage: "
        + ", ".join(
            f"{STAGE_NAMES.get(name, name)} {100 * share:.1f} %"
            for name, share in sorted(summary["settled"].items(), key=lambda kv: -kv[1])
        ),
        file=out,
    )
    print(json.dumps(summary), file=out)


STAGE_NAMES = {
    "features": "cheap signals (features head, cascade)",
    "reader": "NLI reader",
    "judge": "the judge in one stage",
    "no evidence": "no evidence found",
}


def claim_stage(verdict) -> str:
    """Which stage decided a claim's judgement: the cascade's cheap signals or the NLI reader (the nli
    judge's ``details["stage"]``), the judge in one stage (other judges), or none (no evidence)."""
    ent = next((m for m in verdict.methods if m.method == "entailment"), None)
    if not verdict.evidence or ent is None:
        return "no evidence"
    return str(ent.details.get("stage") or "judge")

"""Fit the LLM judge's weight and margin for the connected endpoint and model, on a bounded DEV sample
(``evaluate --judge llm --fit``; docs/LLM.md#fitting-the-llms-weight).

1. The sample: the claims of every n-th answer group (``--every``), at most ``--max-claims`` of them
   (whole groups).
2. The offline judge of the workspace (its thresholds and calibration in force) verifies every claim
   of the sample, with no LLM: its verdicts are what the workspace's audits give offline.
3. The LLM judge reads each claim with the evidence the ``llm_judge`` method would send (the
   verdict's hits, cited first then by relevance), in the batches an audit uses. Each answer is
   appended to a cache file under ``var/llm-fit/`` (keyed by endpoint, model and prompt), so a run
   stopped by ``--max-calls`` or by hand resumes where it stopped; a progress bar shows the claims.
4. Every (weight, margin) of ``LLM_FIT_WEIGHTS`` x ``LLM_FIT_MARGINS`` labels the claims through
   ``scoring.label_claim`` (the numeric and structure checks apply on top, as in an audit) and is
   scored by the 2-class balanced accuracy; ties go to the smaller weight, then the larger margin
   (fewer review cases). The held-out figures come from grouped folds (``GroupKFold`` by the
   benchmark's answer groups): each fold's claims are labelled with the pair chosen on the others.
   The pair chosen on the whole sample is the fit, stored by ``audit.services.llm_weight``, when the
   held-out bAcc with the LLM beats the offline judge's; otherwise the fit is weight 0 and margin
   ``max(LLM_FIT_MARGINS)`` (1: no disagreement counts as confident): the LLM has no say at all and
   sends nothing to review (an in-sample choice on a small sample finds a weight even for noise).

Plain functions on plain data, no Django import except where the workspace is read and the fit
stored (``run_llm_fit``).
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from audit.constants import (
    LLM_BATCH_CLAIMS,
    LLM_FIT_FOLDS,
    LLM_FIT_MARGINS,
    LLM_FIT_MIN_CLAIMS,
    LLM_FIT_WEIGHTS,
)
from audit.evaluation import bench_eval as be
from audit.pipeline.types import MethodResult

CACHE_DIR = Path("var") / "llm-fit"
# a failed reading worth asking again on resume (the endpoint was away or a budget stopped it); an
# unusable reply (invalid JSON, schema, neither Yes nor No) is the model's answer and is kept
TRANSIENT = ("budget", "circuit open", "unavailable", "timeout", "connection", "server_error", "rate_limited")


@dataclass
class FitRow:
    """One claim of the sample: its answer group, gold label, offline verdict and LLM reading."""

    group: str
    gold: str
    verdict: object  # the offline ClaimVerdict
    llm: MethodResult | None = None


@dataclass
class Fit:
    weight: float
    margin: float
    metrics: dict = field(default_factory=dict)


def _supported(label: str) -> int:
    return int(label == "SUPPORTED")


def scores(gold: list[str], labels: list[str]) -> dict:
    """2-class balanced accuracy (SUPPORTED or not) and the catch rate: the share of the claims that
    are not supported which are not labelled SUPPORTED."""
    g, p = be.two_class(gold), be.two_class(labels)
    unsupported = [lab for gl, lab in zip(gold, labels) if gl != "SUPPORTED"]
    return {
        "bacc": round(100 * be.balanced_accuracy(g, p), 2),
        "catch": round(100 * sum(lab != "SUPPORTED" for lab in unsupported) / max(1, len(unsupported)), 2),
        "n": len(gold),
        "supported": sum(map(_supported, gold)),
    }


def label_with(row: FitRow, weight: float, margin: float, thresholds) -> str:
    """The claim's label with the LLM's reading weighed in at ``weight`` and ``margin`` (offline where
    the LLM gave none): ``scoring.label_claim`` as in an audit, the llm_judge result beside the rest."""
    from audit.pipeline.scoring import label_claim

    v = row.verdict
    if row.llm is None:
        return v.label
    results = {m.method: m for m in v.methods}
    results["llm_judge"] = replace(row.llm, details={**row.llm.details, "weight": weight, "margin": margin})
    return label_claim(v.claim, v.evidence, results, thresholds).label


def label_table(rows: list[FitRow], thresholds, weights=LLM_FIT_WEIGHTS, margins=LLM_FIT_MARGINS) -> dict:
    """{(weight, margin): [label per row]} over the grid."""
    return {(w, m): [label_with(r, w, m, thresholds) for r in rows] for w in weights for m in margins}


def choose(rows_idx: list[int], rows: list[FitRow], table: dict) -> tuple[float, float]:
    """The (weight, margin) with the best 2-class bAcc on ``rows_idx``; ties: smaller weight, larger margin."""
    gold = be.two_class([rows[i].gold for i in rows_idx])

    def key(pair):
        labels = be.two_class([table[pair][i] for i in rows_idx])
        return (round(be.balanced_accuracy(gold, labels), 9), -pair[0], pair[1])

    return max(table, key=key)


def fit_weighing(rows: list[FitRow], thresholds, n_folds: int = LLM_FIT_FOLDS) -> Fit:
    """The fit on all rows and its held-out figures on grouped folds (see the module doc)."""
    from sklearn.model_selection import GroupKFold

    table = label_table(rows, thresholds)
    offline = [r.verdict.label for r in rows]
    groups = np.array([r.group for r in rows])
    n_folds = max(2, min(n_folds, len(set(groups))))
    held_out: list[str | None] = [None] * len(rows)
    chosen = []
    for train, test in GroupKFold(n_splits=n_folds).split(np.zeros(len(rows)), groups=groups):
        pair = choose(list(train), rows, table)
        chosen.append({"weight": pair[0], "margin": pair[1]})
        for i in test:
            held_out[i] = table[pair][i]
    gold = [r.gold for r in rows]
    offline_bacc = scores(gold, offline)["bacc"]
    held_bacc = scores(gold, [lab or "" for lab in held_out])["bacc"]
    if held_bacc > offline_bacc:
        weight, margin = choose(list(range(len(rows))), rows, table)
        verdict = "kept: the LLM weighed in beats the offline judge on the held-out folds"
    else:  # no gain on claims the choice never saw: the LLM has no say, and sends nothing to review
        weight, margin = 0.0, max(LLM_FIT_MARGINS)
        verdict = "weight 0: the LLM weighed in does not beat the offline judge on the held-out folds"
    answered = [i for i, r in enumerate(rows) if r.llm is not None]
    llm_alone = [
        "SUPPORTED" if (rows[i].llm.score or 0.0) >= thresholds.audit_score_threshold else "NEI"
        for i in answered
    ]
    fitted_labels = table[(weight, margin)]
    metrics = {
        "held_out": {
            "offline": scores(gold, offline),
            "with_llm": scores(gold, [lab or "" for lab in held_out]),
            "folds": n_folds,
            "chosen_per_fold": chosen,
        },
        "in_sample_with_fit": scores(gold, fitted_labels),
        "llm_alone_on_answered": scores([gold[i] for i in answered], llm_alone) if answered else {},
        "answered": len(answered),
        "disagreements_to_review": sum(
            1 for i in answered if _disagrees(rows[i], weight, margin, thresholds)
        ),
        "labels_changed": sum(a != b for a, b in zip(offline, fitted_labels)),
        "decision": verdict,
    }
    return Fit(weight, margin, metrics)


def _disagrees(row: FitRow, weight: float, margin: float, thresholds) -> bool:
    from audit.pipeline.llm.combine import weigh

    ent = next((m for m in row.verdict.methods if m.method == "entailment" and m.score is not None), None)
    if ent is None or row.llm is None or row.llm.score is None:
        return False
    return weigh(
        float(ent.score),
        float(ent.details.get("p_refuted", 0.0)),
        float(row.llm.score),
        row.llm.details.get("p_refuted"),
        threshold=thresholds.audit_score_threshold,
        refuted_threshold=thresholds.refuted_threshold,
        weight=weight,
        margin=margin,
    ).disagreement


# --- the readings: offline verdicts, the LLM's answers (cached on disk) ------------------------------------


def cache_path(config, cache_dir: Path = CACHE_DIR) -> Path:
    key = f"{config.base_url.rstrip('/')}|{config.model}|{config.judge_prompt}"
    return cache_dir / f"{hashlib.sha256(key.encode()).hexdigest()[:16]}.jsonl"


def _key(claim: str, evidence: list[str]) -> str:
    return hashlib.sha256(("\x00".join([claim, *evidence])).encode()).hexdigest()


def load_cache(path: Path) -> dict[str, dict]:
    out: dict[str, dict] = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                out[row["key"]] = row
    return out


def evidence_texts(verdict) -> list[str]:
    """What the llm_judge method sends for this claim: its hits, cited first, then by relevance."""
    ranked = sorted(verdict.evidence, key=lambda h: (not h.cited, -h.relevance))
    return [h.passage.text for h in ranked]


def read_with_llm(client, rows: list[FitRow], *, max_calls: int, path: Path, err=None) -> dict:
    """Give each row its LLM reading (from the cache, or asked now in audit-sized batches, appended to
    the cache as it comes); stop asking once ``max_calls`` calls were made. Returns the counts."""
    from audit.evaluation.progress import text_bar
    from audit.pipeline.llm.judge import judge_claims

    path.parent.mkdir(parents=True, exist_ok=True)
    measuring(client)
    cache = load_cache(path)
    todo = []
    for row in rows:
        claim, evidence = row.verdict.claim.text, evidence_texts(row.verdict)
        hit = cache.get(_key(claim, evidence))
        if hit is not None:
            row.llm = _result(hit)
        elif evidence:
            todo.append((row, claim, evidence))
    bar = text_bar(len(rows), "fit: the LLM reads the claims", err or sys.stderr)
    bar.update(len(rows) - len(todo))
    stopped, started = False, time.monotonic()
    with open(path, "a", encoding="utf-8") as out:
        for k in range(0, len(todo), LLM_BATCH_CLAIMS):
            if client.accounting.calls >= max_calls:
                stopped = True
                break
            batch = todo[k : k + LLM_BATCH_CLAIMS]
            results = judge_claims(client, [(claim, evidence) for _, claim, evidence in batch])
            for (row, claim, evidence), result in zip(batch, results):
                reason = str(result.details.get("reason", ""))
                if not result.ran and any(t in reason for t in TRANSIENT):
                    continue  # asked again on the next run
                entry = {
                    "key": _key(claim, evidence),
                    "ran": result.ran,
                    "score": result.score,
                    "verdict": result.verdict,
                    "details": {k: v for k, v in result.details.items() if _jsonable(v)},
                }
                out.write(json.dumps(entry) + "\n")
                out.flush()
                row.llm = _result(entry)
            bar.update(len(batch))
    bar.close()
    return {
        "calls": client.accounting.calls,
        "seconds": round(time.monotonic() - started, 1),
        "stopped_at_max_calls": stopped,
        "unread": sum(1 for r in rows if r.llm is None),
        "asked": sum(
            1 for r in rows if _key(r.verdict.claim.text, evidence_texts(r.verdict)) in load_cache(path)
        ),
    }


def measuring(client) -> None:
    """Give the fit's client an endpoint of its own whose breaker opens on outages only: unusable
    replies are what the fit measures (a model answering garbage is read to the end and fitted to 0),
    and an audit's process-wide breaker is not touched."""
    import math

    from audit.pipeline.llm.endpoint import Endpoint

    config = client.config
    client.endpoint = Endpoint(config.base_url, config.api_key, config.concurrency)
    client.endpoint.breaker.rate = math.inf


def _jsonable(value) -> bool:
    try:
        json.dumps(value)
    except TypeError:
        return False
    return True


def _result(entry: dict) -> MethodResult | None:
    """The cached reading as the llm_judge method's result; None where the LLM gave no reading."""
    if not entry.get("ran") or entry.get("score") is None:
        return None
    return MethodResult(
        method="llm_judge",
        score=float(entry["score"]),
        verdict=entry.get("verdict"),
        details=dict(entry["details"]),
    )


def sample(records: list[dict], every: int | None, max_claims: int | None) -> list[dict]:
    """Every ``every``-th answer group's claims (``cli.subsample_groups``), then whole groups up to ``max_claims``."""
    from audit.evaluation.bench_data import group_key
    from audit.evaluation.cli import subsample_groups

    if every and every > 1:
        records = subsample_groups(records, every)
    if not max_claims:
        return records
    by_group: dict[str, list[dict]] = {}
    for r in records:
        by_group.setdefault(group_key(r), []).append(r)
    out: list[dict] = []
    for group in sorted(by_group, key=lambda g: hashlib.sha256(g.encode()).hexdigest()):
        if len(out) + len(by_group[group]) > max_claims and out:
            break
        out += by_group[group]
    return out


def offline_rows(records: list[dict], thresholds, err=None) -> list[FitRow]:
    """The workspace's offline verdict of every sampled claim (no LLM)."""
    from audit.evaluation.bench_data import group_key
    from audit.evaluation.cli import claim_evidence
    from audit.evaluation.progress import text_bar
    from audit.pipeline.audit import verify_claims

    bar = text_bar(len(records), "fit: the offline judge reads the claims", err or sys.stderr)
    verdicts = verify_claims(
        [(r["claim"], claim_evidence(r)) for r in records], thresholds=thresholds, progress=bar.update
    )
    bar.close()
    return [FitRow(group_key(r), r["label"], v) for r, v in zip(records, verdicts)]


# long: read the sample (resumable, bounded calls, progress), fit on folds, then report and store: one pass, in order
def run_llm_fit(
    client,
    *,
    workspace,
    claims_path: str,
    every: int | None = None,
    max_claims: int | None = None,
    max_calls: int,
    store: bool = True,
    cache_dir: Path = CACHE_DIR,
    out=None,
    err=None,
    actor_label: str = "manage.py evaluate --judge llm --fit",
) -> int:
    """The whole fit (module doc): print the figures; store the fit unless ``store`` is False or too few
    claims were read. Returns the exit status."""
    from audit.evaluation.entailment_fit import load_dev
    from audit.selectors.api import thresholds_for
    from audit.services.llm_weight import llm_weight_store

    out, err = out or sys.stdout, err or sys.stderr
    thresholds = thresholds_for(workspace)
    records = sample(load_dev(Path(claims_path)), every, max_claims)
    if not records:
        print("evaluate --fit: the sample is empty", file=err)
        return 2
    rows = offline_rows(records, thresholds, err)
    path = cache_path(client.config, cache_dir)
    reading = read_with_llm(client, rows, max_calls=max_calls, path=path, err=err)
    answered = sum(r.llm is not None for r in rows)
    asked = reading["asked"]  # answered, or answered with nothing usable: both say what the model is worth
    fit = fit_weighing(rows, thresholds)
    fit.metrics["reading"] = {**reading, "cache": str(path)}
    fit.metrics["sample"] = {"claims": len(rows), "every": every, "max_claims": max_claims}
    h = fit.metrics["held_out"]
    print(
        f"LLM fit for {client.config.model} at {client.config.base_url} ({client.config.judge_prompt} prompt): "
        f"{len(rows)} DEV claims ({h['offline']['supported']} supported), the LLM was asked about {asked} "
        f"and gave a usable reading of {answered} ({reading['calls']} calls this run, {reading['seconds']} s; "
        f"cache {path})",
        file=out,
    )
    print(
        f"held out on {h['folds']} grouped folds: 2-class bAcc {h['offline']['bacc']:.1f} offline, "
        f"{h['with_llm']['bacc']:.1f} with the LLM weighed in; catch rate (unsupported claims not "
        f"labelled SUPPORTED) {h['offline']['catch']:.1f} % offline, {h['with_llm']['catch']:.1f} % with the LLM; "
        f"weights chosen per fold {[c['weight'] for c in h['chosen_per_fold']]}",
        file=out,
    )
    alone = fit.metrics["llm_alone_on_answered"]
    if alone:
        print(
            f"the LLM alone on the {answered} claims it read: 2-class bAcc {alone['bacc']:.1f}, "
            f"catch rate {alone['catch']:.1f} %",
            file=out,
        )
    print(
        f"fitted: weight {fit.weight:g}, margin {fit.margin:g} ({fit.metrics['decision']}; labels changed "
        f"{fit.metrics['labels_changed']}, disagreements sent to review {fit.metrics['disagreements_to_review']})",
        file=out,
    )
    if asked < LLM_FIT_MIN_CLAIMS:
        print(
            f"not stored: the LLM was asked about {asked} claims, a fit needs {LLM_FIT_MIN_CLAIMS} "
            "(run again to resume; raise --max-calls)",
            file=out,
        )
        return 0
    if not store:
        print("not stored (--dry-run)", file=out)
        return 0
    version = llm_weight_store(
        workspace=workspace,
        endpoint=client.config.base_url,
        model=client.config.model,
        judge_prompt=client.config.judge_prompt,
        weight=fit.weight,
        margin=fit.margin,
        metrics=fit.metrics,
        n_claims=asked,
        llm_calls=reading["calls"],
        actor_label=actor_label,
    )
    print(
        f"stored as LLM weight v{version.number} of workspace {workspace.slug}, in force for {version.model} "
        f"at {version.endpoint} (roll back: python manage.py calibrate --workspace {workspace.slug} --llm "
        "--rollback VERSION|none)",
        file=out,
    )
    return 0

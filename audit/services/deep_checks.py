"""Asynchronous deep checks (docs/LLM.md): the LLM methods of an audit, run after the answer is returned.

With ``"deep": "async"`` (per request, or the workspace's ``deep_checks`` threshold) the audit
stores the offline Audit-Local result at once and :func:`deep_check_queue` schedules a django-q2
task (with the request's write: ``audit.services.task_queue``). The task, :func:`deep_check_run`:

1. rebuilds each stored claim, its evidence (the knowledge-base chunk or the request's passage,
   else the stored snippet) and its offline method results from the claim card;
2. runs the LLM methods (``llm_judge``, ``llm_cove``, ``selfcheck``) with the workspace's LLM
   setup under ``LLM_ASYNC_TIME_BUDGET_S``, and labels each claim again with
   ``scoring.label_claim`` from the offline results and the LLM ones together (so a numeric or
   structural contradiction still stands);
3. stores the LLM methods' results on the claim cards and every label change as a machine
   relabel (``audit.services.labels``, source ``deep_check``, with the methods' evidence in the
   reason); a claim relabelled to REFUTED or NEI goes through the usual intake
   (``cases_open_for_answer``);
4. adds the calls and tokens to the run (the daily token budget counts them) and records the
   progress in ``VerificationRun.deep_checks``, which ``GET /api/v1/runs/<id>`` shows;
5. announces completion to ``THEORIA["DEEP_CHECK_WEBHOOK_URL"]`` when one is set.

A deep check that cannot run (no LLM, residency, budget) ends ``done`` with the reason, leaving
the offline verdicts as they are; an unexpected error ends it ``failed`` with the error.
"""

from __future__ import annotations

import logging
from datetime import datetime, timezone
from typing import Any

from django.conf import settings
from django.db import transaction

from audit import constants, hooks
from audit.models import Answer, Claim, Evidence, VerificationRun
from audit.pipeline import scoring
from audit.pipeline.job import job_context
from audit.pipeline.llm.combine import DISAGREEMENT_FLAG
from audit.pipeline.methods import REGISTRY
from audit.pipeline.methods.llm import LLM_METHODS
from audit.pipeline.types import ClaimDraft, ClaimVerdict, EvidenceHit, Label, MethodResult, Passage
from audit.pipeline.web.fetch import WebError, post_json
from audit.services.events import event_record
from audit.services.job import audit_job_for_answer
from audit.services.labels import claim_machine_relabel
from audit.services.llm import llm_run_fields
from audit.services.task_queue import enqueue

logger = logging.getLogger(__name__)
SOURCE = "deep_check"


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def deep_check_queue(run: VerificationRun) -> None:
    """Mark ``run``'s deep check queued and schedule its task with the caller's write (``audit.services.task_queue``)."""
    run.deep_checks = {
        "status": "queued",
        "queued_at": _now(),
        "methods": list(LLM_METHODS),
        "progress": {"done": 0, "total": len(LLM_METHODS)},
    }
    run.save(update_fields=["deep_checks"])
    enqueue("audit.tasks.deep_check", run.pk)


def _progress(run: VerificationRun, **changes: Any) -> None:
    run.deep_checks = {**run.deep_checks, **changes}
    run.save(update_fields=["deep_checks"])


def _passage(evidence: Evidence, contexts: dict[str, dict[str, Any]]) -> Passage:
    if evidence.chunk_id is not None and evidence.chunk is not None:
        text = evidence.chunk.text
    else:
        text = (contexts.get(evidence.source_id) or {}).get("text") or evidence.snippet
    return Passage(
        id=evidence.source_id,
        text=text,
        title=evidence.title,
        uri=evidence.uri,
        source_type=evidence.source_type,
    )


def _rebuilt(
    claim: Claim, contexts: dict[str, dict[str, Any]]
) -> tuple[ClaimDraft, list[EvidenceHit], dict[str, MethodResult]]:
    draft = claim.draft()
    hits = [
        EvidenceHit(
            passage=_passage(e, contexts),
            relevance=e.relevance,
            cited=bool(e.provenance.get("cited")),
            similarity=float(e.provenance.get("similarity") or 0.0),
            entailment=e.entailment,
            best_sentence=e.provenance.get("best_sentence", ""),
        )
        for e in claim.evidence.all()
    ]
    offline = {
        name: MethodResult(
            method=name,
            ran=bool(r.get("ran")),
            score=r.get("score"),
            verdict=r.get("verdict"),
            details=dict(r.get("details") or {}),
            flags=list(r.get("flags") or []),
        )
        for name, r in (claim.method_results or {}).items()
        if name not in LLM_METHODS
    }
    return draft, hits, offline


def _card(result: MethodResult) -> dict[str, Any]:
    return {
        "ran": result.ran,
        "score": result.score,
        "verdict": result.verdict,
        "flags": result.flags,
        "details": {k: v for k, v in result.details.items() if k != "features"},
    }


def _llm_flags(verdict: ClaimVerdict) -> list[str]:
    """The flags the weighing of the LLM judge gives a claim (a disagreement goes to review)."""
    return [f for f in verdict.risk_flags if f == DISAGREEMENT_FLAG]


def _evidence_note(results: dict[str, MethodResult]) -> str:
    """The LLM evidence of a relabel, in one line (the label history's reason)."""
    parts = []
    judge = results.get("llm_judge")
    if judge is not None and judge.ran:
        parts.append(
            f"llm_judge {judge.details.get('judge_verdict')}: {judge.details.get('reasoning', '')[:200]}"
        )
    cove = results.get("llm_cove")
    if cove is not None and cove.ran:
        parts.append(f"llm_cove consistency {cove.details.get('cove_consistency')}")
    selfcheck = results.get("selfcheck")
    if selfcheck is not None and selfcheck.ran:
        parts.append(f"selfcheck disagreement {selfcheck.details.get('selfcheck_disagreement')}")
    return "; ".join(parts) or "LLM methods"


def deep_check_run(*, run_id: int) -> VerificationRun:
    """Run the deep check of one run (the django-q2 task's body); see the module doc."""
    run = VerificationRun.objects.select_related("answer__workspace").get(pk=run_id)
    if run.deep_checks.get("status") in ("done", "running"):
        return run  # a retried task does not run twice
    _progress(run, status="running", started_at=_now())
    try:
        return _deep_check(run)
    except Exception as exc:  # noqa: BLE001 - any error ends the deep check, recorded on the run
        logger.exception("deep check of run %s failed", run_id)
        _progress(run, status="failed", finished_at=_now(), error=f"{type(exc).__name__}: {exc}"[:500])
        deep_check_announce(run)
        return run


# long: the deep check's steps share the run, its claims and the LLM setup; to split with the next job step
def _deep_check(run: VerificationRun) -> VerificationRun:
    answer: Answer = run.answer
    workspace = answer.workspace
    # the strictness the audit had (the answer's domain); its own client and time budget
    job = audit_job_for_answer(answer, llm_time_budget_s=constants.LLM_ASYNC_TIME_BUDGET_S)
    setup = job.llm_setup
    if setup.client is None:
        _progress(run, status="done", finished_at=_now(), reason=setup.offline_reason, relabels=[])
        deep_check_announce(run)
        return run
    thresholds = job.verification.thresholds
    contexts = {str(c.get("id")): c for c in (answer.contexts or []) if isinstance(c, dict)}
    claims = list(answer.claims.prefetch_related("evidence__chunk").order_by("span_start", "id"))
    rebuilt = [_rebuilt(c, contexts) for c in claims]
    items = [(draft, hits) for draft, hits, _ in rebuilt]
    ctx = job_context(job.verification, llm=setup.client)
    llm_results: dict[str, list[MethodResult]] = {}
    for k, name in enumerate(LLM_METHODS, 1):
        llm_results[name] = REGISTRY[name].verify_many(items, ctx)
        _progress(run, progress={"done": k, "total": len(LLM_METHODS)})
    relabels: list[dict[str, Any]] = []
    not_run: dict[str, str] = {}
    with transaction.atomic():
        for i, (claim, (draft, hits, offline)) in enumerate(zip(claims, rebuilt)):
            mine = {name: results[i] for name, results in llm_results.items()}
            for name, result in mine.items():
                if not result.ran:
                    not_run.setdefault(name, result.details.get("reason", "did not run"))
            verdict = scoring.label_claim(draft, hits, {**offline, **mine}, thresholds)
            claim.method_results = {**claim.method_results, **{n: _card(r) for n, r in mine.items()}}
            claim.methods = sorted({*claim.methods, *(n for n, r in mine.items() if r.ran)})
            claim.metrics = {**claim.metrics, **scoring.method_metrics(mine)}
            claim.risk_flags = sorted(
                {*claim.risk_flags, *(f for r in mine.values() for f in r.flags), *_llm_flags(verdict)}
            )
            claim.save(update_fields=["method_results", "methods", "metrics", "risk_flags"])
            if not any(r.ran for r in mine.values()):
                continue
            before = claim.machine_label
            if claim_machine_relabel(
                claim=claim,
                label=verdict.label,
                confidence=verdict.confidence,
                verdict=verdict.verdict,
                source=SOURCE,
                reason=_evidence_note(mine),
            ):
                relabels.append(
                    {
                        "claim_id": claim.claim_id,
                        "from": before,
                        "to": verdict.label,
                        "confidence": round(verdict.confidence, 4),
                    }
                )
        fields = llm_run_fields(setup)
        run.llm_calls += fields["llm_calls"]
        run.prompt_tokens += fields["prompt_tokens"]
        run.completion_tokens += fields["completion_tokens"]
        run.llm_latency_ms += fields["llm_latency_ms"]
        run.llm_failures = [*run.llm_failures, *fields["llm_failures"]]
        run.methods = sorted({*run.methods, *(n for n, rs in llm_results.items() if any(r.ran for r in rs))})
        run.warnings = [
            w
            for w in run.warnings
            if not (w.get("code") == "method_not_run" and w.get("method") in LLM_METHODS)
        ] + [
            {"code": "method_not_run", "method": name, "message": why}
            for name, why in sorted(not_run.items())
            if not any(r.ran for r in llm_results[name])
        ]
        run.deep_checks = {
            **run.deep_checks,
            "status": "done",
            "finished_at": _now(),
            "relabels": relabels,
            "structured": setup.client.accounting.structured,
            "llm_calls": fields["llm_calls"],
        }
        run.save(
            update_fields=[
                "llm_calls",
                "prompt_tokens",
                "completion_tokens",
                "llm_latency_ms",
                "llm_failures",
                "methods",
                "warnings",
                "deep_checks",
            ]
        )
        event_record(
            action="answer.deep_checked",
            obj=answer,
            actor_label=SOURCE,
            workspace=workspace,
            details={"run": run.pk, "relabels": relabels, "llm_calls": fields["llm_calls"]},
        )
        if any(r["to"] != Label.SUPPORTED for r in relabels) or any(
            DISAGREEMENT_FLAG in c.risk_flags for c in claims
        ):
            hooks.answer_intake(answer=answer)
    deep_check_announce(run)
    return run


def deep_check_announce(run: VerificationRun) -> None:
    """POST the deep check's outcome to THEORIA["DEEP_CHECK_WEBHOOK_URL"] (when set); record the answer."""
    url = (settings.THEORIA.get("DEEP_CHECK_WEBHOOK_URL") or "").strip()
    if not url:
        return
    payload = {
        "event": "deep_check.finished",
        "run": run.pk,
        "answer_id": run.answer.public_id,
        "status": run.deep_checks.get("status"),
        "relabels": run.deep_checks.get("relabels", []),
    }
    # the same guard as the alert webhooks: public addresses only, no redirects, no file:// (fetch.post_json)
    try:
        response = post_json(
            url, payload, allow_private=bool(settings.THEORIA.get("WEB_ALLOW_PRIVATE_ADDRESSES"))
        )
        outcome = f"HTTP {response.status}"
    except WebError as exc:
        outcome = f"refused or failed ({exc.reason.value}): {exc.message}"[:300]
    _progress(run, webhook=outcome)

"""Audit and store a structured JSON answer (docs/SPEC_NOTES.md#structured-answers).

``structured_compute`` runs ``audit.pipeline.structured.audit_structured`` (stages 4-6 on every field
with source refs) outside any transaction; ``structured_store`` then stores the answer (``text`` = its JSON,
``answer_json`` = the object), one claim per field with its evidence, the run and the events
through ``audit.services.audit.answer_store``. Each claim's ``method_results["structured"]`` keeps
the field's path, its refs and the citation fix proposed beside the finding. There is no revision
loop: a structured answer's text is not rewritten.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from django.utils import timezone

from audit import constants
from audit.errors import InvalidInput
from audit.models import Answer, Claim, Evidence
from audit.pipeline.structured import StructuredError, StructuredResult, audit_structured, discover_fields
from audit.services.audit import answer_store
from audit.services.events import Event
from audit.services.job import AuditJob


def structured_fields_check(answer_json: object, contexts: list[dict[str, Any]]) -> None:
    """Raise InvalidInput naming the path of the first malformed field or source ref."""
    try:
        discover_fields(answer_json, [str(c.get("id")) for c in contexts or []])
    except StructuredError as exc:
        where = exc.path if exc.path == "answer_json" else f"answer_json.{exc.path}"
        raise InvalidInput(where, exc.message) from None


@dataclass(frozen=True)
class StructuredComputation:
    """What the structured audit computed, before anything is written."""

    started_at: dt.datetime
    outcome: StructuredResult


def structured_compute(job: AuditJob) -> StructuredComputation:
    """Verify each field of ``job.answer_json`` against the contexts its refs name; writes nothing."""
    if job.answer_json is None:
        raise InvalidInput("answer_json", "is required for a structured audit.")
    structured_fields_check(job.answer_json, list(job.contexts))
    started_at = timezone.now()
    plan = job.verification.plan
    outcome = audit_structured(
        job.verification.query,
        job.answer_json,
        list(job.contexts),
        thresholds=plan.thresholds,
        domain=job.verification.domain,
        llm=job.verification.llm_methods,
        methods=plan.methods,
    )
    result = outcome.result
    result.methods_not_run = {**result.methods_not_run, **plan.not_run}
    return StructuredComputation(started_at=started_at, outcome=outcome)


def structured_store(
    computed: StructuredComputation,
    job: AuditJob,
    *,
    evidence: dict[str, list[Evidence]],
    events: list[Event],
) -> Answer:
    """Write the structured audit (call inside a transaction: it is quick): the answer with its
    JSON, one claim per field with the field's path, refs and citation fix and its ``evidence``
    rows (``evidence_rows_of``), the run; its events are noted in ``events``."""
    outcome = computed.outcome
    answer, _ = answer_store(
        job,
        outcome.result,
        answer_text=outcome.text,
        mode=constants.MODE_AUDIT_LOCAL,
        started_at=computed.started_at,
        evidence=evidence,
        events=events,
    )
    answer.answer_json = job.answer_json
    answer.save(update_fields=["answer_json"])
    claims = {c.claim_id: c for c in Claim.objects.filter(answer=answer)}
    for n, (field, fix) in enumerate(zip(outcome.fields, outcome.fixes), 1):
        claim = claims[f"c{n}"]
        claim.method_results = {
            **claim.method_results,
            "structured": {
                "field": field.path,
                "source_refs": list(field.source_refs),
                "citation_fix": fix,
            },
        }
    Claim.objects.bulk_update(list(claims.values()), ["method_results"])
    return answer

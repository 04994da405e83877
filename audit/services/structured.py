"""Audit and store a structured JSON answer (docs/SPEC_NOTES.md#structured-answers).

``structured_compute`` runs ``audit.pipeline.structured.audit_structured`` (stages 4-6 on every field
with source refs) outside any transaction, as an audit's computation whose claims carry their field's
note; ``audit.services.audit.audit_store`` then stores the answer (``text`` = its JSON,
``answer_json`` = the object), one claim per field with its evidence and note, the run and the
events. Each claim's ``method_results["structured"]`` keeps the field's path, its refs and the
citation fix proposed beside the finding. There is no revision loop: a structured answer's text is
not rewritten.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from django.utils import timezone

from audit.errors import InvalidInput
from audit.pipeline.structured import StructuredResult, audit_structured
from audit.services.audit import AuditComputation
from audit.services.job import AuditJob


@dataclass(frozen=True)
class StructuredComputation:
    """What the structured audit computed, before anything is written."""

    started_at: dt.datetime
    outcome: StructuredResult
    audit: AuditComputation  # the same result as an audit's, which ``audit_store`` writes


def structured_compute(job: AuditJob) -> StructuredComputation:
    """Verify each field of ``job.answer_json`` (already checked: ``structured_fields_check``)
    against the contexts its refs name; writes nothing."""
    if job.answer_json is None:
        raise InvalidInput("answer_json", "is required for a structured audit.")
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
    notes = {  # each field's path, refs and the citation fix proposed beside the finding
        f"c{n}": {"structured": {"field": f.path, "source_refs": list(f.source_refs), "citation_fix": fix}}
        for n, (f, fix) in enumerate(zip(outcome.fields, outcome.fixes), 1)
    }
    audit = AuditComputation(
        started_at=started_at,
        result=result,
        outcome=None,
        setup=job.llm_setup,
        kb_meta=None,
        profile=plan.profile,
        notes=notes,
    )
    return StructuredComputation(started_at=started_at, outcome=outcome, audit=audit)

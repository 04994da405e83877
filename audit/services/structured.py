"""Audit and store a structured JSON answer (seed 003, post-verification of structured output).

``structured_audit`` runs ``audit.pipeline.structured.audit_structured`` (stages 4-6 on every field
with source refs) outside the transaction, then stores the answer (``text`` = its JSON,
``answer_json`` = the object), one claim per field with its evidence, the run and the events
through ``audit.services.audit.answer_store``. Each claim's ``method_results["structured"]`` keeps
the field's path, its refs and the citation fix proposed beside the finding. There is no revision
loop: a structured answer's text is not rewritten.
"""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from audit import constants
from audit.errors import InvalidInput
from audit.models import Answer, Claim, Workspace
from audit.pipeline.profiles import verification_plan
from audit.pipeline.structured import StructuredError, audit_structured, discover_fields
from audit.selectors.api import thresholds_for
from audit.services.audit import answer_store
from audit.services.llm import llm_setup_for


def structured_fields_check(answer_json, contexts) -> None:
    """Raise InvalidInput naming the path of the first malformed field or source ref."""
    try:
        discover_fields(answer_json, [str(c.get("id")) for c in contexts or []])
    except StructuredError as exc:
        where = exc.path if exc.path == "answer_json" else f"answer_json.{exc.path}"
        raise InvalidInput(where, exc.message) from None


def structured_audit(
    *,
    workspace: Workspace,
    query: str,
    answer_json: dict,
    contexts: list[dict],
    user=None,
    conversation_id: str = "",
    domain: str = "",
    reference: str | None = None,
    profile: str = "",
) -> Answer:
    """Verify each field of ``answer_json`` against the contexts its refs name and store the audit."""
    structured_fields_check(answer_json, contexts)
    started_at = timezone.now()
    plan = verification_plan(thresholds_for(workspace), profile)
    setup = llm_setup_for(workspace=workspace)
    llm = setup.client if plan.llm_methods else None
    outcome = audit_structured(
        query, answer_json, contexts, thresholds=plan.thresholds, domain=domain, llm=llm, methods=plan.methods
    )
    result = outcome.result
    result.methods_not_run = {**result.methods_not_run, **plan.not_run}
    with transaction.atomic():
        answer, _ = answer_store(
            workspace=workspace,
            result=result,
            query=query,
            answer_text=outcome.text,
            contexts=contexts,
            mode=constants.MODE_AUDIT_LOCAL,
            user=user,
            conversation_id=conversation_id,
            domain=domain,
            reference=reference,
            started_at=started_at,
            llm_setup=setup,
            profile=plan.profile,
        )
        answer.answer_json = answer_json
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

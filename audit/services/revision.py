"""Store what the revision loop did (docs/SPEC_NOTES.md#quality-gates-and-the-revision-loop): the revised answer, the original and the ledger.

``audit_and_store(..., revise=True)`` (``audit.services.audit``) runs ``revision_run`` on the
pipeline's result, stores the claims of the answer as received, then calls ``revision_record``
in the same transaction: the claims keep their text and verdict, and each claim the kept
attempt changed gets its ``revision`` (strategy, new wording, its own verdict, passage). The
audit event ``answer.revised`` lists the edits per strategy, the kept attempt and the warnings.
"""

from __future__ import annotations

from collections import Counter

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from audit.constants import Thresholds
from audit.models import Answer, VerificationRun
from audit.pipeline.revision import RevisionOptions, RevisionOutcome, revise_audit
from audit.pipeline.types import AuditResult
from audit.services.events import event_record

SOURCE = "revision_loop"


def revision_options() -> RevisionOptions:
    """The deployment's revision options (``THEORIA["REVISION_SOFTENING"]`` / ``["REVISION_UNSUPPORTED"]``)."""
    conf = settings.THEORIA
    return RevisionOptions(
        softening=conf.get("REVISION_SOFTENING") or RevisionOptions.softening,
        unsupported_action=conf.get("REVISION_UNSUPPORTED") or RevisionOptions.unsupported_action,
    )


def revision_run(
    *,
    query: str,
    answer_text: str,
    contexts,
    initial: AuditResult | None = None,
    kb=None,
    domain: str = "",
    thresholds: Thresholds | None = None,
    llm=None,
    options: RevisionOptions | None = None,
    given: int | None = None,
) -> RevisionOutcome:
    """Revise ``answer_text`` from its first audit ``initial`` (audited here when None); stores nothing.

    ``kb`` is the pipeline's ``KnowledgeBase`` (corrective retrieval searches it); ``llm`` a
    usable LLM client, or None for the offline strategies; ``options`` default to the settings;
    ``given``: how many of ``contexts`` the request sent (the rest is evidence, cited as ``[n]``).
    """
    return revise_audit(
        query=query,
        answer=answer_text,
        contexts=contexts,
        kb=kb,
        initial=initial,
        domain=domain,
        thresholds=thresholds,
        llm=llm,
        options=options or revision_options(),
        given=given,
    )


@transaction.atomic
def revision_record(*, answer: Answer, run: VerificationRun, outcome: RevisionOutcome, actor=None) -> Answer:
    """Put a revision outcome on ``answer`` and ``run`` and record the ``answer.revised`` event.

    ``answer.original_text`` keeps the answer as received (set once); ``answer.text`` becomes
    the kept attempt; ``answer.revisions`` gains one entry (text, ledger, warnings, stop reason,
    the passages its ``[n]`` markers name beyond the request's); ``run.revision_history`` holds
    every attempt (text, per-claim ledger, edits, decision); each stored claim gets the revision
    of the claim with its id and text in the outcome's first attempt (or none).
    """
    if not answer.original_text:
        answer.original_text = outcome.original_text
    answer.text = outcome.final_text
    if outcome.revised:
        answer.revisions = [
            *(answer.revisions or []),
            {
                "source": SOURCE,
                "at": timezone.now().isoformat(),
                "text": outcome.final_text,
                "ledger": outcome.ledger_json(),
                "warnings": outcome.warnings,
                "stop_reason": outcome.stop_reason,
                "kept_attempt": outcome.kept,
                "attempts": len(outcome.attempts),
                "citations": cited_passages(outcome),
            },
        ]
    answer.full_clean()
    answer.save(update_fields=["original_text", "text", "revisions"])
    claims_record_revisions(answer=answer, outcome=outcome)
    run.revision_history = outcome.history_json()
    codes = {w.get("code") for w in run.warnings or []}
    run.warnings = [*(run.warnings or []), *(w for w in outcome.warnings if w["code"] not in codes)]
    run.full_clean()
    run.save(update_fields=["revision_history", "warnings"])
    event_record(
        action="answer.revised" if outcome.revised else "answer.revision_checked",
        obj=answer,
        actor=actor,
        workspace=answer.workspace,
        details={
            "run": run.pk,
            "attempts": len(outcome.attempts),
            "kept_attempt": outcome.kept,
            "stop_reason": outcome.stop_reason,
            "edits": dict(Counter(e.strategy for e in outcome.edits)),
            "warnings": [w["code"] for w in outcome.warnings],
        },
    )
    return answer


def cited_passages(outcome: RevisionOutcome) -> list[dict]:
    """The passages the revised text names by position beyond the request's (``[n]``)."""
    return [
        {"anchor": str(n), "id": p.id, "title": p.title, "uri": p.uri, "source_type": p.source_type}
        for n, p in enumerate(outcome.passages, start=1)
        if n > outcome.given
    ]


def claims_record_revisions(*, answer: Answer, outcome: RevisionOutcome) -> None:
    """Put each claim's remediation on its row (``Claim.revision``); the claim's own text and verdict stay."""
    first = {c.claim.claim_id: c.claim.text for c in outcome.attempts[0].result.claims}
    revisions = outcome.claim_revisions() if outcome.revised else {}
    for claim in answer.claims.all():
        revision = revisions.get(claim.claim_id) if first.get(claim.claim_id) == claim.text else None
        if claim.revision != revision:
            claim.revision = revision
            claim.save(update_fields=["revision"])

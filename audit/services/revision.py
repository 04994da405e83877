"""Store what the revision loop did (issue 6): the revised answer, the original and the ledger.

``audit_answer(..., revise=True)`` (``audit.services.audit``) runs ``revision_run`` on the
pipeline's result before it stores the claims, so the stored claims are those of the answer as
returned; it then calls ``revision_record`` in the same transaction. The audit event
``answer.revised`` lists the edits per strategy, the kept attempt and the warnings.
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
    return RevisionOptions(softening=conf.get("REVISION_SOFTENING") or RevisionOptions.softening,
                           unsupported_action=conf.get("REVISION_UNSUPPORTED") or RevisionOptions.unsupported_action)


def revision_run(*, query: str, answer_text: str, contexts, initial: AuditResult | None = None, kb=None, domain: str = "",
                 thresholds: Thresholds | None = None, llm=None,
                 options: RevisionOptions | None = None) -> RevisionOutcome:
    """Revise ``answer_text`` from its first audit ``initial`` (audited here when None); stores nothing.

    ``kb`` is the pipeline's ``KnowledgeBase`` (corrective retrieval searches it); ``llm`` a
    usable LLM client, or None for the offline strategies; ``options`` default to the settings.
    """
    return revise_audit(query=query, answer=answer_text, contexts=contexts, kb=kb, initial=initial, domain=domain,
                        thresholds=thresholds, llm=llm, options=options or revision_options())


@transaction.atomic
def revision_record(*, answer: Answer, run: VerificationRun, outcome: RevisionOutcome, actor=None) -> Answer:
    """Put a revision outcome on ``answer`` and ``run`` and record the ``answer.revised`` event.

    ``answer.original_text`` keeps the answer as received (set once); ``answer.text`` becomes
    the kept attempt; ``answer.revisions`` gains one entry (text, ledger, warnings, stop reason);
    ``run.revision_history`` holds every attempt (text, per-claim ledger, edits, decision).
    """
    if not answer.original_text:
        answer.original_text = outcome.original_text
    answer.text = outcome.final_text
    if outcome.revised:
        answer.revisions = [*(answer.revisions or []), {
            "source": SOURCE, "at": timezone.now().isoformat(), "text": outcome.final_text,
            "ledger": outcome.ledger_json(), "warnings": outcome.warnings, "stop_reason": outcome.stop_reason,
            "kept_attempt": outcome.kept, "attempts": len(outcome.attempts),
        }]
    answer.full_clean()
    answer.save(update_fields=["original_text", "text", "revisions"])
    run.revision_history = outcome.history_json()
    codes = {w.get("code") for w in run.warnings or []}
    run.warnings = [*(run.warnings or []), *(w for w in outcome.warnings if w["code"] not in codes)]
    run.full_clean()
    run.save(update_fields=["revision_history", "warnings"])
    event_record(action="answer.revised" if outcome.revised else "answer.revision_checked", obj=answer, actor=actor,
                 workspace=answer.workspace, details={
                     "run": run.pk, "attempts": len(outcome.attempts), "kept_attempt": outcome.kept,
                     "stop_reason": outcome.stop_reason, "edits": dict(Counter(e.strategy for e in outcome.edits)),
                     "warnings": [w["code"] for w in outcome.warnings]})
    return answer

"""Audit a stored Normal answer on an analyst's request ("Audit now" on the answer list and page).

The stored answer stays as it was recorded (a Normal answer is a record of what was returned
unverified); its query, text, passages, domain and conversation go through ``audit_submit`` in
Audit-Local mode, exactly as an API request would, and the two answers point at each other
through audit events.
"""

from __future__ import annotations

from django.db import transaction

from audit import constants
from audit.errors import InvalidInput
from audit.models import Answer
from audit.pipeline.structured import ordered_json
from audit.selectors.claims import AUDIT_NOW_ACTION, answer_audited_as
from audit.services.events import AnyUser, event_record
from audit.services.submissions import AuditRequest, audit_submit


def answer_audit_now(*, answer: Answer, user: AnyUser) -> Answer:
    """Audit a Normal answer's text (Audit-Local) and return the audited copy.

    Raises InvalidInput naming ``answer`` when the answer was already audited (it is not a
    Normal answer, or an analyst audited it before: the copy is named in the message). The audit
    runs outside any transaction; the two events linking the answers are then written in one
    short transaction that locks the Normal answer and checks again, so two clicks at once store
    one audited copy (the second one's copy is deleted and it gets the same message).
    """
    if answer.mode != constants.MODE_NORMAL:
        raise InvalidInput("answer", f"{answer.public_id} was already audited ({answer.get_mode_display()}).")
    earlier = answer_audited_as(answer=answer)
    if earlier:
        raise InvalidInput("answer", f"{answer.public_id} was already audited as {earlier}.")
    structured = answer.answer_json is not None  # a structured answer is audited field by field again
    request = AuditRequest(
        query=answer.query,
        answer=None if structured else answer.original_text or answer.text,
        answer_json=ordered_json(answer.original_text or answer.text, answer.answer_json)
        if structured
        else None,
        contexts=list(answer.contexts or []),
        mode=constants.MODE_AUDIT_LOCAL,
        conversation_id=answer.conversation_id,
        domain=answer.domain,
        reference=answer.reference or None,
    )
    # compute first (the pipeline runs outside any transaction, ``audit_submit``), then record the
    # link between the two answers in one short transaction
    audited = audit_submit(workspace=answer.workspace, user=user, request=request).answer
    try:
        with transaction.atomic():
            Answer.objects.select_for_update().filter(pk=answer.pk).first()  # one "Audit now" at a time
            earlier = answer_audited_as(answer=answer)
            if earlier:
                raise InvalidInput("answer", f"{answer.public_id} was already audited as {earlier}.")
            event_record(
                action=AUDIT_NOW_ACTION,
                obj=answer,
                actor=user,
                workspace=answer.workspace,
                details={"audited_as": audited.public_id},
            )
            event_record(
                action="answer.audited_from",
                obj=audited,
                actor=user,
                workspace=answer.workspace,
                details={"audited_from": answer.public_id},
            )
    except BaseException:
        Answer.objects.filter(pk=audited.pk).delete()  # a click that loses the race stores nothing
        raise
    return audited

"""Domain errors of the escalation workflow: ``TheoriaError``s, so the project's one exception
handler (``audit.api.exceptions``) turns them into HTTP responses, and pages into a message."""

from __future__ import annotations

from audit.errors import TheoriaError


class EscalationError(TheoriaError):
    """A transition that cannot happen; ``status_code`` is the HTTP status the API answers with."""

    status_code = 409
    code = "escalation_error"


class CaseConflict(EscalationError):
    """The case changed under the caller (a concurrent action got there first): reload and retry."""

    code = "case_conflict"


class TransitionNotAllowed(EscalationError):
    """The case's current state does not allow this transition (e.g. acknowledging a resolved case)."""

    code = "transition_not_allowed"


class NotPermitted(EscalationError):
    """The actor's role does not allow this action at the case's tier."""

    status_code = 403
    code = "not_permitted"


class AlreadyDone(EscalationError):
    """The caller's own earlier request already did this (a double submit): nothing else changed."""

    code = "already_done"

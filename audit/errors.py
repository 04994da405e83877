"""Domain errors raised by services; the API turns them into responses in one place
(``audit.api.exceptions``), pages and commands into a message."""

from __future__ import annotations


class TheoriaError(Exception):
    """Base of the errors a caller can act on (never a bug).

    ``status_code`` and ``code`` are what ``audit.api.exceptions`` answers with (the one mapping
    from errors to HTTP); ``escalation.errors`` subclasses this too.
    """

    status_code = 400
    code = "invalid"


class InvalidInput(TheoriaError):
    """A value a caller supplied cannot be used; ``field`` names it (dotted path for nested values)."""

    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


class Missing(InvalidInput):
    """A value names a row that does not exist (in the caller's workspace): HTTP 404, as a path would."""

    status_code = 404
    code = "not_found"


class Conflict(TheoriaError):
    """The request clashes with the current state (a reused idempotency key, a changed row)."""

    status_code = 409
    code = "conflict"


class TooLarge(InvalidInput):
    """A request within the byte limits asks for more work than the workspace allows (HTTP 413)."""

    status_code = 413
    code = "too_large"


class Busy(InvalidInput):
    """The caller already runs as much of this work as one caller may (HTTP 429, ``retry_after``)."""

    status_code = 429
    code = "busy"

    def __init__(self, field: str, message: str, retry_after: int) -> None:
        super().__init__(field, message)
        self.retry_after = retry_after


class Unavailable(InvalidInput):
    """A valid request needs what this deployment does not have (an LLM to draft a missing
    answer): HTTP 409, naming the field that would have made it work."""

    status_code = 409
    code = "unavailable"


class NotAllowed(TheoriaError):
    """The caller's role does not allow this action (HTTP 403)."""

    status_code = 403
    code = "not_permitted"


class AlreadyDone(Conflict):
    """The caller's own earlier request already did this (a double submit); nothing else changed."""

    code = "already_done"

"""Domain errors raised by services; the API turns them into responses in one place
(``audit.api.exceptions``), pages and commands into a message."""

from __future__ import annotations


class TheoriaError(Exception):
    """Base of the errors a caller can act on (never a bug)."""


class InvalidInput(TheoriaError):
    """A value a caller supplied cannot be used; ``field`` names it (dotted path for nested values)."""

    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


class Conflict(TheoriaError):
    """The request clashes with the current state (a reused idempotency key, a changed row)."""


class TooLarge(InvalidInput):
    """A request within the byte limits asks for more work than the workspace allows (HTTP 413)."""

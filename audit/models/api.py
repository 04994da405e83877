"""Idempotency keys of the submission API: a retried request gets the first result."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from .answers import Answer
from .workspace import Workspace


class IdempotencyKey(models.Model):
    """The ``Idempotency-Key`` a client sent with ``POST /api/v1/audits``, and what it produced.

    Keys are scoped to the client (user) in a workspace. ``fingerprint`` is the sha256 of the
    request body in canonical form: a retry with the same body gets ``answer`` back, the same
    key with another body is refused (409). ``extras`` keeps what the first response said that
    the stored answer does not (how the mode was resolved, the web-escalation outcome).
    """

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="idempotency_keys")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="idempotency_keys"
    )
    key = models.CharField(max_length=255)
    fingerprint = models.CharField(max_length=71)
    answer = models.ForeignKey(Answer, on_delete=models.CASCADE, related_name="idempotency_keys")
    extras = models.JSONField(
        default=dict,
        blank=True,
        help_text="Response parts not derivable from the answer "
        "(mode decision, web escalation), replayed as first sent.",
    )
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["workspace", "user", "key"], name="%(app_label)s_%(class)s_unique_key"
            ),
            models.CheckConstraint(
                condition=models.Q(fingerprint__startswith="sha256:"),
                name="%(app_label)s_%(class)s_fingerprint_prefixed",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.user_id}:{self.key}"

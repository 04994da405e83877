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


class BackgroundJobStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"


class BackgroundJob(models.Model):
    """Work a request handed to the task queue instead of doing it in the web worker: an audit over
    the inline cost budget (``kind`` audit) or a document upload's ingestion (``kind`` ingestion).

    ``request`` is what the task needs to do the work again (the audit request, or the upload's
    text and its options); ``progress`` ``{"done", "total"}``; ``result`` what the work produced
    (the answer's id, the documents stored); ``error`` one sentence when it failed, with
    ``error_status`` the HTTP status the same error would have had inline (413, 400, ...).
    ``GET /api/v1/jobs/<id>`` shows it to the caller's workspace.
    """

    KIND_AUDIT = "audit"
    KIND_INGESTION = "ingestion"

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="background_jobs")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="background_jobs",
    )
    kind = models.CharField(max_length=16)
    status = models.CharField(
        max_length=8, choices=BackgroundJobStatus.choices, default=BackgroundJobStatus.QUEUED
    )
    request = models.JSONField(default=dict, blank=True)
    key = models.CharField(max_length=255, blank=True, default="")
    fingerprint = models.CharField(max_length=71, blank=True, default="")
    progress = models.JSONField(default=dict, blank=True)
    result = models.JSONField(default=dict, blank=True)
    answer = models.ForeignKey(
        Answer, null=True, blank=True, on_delete=models.SET_NULL, related_name="background_jobs"
    )
    error = models.TextField(blank=True, default="")
    error_status = models.PositiveSmallIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["workspace", "user", "status"], name="audit_bgjob_ws_user_status")]

    def __str__(self) -> str:
        return f"{self.kind} job {self.pk} ({self.status})"

    @property
    def active(self) -> bool:
        return self.status in (BackgroundJobStatus.QUEUED, BackgroundJobStatus.RUNNING)

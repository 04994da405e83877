"""Audit-Web: the log of every external call and the response cache (docs/SPEC_NOTES.md#escalation-to-audit-web)."""

from __future__ import annotations

from django.db import models
from django.db.models import Q
from django.utils import timezone

from audit.pipeline.web.fetch import FailureReason as _PipelineReason

from .answers import Answer, Claim
from .workspace import Workspace


class WebProvider(models.TextChoices):
    PUBMED = "pubmed", "PubMed"
    ARXIV = "arxiv", "arXiv"
    PAGE = "page", "Web page"


# The pipeline's failure codes, as choices (one list: audit.pipeline.web.fetch.FailureReason).
WebFailureReason = models.TextChoices(
    "WebFailureReason", [(reason.name, (reason.value, reason.label)) for reason in _PipelineReason]
)


class ExternalCallStatus(models.TextChoices):
    OK = "ok", "OK"
    CACHED = "cached", "Served from cache"
    REFUSED = "refused", "Refused by policy"
    FAILED = "failed", "Failed"


_UNSUCCESSFUL = [ExternalCallStatus.REFUSED, ExternalCallStatus.FAILED]
_SUCCESSFUL = [ExternalCallStatus.OK, ExternalCallStatus.CACHED]


class ExternalCall(models.Model):
    """One call Theoria made (or refused to make) to the outside world, for the regulator.

    ``status`` says what happened: ``ok`` (a response came back), ``cached`` (served from the
    cache, nothing left the system), ``refused`` (a policy stopped it: data residency, scheme,
    allow-list, private address — possibly after a redirect) or ``failed`` (timeout, size or type
    limit, HTTP error, malformed answer). ``failure_reason`` is set exactly when refused or failed.
    """

    Status = ExternalCallStatus
    Provider = WebProvider
    FailureReason = WebFailureReason

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="external_calls")
    answer = models.ForeignKey(
        Answer, null=True, blank=True, on_delete=models.SET_NULL, related_name="external_calls"
    )
    claim = models.ForeignKey(
        Claim, null=True, blank=True, on_delete=models.SET_NULL, related_name="external_calls"
    )
    provider = models.CharField(max_length=16, choices=WebProvider.choices)
    url = models.CharField(max_length=2000)
    query = models.CharField(max_length=500, blank=True, help_text="The query derived from the claim text.")
    status = models.CharField(max_length=16, choices=ExternalCallStatus.choices)
    http_status = models.PositiveSmallIntegerField(null=True, blank=True)
    duration_ms = models.FloatField(default=0.0)
    cache_hit = models.BooleanField(default=False)
    failure_reason = models.CharField(max_length=32, choices=WebFailureReason.choices, blank=True)
    failure_detail = models.CharField(max_length=500, blank=True)
    response_bytes = models.PositiveIntegerField(default=0)
    redirects = models.JSONField(default=list, blank=True)
    at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["-at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=ExternalCallStatus.values), name="%(app_label)s_%(class)s_status_valid"
            ),
            models.CheckConstraint(
                condition=Q(provider__in=WebProvider.values), name="%(app_label)s_%(class)s_provider_valid"
            ),
            models.CheckConstraint(
                condition=Q(duration_ms__gte=0), name="%(app_label)s_%(class)s_duration_nonnegative"
            ),
            models.CheckConstraint(
                condition=(Q(status__in=_UNSUCCESSFUL) & ~Q(failure_reason=""))
                | (Q(status__in=_SUCCESSFUL) & Q(failure_reason="")),
                name="%(app_label)s_%(class)s_reason_iff_unsuccessful",
            ),
            models.CheckConstraint(
                condition=(Q(cache_hit=True) & Q(status=ExternalCallStatus.CACHED))
                | (Q(cache_hit=False) & ~Q(status=ExternalCallStatus.CACHED)),
                name="%(app_label)s_%(class)s_cache_hit_iff_cached",
            ),
        ]
        indexes = [models.Index(fields=["workspace", "at"], name="audit_extcall_ws_at")]

    def __str__(self) -> str:
        return f"{self.provider} {self.status} {self.url[:80]}"


class WebCacheEntry(models.Model):
    """A provider response kept for reuse until ``expires_at`` (public data: shared by workspaces).

    The allow-list and the residency switch are checked before the cache is read, so a cached
    response is never served where the call itself would be refused.
    """

    key = models.CharField(max_length=64, unique=True, help_text="sha256 of provider and URL.")
    provider = models.CharField(max_length=16, choices=WebProvider.choices)
    url = models.CharField(max_length=2000)
    final_url = models.CharField(max_length=2000)
    http_status = models.PositiveSmallIntegerField()
    content_type = models.CharField(max_length=100)
    body = models.BinaryField()
    fetched_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField(db_index=True)

    class Meta:
        verbose_name_plural = "web cache entries"
        constraints = [
            models.CheckConstraint(
                condition=Q(expires_at__gte=models.F("fetched_at")),
                name="%(app_label)s_%(class)s_expires_after_fetch",
            ),
            models.CheckConstraint(
                condition=Q(provider__in=WebProvider.values), name="%(app_label)s_%(class)s_provider_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.provider} {self.url[:80]}"

    def is_fresh(self, now) -> bool:
        return self.expires_at > now

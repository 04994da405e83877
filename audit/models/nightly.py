"""The nightly batch auditor: one report per workspace and day, and one work item per claim."""

from __future__ import annotations

from django.db import models
from django.db.models import Q
from django.utils import timezone

from .answers import Claim
from .choices import Label
from .workspace import Workspace


class NightlyReport(models.Model):
    """The nightly re-check of one workspace's weak claims of one day (docs/SPEC_NOTES.md#nightly-auditor).

    Created when the run starts (status RUNNING) with one :class:`NightlyItem` per selected
    claim; the run may be killed and restarted, and it finishes (DONE) when every item is
    processed. ``report`` holds the summary the team reads: top failing knowledge-base
    documents, stale sources under the workspace freshness policy, claims recommended for
    human review, label drift and counts. The counters are denormalised from the items so
    lists and the dashboard need no aggregation.
    """

    class Status(models.TextChoices):
        RUNNING = "running", "Running"
        DONE = "done", "Done"

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="nightly_reports")
    date = models.DateField(help_text="The day whose claims were re-checked (UTC).")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.RUNNING)
    started_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)
    claims_selected = models.PositiveIntegerField(default=0)
    claims_processed = models.PositiveIntegerField(default=0)
    labels_changed = models.PositiveIntegerField(default=0)
    review_recommended = models.PositiveIntegerField(default=0)
    attempts = models.PositiveIntegerField(default=0, help_text="How many runs worked on this report.")
    duration_s = models.FloatField(default=0.0, help_text="Processing time summed over attempts.")
    claims_per_s = models.FloatField(default=0.0)
    report = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-date", "workspace_id"]
        constraints = [
            models.UniqueConstraint(fields=["workspace", "date"], name="%(app_label)s_%(class)s_unique_day"),
            models.CheckConstraint(
                condition=Q(status__in=["running", "done"]), name="%(app_label)s_%(class)s_status_valid"
            ),
            models.CheckConstraint(
                condition=Q(status="done", finished_at__isnull=False)
                | Q(status="running", finished_at__isnull=True),
                name="%(app_label)s_%(class)s_finished_when_done",
            ),
            models.CheckConstraint(
                condition=Q(claims_processed__lte=models.F("claims_selected")),
                name="%(app_label)s_%(class)s_processed_le_selected",
            ),
            models.CheckConstraint(
                condition=Q(duration_s__gte=0), name="%(app_label)s_%(class)s_duration_nonnegative"
            ),
        ]

    def __str__(self) -> str:
        return f"nightly {self.date} {self.workspace_id} ({self.status})"


class NightlyItem(models.Model):
    """One claim to re-check in one nightly report, and what the re-check concluded.

    ``processed`` flips to true exactly once, by a conditional update in the same transaction
    that stores the re-check, so a killed run that restarts never processes a claim twice.
    ``old_*`` are the claim's label and confidence when selected; ``new_*`` the re-check's.
    """

    report = models.ForeignKey(NightlyReport, on_delete=models.CASCADE, related_name="items")
    claim = models.ForeignKey(Claim, on_delete=models.CASCADE, related_name="nightly_items")
    old_label = models.CharField(max_length=16, choices=Label.choices)
    old_confidence = models.FloatField()
    processed = models.BooleanField(default=False)
    processed_at = models.DateTimeField(null=True, blank=True)
    attempt = models.PositiveIntegerField(default=0, help_text="The report attempt that processed this item.")
    new_label = models.CharField(max_length=16, choices=Label.choices, blank=True)
    new_confidence = models.FloatField(null=True, blank=True)
    changed = models.BooleanField(default=False)
    result = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["report_id", "id"]
        constraints = [
            models.UniqueConstraint(fields=["report", "claim"], name="%(app_label)s_%(class)s_unique_claim"),
            models.CheckConstraint(
                condition=Q(processed=True, processed_at__isnull=False)
                | Q(processed=False, processed_at__isnull=True),
                name="%(app_label)s_%(class)s_processed_at_when_processed",
            ),
            models.CheckConstraint(
                condition=Q(new_confidence__isnull=True)
                | (Q(new_confidence__gte=0.0) & Q(new_confidence__lte=1.0)),
                name="%(app_label)s_%(class)s_confidence_unit_interval",
            ),
        ]
        indexes = [
            models.Index(
                fields=["report", "id"], condition=Q(processed=False), name="audit_nightlyitem_todo"
            ),
        ]

    def __str__(self) -> str:
        return f"item {self.claim_id} of {self.report_id}"

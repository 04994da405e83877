"""What the verifier learns from its reviewers: labelled examples and calibration versions."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from .answers import Claim
from .choices import Label
from .workspace import Workspace


class ExampleSource(models.TextChoices):
    CASE = "case", "Review case"
    REVISION = "revision", "Revision review"


class ExampleDecision(models.TextChoices):
    CONFIRM = "confirm", "Confirmed the label"
    RELABEL_SUPPORTED = "relabel_supported", "Relabelled SUPPORTED"
    RELABEL_REFUTED = "relabel_refuted", "Relabelled REFUTED"
    RELABEL_NEI = "relabel_nei", "Relabelled NEI"
    SUPPRESS = "suppress", "Suppressed the answer"
    REVISION_ACCEPTED = "revision_accepted", "Accepted the revision"
    REVISION_REJECTED = "revision_rejected", "Rejected the revision"


class CalibrationStatus(models.TextChoices):
    ACTIVE = "active", "Active"
    INACTIVE = "inactive", "Inactive"
    DECLINED = "declined", "Declined (did not win on held-out folds)"


class ReviewedExample(models.Model):
    """A reviewer's verdict on a claim, kept as a labelled example of the workspace.

    Written when a review case is resolved (confirm, relabel, suppress) and when a revision is
    accepted or rejected. It copies what the reviewer judged: the claim's wording (the revised
    wording for a revision), the evidence shown beside it, and the machine's label, confidence,
    support logit, judge version and calibration version at that moment, beside the reviewer's
    label. Rows are never changed; they go with their claim (retention purges both).
    """

    Source = ExampleSource
    Decision = ExampleDecision

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="reviewed_examples")
    claim = models.ForeignKey(Claim, on_delete=models.CASCADE, related_name="reviewed_examples")
    source = models.CharField(max_length=16, choices=Source.choices)
    decision = models.CharField(max_length=24, choices=Decision.choices)
    reference = models.CharField(max_length=64, blank=True, help_text="The case ticket, or the revision.")
    domain = models.CharField(max_length=64, blank=True, db_index=True)
    claim_text = models.TextField(help_text="The wording the reviewer judged.")
    evidence = models.JSONField(
        default=list, blank=True, help_text="The passages shown with it: id, title, text, source type, hash."
    )
    machine_label = models.CharField(max_length=16, choices=Label.choices)
    machine_confidence = models.FloatField()
    machine_logit = models.FloatField(null=True, blank=True)
    judge = models.CharField(max_length=32, blank=True)
    judge_version = models.CharField(max_length=64, blank=True)
    calibration_version = models.PositiveIntegerField(null=True, blank=True)
    reviewer_label = models.CharField(max_length=16, choices=Label.choices)
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    reviewer_name = models.CharField(max_length=150, blank=True)
    rationale = models.TextField(blank=True)
    decided_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["-decided_at", "-id"]
        indexes = [models.Index(fields=["workspace", "decided_at"], name="audit_example_ws_decided")]
        constraints = [
            models.CheckConstraint(
                condition=Q(machine_label__in=Label.values) & Q(reviewer_label__in=Label.values),
                name="%(app_label)s_%(class)s_labels_valid",
            ),
            models.CheckConstraint(
                condition=Q(machine_confidence__gte=0.0) & Q(machine_confidence__lte=1.0),
                name="%(app_label)s_%(class)s_confidence_unit_interval",
            ),
            models.CheckConstraint(
                condition=Q(source__in=ExampleSource.values), name="%(app_label)s_%(class)s_source_valid"
            ),
            models.CheckConstraint(
                condition=Q(decision__in=ExampleDecision.values),
                name="%(app_label)s_%(class)s_decision_valid",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.reference or self.source}: {self.machine_label} → {self.reviewer_label}"

    @property
    def agrees(self) -> bool:
        """True when the reviewer gave the machine's label."""
        return self.reviewer_label == self.machine_label


class CalibrationVersion(models.Model):
    """One fit of a workspace's calibration: its parameters, its held-out figures and its fate.

    ``params`` is an ``audit.pipeline.calibration.Calibration`` as a dict; ``metrics`` the
    before/after figures of the grouped cross-validation that decided it. A fit that did not win is
    kept as ``declined``; of the others at most one is ``active`` (the one
    ``Workspace.calibration`` copies), the rest ``inactive`` (superseded or rolled back).
    """

    Status = CalibrationStatus

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="calibration_versions")
    number = models.PositiveIntegerField()
    status = models.CharField(max_length=16, choices=Status.choices)
    judge = models.CharField(max_length=32)
    judge_version = models.CharField(max_length=64)
    depth = models.CharField(max_length=8)
    params = models.JSONField(default=dict, blank=True)
    metrics = models.JSONField(default=dict, blank=True)
    example_ids = models.JSONField(default=list, blank=True, help_text="The examples it was fitted on.")
    n_examples = models.PositiveIntegerField(default=0)
    fitted_at = models.DateTimeField(default=timezone.now)
    fitted_by = models.CharField(max_length=150, blank=True, help_text="A username or a system component.")

    class Meta:
        ordering = ["-number"]
        constraints = [
            models.UniqueConstraint(
                fields=["workspace", "number"], name="%(app_label)s_%(class)s_number_once"
            ),
            models.UniqueConstraint(
                fields=["workspace"],
                condition=Q(status=CalibrationStatus.ACTIVE),
                name="%(app_label)s_%(class)s_one_active",
            ),
            models.CheckConstraint(
                condition=Q(status__in=CalibrationStatus.values),
                name="%(app_label)s_%(class)s_status_valid",
            ),
        ]

    def __str__(self) -> str:
        return f"calibration v{self.number} ({self.status})"


class LLMWeightVersion(models.Model):
    """One fit of the LLM judge's weight and margin for a workspace, an endpoint and a model
    (``evaluate --judge llm --fit``, docs/LLM.md#fitting-the-llms-weight), beside the reviewer
    calibration. At most one version per (workspace, endpoint, model) is ``active``: the one
    ``llm_setup_for`` puts in force; the others are ``inactive`` (superseded or rolled back). Without
    an active version the LLM is unfitted: it moves no verdict, its disagreements go to review.
    """

    Status = CalibrationStatus

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="llm_weight_versions")
    number = models.PositiveIntegerField()
    status = models.CharField(max_length=16, choices=Status.choices)
    endpoint = models.CharField(max_length=500, help_text="The endpoint's base URL, without a trailing /.")
    model = models.CharField(max_length=200)
    judge_prompt = models.CharField(max_length=16, default="batched")
    weight = models.FloatField()
    margin = models.FloatField()
    metrics = models.JSONField(default=dict, blank=True, help_text="Held-out figures of the grouped folds.")
    n_claims = models.PositiveIntegerField(default=0)
    llm_calls = models.PositiveIntegerField(default=0)
    fitted_at = models.DateTimeField(default=timezone.now)
    fitted_by = models.CharField(max_length=150, blank=True)

    class Meta:
        ordering = ["-number"]
        constraints = [
            models.UniqueConstraint(
                fields=["workspace", "number"], name="%(app_label)s_%(class)s_number_once"
            ),
            models.UniqueConstraint(
                fields=["workspace", "endpoint", "model"],
                condition=Q(status=CalibrationStatus.ACTIVE),
                name="%(app_label)s_%(class)s_one_active",
            ),
            models.CheckConstraint(
                condition=Q(status__in=CalibrationStatus.values),
                name="%(app_label)s_%(class)s_status_valid",
            ),
        ]

    def __str__(self) -> str:
        return f"LLM weight v{self.number} ({self.model} at {self.endpoint}): {self.weight:g}"

"""Audited answers, their claims, the evidence behind each claim, and verification runs."""

from __future__ import annotations

import secrets
from collections.abc import Iterable
from typing import Any, TypeVar

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from audit import constants
from audit.pipeline.text import fold

from .choices import ClaimType, Importance, Label, Mode, RevisionStatus, SourceType, Verdict
from .kb import Chunk
from .workspace import Workspace


def new_answer_public_id() -> str:
    """Return an id like ``a-2026-11-22-3f9c01ab`` (date for humans, random part for uniqueness)."""
    return f"a-{timezone.now():%Y-%m-%d}-{secrets.token_hex(4)}"


def _unit_interval(field: str, name: str, nullable: bool = False) -> models.CheckConstraint:
    condition = Q(**{f"{field}__gte": 0.0}) & Q(**{f"{field}__lte": 1.0})
    if nullable:
        condition = condition | Q(**{f"{field}__isnull": True})
    return models.CheckConstraint(condition=condition, name=f"%(app_label)s_%(class)s_{name}")


_Row = TypeVar("_Row", bound="SearchFolded")


class SearchFoldQuerySet(models.QuerySet[_Row]):
    """Keeps ``search_text`` (the model's ``SEARCH_SOURCES`` folded) on rows written in bulk too."""

    def bulk_create(self, objs: Iterable[_Row], *args: Any, **kwargs: Any) -> list[_Row]:
        objs = list(objs)
        for obj in objs:
            obj.search_text = obj.folded_search_text()
        return super().bulk_create(objs, *args, **kwargs)


class SearchFolded(models.Model):
    """A model with ``search_text``: its ``SEARCH_SOURCES`` folded for accent- and case-blind search
    (``audit.pipeline.text.fold``), written with the row (``save``, ``bulk_create``)."""

    SEARCH_SOURCES: tuple[str, ...] = ()

    search_text = models.TextField(
        blank=True, editable=False, default="", help_text="The searched fields, accents and case folded."
    )

    objects = SearchFoldQuerySet.as_manager()

    class Meta:
        abstract = True

    def save(self, *args: Any, **kwargs: Any) -> None:
        self.search_text = self.folded_search_text()
        fields = kwargs.get("update_fields")
        if fields is not None and set(fields) & set(self.SEARCH_SOURCES):
            kwargs["update_fields"] = [*fields, "search_text"]
        super().save(*args, **kwargs)

    def folded_search_text(self) -> str:
        return fold("\n".join(getattr(self, name) or "" for name in self.SEARCH_SOURCES))


class Answer(SearchFolded):
    """An answer of the RAG front end as it was sent, and as Theoria returned it.

    ``original_text`` is the answer as received (or drafted); ``text`` the answer returned to
    the user, which differs after a revision. ``contexts`` keeps the passages sent with the
    request (id, title, uri, text, published_at) so the audit can be replayed. ``revisions``
    lists each revision attempt (text and ledger of edits).

    A revision held for approval (the workspace's ``revision_approval``) leaves ``text`` as
    received and keeps the revised text in ``proposed_text`` with ``revision_status`` proposed
    until a person accepts it (``text`` becomes the proposal) or rejects it; ``revision_decision``
    records who decided, when and why.
    """

    Mode = Mode
    RevisionStatus = RevisionStatus
    SEARCH_SOURCES = ("query", "original_text", "text")

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="answers")
    public_id = models.CharField(max_length=40, unique=True, default=new_answer_public_id)
    conversation_id = models.CharField(max_length=200, blank=True, db_index=True)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="answers"
    )
    query = models.TextField()
    text = models.TextField(blank=True)
    original_text = models.TextField(blank=True)
    mode = models.CharField(max_length=16, choices=Mode.choices)
    domain = models.CharField(max_length=64, blank=True, db_index=True)
    reference = models.TextField(blank=True, help_text="Reference answer, when given (context recall).")
    contexts = models.JSONField(default=list, blank=True)
    revisions = models.JSONField(default=list, blank=True)
    answer_json = models.JSONField(
        null=True,
        blank=True,
        help_text="A structured answer as sent (fields with their source references); text then holds its JSON.",
    )
    suppressed = models.BooleanField(
        default=False, help_text="Set by a compliance decision: not to be shown to users."
    )
    revision_status = models.CharField(max_length=16, choices=RevisionStatus.choices, blank=True)
    proposed_text = models.TextField(
        blank=True, help_text="A revised text held for a person's approval (see revision_status)."
    )
    revision_decision = models.JSONField(
        default=dict, blank=True, help_text="Who accepted or rejected the held revision, when and why."
    )
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(mode__in=constants.MODES), name="%(app_label)s_%(class)s_mode_valid"
            ),
            models.CheckConstraint(
                condition=Q(revision_status="") | Q(revision_status__in=RevisionStatus.values),
                name="%(app_label)s_%(class)s_revision_status_valid",
            ),
        ]
        indexes = [
            models.Index(fields=["workspace", "created_at"], name="audit_answer_ws_created"),
            models.Index(
                fields=["workspace", "created_at"],
                condition=Q(revision_status=RevisionStatus.PROPOSED),
                name="audit_answer_ws_proposed",
            ),
        ]

    def __str__(self) -> str:
        return self.public_id


class Claim(SearchFolded):
    """An atomic claim of an answer as received, with its verdict: the row behind a Claim Card (docs/SPEC_NOTES.md#analyst-pages).

    ``text``, ``label`` and ``confidence`` describe the claim the RAG front end sent, whatever
    the revision loop did; ``revision`` records the remediation (the new wording and its verdict).

    ``confidence`` is the confidence that the claim is supported by its evidence, whatever the
    label: a refuted claim carries a confidence near 0. ``machine_label`` keeps what the
    pipeline said when a human decision later changes ``label``; ``label_history`` lists every
    change (who, when, from, to, why). ``methods`` names the verification methods that ran.
    """

    Label = Label
    Verdict = Verdict
    Type = ClaimType
    Importance = Importance
    SEARCH_SOURCES = ("text",)

    answer = models.ForeignKey(Answer, on_delete=models.CASCADE, related_name="claims")
    claim_id = models.CharField(max_length=16)  # c1, c2, ... within the answer
    text = models.TextField()
    span_start = models.PositiveIntegerField(default=0)
    span_end = models.PositiveIntegerField(default=0)
    claim_type = models.CharField(max_length=16, choices=ClaimType.choices, default=ClaimType.FACT)
    importance = models.CharField(max_length=16, choices=Importance.choices, default=Importance.MATERIAL)
    anchors = models.JSONField(default=list, blank=True)
    label = models.CharField(max_length=16, choices=Label.choices, default=Label.NEI, db_index=True)
    machine_label = models.CharField(max_length=16, choices=Label.choices, default=Label.NEI)
    verdict = models.CharField(max_length=16, choices=Verdict.choices, default=Verdict.NOT_FOUND)
    confidence = models.FloatField(default=0.0, db_index=True)
    metrics = models.JSONField(default=dict, blank=True)
    methods = models.JSONField(default=list, blank=True)
    method_results = models.JSONField(default=dict, blank=True)
    risk_flags = models.JSONField(default=list, blank=True)
    label_history = models.JSONField(default=list, blank=True)
    revision = models.JSONField(
        null=True,
        blank=True,
        help_text=(
            "How the revision loop remediated this claim of the answer as received: strategy, the new "
            "wording, its own label and confidence, the passage it rests on. Null when untouched."
        ),
    )
    drafted_at = models.DateTimeField(default=timezone.now)
    verified_at = models.DateTimeField(null=True, blank=True, db_index=True)

    class Meta:
        ordering = ["answer_id", "span_start", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["answer", "claim_id"], name="%(app_label)s_%(class)s_unique_claim_id"
            ),
            _unit_interval("confidence", "confidence_unit_interval"),
            models.CheckConstraint(
                condition=Q(label__in=Label.values), name="%(app_label)s_%(class)s_label_valid"
            ),
            models.CheckConstraint(
                condition=Q(machine_label__in=Label.values),
                name="%(app_label)s_%(class)s_machine_label_valid",
            ),
            models.CheckConstraint(
                condition=Q(verdict__in=Verdict.values), name="%(app_label)s_%(class)s_verdict_valid"
            ),
            models.CheckConstraint(
                condition=Q(claim_type__in=ClaimType.values), name="%(app_label)s_%(class)s_type_valid"
            ),
            models.CheckConstraint(
                condition=Q(importance__in=Importance.values), name="%(app_label)s_%(class)s_importance_valid"
            ),
            models.CheckConstraint(
                condition=Q(span_end__gte=models.F("span_start")), name="%(app_label)s_%(class)s_span_ordered"
            ),
            models.CheckConstraint(
                condition=Q(claim_id__regex=r"^c[1-9][0-9]*$"), name="%(app_label)s_%(class)s_claim_id_format"
            ),
        ]
        indexes = [models.Index(fields=["label", "confidence"], name="audit_claim_label_conf")]

    def __str__(self) -> str:
        return f"{self.answer.public_id}/{self.claim_id}" if self.answer_id else self.claim_id


class Evidence(models.Model):
    """A passage linked to a claim: a knowledge-base chunk, a request passage or a web source.

    The snippet is what the verifier read (redacted for sensitive documents); ``hash`` is the
    sha256 of the full passage text so an auditor can prove which text was used.
    ``provenance`` records how it was obtained (method, query, provider, URL, retrieval time).
    """

    SourceType = SourceType

    claim = models.ForeignKey(Claim, on_delete=models.CASCADE, related_name="evidence")
    rank = models.PositiveSmallIntegerField(default=0)
    source_type = models.CharField(max_length=16, choices=SourceType.choices)
    source_id = models.CharField(max_length=200)
    chunk = models.ForeignKey(
        Chunk, null=True, blank=True, on_delete=models.SET_NULL, related_name="evidence_links"
    )
    title = models.CharField(max_length=500, blank=True)
    uri = models.CharField(max_length=2000, blank=True)
    snippet = models.TextField(blank=True)
    hash = models.CharField(max_length=71)
    relevance = models.FloatField(default=0.0)
    entailment = models.FloatField(default=0.0)
    published_at = models.DateField(null=True, blank=True)
    provenance = models.JSONField(default=dict, blank=True)
    retrieved_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["claim_id", "rank", "id"]
        verbose_name_plural = "evidence"
        constraints = [
            _unit_interval("relevance", "relevance_unit_interval"),
            _unit_interval("entailment", "entailment_unit_interval"),
            models.CheckConstraint(
                condition=Q(source_type__in=SourceType.values),
                name="%(app_label)s_%(class)s_source_type_valid",
            ),
            models.CheckConstraint(
                condition=Q(hash__startswith="sha256:"), name="%(app_label)s_%(class)s_hash_prefixed"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.source_type}:{self.source_id}"


class VerificationRun(models.Model):
    """One pass of the verification pipeline over an answer (interactive, nightly or re-run).

    Holds the answer-level metrics, cost accounting (LLM calls and tokens), warnings, risk
    flags, quality gates and the revision history of that pass.
    """

    class Kind(models.TextChoices):
        INTERACTIVE = "interactive", "Interactive"
        NIGHTLY = "nightly", "Nightly batch"
        RERUN = "rerun", "Manual re-run"

    class Status(models.TextChoices):
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    answer = models.ForeignKey(Answer, on_delete=models.CASCADE, related_name="runs")
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.INTERACTIVE)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.DONE)
    mode = models.CharField(max_length=16, choices=Mode.choices)
    started_at = models.DateTimeField(default=timezone.now, db_index=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    duration_ms = models.FloatField(default=0.0)
    llm_calls = models.PositiveIntegerField(default=0)
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    llm_latency_ms = models.FloatField(default=0.0)
    llm_failures = models.JSONField(default=list, blank=True)
    claim_count = models.PositiveIntegerField(default=0)
    coverage = models.FloatField(default=0.0)
    unsupported_rate = models.FloatField(default=0.0)
    audit_score = models.FloatField(default=0.0)
    faithfulness = models.FloatField(default=0.0)
    answer_relevance = models.FloatField(default=0.0)
    context_precision = models.FloatField(default=0.0)
    context_recall = models.FloatField(null=True, blank=True)
    methods = models.JSONField(default=list, blank=True)
    warnings = models.JSONField(default=list, blank=True)
    risk_flags = models.JSONField(default=list, blank=True)
    quality_gates = models.JSONField(default=dict, blank=True)
    revision_history = models.JSONField(default=list, blank=True)
    # docs/LLM.md: the asynchronous deep check of this run ({} when none): status queued / running /
    # done / failed, progress, the LLM methods run, the relabels it made, the webhook's answer
    deep_checks = models.JSONField(default=dict, blank=True)
    rag_score = models.JSONField(
        default=dict,
        blank=True,
        help_text="Weighted RAG verification score: alignment, citation_coverage, fact_score, score, method.",
    )
    verification_profile = models.CharField(
        max_length=16,
        blank=True,
        help_text="Verification depth profile the run used (light/medium/extended); blank: none.",
    )

    class Meta:
        ordering = ["-started_at", "-id"]
        constraints = [
            _unit_interval("coverage", "coverage_unit_interval"),
            _unit_interval("unsupported_rate", "unsupported_rate_unit_interval"),
            _unit_interval("audit_score", "audit_score_unit_interval"),
            _unit_interval("faithfulness", "faithfulness_unit_interval"),
            _unit_interval("answer_relevance", "answer_relevance_unit_interval"),
            _unit_interval("context_precision", "context_precision_unit_interval"),
            _unit_interval("context_recall", "context_recall_unit_interval", nullable=True),
            models.CheckConstraint(
                condition=Q(mode__in=constants.MODES), name="%(app_label)s_%(class)s_mode_valid"
            ),
            models.CheckConstraint(
                condition=Q(duration_ms__gte=0), name="%(app_label)s_%(class)s_duration_nonnegative"
            ),
        ]

    def __str__(self) -> str:
        return f"run {self.pk} of {self.answer_id}"

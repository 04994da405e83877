"""Output shapes shared by several endpoints; the Claim Card (docs/SPEC_NOTES.md#analyst-pages)
comes from ``audit.cards``, which the pages read too.

``ClaimCardSerializer`` is the single definition of the Claim Card JSON: the API, the CSV/JSON
export, the UI export and the nightly bundle all serialize claims through it. Its key set is
exactly the spec's (``tests/api/test_serializers.py`` compares it with the spec example).
Input serializers live in the views (one per operation); these check shape only.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any, cast

from django.urls import reverse
from django.utils.dateparse import parse_datetime
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.validators import ProhibitSurrogateCharactersValidator

from audit.api.parsers import SURROGATE_RE
from audit.cards import (  # shared with the pages
    ClaimCardSerializer,
    EscalationRefSerializer,
    EvidenceCardSerializer,
)
from audit.models import Answer, BackgroundJob, Document, Evidence, VerificationRun
from audit.models.choices import RevisionStatus
from audit.pipeline.extraction import citations_of
from audit.pipeline.revision.served import changed_claims, mark_served

# Claim metrics named by the docs/SPEC_NOTES.md#analyst-pages example, in its order.


class _NoSurrogates(ProhibitSurrogateCharactersValidator):
    """DRF's refusal of surrogate characters (its message and code) in one regular-expression
    search: DRF's own loops over the text a character at a time in Python, 0.75 s of a web
    worker's GIL for a 900 KB request."""

    def __call__(self, value: Any) -> None:
        found = SURROGATE_RE.search(str(value))
        if found is not None:
            raise ValidationError(self.message.format(code_point=ord(found.group())), code=self.code)


class StrictCharField(serializers.CharField):
    """A CharField that refuses numbers, booleans, lists and objects instead of coercing them."""

    default_error_messages = {"invalid": "Must be a string."}

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.validators = [
            _NoSurrogates() if isinstance(v, ProhibitSurrogateCharactersValidator) else v
            for v in self.validators
        ]

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


# The mixin's methods call the field's own (``fail``, ``to_internal_value``); only the type
# checker sees that base.
if TYPE_CHECKING:
    _FieldBase = serializers.Field[Any, Any, Any, Any]
else:
    _FieldBase = object


class StrictNumberMixin(_FieldBase):
    """A JSON number only: a boolean or a string is refused instead of coerced (``false`` is not 0)."""

    default_error_messages = {"invalid": "Must be a number."}

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, bool) or not isinstance(data, (int, float)):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictFloatField(StrictNumberMixin, serializers.FloatField):
    pass


class StrictIntegerField(StrictNumberMixin, serializers.IntegerField):
    default_error_messages = {"invalid": "Must be a whole number."}

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, float) and not data.is_integer():
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictBooleanField(serializers.BooleanField):
    """``true`` or ``false`` (a form's "true"/"false" too), never a number or null taken as one."""

    default_error_messages = {"invalid": "Must be true or false."}

    def to_internal_value(self, data: Any) -> bool:
        if not isinstance(data, (bool, str)):
            self.fail("invalid")
        return super().to_internal_value(data)


class NonBlankTextField(StrictCharField):
    """Text kept as sent (spaces included) that must hold something besides spaces; the schema
    says so (``audit.api.schema``: ``minLength: 1``, a non-space character)."""

    nonblank = True

    default_error_messages = {"blank": "May not be blank."}

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("trim_whitespace", False)
        kwargs["allow_blank"] = False
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> str:
        value = super().to_internal_value(data)
        if not value.strip():
            self.fail("blank")
        return value


class AnswerRevisionSerializer(serializers.Serializer[Any]):
    """Where an answer's revision stands: proposed (held, the answer is served as received),
    accepted or rejected (by whom, when, why), or served at once."""

    status = serializers.ChoiceField(choices=RevisionStatus.choices)
    proposed_text = serializers.CharField(allow_blank=True, help_text="The revised text (held or decided).")
    decided_by = serializers.CharField(allow_null=True)
    decided_at = serializers.DateTimeField(allow_null=True)
    reason = serializers.CharField(allow_blank=True)


def answer_revision(answer: Answer) -> dict[str, Any] | None:
    """The ``revision`` block of an answer (None when the revision loop changed nothing)."""
    if not answer.revision_status:
        return None
    decision = answer.revision_decision or {}
    served = answer.revision_status == RevisionStatus.SERVED
    return {
        "status": answer.revision_status,
        "proposed_text": answer.text if served else answer.proposed_text,
        "decided_by": decision.get("by"),
        "decided_at": parse_datetime(decision["at"]) if decision.get("at") else None,
        "reason": decision.get("reason", ""),
    }


def answer_passages(answer: Answer) -> list[dict[str, Any]]:
    """The request's passages, then those the latest revision cites by position (``[n]``)."""
    cited = next((r.get("citations") or [] for r in reversed(answer.revisions or []) if "citations" in r), [])
    return [*(answer.contexts or []), *cited]


class AuditMetricsSerializer(serializers.ModelSerializer[Any]):
    """The answer-level audit block (latest verification run); ``run_id`` names it for
    ``GET /api/v1/runs/<id>``, where an asynchronous deep check shows its progress."""

    run_id = serializers.IntegerField(source="id", read_only=True)

    class Meta:
        model = VerificationRun
        fields = [
            "run_id",
            "audit_score",
            "faithfulness",
            "answer_relevance",
            "context_precision",
            "context_recall",
            "coverage",
            "unsupported_rate",
            "risk_flags",
            "warnings",
            "duration_ms",
            "llm_calls",
            "rag_score",
            "verification_profile",
            "deep_checks",
        ]


class CitationSerializer(serializers.Serializer[Any]):
    anchor = serializers.CharField()
    id = serializers.CharField(allow_null=True)
    title = serializers.CharField(allow_blank=True)
    uri = serializers.CharField(allow_blank=True)


class RunSerializer(serializers.ModelSerializer[Any]):
    answer_id = serializers.CharField(source="answer.public_id")

    class Meta:
        model = VerificationRun
        fields = [
            "id",
            "answer_id",
            "kind",
            "status",
            "mode",
            "started_at",
            "finished_at",
            "duration_ms",
            "llm_calls",
            "prompt_tokens",
            "completion_tokens",
            "llm_latency_ms",
            "llm_failures",
            "claim_count",
            "coverage",
            "unsupported_rate",
            "audit_score",
            "faithfulness",
            "answer_relevance",
            "context_precision",
            "context_recall",
            "methods",
            "warnings",
            "risk_flags",
            "quality_gates",
            "revision_history",
            "rag_score",
            "verification_profile",
            "deep_checks",
        ]


class EvidenceSerializer(serializers.ModelSerializer[Any]):
    """An evidence row with its claim and full provenance (the Claim Card shows a subset)."""

    answer_id = serializers.CharField(source="claim.answer.public_id")
    claim_id = serializers.CharField(source="claim.claim_id")

    class Meta:
        model = Evidence
        fields = [
            "id",
            "answer_id",
            "claim_id",
            "rank",
            "source_type",
            "source_id",
            "title",
            "uri",
            "snippet",
            "hash",
            "relevance",
            "entailment",
            "published_at",
            "provenance",
            "retrieved_at",
        ]


class DocumentSerializer(serializers.ModelSerializer[Any]):
    chunks = serializers.IntegerField(source="chunk_count", read_only=True)

    class Meta:
        model = Document
        fields = [
            "id",
            "title",
            "uri",
            "domain",
            "published_at",
            "date_inferred",
            "sensitive",
            "content_hash",
            "chunks",
            "created_at",
            "updated_at",
        ]


class AnswerSummarySerializer(serializers.ModelSerializer[Any]):
    answer_id = serializers.CharField(source="public_id")
    answer = serializers.CharField(source="text")
    claims = serializers.IntegerField(source="claim_count", read_only=True)

    class Meta:
        model = Answer
        fields = [
            "answer_id",
            "mode",
            "query",
            "answer",
            "domain",
            "conversation_id",
            "suppressed",
            "claims",
            "created_at",
        ]


def structured_fields(answer: Answer) -> list[dict[str, Any]]:
    """The fields of a structured answer (docs/SPEC_NOTES.md#structured-answers) with their claim's verdict, evidence and fix.

    A Normal-mode answer was not verified: its fields come back with ``label`` null.
    """
    from audit.pipeline.structured import StructuredError, discover_fields, ordered_json

    try:
        fields = discover_fields(ordered_json(answer.original_text or answer.text, answer.answer_json))
    except StructuredError:
        return []
    claims = {(c.method_results or {}).get("structured", {}).get("field"): c for c in answer.claims.all()}
    out = []
    for f in fields:
        claim = claims.get(f.path)
        results = (claim.method_results or {}) if claim is not None else {}
        numeric = results.get("numeric")
        out.append(
            {
                "field": f.path,
                "text": f.text,
                "label": claim.label if claim else None,
                "confidence": claim.confidence if claim else None,
                "source_refs": list(f.source_refs),
                "evidence": EvidenceCardSerializer(claim.evidence.all(), many=True).data if claim else [],
                "claim_id": claim.claim_id if claim else None,
                "citation_fix": results.get("structured", {}).get("citation_fix"),
                "numeric": (
                    {k: numeric.get(k) for k in ("ran", "verdict", "score")}
                    if isinstance(numeric, dict)
                    else None
                ),
            }
        )
    return out


class AnswerSerializer(serializers.Serializer[Any]):
    """An answer with everything the RAG front end shows: the ``POST /audits`` response body.

    ``answer`` is the text returned to the user (revised or not) and ``original_answer`` the text
    received, which the claims describe; ``revisions`` is present only when the answer was revised.
    When a revision is served (at once or accepted), ``answer_marked`` is ``answer`` with a mark
    ``[R1]`` after each changed claim and a note per change at its end (the finding, what changed,
    the case), and ``served_changes`` lists those changes: a front end shows ``answer_marked``.
    ``revision`` says where the revision stands: ``status`` proposed (held for a person's approval:
    ``answer`` is the text as received until it is accepted), accepted, rejected or served (at once).
    Context: ``escalations`` ({claim pk: [refs]}) as for Claim Cards, ``citations`` for Normal
    mode, ``mode_decision`` when the answer was just produced.
    """

    answer_id = serializers.CharField(source="public_id")
    mode = serializers.CharField()
    query = serializers.CharField()
    answer = serializers.CharField(source="text")
    domain = serializers.CharField()
    conversation_id = serializers.CharField()
    suppressed = serializers.BooleanField()
    created_at = serializers.DateTimeField()
    citations = serializers.SerializerMethodField()
    claims = serializers.SerializerMethodField()
    audit = serializers.SerializerMethodField()
    escalations = serializers.SerializerMethodField()
    revision = serializers.SerializerMethodField()

    @extend_schema_field(AnswerRevisionSerializer(allow_null=True))
    def get_revision(self, answer: Answer) -> dict[str, Any] | None:
        block = answer_revision(answer)
        return AnswerRevisionSerializer(block).data if block else None

    def to_representation(self, answer: Answer) -> dict[str, Any]:
        data = super().to_representation(answer)
        data["original_answer"] = answer.original_text or answer.text
        if answer.revisions or (answer.original_text and answer.original_text != answer.text):
            data["revisions"] = answer.revisions
        if answer.revision_status in (RevisionStatus.SERVED, RevisionStatus.ACCEPTED):
            # a served revision never hides a finding: the text to show carries a mark per change
            # and a note naming the finding and its case (audit.pipeline.revision.served)
            marked, changes = mark_served(
                answer.text, changed_claims(list(answer.claims.all()), self.context.get("escalations") or {})
            )
            if changes:
                data["answer_marked"] = marked
                data["served_changes"] = [c.as_dict() for c in changes]
        if self.context.get("mode_decision"):
            data["mode_decision"] = self.context["mode_decision"]
        if self.context.get("web"):
            data["web"] = self.context["web"]
        if self.context.get("drafted"):
            data["drafted"] = self.context["drafted"]
        if answer.answer_json is not None:
            data["structured"] = {"fields": structured_fields(answer)}
        return data

    @extend_schema_field(CitationSerializer(many=True))
    def get_citations(self, answer: Answer) -> list[Any]:
        return citations_of(answer.text, answer_passages(answer))

    @extend_schema_field(ClaimCardSerializer(many=True))
    def get_claims(self, answer: Answer) -> list[Any]:
        return cast(
            "list[Any]", ClaimCardSerializer(answer.claims.all(), many=True, context=self.context).data
        )

    @extend_schema_field(AuditMetricsSerializer(allow_null=True))
    def get_audit(self, answer: Answer) -> dict[str, Any] | None:
        runs = list(answer.runs.all())
        return AuditMetricsSerializer(runs[0]).data if runs else None

    @extend_schema_field(EscalationRefSerializer(many=True))
    def get_escalations(self, answer: Answer) -> list[Any]:
        """The answer's human-review cases (the Audit-Web log is on each claim card)."""
        refs = [
            ref
            for claim in answer.claims.all()
            for ref in (self.context.get("escalations") or {}).get(claim.pk, [])
        ]
        return cast("list[Any]", EscalationRefSerializer(refs, many=True).data)


class StrictInputSerializer(serializers.Serializer[Any]):
    """An input serializer that refuses keys it does not know (a typo is a 400, not a no-op)."""

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, dict):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                raise serializers.ValidationError({name: ["Is not a known field."] for name in unknown})
        return super().to_internal_value(data)


class IdentifierField(serializers.CharField):
    """An id sent by a client: a string, or a whole number taken as its decimal string."""

    default_error_messages = {"invalid": "Must be a string or a whole number."}

    def to_internal_value(self, data: Any) -> str:
        if isinstance(data, bool) or not isinstance(data, (str, int)):
            self.fail("invalid")
        return super().to_internal_value(str(data))


class DayField(serializers.DateField):
    """A date given as ``YYYY-MM-DD`` or as an ISO datetime (its date part is kept)."""

    def to_internal_value(self, value: Any) -> dt.date:
        if isinstance(value, str) and len(value) > 10 and value[10:11] in ("T", " "):
            value = value[:10]
        if not isinstance(value, str):
            self.fail("invalid", format="YYYY-MM-DD")
        return super().to_internal_value(value)


class BackgroundJobSerializer(serializers.BaseSerializer[BackgroundJob]):
    """What the 202 of a queued request and every poll of its job answer (``GET /api/v1/jobs/<id>``):
    its status, progress and, when done, what it produced."""

    def to_representation(self, instance: BackgroundJob) -> dict[str, Any]:
        job = instance
        body: dict[str, Any] = {
            "job": job.pk,
            "kind": job.kind,
            "status": job.status,
            "url": reverse("api-job-detail", kwargs={"pk": job.pk}),
            "progress": job.progress,
            "created_at": job.created_at.isoformat(),
            "started_at": job.started_at.isoformat() if job.started_at else None,
            "finished_at": job.finished_at.isoformat() if job.finished_at else None,
            "result": job.result,
            "error": job.error or None,
            "error_status": job.error_status,
            "answer": None,
            "answer_url": None,
        }
        if job.answer_id is not None and job.answer is not None:
            body["answer"] = job.answer.public_id
            body["answer_url"] = reverse("api-answer-detail", kwargs={"answer_id": job.answer.public_id})
        return body

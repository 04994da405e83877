"""The Claim Card: a claim as the API answers with it and the claim page shows it
(docs/SPEC_NOTES.md#analyst-pages), key for key. The API (``audit.api.serializers``, its answers)
and the pages (``audit.web``) both read it here, so neither imports the other.
"""

from __future__ import annotations

from typing import Any, cast

from django.utils.dateparse import parse_datetime
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from audit.models import Claim, Evidence
from audit.models.choices import Mode, RevisionStatus

CLAIM_CARD_METRICS = ("faithfulness", "answer_relevance", "context_precision", "selfcheck_disagreement")


class EvidenceCardSerializer(serializers.ModelSerializer[Any]):
    """One evidence entry of a Claim Card (docs/SPEC_NOTES.md#analyst-pages)."""

    class Meta:
        model = Evidence
        fields = ["source_type", "source_id", "title", "uri", "snippet", "hash"]


class ClaimMetricsSerializer(serializers.Serializer[Any]):
    faithfulness = serializers.FloatField(allow_null=True)
    answer_relevance = serializers.FloatField(allow_null=True)
    context_precision = serializers.FloatField(allow_null=True)
    selfcheck_disagreement = serializers.FloatField(allow_null=True)


class ClaimTimestampsSerializer(serializers.Serializer[Any]):
    drafted_at = serializers.DateTimeField()
    verified_at = serializers.DateTimeField(allow_null=True)


class EscalationRefSerializer(serializers.Serializer[Any]):
    """One entry of a claim's escalation log: a human-review case (``COMP-ESC-…``, docs/SPEC_NOTES.md#human-escalation) or its
    Audit-Web re-verification (docs/SPEC_NOTES.md#escalation-to-audit-web; ``ticket`` blank, ``reasons`` the conditions met)."""

    type = serializers.ChoiceField(
        choices=[("review", "Human review case"), ("audit-web", "Web verification")]
    )
    ticket = serializers.CharField(allow_blank=True)
    tier = serializers.IntegerField(allow_null=True)
    status = serializers.CharField()
    due_at = serializers.DateTimeField(allow_null=True)
    reasons = serializers.ListField(child=serializers.CharField())
    at = serializers.DateTimeField(allow_null=True)


class SentenceJudgementSerializer(serializers.Serializer[Any]):
    """The revised sentence judged whole by the judge that labels claims (with its findings)."""

    text = serializers.CharField()
    label = serializers.ChoiceField(choices=Claim.Label.choices)  # type: ignore[assignment]  # a field named like Field.label; DRF moves it to _declared_fields
    confidence = serializers.FloatField()
    findings = serializers.ListField(child=serializers.DictField())


class ClaimRevisionSerializer(serializers.Serializer[Any]):
    """How the revision loop remediated a claim: the new wording and its own verdict."""

    strategy = serializers.CharField()
    text = serializers.CharField(
        allow_blank=True,
        help_text="The claim's wording in the revised answer (served, or proposed); blank when removed.",
    )
    label = serializers.ChoiceField(  # type: ignore[assignment]  # a field named like Field.label; DRF moves it to _declared_fields
        choices=Claim.Label.choices,
        allow_null=True,
        help_text="The weaker of the new wording's verdict and its sentence's judged whole.",
    )
    confidence = serializers.FloatField(allow_null=True)
    passage_id = serializers.CharField(allow_blank=True)
    status = serializers.ChoiceField(
        choices=RevisionStatus.choices,
        help_text="proposed (held for approval), accepted, rejected or served (at once): the answer's.",
    )
    sentence = SentenceJudgementSerializer(allow_null=True)


def card_number(value: object) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


class ClaimCardSerializer(serializers.Serializer[Any]):
    """A claim as a Claim Card: the JSON of docs/SPEC_NOTES.md#analyst-pages, key for key.

    The card describes the claim as the RAG front end sent it (text, label, confidence); when the
    revision loop changed it, ``revision`` holds the remediation (null when untouched).
    ``mode`` is the display name ("Audit-Local") as in the spec. ``escalations`` is the claim's
    escalation log: its review cases, read from the serializer context ``escalations`` ({claim
    pk: [refs]}, filled by ``audit.hooks.claim_escalations`` so a page of cards costs one
    query), and its Audit-Web re-verification when it had one.
    """

    claim_id = serializers.CharField()
    answer_id = serializers.CharField(source="answer.public_id")
    text = serializers.CharField()
    mode = serializers.SerializerMethodField()
    label = serializers.ChoiceField(choices=Claim.Label.choices)  # type: ignore[assignment]  # a field named like Field.label; DRF moves it to _declared_fields
    confidence = serializers.FloatField()
    evidence = EvidenceCardSerializer(many=True)
    # one meaning for each number (docs/API.md#claim-cards): ``confidence`` is P(supported) whatever the
    # label, named so here too; the machine's label and a reviewer's, side by side
    p_supported = serializers.FloatField(source="confidence")
    machine_label = serializers.ChoiceField(choices=Claim.Label.choices)
    reviewer_label = serializers.SerializerMethodField()
    verification_methods = serializers.ListField(child=serializers.CharField(), source="methods")
    metrics = serializers.SerializerMethodField()
    timestamps = serializers.SerializerMethodField()
    escalations = serializers.SerializerMethodField()
    revision = serializers.SerializerMethodField()

    @extend_schema_field(ClaimRevisionSerializer(allow_null=True))
    def get_revision(self, claim: Claim) -> dict[str, Any] | None:
        if not claim.revision:
            return None
        sentence = claim.revision.get("sentence")
        return {
            **{
                key: claim.revision.get(key)
                for key in ("strategy", "text", "label", "confidence", "passage_id")
            },
            "status": claim.answer.revision_status or RevisionStatus.SERVED,
            "sentence": {k: sentence.get(k) for k in ("text", "label", "confidence", "findings")}
            if sentence
            else None,
        }

    @extend_schema_field(serializers.ChoiceField(choices=Claim.Label.choices, allow_null=True))
    def get_reviewer_label(self, claim: Claim) -> str | None:
        """The label a person set or confirmed (the last human entry of the label history); null when none."""
        human = [h for h in claim.label_history or [] if h.get("by_human")]
        return str(human[-1].get("to")) if human else None

    @extend_schema_field(serializers.ChoiceField(choices=Mode.labels))
    def get_mode(self, claim: Claim) -> str:
        return Mode(claim.answer.mode).label

    @extend_schema_field(ClaimMetricsSerializer)
    def get_metrics(self, claim: Claim) -> dict[str, Any]:
        metrics = claim.metrics or {}
        return {name: card_number(metrics.get(name)) for name in CLAIM_CARD_METRICS}

    @extend_schema_field(ClaimTimestampsSerializer)
    def get_timestamps(self, claim: Claim) -> dict[str, Any]:
        return ClaimTimestampsSerializer(
            {"drafted_at": claim.drafted_at, "verified_at": claim.verified_at}
        ).data

    @extend_schema_field(EscalationRefSerializer(many=True))
    def get_escalations(self, claim: Claim) -> list[Any]:
        refs = list((self.context.get("escalations") or {}).get(claim.pk, []))
        web = (claim.method_results or {}).get("web")
        if isinstance(web, dict):
            refs.append(
                {
                    "type": "audit-web",
                    "ticket": "",
                    "tier": None,
                    "status": "verified",
                    "due_at": None,
                    "reasons": web.get("reasons") or [],
                    "at": parse_datetime(str(web.get("verified_at") or "")),
                }
            )
        return cast(
            "list[Any]",
            EscalationRefSerializer(sorted(refs, key=lambda r: str(r["at"] or "")), many=True).data,
        )

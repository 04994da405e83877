"""Tenants and the per-user / per-conversation mode defaults."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from audit import constants

from .choices import CitationOnlyRevisions, Mode, RevisionApproval


def default_freshness_policy() -> dict:
    return dict(constants.DEFAULT_FRESHNESS_MONTHS)


def default_web_domains() -> list:
    return [
        "pubmed.ncbi.nlm.nih.gov",
        "eutils.ncbi.nlm.nih.gov",
        "arxiv.org",
        "export.arxiv.org",
        "aclanthology.org",
    ]


class Workspace(models.Model):
    """A tenant: its knowledge base, its answers and its audit policy.

    ``threshold_overrides`` maps names of ``audit.constants.Thresholds`` fields to values that
    replace the seed defaults for this workspace; ``freshness_policy`` maps a domain tag to the
    maximum source age in months. ``allow_external_calls`` is the data-residency switch: when
    false, nothing leaves the system (no web verification, no remote LLM).
    """

    name = models.CharField(max_length=200)
    slug = models.SlugField(max_length=80, unique=True)
    default_mode = models.CharField(max_length=16, choices=Mode.choices, default=Mode.NORMAL)
    retention_days = models.PositiveIntegerField(default=constants.DEFAULT_RETENTION_DAYS)
    freshness_policy = models.JSONField(default=default_freshness_policy, blank=True)
    threshold_overrides = models.JSONField(default=dict, blank=True)
    allow_external_calls = models.BooleanField(
        default=True,
        help_text="Data-residency switch: when off, no web verification and no remote LLM calls.",
    )
    web_allowed_domains = models.JSONField(default=default_web_domains, blank=True)
    regulated_domains = models.JSONField(
        default=list, blank=True, help_text="Domain tags whose answers are always audited and escalated."
    )
    free_text_domains = models.BooleanField(
        default=False,
        help_text="Whether the answer form takes any domain typed in, or only one of the workspace's own "
        "(its regulated domains, its freshness policy's and the domains of its answers).",
    )
    revision_approval = models.CharField(
        max_length=16,
        choices=RevisionApproval.choices,
        default=RevisionApproval.SERVE,
        help_text="Whether a revised answer is served at once or held until a person approves it.",
    )
    revision_approval_domains = models.JSONField(
        default=list,
        blank=True,
        help_text=(
            "With 'regulated domains': the domain tags whose revisions are held "
            "(empty: every regulated domain)."
        ),
    )
    citation_only_revisions = models.CharField(
        max_length=16,
        choices=CitationOnlyRevisions.choices,
        default=constants.CITATION_ONLY_REVISIONS,
        help_text=(
            "Where revisions are held: whether one that changes only citations is served without "
            "approval (default: yes, except in regulated domains)."
        ),
    )
    auto_audit_roles = models.JSONField(
        default=list,
        blank=True,
        help_text="Group names whose requests are audited (Audit-Local) automatically.",
    )
    llm_token_budget = models.PositiveBigIntegerField(
        default=0, help_text="Daily LLM token budget; 0 means unlimited. Past it, offline methods are used."
    )
    kb_version = models.PositiveBigIntegerField(
        default=0, help_text="Bumped on every knowledge-base change so search indexes reload."
    )
    calibration = models.JSONField(
        default=dict,
        blank=True,
        help_text="The calibration in force (a copy of the active CalibrationVersion's parameters); "
        "written only by audit.services.calibration.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                condition=Q(retention_days__gte=1), name="%(app_label)s_%(class)s_retention_positive"
            ),
            models.CheckConstraint(
                condition=Q(default_mode__in=constants.MODES),
                name="%(app_label)s_%(class)s_default_mode_valid",
            ),
            models.CheckConstraint(
                condition=Q(revision_approval__in=RevisionApproval.values),
                name="%(app_label)s_%(class)s_revision_approval_valid",
            ),
            models.CheckConstraint(
                condition=Q(citation_only_revisions__in=CitationOnlyRevisions.values),
                name="%(app_label)s_%(class)s_citation_only_revisions_valid",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    def holds_revisions(self, domain: str, *, citations_only: bool = False) -> bool:
        """Whether a revision of an answer in ``domain`` waits for a person's approval.

        ``citations_only``: the revision changes only citations; where revisions are held it is
        still served at once when :meth:`serves_citation_only_revisions` says so.
        """
        if self.revision_approval == RevisionApproval.ALL:
            held = True
        elif self.revision_approval != RevisionApproval.REGULATED:
            return False
        else:
            held = constants.is_regulated(domain, self.revision_approval_domains or self.regulated_domains)
        return held and not (citations_only and self.serves_citation_only_revisions(domain))

    def serves_citation_only_revisions(self, domain: str) -> bool:
        """Whether a revision that changes only citations is served without approval in ``domain``."""
        if self.citation_only_revisions == CitationOnlyRevisions.SERVE:
            return True
        return self.citation_only_revisions == CitationOnlyRevisions.UNREGULATED and not self.is_regulated(
            domain
        )

    def known_domains(self, in_use: list[str] | tuple[str, ...] = ()) -> list[str]:
        """The workspace's own domains: its regulated ones, its freshness policy's and ``in_use``
        (the domains of its answers), lower-case, sorted; "general" (the fallback) left out."""
        names = {*(self.regulated_domains or []), *(self.freshness_policy or {}), *in_use}
        return sorted({str(d).strip().lower() for d in names if str(d).strip()} - {"general"})

    def is_regulated(self, domain: str | None) -> bool:
        """Whether ``domain`` is one of this workspace's regulated domains (``constants.is_regulated``)."""
        return constants.is_regulated(domain, self.regulated_domains)

    def freshness_months(self, domain: str) -> int:
        """Return the maximum source age in months for a domain tag."""
        policy = {**constants.DEFAULT_FRESHNESS_MONTHS, **(self.freshness_policy or {})}
        return int(
            policy.get(domain or "general", policy.get("general", constants.FALLBACK_FRESHNESS_MONTHS))
        )


class UserProfile(models.Model):
    """A user's home workspace and default mode (blank: fall back to the workspace's)."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="theoria_profile"
    )
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="profiles")
    default_mode = models.CharField(max_length=16, choices=Mode.choices, blank=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(default_mode="") | Q(default_mode__in=constants.MODES),
                name="%(app_label)s_%(class)s_default_mode_valid",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.user} @ {self.workspace}"


class Conversation(models.Model):
    """A conversation of the RAG front end, with its own default mode (blank: inherit)."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="conversations")
    external_id = models.CharField(max_length=200)
    default_mode = models.CharField(max_length=16, choices=Mode.choices, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["workspace", "external_id"], name="%(app_label)s_%(class)s_unique_id"
            ),
            models.CheckConstraint(
                condition=Q(default_mode="") | Q(default_mode__in=constants.MODES),
                name="%(app_label)s_%(class)s_default_mode_valid",
            ),
        ]

    def __str__(self) -> str:
        return self.external_id

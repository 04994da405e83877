"""Admin console of the audit domain: workspace settings (modes, thresholds, allow-listed domains,
business calendar, notification targets), user and conversation modes; every change an audit event.
"""

from django import forms
from django.contrib import admin
from django.db import transaction

from audit import constants, hooks
from audit.admin import users as admin_users
from audit.admin.events import AuditedAdminMixin, ReadOnlyAdmin
from audit.admin.learning import calibration_rollback_view, calibration_run_view
from audit.admin.workspace_settings import WorkspaceSettingsForm
from audit.errors import InvalidInput
from audit.kb.pgvector import kb_backend_label
from audit.models import (
    Answer,
    AuditEvent,
    Chunk,
    Claim,
    Conversation,
    Document,
    Evidence,
    UserProfile,
    VerificationRun,
    Workspace,
)
from audit.models.nightly import NightlyReport
from audit.models.web import ExternalCall, WebCacheEntry
from audit.selectors.learning import calibration_state
from audit.services.claims import claim_relabel
from audit.services.ingestion import DOCUMENT_METADATA, document_delete, document_metadata_update
from audit.services.modes import (
    thresholds_check,
    thresholds_set,
    workspace_settings_check,
    workspace_settings_update,
)
from audit.web.forms import mark_invalid


class WorkspaceAdminForm(forms.ModelForm):
    """Checks the JSON settings of a workspace before they reach the pipeline."""

    class Meta:
        model = Workspace
        fields = "__all__"  # noqa: DJ007 - the admin's fieldsets choose what is shown

    def clean_threshold_overrides(self):
        value = self.cleaned_data.get("threshold_overrides") or {}
        if not isinstance(value, dict):
            raise forms.ValidationError("Give an object mapping threshold names to values.")
        try:
            thresholds_check(value)  # the API's check: numbers in range, known words for string settings
        except InvalidInput as exc:
            names = ", ".join(f.name for f in constants.setting_fields())
            raise forms.ValidationError(f"{exc}. Known thresholds: {names}.") from None
        return value

    def _clean_domain_list(self, name: str) -> list:
        value = self.cleaned_data.get(name) or []
        if not isinstance(value, list) or not all(
            isinstance(d, str) and d.strip() and " " not in d.strip() for d in value
        ):
            raise forms.ValidationError(
                'Give a list of domain names, e.g. ["pubmed.ncbi.nlm.nih.gov", "arxiv.org"].'
            )
        return [d.strip().lower() for d in value]

    def clean_web_allowed_domains(self):
        domains = self._clean_domain_list("web_allowed_domains")
        return self._checked("web_allowed_domains", domains)

    def clean_regulated_domains(self):
        return self._clean_domain_list("regulated_domains")

    def clean_revision_approval_domains(self):
        return self._clean_domain_list("revision_approval_domains")

    def clean_freshness_policy(self):
        value = self.cleaned_data.get("freshness_policy") or {}
        return self._checked(
            "freshness_policy",
            value,
            'Give an object mapping domain tags to months, e.g. {"neuroscience": 18}. ',
        )

    def clean_retention_days(self):
        return self._checked("retention_days", self.cleaned_data.get("retention_days"))

    def clean_llm_token_budget(self):
        return self._checked("llm_token_budget", self.cleaned_data.get("llm_token_budget"))

    def _checked(self, name: str, value, hint: str = ""):
        """The API's range check of a workspace setting (``modes.workspace_settings_check``)."""
        try:
            workspace_settings_check({name: value})
        except InvalidInput as exc:
            raise forms.ValidationError(f"{hint}{exc}.") from None
        return value


class UserProfileInline(admin.TabularInline):
    model = UserProfile
    extra = 0
    fields = ("user", "default_mode")
    autocomplete_fields = ("user",)


@admin.register(Workspace)
class WorkspaceAdmin(AuditedAdminMixin, admin.ModelAdmin):
    """Workspace settings: modes, thresholds, allow-listed web domains, retention (each change audited).

    ``<id>/settings/`` is the settings page: modes and one typed field per threshold with its
    value in force, unit and seed default (``audit.admin.workspace_settings``).
    """

    def get_urls(self):
        from django.urls import path

        return [
            path(
                "<int:object_id>/settings/",
                self.admin_site.admin_view(self.settings_view),
                name="audit_workspace_settings",
            ),
            path(
                "<int:object_id>/calibration/run/",
                self.admin_site.admin_view(
                    lambda request, object_id: calibration_run_view(self, request, object_id)
                ),
                name="audit_workspace_calibration_run",
            ),
            path(
                "<int:object_id>/calibration/rollback/",
                self.admin_site.admin_view(
                    lambda request, object_id: calibration_rollback_view(self, request, object_id)
                ),
                name="audit_workspace_calibration_rollback",
            ),
            *super().get_urls(),
        ]

    def settings_view(self, request, object_id: int):
        from django.contrib import messages
        from django.core.exceptions import PermissionDenied
        from django.shortcuts import get_object_or_404, redirect
        from django.template.response import TemplateResponse

        workspace = get_object_or_404(
            self.get_queryset(request), pk=object_id
        )  # scoped to the caller's workspace
        if not self.has_change_permission(request, workspace):
            raise PermissionDenied
        form = WorkspaceSettingsForm(request.POST or None, workspace=workspace)
        if request.method == "POST" and form.is_valid():
            overrides = {
                **{
                    k: v
                    for k, v in (workspace.threshold_overrides or {}).items()
                    if k not in {t for t, _ in form.keys.values()}
                },
                **form.overrides(),
            }
            try:
                with transaction.atomic():
                    workspace_settings_update(
                        workspace=workspace,
                        actor=request.user,
                        default_mode=form.cleaned_data["default_mode"],
                        allow_external_calls=form.cleaned_data["allow_external_calls"],
                        revision_approval=form.cleaned_data["revision_approval"],
                        regulated_domains=form.cleaned_data["regulated_domains"],
                        free_text_domains=form.cleaned_data["free_text_domains"],
                        revision_approval_domains=form.cleaned_data["revision_approval_domains"],
                        citation_only_revisions=form.cleaned_data["citation_only_revisions"],
                    )
                    thresholds_set(workspace=workspace, overrides=overrides, actor=request.user)
            except InvalidInput as exc:
                form.add_service_error(exc.field, exc.message)
            else:
                messages.success(request, f"The settings of {workspace.name} were saved.")
                return redirect("admin:audit_workspace_settings", object_id=workspace.pk)
        if form.is_bound:
            mark_invalid(form)
        context = {
            **self.admin_site.each_context(request),
            "title": f"Settings of {workspace.name}",
            "workspace": workspace,
            "form": form,
            "opts": self.model._meta,
            "overridden": sorted((workspace.threshold_overrides or {}).keys()),
            "calibration": calibration_state(workspace),
        }
        return TemplateResponse(
            request,
            "admin/audit/workspace_settings.html",
            context,
            status=400 if request.method == "POST" else 200,
        )

    form = WorkspaceAdminForm
    list_display = ("name", "slug", "default_mode", "retention_days", "allow_external_calls")
    list_editable = ("default_mode", "allow_external_calls")
    prepopulated_fields = {"slug": ("name",)}
    inlines = [UserProfileInline]

    def get_inlines(self, request, obj):
        """The workspace's users, then what the apps built on audit add (``hooks.workspace_admin_inlines``:
        escalation's business calendar and notification targets)."""
        return [*self.inlines, *hooks.workspace_admin_inlines()]

    fieldsets = (
        (None, {"fields": ("name", "slug")}),
        (
            "Mode",
            {
                "fields": ("default_mode", "auto_audit_roles", "regulated_domains", "free_text_domains"),
                "description": "The default mode of the workspace; users and conversations may override it.",
            },
        ),
        (
            "Revised answers",
            {
                "fields": ("revision_approval", "revision_approval_domains", "citation_only_revisions"),
                "description": "Whether a revised answer is served at once or held until a reviewer approves it.",
            },
        ),
        (
            "Verification thresholds",
            {
                "fields": ("threshold_overrides", "freshness_policy", "llm_token_budget"),
                "description": "Overrides of the default thresholds by name, e.g. "
                '{"audit_score_threshold": 0.85, "low_confidence_threshold": 0.6}.',
            },
        ),
        (
            "Web verification",
            {
                "fields": ("allow_external_calls", "web_allowed_domains"),
                "description": "Only these domains are ever queried; switch external calls off for data residency.",
            },
        ),
        ("Retention", {"fields": ("retention_days",)}),
    )


@admin.register(Document)
class DocumentAdmin(AuditedAdminMixin, admin.ModelAdmin):
    """Documents are added by ingestion (``ingest_kb``, the API); editing one's title, domain, date
    or sensitivity and deleting one go through the ingestion services, so ``kb_version`` moves and
    every search index sees the change at once (each with its audit event)."""

    list_display = ("title", "workspace", "domain", "published_at", "sensitive", "updated_at")
    list_filter = ("workspace", "domain", "sensitive")
    search_fields = ("title", "uri")
    readonly_fields = (
        "workspace",
        "uri",
        "content_hash",
        "source_path",
        "date_inferred",
        "created_at",
        "updated_at",
    )

    def changelist_view(self, request, extra_context=None):
        extra_context = {**(extra_context or {}), "subtitle": f"Search back end: {kb_backend_label()}"}
        return super().changelist_view(request, extra_context)

    def has_add_permission(self, request):
        return False

    def save_model(self, request, obj, form, change):
        document_metadata_update(
            document=obj,
            actor=request.user,
            **{name: form.cleaned_data[name] for name in DOCUMENT_METADATA if name in form.cleaned_data},
        )

    def delete_model(self, request, obj):
        with transaction.atomic():
            document_delete(document=obj, actor=request.user)

    def delete_queryset(self, request, queryset):
        with transaction.atomic():
            for document in queryset:
                document_delete(document=document, actor=request.user)


@admin.register(Answer)
class AnswerAdmin(ReadOnlyAdmin):
    """Answers are written by the audit service: shown, never edited (retention purges them)."""

    list_display = ("public_id", "workspace", "mode", "domain", "created_at")
    list_filter = ("mode", "domain")
    search_fields = ("public_id", "query")


class ClaimRelabelForm(forms.ModelForm):
    """A claim card changes in one way only: a human relabel, with its reason, through the service."""

    reason = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="Why the label changes (required with a new label); kept in the label history.",
    )

    class Meta:
        model = Claim
        fields = ("label",)

    def clean(self):
        data = super().clean()
        if "label" in self.changed_data and not (data.get("reason") or "").strip():
            self.add_error("reason", "Give the reason for the new label.")
        return data


@admin.register(Claim)
class ClaimAdmin(admin.ModelAdmin):
    """Claim cards are system-written and read-only; a label changes by ``claim_relabel`` only, so
    the label history gains a human-decision entry that machine re-verification respects."""

    form = ClaimRelabelForm
    fields = (
        "label",
        "reason",
        "answer",
        "claim_id",
        "text",
        "machine_label",
        "verdict",
        "confidence",
        "claim_type",
        "importance",
        "anchors",
        "metrics",
        "methods",
        "method_results",
        "risk_flags",
        "label_history",
        "span_start",
        "span_end",
        "drafted_at",
        "verified_at",
    )
    list_display = ("__str__", "label", "confidence", "claim_type", "importance")
    list_filter = ("label", "claim_type", "importance")
    list_select_related = ("answer",)
    readonly_fields = fields[2:]

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def save_model(self, request, obj, form, change):
        if change and "label" in form.changed_data:
            claim_relabel(
                claim=type(obj).objects.get(pk=obj.pk),
                label=form.cleaned_data["label"],
                actor=request.user,
                reason=form.cleaned_data["reason"],
            )


@admin.register(AuditEvent)
class AuditEventAdmin(ReadOnlyAdmin):
    """The append-only audit log: nobody adds, changes or deletes an event by hand."""

    list_display = ("at", "actor_label", "action", "object_type", "object_id")
    list_filter = ("action",)


@admin.register(UserProfile)
class UserProfileAdmin(AuditedAdminMixin, admin.ModelAdmin):
    """Per-user mode defaults (blank: the workspace's)."""

    list_display = ("user", "workspace", "default_mode")
    list_editable = ("default_mode",)
    list_filter = ("workspace", "default_mode")
    list_select_related = ("user", "workspace")
    search_fields = ("user__username",)


@admin.register(Conversation)
class ConversationAdmin(AuditedAdminMixin, admin.ModelAdmin):
    """Per-conversation mode defaults (blank: the user's, then the workspace's)."""

    list_display = ("external_id", "workspace", "default_mode", "created_at")
    list_editable = ("default_mode",)
    list_filter = ("workspace", "default_mode")
    list_select_related = ("workspace",)
    search_fields = ("external_id",)


@admin.register(Chunk, Evidence, VerificationRun)
class AuditedRowAdmin(ReadOnlyAdmin):
    """Stored pipeline rows (chunks, evidence, runs): written by the system, shown read-only."""


URL_SHOWN = 60  # characters of a URL in a list row


@admin.register(ExternalCall)
class ExternalCallAdmin(ReadOnlyAdmin):
    """Every Audit-Web call (or refusal): the record of what left the system. Read-only."""

    list_display = (
        "at",
        "workspace",
        "provider",
        "status",
        "failure_reason",
        "http_status",
        "duration_ms",
        "cache_hit",
        "short_url",
    )
    list_filter = ("provider", "status", "failure_reason", "cache_hit", "workspace")
    search_fields = ("url", "query")
    list_select_related = ("workspace",)

    @admin.display(description="URL", ordering="url")
    def short_url(self, obj: ExternalCall) -> str:
        """The host and the start of the path (the whole URL is on the call's page): a list row
        stays a phone's width instead of a 2,500 px query string."""
        url = obj.url or ""
        return url if len(url) <= URL_SHOWN else url[: URL_SHOWN - 1] + "…"


@admin.register(WebCacheEntry)
class WebCacheEntryAdmin(admin.ModelAdmin):
    """Cached web responses; an admin may delete one to force a fresh fetch."""

    list_display = ("provider", "url", "http_status", "content_type", "fetched_at", "expires_at")
    list_filter = ("provider",)
    search_fields = ("url",)
    exclude = ("body",)

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(NightlyReport)
class NightlyReportAdmin(ReadOnlyAdmin):
    """Nightly auditor reports (written by `nightly_audit`). Read-only; retention deletes them."""

    list_display = (
        "date",
        "workspace",
        "status",
        "claims_selected",
        "claims_processed",
        "labels_changed",
        "review_recommended",
        "attempts",
        "claims_per_s",
    )
    list_filter = ("status", "workspace")
    date_hierarchy = "date"
    list_select_related = ("workspace",)


admin_users.register(admin.site)  # users scoped to the workspace, no escalating fields

admin.site.site_header = "Theoria Audit — admin console"
admin.site.site_title = "Theoria Audit admin"
admin.site.index_title = "Modes, thresholds, domains, calendars and notification targets"
admin.site.index_template = "admin/theoria_index.html"  # workspace settings (modes, thresholds) first

"""Admin console of what the verifier learns from its reviewers: the reviewed examples (read-only,
downloadable as benchmark JSONL), the calibration versions, and the calibration section of a
workspace's settings page ("Recalibrate now", put a version back in force, or none).

The settings page's two actions are POST views under the workspace's admin URLs
(``WorkspaceAdmin.get_urls``); both go through ``audit.services.calibration``, so every change is
an audit event, exactly as from ``manage.py calibrate`` or the API.
"""

from __future__ import annotations

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.http import HttpResponseNotAllowed, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.utils import timezone

from audit.admin.events import ReadOnlyAdmin
from audit.errors import InvalidInput
from audit.models import CalibrationVersion, ReviewedExample
from audit.selectors.learning import benchmark_rows, calibration_state
from audit.services.calibration import calibration_activate, calibration_queue
from audit.web.exports import iter_jsonl


@admin.register(ReviewedExample)
class ReviewedExampleAdmin(ReadOnlyAdmin):
    """Every reviewer decision kept as a labelled example; select some and download them as JSONL."""

    list_display = (
        "decided_at",
        "reference",
        "decision",
        "machine_label",
        "machine_confidence",
        "reviewer_label",
        "reviewer_name",
        "domain",
        "calibration_version",
    )
    list_filter = ("source", "decision", "reviewer_label", "machine_label", "domain")
    search_fields = ("reference", "claim_text", "reviewer_name")
    list_select_related = ("claim__answer", "workspace")
    date_hierarchy = "decided_at"
    actions = ["download_jsonl"]

    @admin.action(description="Download the selected examples as JSONL (benchmark claim format)")
    def download_jsonl(self, request, queryset):
        workspace = queryset.first().workspace if queryset.exists() else None
        rows = (
            benchmark_rows(workspace=workspace, queryset=queryset.select_related("claim__answer"))
            if workspace
            else []
        )
        response = StreamingHttpResponse(iter_jsonl(rows), content_type="application/x-ndjson; charset=utf-8")
        stamp = f"{timezone.now():%Y%m%dT%H%M%SZ}"
        response["Content-Disposition"] = f'attachment; filename="reviewed-examples-{stamp}.jsonl"'
        return response


@admin.register(CalibrationVersion)
class CalibrationVersionAdmin(ReadOnlyAdmin):
    """Every fit of a workspace's calibration, kept or declined, with its held-out figures."""

    list_display = (
        "number",
        "workspace",
        "status",
        "judge_version",
        "depth",
        "n_examples",
        "fitted_at",
        "fitted_by",
    )
    list_filter = ("status", "judge")
    list_select_related = ("workspace",)


def _workspace_for_change(model_admin, request, object_id: int):
    """The caller's workspace ``object_id`` (404 for any other), refused without the change permission."""
    workspace = get_object_or_404(model_admin.get_queryset(request), pk=object_id)
    if not model_admin.has_change_permission(request, workspace):
        raise PermissionDenied
    return workspace


def calibration_run_view(model_admin, request, object_id: int):
    """Queue a refit of the workspace's calibration ("Recalibrate now")."""
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    workspace = _workspace_for_change(model_admin, request, object_id)
    state = calibration_state(workspace)
    if state["examples_needed"]:
        messages.warning(
            request,
            f"Not recalibrated: {state['examples']} reviewed examples, {state['examples_needed']} more needed.",
        )
    else:
        with transaction.atomic():
            calibration_queue(workspace=workspace, actor=request.user)
        messages.success(
            request,
            "Recalibration queued: the new version (kept or declined, with its held-out figures) appears below "
            "when the task worker has run it.",
        )
    return redirect("admin:audit_workspace_settings", object_id=workspace.pk)


def calibration_rollback_view(model_admin, request, object_id: int):
    """Put the version named by ``version`` back in force (``none``: no calibration)."""
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    workspace = _workspace_for_change(model_admin, request, object_id)
    value = (request.POST.get("version") or "").strip().lower()
    try:
        number = None if value == "none" else int(value)
    except ValueError:
        messages.error(request, f"version: {value!r} is no calibration version.")
        return redirect("admin:audit_workspace_settings", object_id=workspace.pk)
    try:
        calibration_activate(
            workspace=workspace, number=number, actor=request.user, reason=request.POST.get("reason", "")
        )
    except InvalidInput as exc:
        messages.error(request, str(exc))
    else:
        now = f"Calibration v{number}" if number is not None else "No calibration (the judge as shipped)"
        messages.success(request, f"{now} is in force in {workspace.name}.")
    return redirect("admin:audit_workspace_settings", object_id=workspace.pk)

"""API routes of the audit domain, mounted at /api/v1/ (schema and docs pages included)."""

from django.urls import URLPattern, URLResolver, include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView
from rest_framework.permissions import AllowAny

from audit.api import views

urlpatterns: list[URLPattern | URLResolver] = [
    path("audits", views.AuditCreateApi.as_view(), name="api-audit-create"),
    path("retrieve", views.RetrieveApi.as_view(), name="api-retrieve"),
    path("answers", views.AnswerListApi.as_view(), name="api-answer-list"),
    path("answers/<str:answer_id>", views.AnswerDetailApi.as_view(), name="api-answer-detail"),
    path(
        "answers/<str:answer_id>/revision",
        views.AnswerRevisionDecisionApi.as_view(),
        name="api-answer-revision",
    ),
    path(
        "answers/<str:answer_id>/claims/<str:claim_id>",
        views.ClaimDetailApi.as_view(),
        name="api-claim-detail",
    ),
    path("claims", views.ClaimListApi.as_view(), name="api-claim-list"),
    path("evidence", views.EvidenceListApi.as_view(), name="api-evidence-list"),
    path("jobs/<int:pk>", views.BackgroundJobDetailApi.as_view(), name="api-job-detail"),
    path("runs", views.RunListApi.as_view(), name="api-run-list"),
    path("runs/<int:pk>", views.RunDetailApi.as_view(), name="api-run-detail"),
    path("claim-cards/export", views.ClaimCardExportApi.as_view(), name="api-claim-card-export"),
    path("claim-cards/daily-bundle", views.ClaimCardDailyBundleApi.as_view(), name="api-claim-card-bundle"),
    path("reviewed-examples", views.ReviewedExampleListApi.as_view(), name="api-reviewed-example-list"),
    path(
        "reviewed-examples/export",
        views.ReviewedExampleExportApi.as_view(),
        name="api-reviewed-example-export",
    ),
    path("calibration", views.CalibrationApi.as_view(), name="api-calibration"),
    path("calibration/run", views.CalibrationRunApi.as_view(), name="api-calibration-run"),
    path("calibration/rollback", views.CalibrationRollbackApi.as_view(), name="api-calibration-rollback"),
    path("documents", views.DocumentListApi.as_view(), name="api-document-list"),
    path("documents/<int:pk>", views.DocumentDetailApi.as_view(), name="api-document-detail"),
    path("settings/workspace", views.WorkspaceSettingsApi.as_view(), name="api-settings-workspace"),
    path("settings/thresholds", views.ThresholdsApi.as_view(), name="api-settings-thresholds"),
    path("settings/users/<str:username>", views.UserModeApi.as_view(), name="api-settings-user"),
    path(
        "settings/conversations/<str:conversation_id>",
        views.ConversationModeApi.as_view(),
        name="api-settings-conversation",
    ),
    path("settings/mode-preview", views.ModePreviewApi.as_view(), name="api-mode-preview"),
    path("auth/token", views.TokenApi.as_view(), name="api-token"),
    path("schema/", SpectacularAPIView.as_view(permission_classes=[AllowAny]), name="api-schema"),
    # the split view serves its start-up script as a file, so the page keeps a script-src 'self' CSP
    path(
        "docs/",
        SpectacularSwaggerSplitView.as_view(url_name="api-schema", permission_classes=[AllowAny]),
        name="api-docs",
    ),
]

urlpatterns += [
    path("", include("audit.api.nightly"))
]  # nightly auditor reports (docs/SPEC_NOTES.md#nightly-auditor)

"""Pages of the audit domain (behind login): dashboard, answers, claim cards, exports, nightly reports."""

from django.urls import path

from audit.web import views

urlpatterns = [
    path("workspace/switch", views.workspace_switch_page, name="workspace-switch"),
    path("dashboard/", views.dashboard, name="dashboard"),
    path("answers/", views.answer_list, name="answer-list"),
    path("answers/new/", views.answer_new, name="answer-new"),
    path("answers/<str:answer_id>/", views.answer_detail, name="answer-detail"),
    path("answers/<str:answer_id>/audit", views.answer_audit, name="answer-audit"),
    path("answers/<str:answer_id>/revision", views.answer_revision, name="answer-revision"),
    path("jobs/<int:pk>/", views.job_detail, name="job-detail"),
    path("claims/", views.claim_list, name="claim-list"),
    path("claims/<int:pk>/", views.claim_detail, name="claim-detail"),
    path("reports/nightly/", views.nightly_reports, name="nightly-reports"),
]

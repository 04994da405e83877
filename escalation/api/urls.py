"""Escalation queue API, mounted at /api/v1/ by theoria/urls.py."""

from django.urls import path

from escalation.api import views

urlpatterns = [
    path("cases", views.CaseListApi.as_view(), name="api-case-list"),
    path("cases/open", views.CaseOpenApi.as_view(), name="api-case-open"),
    path("cases/<str:ticket>", views.CaseDetailApi.as_view(), name="api-case-detail"),
    path("cases/<str:ticket>/acknowledge", views.CaseAcknowledgeApi.as_view(), name="api-case-acknowledge"),
    path("cases/<str:ticket>/assign", views.CaseAssignApi.as_view(), name="api-case-assign"),
    path("cases/<str:ticket>/note", views.CaseNoteApi.as_view(), name="api-case-note"),
    path("cases/<str:ticket>/escalate", views.CaseEscalateApi.as_view(), name="api-case-escalate"),
    path("cases/<str:ticket>/pause", views.CasePauseApi.as_view(), name="api-case-pause"),
    path("cases/<str:ticket>/resume", views.CaseResumeApi.as_view(), name="api-case-resume"),
    path("cases/<str:ticket>/resolve", views.CaseResolveApi.as_view(), name="api-case-resolve"),
    path("cases/<str:ticket>/reopen", views.CaseReopenApi.as_view(), name="api-case-reopen"),
    path("curation-items", views.CurationListApi.as_view(), name="api-curation-list"),
]

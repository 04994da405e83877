"""Pages of the escalation queue (behind login): the queue, a case, and its actions."""

from django.urls import path

from escalation import views

urlpatterns = [
    path("escalations/", views.queue, name="escalation-queue"),
    path("escalations/bulk", views.queue_bulk, name="escalation-bulk"),
    path("escalations/export.csv", views.queue_export, name="escalation-export"),
    path("claims/<int:pk>/open-case", views.claim_open_case, name="claim-open-case"),
    path("escalations/<str:ticket>/", views.case_detail, name="case-detail"),
    *[
        path(
            f"escalations/<str:ticket>/{action}", views.case_action, {"action": action}, name=f"case-{action}"
        )
        for action in views.ACTIONS
    ],
]

from django.apps import AppConfig


class EscalationConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "escalation"
    verbose_name = "Escalation"

    def ready(self) -> None:
        """Register with audit's hooks: intake of answers and flagged documents, reviewer-agreement
        alerts, the claim reads, the pages' review figures, what retention keeps, the URLs of its pages
        and its recurring jobs."""
        from audit import hooks

        from . import links, notifications, reporting, schedules, selectors, services

        hooks.register_answer_intake(services.answer_intake)
        hooks.register_documents_flagged(services.curation_items_open_for_documents)
        hooks.register_answer_decided(notifications.notifications_queue_for_answer_decision)
        hooks.register_claim_escalations(selectors.claim_escalations)
        hooks.register_claim_escalation_filter(selectors.escalation_state_q)
        hooks.register_reviewer_agreement_low(notifications.review_agreement_alerts_queue)
        hooks.register_records_held(selectors.records_held_open)
        hooks.register_claim_reviews(reporting.cases_by_claim)
        hooks.register_user_work(reporting.my_work)
        hooks.register_queue_summary(reporting.dashboard_summary)
        hooks.register_correction_backlog(reporting.correction_backlog)
        hooks.register_review_queue_url(links.review_queue_url)
        hooks.register_kb_corrections_url(links.kb_corrections_url)
        hooks.register_schedules(schedules.declared)

from django.apps import AppConfig


class ShowcaseConfig(AppConfig):
    """Demo history (``seed_history``), ``screenshots`` and ``evaluate_revision``: the commands that
    need audit and escalation together, kept above both so that neither imports them."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "showcase"
    verbose_name = "Showcase"

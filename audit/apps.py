import os
from importlib import import_module

from django.apps import AppConfig
from django.contrib.admin import apps as admin_apps
from django.db.models.signals import post_migrate


def _create_cache_table(sender, using="default", **kwargs) -> None:
    """Every ``migrate`` also creates the database cache table (throttle and lockout counts,
    ``audit.security.throttling``) where the settings use one: a fresh database never serves without it."""
    from django.core.management import call_command

    call_command("createcachetable", database=using, verbosity=0)


class AuditConfig(AppConfig):
    default = True
    default_auto_field = "django.db.models.BigAutoField"
    name = "audit"
    verbose_name = "Audit"

    def ready(self):
        post_migrate.connect(_create_cache_table, sender=self, dispatch_uid="audit.createcachetable")
        from audit.security import signin  # noqa: F401  (connects the sign-in failure counter)

        # `make run`: the development server's serving process loads the models now, in a thread
        # (runserver's reloader sets RUN_MAIN in that process only; gunicorn warms in its own hooks)
        if os.environ.get("THEORIA_WARM_MODELS") == "1" and os.environ.get("RUN_MAIN") == "true":
            from audit.services.warmup import warm_in_background

            warm_in_background()


class TheoriaAdminConfig(admin_apps.AdminConfig):
    """django.contrib.admin with the workspace-scoped site (``audit.admin.site``)."""

    default = False
    default_site = "audit.admin.site.TheoriaAdminSite"

    def ready(self):
        super().ready()  # the autodiscovery: every app's admin module (audit.admin is kept empty)
        import_module("audit.admin.console")  # audit's ModelAdmins, on the site now built

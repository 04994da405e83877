from django.apps import AppConfig
from django.contrib.admin import apps as admin_apps


class AuditConfig(AppConfig):
    default = True
    default_auto_field = "django.db.models.BigAutoField"
    name = "audit"
    verbose_name = "Audit"


class TheoriaAdminConfig(admin_apps.AdminConfig):
    """django.contrib.admin with the workspace-scoped site (``audit.admin_site``)."""

    default = False
    default_site = "audit.admin_site.TheoriaAdminSite"

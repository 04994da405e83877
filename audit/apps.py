import os
import sys
from importlib import import_module

from django.apps import AppConfig
from django.contrib.admin import apps as admin_apps
from django.db.models.signals import post_migrate


def _create_cache_table(sender, using="default", **kwargs) -> None:
    """Every ``migrate`` also creates the database cache table (throttle and lockout counts,
    ``audit.security.throttling``) where the settings use one: a fresh database never serves without it."""
    from django.core.management import call_command

    call_command("createcachetable", database=using, verbosity=0)


def _task_worker_yields(sender=None, **kwargs) -> None:
    """In each task-cluster worker process as it starts (django-q2's ``post_spawn``): a priority
    ``Q_WORKER_NICE`` below the web workers' and ``Q_WORKER_TORCH_THREADS`` torch threads, both set
    before the worker's first inference, so torch's thread pool starts with them (Linux keeps a
    nice value per thread; new threads inherit it); then its heap, Django and the app loaded, frozen
    out of the collector's reach.

    A synchronous run (``Q_CLUSTER["sync"]``, the tests') calls django-q2's worker in the caller's own
    process, named ``MainProcess``, and sends the same signal there. That process is not a task
    worker's: its priority, its threads, its writes and its collector stay as they are."""
    if kwargs.get("proc_name") == "MainProcess":
        return
    from django.conf import settings

    from audit.pipeline.memory import freeze_long_lived
    from audit.services.write_priority import writer_start

    writer_start()  # its writes keep the web's priority (a lock held by a niced thread stalls the web's)
    os.nice(settings.Q_WORKER_NICE)  # this thread's, and that of the threads it starts from now on
    os.environ["THEORIA_TORCH_THREADS"] = str(settings.Q_WORKER_TORCH_THREADS)  # the model loaders read it
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(settings.Q_WORKER_TORCH_THREADS)
    freeze_long_lived()


class AuditConfig(AppConfig):
    default = True
    default_auto_field = "django.db.models.BigAutoField"
    name = "audit"
    verbose_name = "Audit"

    def ready(self):
        post_migrate.connect(_create_cache_table, sender=self, dispatch_uid="audit.createcachetable")
        from django_q.signals import post_spawn

        from audit.security import signin  # noqa: F401  (connects the sign-in failure counter)

        post_spawn.connect(_task_worker_yields, dispatch_uid="audit.task_worker_yields")

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

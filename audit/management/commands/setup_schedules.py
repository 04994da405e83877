"""Install the recurring jobs declared in code, idempotently (keyed on the schedule's name)."""

from __future__ import annotations

from django.core.management.base import BaseCommand
from django_q.models import Schedule

from audit import hooks
from audit.schedules import SCHEDULES


def declared_schedules() -> list[dict]:
    """Audit's recurring jobs, then those the apps declare through ``hooks.register_schedules``."""
    entries: list[dict] = [*SCHEDULES, *hooks.schedules()]
    names = [e["name"] for e in entries]
    duplicates = {n for n in names if names.count(n) > 1}
    if duplicates:
        raise ValueError(f"schedule names must be unique: {', '.join(sorted(duplicates))}")
    return entries


def install_schedules() -> list[tuple[str, bool]]:
    """Create or update each declared schedule; return (name, created) pairs."""
    results = []
    for entry in declared_schedules():
        defaults = {
            "func": entry["func"],
            "schedule_type": entry.get("schedule_type", Schedule.MINUTES),
            "minutes": entry.get("minutes"),
            "cron": entry.get("cron"),
            "kwargs": entry.get("kwargs", {}),
            "repeats": -1,
        }
        # Schedule has no unique constraint on name: update the first, drop accidental copies.
        existing = list(Schedule.objects.filter(name=entry["name"]).order_by("id"))
        for extra in existing[1:]:
            extra.delete()
        if existing:
            for key, value in defaults.items():
                setattr(existing[0], key, value)
            existing[0].save()
            results.append((entry["name"], False))
        else:
            Schedule.objects.create(name=entry["name"], **defaults)
            results.append((entry["name"], True))
    return results


class Command(BaseCommand):
    help = "Install or update the django-q2 schedules declared in audit/schedules.py and by the apps (audit.hooks)."

    def handle(self, *args, **options):
        for name, created in install_schedules():
            self.stdout.write(f"{'created' if created else 'updated'} schedule {name}")

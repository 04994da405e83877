"""Open Level 1 cases acknowledged before the clock to resolve existed get it now.

Until then an L1 acknowledgement stopped the case's only clock. Each such case (acknowledged, no
running clock) gets the L1 clock to resolve from its acknowledgement (``policy.deadlines`` with
``phase=resolve``, on its workspace's calendar), on track; the next sweep marks it at risk or
breached as it would any other. Paused cases keep their stopped clock until resumed.
"""

from django.db import migrations

from audit import constants
from escalation import policy


def _calendar(apps, workspace_id, cache):
    if workspace_id not in cache:
        BusinessCalendar = apps.get_model("escalation", "BusinessCalendar")
        row = BusinessCalendar.objects.filter(workspace_id=workspace_id).first()
        cache[workspace_id] = (
            policy.Calendar()
            if row is None
            else policy.Calendar(
                tz=row.timezone,
                working_days=frozenset(row.working_days),
                start=row.day_start,
                end=row.day_end,
                holidays=frozenset(h.date for h in row.holidays.all()),
            )
        )
    return cache[workspace_id]


def start_resolution_clocks(apps, schema_editor):
    ReviewCase = apps.get_model("escalation", "ReviewCase")
    calendars: dict = {}
    stopped = ReviewCase.objects.filter(
        tier__in=constants.SLA_ACKNOWLEDGE_TIERS,
        status="acknowledged",
        due_at__isnull=True,
        acknowledged_at__isnull=False,
    )
    for case in stopped.iterator():
        when = policy.deadlines(
            case.tier,
            _calendar(apps, case.workspace_id, calendars),
            start=case.acknowledged_at,
            phase=policy.Phase.RESOLVE,
        )
        ReviewCase.objects.filter(pk=case.pk, due_at__isnull=True).update(
            clock_started_at=case.acknowledged_at,
            clock_used_s=0.0,
            due_at=when.due_at,
            at_risk_at=when.at_risk_at,
            sla_state="on_track",
        )


class Migration(migrations.Migration):
    dependencies = [
        ("escalation", "0006_llm_disagreement_trigger"),
    ]

    operations = [
        migrations.RunPython(start_resolution_clocks, migrations.RunPython.noop),
    ]

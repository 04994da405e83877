"""Recurring jobs of the audit domain, declared in code (installed by `manage.py setup_schedules`).

Each entry: name (the key; unique), func (dotted path of a tasks.py function), schedule_type
(django_q Schedule type letter: I minutes, H hourly, D daily, C cron), minutes, cron, kwargs.
Features append their jobs here; escalation declares its own in escalation/schedules.py.
"""

SCHEDULES: list[dict] = []

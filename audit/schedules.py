"""Recurring jobs of the audit domain, declared in code (installed by `manage.py setup_schedules`).

Each entry: name (the key; unique), func (dotted path of a tasks.py function), schedule_type
(django_q Schedule type letter: I minutes, H hourly, D daily, C cron), minutes, cron, kwargs.
Features append their jobs here; escalation declares its own in escalation/schedules.py.
"""

SCHEDULES: list[dict] = [
    # Nightly batch auditor (docs/SPEC_NOTES.md#nightly-auditor): yesterday's weak claims, every workspace, once a day.
    # Daily ("D") rather than cron: cron schedules need the croniter package; the task always
    # re-checks the previous UTC day, so the hour it runs at does not change what it does.
    {"name": "audit.nightly_audit", "func": "audit.tasks.nightly_audit", "schedule_type": "D"},
    # Retention (docs/SPEC_NOTES.md#freshness-and-retention): purge audit data past each workspace's retention, daily.
    {"name": "audit.purge_expired", "func": "audit.tasks.purge_expired", "schedule_type": "D"},
    # Audit-Web response cache (docs/SPEC_NOTES.md#escalation-to-audit-web): drop entries past their time-to-live, daily.
    {"name": "audit.web_cache_purge", "func": "audit.tasks.web_cache_purge", "schedule_type": "D"},
    # Knowledge-base sentence encodings (audit/pipeline/encodings.py): delete those no chunk of any workspace
    # holds any more (deleted or changed documents) and those of an older encoder, daily.
    {"name": "audit.kb_encodings_prune", "func": "audit.tasks.kb_encodings_prune", "schedule_type": "D"},
    # Learning from reviewers (docs/ARCHITECTURE.md): refit each workspace's calibration when it has new
    # reviewed decisions, and alert on domains whose reviewers agree less with the machine, daily.
    {"name": "audit.calibrate_workspaces", "func": "audit.tasks.calibrate_workspaces", "schedule_type": "D"},
    {"name": "audit.review_drift_check", "func": "audit.tasks.review_drift_check", "schedule_type": "D"},
]

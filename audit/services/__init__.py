"""Writes of the audit domain: submissions and audits, claims and cards, revisions, deep checks, the
web step, the nightly run, calibration, ingestion, workspaces and events. Each write is one
transaction and records an audit event.

May import: ``audit.pipeline``, the models, selectors, ``audit.kb``, ``audit.hooks`` (to reach
escalation) and the shared foundations; never a page, the admin or the API.
"""

"""The admin console of the audit domain: the workspace-scoped admin site (``site``), the ModelAdmins
of audit's models (``console``), the workspace settings form (``workspace_settings``), the users of a
workspace (``users``), calibration actions (``learning``) and the audited-change mixins (``events``).

This ``__init__`` stays empty on purpose: Django imports ``audit.admin.site`` to build the admin site,
and a package that registered models on import would register them on a half-built site.
``TheoriaAdminConfig.ready`` (``audit/apps.py``) imports ``console`` after the autodiscovery.

May import: services (every change goes through one), selectors, ``audit.kb``, ``audit.security``,
``audit.web``'s forms and presentation helpers, the models and the shared foundations. Nothing but
the admin's app config and escalation's admin (through ``audit.admin.events``) imports it.
"""

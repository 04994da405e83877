"""Template filters of the analyst pages: badges, metrics, durations."""

from __future__ import annotations

from django import template
from django.core.exceptions import PermissionDenied

from audit.models.choices import Label
from audit.services.workspaces import workspace_for_user
from audit.web import presentation

register = template.Library()

_ICONS = {Label.SUPPORTED: "✓", Label.REFUTED: "✗", Label.NEI: "?"}


@register.filter
def badge(label: str) -> tuple[str, str]:
    """(text, css modifier) of a label's badge."""
    return presentation.badge_for(label)


@register.filter
def badge_icon(label: str) -> str:
    return _ICONS.get(label, "?")


@register.filter
def key_metrics(metrics) -> list[tuple[str, float]]:
    return presentation.key_metrics(metrics)


@register.filter
def label_meaning(label: str, confidence) -> str:
    return presentation.label_meaning(label, confidence)


@register.filter
def revision_view(claim):
    return presentation.revision_view(claim)


@register.filter
def aligned_sentence(claim) -> str:
    """The sentence of the claim's top evidence that its verdict rests on (markdown stripped)."""
    evidence = next(iter(claim.evidence.all()), None)
    if evidence is None:
        return ""
    view = presentation.evidence_view(claim, evidence)
    return view["sentence"] or view["after"][:160]


@register.filter
def event_words(event) -> str:
    return presentation.event_words(event.action, event.details)


@register.filter
def event_actor(event) -> str:
    return presentation.event_actor(event)


@register.filter
def pct(value) -> str:
    """0.0423 -> '4.2 %' (one decimal below 10 %, whole numbers above)."""
    if value is None:
        return "—"
    share = float(value) * 100
    return f"{share:.1f} %" if abs(share) < 10 else f"{share:.0f} %"


@register.filter
def signed_pct(value) -> str:
    """-0.3 -> '−30 %', 0.12 -> '+12 %'."""
    if value is None:
        return "—"
    share = round(float(value) * 100)
    return f"{'+' if share > 0 else '−' if share < 0 else ''}{abs(share)} %"


@register.filter
def seconds(ms) -> str:
    """Milliseconds as '0.42 s' (or '2 s' for whole seconds)."""
    if ms is None:
        return "—"
    s = float(ms) / 1000
    return f"{s:.0f} s" if s == int(s) else f"{s:.2f} s"


@register.filter
def admin_workspaces(request) -> list:
    """The workspace whose settings the admin index links to: the caller's (a superuser's after a switch)."""
    try:
        workspace = workspace_for_user(request.user)
    except PermissionDenied:  # an account in no workspace: no settings to link to
        return []
    return [workspace] if workspace else []


@register.filter
def metric_rows(claim) -> list:
    return presentation.metric_rows(claim.metrics, claim.label)


@register.filter
def attempt_summary(summary) -> str:
    return presentation.attempt_summary(summary or {})


@register.filter
def web_reason(reason: str, thresholds) -> str:
    return presentation.web_reason_words(reason, thresholds)


@register.filter
def web_status(status: str) -> str:
    return presentation.web_status_words(str(status))


@register.filter
def provider_name(provider: str) -> str:
    return presentation.provider_name(provider)


@register.filter
def providers_text(calls) -> str:
    return presentation.providers_text(list(calls))


@register.filter
def claims_count(calls) -> int:
    """How many distinct claims the given external calls were made for."""
    return len({c.get("claim__claim_id") for c in calls})


@register.filter
def human_label(claim) -> dict:
    return presentation.human_label(claim)


@register.filter
def finding_words(finding) -> str:
    return presentation.finding_words(finding)


@register.filter
def pretty_json(value) -> str:
    import json

    return json.dumps(value, indent=2, sort_keys=True, default=str)

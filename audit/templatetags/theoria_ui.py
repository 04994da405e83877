"""Template filters of the analyst pages: badges, metrics, durations."""

from __future__ import annotations

from django import template

from audit import presentation
from audit.models.choices import Label

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
def pretty_json(value) -> str:
    import json

    return json.dumps(value, indent=2, sort_keys=True, default=str)

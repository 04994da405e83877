"""Where each figure of the dashboard leads: the list a tile, a count or a chart point summarises.

Every link is a list page with the filters that select exactly (or, where a list cannot say it,
as nearly as it can) the rows behind the figure: claims (``/claims/``), answers (``/answers/``) or
review cases (``/escalations/``). The charts get, beside their Plotly data, ``links`` (one URL per
point, per trace: ``static/dashboard.js`` opens it on a click) and ``table`` (the same points as a
table of values and links: the chart's text alternative, for keyboards and screen readers).
"""

from __future__ import annotations

import datetime as dt

from audit import constants, hooks
from audit.web.presentation import list_url

LABEL_BY_TEXT = {
    "Supported": "SUPPORTED",
    "Refuted": "REFUTED",
    "Needs Evidence": "NEI",
    "Needs evidence": "NEI",
}


def claims(**params) -> str:
    return list_url("claim-list", params)


def answers(**params) -> str:
    return list_url("answer-list", params)


def cases(**params) -> str:
    return hooks.review_queue_url(**params)  # the review app's page (``audit.hooks``)


def scope(period) -> dict:
    """The domain the dashboard is narrowed to, as a list filter (every list filters by ``domain``)."""
    domain = getattr(period, "domain", "")
    return {"domain": domain} if domain else {}


def period_params(period) -> dict:
    return {"date_from": period.start.isoformat(), "date_to": period.end.isoformat(), **scope(period)}


def day_params(day: str, period=None) -> dict:
    return {"date_from": day, "date_to": day, **scope(period)}


def tiles(period, *, staff: bool) -> dict[str, str]:
    """The links of the KPI tiles, the queue counts and the incident summary."""
    p = period_params(period)
    d = scope(period)
    opened = {"opened_from": p["date_from"], "opened_to": p["date_to"], "open": "any", **d}
    return {
        "supported_unassisted": claims(label="SUPPORTED", machine_label="SUPPORTED", escalation="none", **p),
        "escalated_missing_evidence": claims(machine_label="NEI", escalation="any", **p),
        "latency": answers(mode=constants.MODE_AUDIT_LOCAL, **p),
        "backlog": hooks.kb_corrections_url(staff=staff, open_only=True),
        "open": cases(**d),
        "at_risk": cases(sla_state="at_risk", **d),
        "breached": cases(sla_state="breached", **d),
        "paused": cases(status="paused", **d),
        "unowned": cases(owner="none", **d),
        "breaches": cases(breached_from=p["date_from"], breached_to=p["date_to"], open="any", **d),
        "opened": cases(**opened),
        "resolved": cases(resolved_from=p["date_from"], resolved_to=p["date_to"], **d),
        "refuted": claims(label="REFUTED", **p),
        "relabelled": claims(relabelled="true", **p),
        "suppressed": answers(suppressed="true", **p),
        "kb_corrections": hooks.kb_corrections_url(staff=staff),
        "claims": claims(**p),
        "answers": answers(**p),
    }


def domain_links(rows: list[dict], period) -> list[dict]:
    """Each domain row of the dashboard with the links of its counts."""
    p = {k: v for k, v in period_params(period).items() if k != "domain"}
    return [
        {
            **row,
            "links": {
                "answers": answers(domain=row["domain"], **p),
                "claims": claims(domain=row["domain"], **p),
                "supported": claims(domain=row["domain"], label="SUPPORTED", **p),
                "refuted": claims(domain=row["domain"], label="REFUTED", **p),
                "nei": claims(domain=row["domain"], label="NEI", **p),
                "unsupported": claims(domain=row["domain"], label="REFUTED,NEI", **p),
                "open": cases(domain=row["domain"]),
                "sla": cases(
                    domain=row["domain"], entered_from=p["date_from"], entered_to=p["date_to"], open="any"
                ),
                "sla_met": cases(
                    domain=row["domain"],
                    entered_from=p["date_from"],
                    entered_to=p["date_to"],
                    entered_met="true",
                    open="any",
                ),
                "focus": dashboard_url(period, domain=row["domain"]),
            },
        }
        for row in rows
    ]


def dashboard_url(period, **params) -> str:
    """The dashboard over the same range, narrowed (``domain``) or not."""
    return list_url(
        "dashboard", {"date_from": period.start.isoformat(), "date_to": period.end.isoformat(), **params}
    )


def _aging_params(bucket: int, tier: int, now: dt.datetime) -> dict:
    lower = 0 if bucket == 0 else constants.QUEUE_AGING_BUCKETS[bucket - 1][0]
    upper = constants.QUEUE_AGING_BUCKETS[bucket][0]
    params = {"tier": tier, "opened_before": (now - dt.timedelta(seconds=lower)).isoformat()}
    if upper is not None:
        params["opened_after"] = (now - dt.timedelta(seconds=upper)).isoformat()
    return params


def _point_link(key: str, trace: dict, i: int, category, period, now) -> str:
    """The list behind point ``i`` (category ``category``) of a trace of chart ``key``."""
    p = period_params(period)
    name = trace.get("name", "")
    if key in ("trust-trend", "rag-score", "llm-usage"):
        return answers(**day_params(category, period))
    if key == "label-rates":
        return claims(
            label="REFUTED" if name.startswith("Refuted") else "NEI", **day_params(category, period)
        )
    if key == "sla-trend":  # the cases whose clock started that day
        return cases(entered_from=category, entered_to=category, open="any", **scope(period))
    if key == "label-distribution":
        return claims(label=LABEL_BY_TEXT.get(category, category), **p)
    if key == "queue-aging":
        return cases(**_aging_params(i, int(name.split()[-1]), now), **scope(period))
    if key == "sla-attainment":  # the cases whose clock started at that tier in the period
        tier = str(category).split()[-1]
        met = "false" if name == "SLA missed" else "true"
        return cases(
            entered_tier=tier,
            entered_from=p["date_from"],
            entered_to=p["date_to"],
            entered_met=met,
            open="any",
            **scope(period),
        )
    if key == "escalation-volume":
        if name == "Resolved":
            return cases(resolved_from=category, resolved_to=category, **scope(period))
        return cases(opened_from=category, opened_to=category, open="any", **scope(period))
    if key == "domains":
        return claims(**{**p, "domain": category}, label=LABEL_BY_TEXT.get(name, name))
    return answers(**p)


def _categories(trace: dict) -> tuple[list, list]:
    """(categories, values) of a trace: y and x swapped for a horizontal bar."""
    if trace.get("orientation") == "h":
        return list(trace.get("y") or []), list(trace.get("x") or [])
    return list(trace.get("x") or []), list(trace.get("y") or [])


def _shown(value, percent: bool) -> str:
    if value is None:
        return "—"
    if percent and isinstance(value, float):
        return f"{value * 100:.0f} %"
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value)


def with_links(key: str, figure: dict, period, now: dt.datetime | None = None) -> dict:
    """``figure`` with ``links`` (a URL per point, per trace) and ``table`` (its text alternative)."""
    now = now or dt.datetime.now(dt.timezone.utc)
    layout = figure.get("layout") or {}
    traces = figure.get("data") or []
    links = []
    order: list = []
    values: dict = {}
    for t, trace in enumerate(traces):
        categories, ys = _categories(trace)
        links.append([_point_link(key, trace, i, c, period, now) for i, c in enumerate(categories)])
        axis = layout.get("xaxis" if trace.get("orientation") == "h" else "yaxis") or {}
        if trace.get("yaxis") == "y2":
            axis = layout.get("yaxis2") or {}
        percent = "%" in str(axis.get("tickformat", "")) or "share" in str(trace.get("name", "")).lower()
        for i, c in enumerate(categories):
            if c not in values:
                order.append(c)
                values[c] = {}
            shown = _shown(ys[i] if i < len(ys) else None, percent)
            texts = trace.get("text")
            if isinstance(texts, list) and i < len(texts) and percent:  # "22 of 24 met (92 %)"
                shown = f"{texts[i]} ({shown})"
            values[c][t] = (shown, links[t][i])
    axis_title = (
        (layout.get("yaxis" if traces and traces[0].get("orientation") == "h" else "xaxis") or {}).get(
            "title"
        )
        or {}
    ).get("text", "")
    return {
        **figure,
        "links": links,
        "table": {
            "columns": [axis_title or "", *[trace.get("name", "") or "value" for trace in traces]],
            "rows": [[c, [values[c].get(t, ("—", "")) for t in range(len(traces))]] for c in order],
        },
    }

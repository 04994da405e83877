"""Plotly figures of what reviewers tell the verifier (``audit.selectors.learning.learning_summary``).

The dashboard's "Calibration and reviewer agreement" panel: the reliability diagram (the machine's
confidence against the share reviewers found SUPPORTED), reviewer agreement with the machine per
day, and agreement per domain over the drift window. Same conventions as ``audit.web.charts``.
"""

from __future__ import annotations

import math

from audit.web.charts import chart_layout

AGREE_COLOUR = "#2f5bd3"
COUNT_COLOUR = "#c9d3ea"
DIAGONAL_COLOUR = "#8a94a6"
# room above the plot for the title, so a vertical axis title never reaches it
MARGIN = {"l": 64, "r": 56, "t": 64, "b": 48}


def _pct(value) -> str:
    return "—" if value is None else f"{value * 100:.0f} %"


def _table(columns: list[str], rows: list[tuple]) -> dict:
    """A chart's data as the table ``templates/audit/_chart_table.html`` shows (no links)."""
    return {"columns": columns, "rows": [[first, [[str(v), ""] for v in rest]] for first, *rest in rows]}


def integer_ticks(values: list) -> dict:
    """Axis settings that tick whole numbers only (counts): 0, then a step of at least 1."""
    top = max([v for v in values if v is not None] or [0])
    return {"tick0": 0, "dtick": max(1, math.ceil(top / 5)), "tickformat": "d", "rangemode": "tozero"}


def reliability_diagram(rel: dict) -> dict:
    """Mean confidence per bin against the share of its claims reviewers found SUPPORTED; the diagonal
    is a perfectly calibrated machine."""
    bins = rel["bins"]
    return {
        "data": [
            {
                "type": "scatter",
                "mode": "lines",
                "name": "Perfectly calibrated",
                "x": [0, 1],
                "y": [0, 1],
                "line": {"color": DIAGONAL_COLOUR, "dash": "dash"},
                "hoverinfo": "skip",
            },
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": "Reviewed claims",
                "x": [b["confidence"] for b in bins],
                "y": [b["supported"] for b in bins],
                "customdata": [[b["n"], b["low"], b["high"]] for b in bins],
                "marker": {"color": AGREE_COLOUR, "size": 9},
                "line": {"color": AGREE_COLOUR},
                "hovertemplate": "confidence %{customdata[1]:.1f}–%{customdata[2]:.1f} (mean %{x:.2f}): "
                "%{y:.0%} of %{customdata[0]} found SUPPORTED<extra></extra>",
            },
        ],
        "layout": chart_layout(
            "Reliability: confidence vs reviewers' SUPPORTED share"
            + (f" (ECE {rel['ece']:.3f})" if rel.get("ece") is not None else ""),
            xaxis={"title": {"text": "machine confidence"}, "range": [0, 1], "tickformat": ".0%"},
            yaxis={"title": {"text": "found SUPPORTED"}, "range": [0, 1.05], "tickformat": ".0%"},
            margin=MARGIN,
        ),
        "table": _table(
            [
                "machine confidence",
                "reviewed claims",
                "mean confidence",
                "found SUPPORTED by reviewers",
                "gap",
            ],
            [
                (
                    f"{b['low']:.1f}–{b['high']:.1f}",
                    b["n"],
                    f"{b['confidence']:.2f}",
                    _pct(b["supported"]),
                    f"{abs(b['confidence'] - b['supported']) * 100:.0f} points",
                )
                for b in bins
            ],
        ),
    }


def agreement_trend(agreement: dict) -> dict:
    """Per day: reviewer decisions (bars) and the share that gave the machine's label (line)."""
    return {
        "data": [
            {
                "type": "bar",
                "name": "Decisions",
                "x": agreement["days"],
                "y": agreement["decisions"],
                "yaxis": "y2",
                "marker": {"color": COUNT_COLOUR},
                "hovertemplate": "%{x|%d %b}: %{y} decisions<extra></extra>",
            },
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": "Agreement with the machine",
                "x": agreement["days"],
                "y": agreement["agreement"],
                "connectgaps": False,
                "line": {"color": AGREE_COLOUR},
                "hovertemplate": "%{x|%d %b}: reviewers gave the machine's label on %{y:.0%}<extra></extra>",
            },
        ],
        "layout": chart_layout(
            "Reviewer agreement with the machine",
            xaxis={"title": {"text": "day"}},
            yaxis={"title": {"text": "agreement"}, "range": [0, 1.05], "tickformat": ".0%"},
            yaxis2={
                "title": {"text": "decisions"},
                "overlaying": "y",
                "side": "right",
                **integer_ticks(agreement["decisions"]),
            },
            margin=MARGIN,
        ),
        "table": _table(
            ["day", "reviewer decisions", "agreement with the machine"],
            [
                (day, n, _pct(share))
                for day, n, share in zip(agreement["days"], agreement["decisions"], agreement["agreement"])
                if n
            ],
        ),
    }


def domain_agreement(drift: list[dict], min_agreement: float, window_days: int) -> dict:
    """Agreement per domain in the last window and the one before, against the alert threshold."""
    domains = [d["domain"] for d in drift]
    return {
        "data": [
            {
                "type": "bar",
                "name": f"Last {window_days} days",
                "x": domains,
                "y": [d["agreement"] for d in drift],
                "customdata": [d["decisions"] for d in drift],
                "marker": {"color": AGREE_COLOUR},
                "hovertemplate": "%{x}: %{y:.0%} of %{customdata} decisions<extra></extra>",
            },
            {
                "type": "bar",
                "name": f"The {window_days} days before",
                "x": domains,
                "y": [d["agreement_before"] for d in drift],
                "customdata": [d["decisions_before"] for d in drift],
                "marker": {"color": COUNT_COLOUR},
                "hovertemplate": "%{x}: %{y:.0%} of %{customdata} decisions<extra></extra>",
            },
        ],
        "layout": chart_layout(
            f"Label drift by domain (alert below {min_agreement:.0%})",
            barmode="group",
            xaxis={"title": {"text": "domain"}},
            yaxis={"title": {"text": "agreement"}, "range": [0, 1.05], "tickformat": ".0%"},
            shapes=[
                {
                    "type": "line",
                    "xref": "paper",
                    "x0": 0,
                    "x1": 1,
                    "y0": min_agreement,
                    "y1": min_agreement,
                    "line": {"color": "#b42318", "dash": "dot"},
                }
            ],
            margin=MARGIN,
        ),
        "table": _table(
            [
                "domain",
                f"decisions, last {window_days} days",
                "agreement",
                f"decisions, {window_days} days before",
                "agreement before",
            ],
            [
                (
                    d["domain"],
                    d["decisions"],
                    _pct(d["agreement"]),
                    d["decisions_before"],
                    _pct(d["agreement_before"]),
                )
                for d in drift
            ],
        ),
    }


def review_figures(summary: dict) -> dict:
    """The panel's figures by chart id (the template embeds each, ``static/dashboard.js`` draws them)."""
    return {
        "review-reliability": reliability_diagram(summary["reliability"]),
        "review-agreement": agreement_trend(summary["agreement"]),
        "review-drift": domain_agreement(summary["drift"], summary["min_agreement"], summary["window_days"]),
    }

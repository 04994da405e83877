"""Plotly figures of the dashboard, built from selector output (plain dicts, no ORM).

Each function returns a figure as a JSON-ready dict ``{"data": [...], "layout": {...}}``;
the template embeds it with ``json_script`` and ``static/dashboard.js`` draws it with the
locally served ``plotly.min.js``. Every chart carries a title and axis titles, and colours are
backed by legend text, so no state is told by colour alone.
"""

from __future__ import annotations

from audit.models.choices import LABEL_BADGES, Label

# Colours match the badge colours of static/theoria.css.
LABEL_COLOURS = {Label.SUPPORTED: "#1b7f3b", Label.REFUTED: "#b42318", Label.NEI: "#a15c00"}
TIER_COLOURS = {1: "#2f5bd3", 2: "#7a3fc2", 3: "#1d2433"}
FONT = {"family": "system-ui, -apple-system, Segoe UI, sans-serif", "size": 13, "color": "#1d2433"}


def chart_layout(title: str, **extra) -> dict:
    layout = {
        "title": {"text": title, "x": 0, "xanchor": "left", "font": {"size": 15}},
        "font": FONT,
        "margin": {"l": 56, "r": 16, "t": 48, "b": 48},
        "paper_bgcolor": "#ffffff",
        "plot_bgcolor": "#ffffff",
        "legend": {"orientation": "h", "x": 1, "xanchor": "right", "y": 1.02, "yanchor": "bottom"},
        "height": 320,
    }
    layout.update(extra)
    return layout


def trust_trend(summary: dict) -> dict:
    """Line chart: mean audit score per day and share of supported claims per day."""
    return {
        "data": [
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": "Mean audit score",
                "x": summary["days"],
                "y": summary["trust"],
                "line": {"color": "#2f5bd3"},
                "connectgaps": False,
                "hovertemplate": "%{x|%d %b}: mean audit score %{y:.2f}<extra></extra>",
            },
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": "Supported share",
                "x": summary["days"],
                "y": summary["supported_share"],
                "line": {"color": "#1b7f3b", "dash": "dot"},
                "connectgaps": False,
                "hovertemplate": "%{x|%d %b}: %{y:.0%} of claims supported<extra></extra>",
            },
        ],
        "layout": chart_layout(
            "Trust-score trend",
            yaxis={"title": {"text": "score / share"}, "range": [0, 1.05]},
            xaxis={"title": {"text": "day"}},
        ),
    }


def rag_score_trend(summary: dict) -> dict:
    """Line chart: mean weighted RAG verification score of the day's runs (docs/SPEC_NOTES.md#the-rag-score)."""
    return {
        "data": [
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": "Mean RAG score",
                "x": summary["days"],
                "y": summary["rag_score"],
                "line": {"color": "#7a3fc2"},
                "connectgaps": False,
                "hovertemplate": "%{x|%d %b}: mean RAG score %{y:.2f}<extra></extra>",
            },
        ],
        "layout": chart_layout(
            "RAG verification score",
            yaxis={"title": {"text": "score"}, "range": [0, 1.05]},
            xaxis={"title": {"text": "day"}},
        ),
    }


def label_rates(summary: dict) -> dict:
    """Lines: share of each day's claims labelled REFUTED and NEI (what the queue is fed by)."""
    return {
        "data": [
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": "Refuted rate",
                "x": summary["days"],
                "y": summary["refuted_share"],
                "line": {"color": LABEL_COLOURS[Label.REFUTED]},
                "connectgaps": False,
                "hovertemplate": "%{x|%d %b}: %{y:.0%} of claims refuted<extra></extra>",
            },
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": "Needs-evidence rate",
                "x": summary["days"],
                "y": summary["nei_share"],
                "line": {"color": LABEL_COLOURS[Label.NEI], "dash": "dot"},
                "connectgaps": False,
                "hovertemplate": "%{x|%d %b}: %{y:.0%} of claims need evidence<extra></extra>",
            },
        ],
        "layout": chart_layout(
            "Refuted and needs-evidence rates",
            xaxis={"title": {"text": "day"}},
            yaxis={
                "title": {"text": "share of the day's claims"},
                "tickformat": ".0%",
                "rangemode": "tozero",
            },
        ),
    }


def sla_attainment_trend(by_day: dict) -> dict:
    """Line: share of the SLA clocks started each day that were met (bars: clocks started)."""
    return {
        "data": [
            {
                "type": "bar",
                "name": "Clocks started",
                "x": by_day["days"],
                "y": by_day["started"],
                "yaxis": "y2",
                "marker": {"color": "#d9dee7"},
                "hovertemplate": "%{x|%d %b}: %{y} SLA clock(s) started<extra></extra>",
            },
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": "SLA met",
                "x": by_day["days"],
                "y": by_day["share"],
                "line": {"color": "#1b7f3b"},
                "connectgaps": False,
                "hovertemplate": "%{x|%d %b}: %{y:.0%} of SLA clocks met<extra></extra>",
            },
        ],
        "layout": chart_layout(
            "SLA attainment trend",
            xaxis={"title": {"text": "day the clock started"}},
            yaxis={"title": {"text": "share met"}, "range": [0, 1.05], "tickformat": ".0%"},
            yaxis2={
                "title": {"text": "clocks"},
                "overlaying": "y",
                "side": "right",
                "showgrid": False,
                "rangemode": "tozero",
                "tick0": 0,
                "dtick": count_step(max(by_day["started"], default=0)),
            },
            margin={"l": 56, "r": 56, "t": 48, "b": 48},
        ),
    }


def domain_breakdown(rows: list[dict]) -> dict:
    """Stacked horizontal bars: each domain's claims by label (counts, shares in the hover)."""
    domains = [r["domain"] for r in rows]
    data = []
    for label, key in ((Label.SUPPORTED, "supported"), (Label.REFUTED, "refuted"), (Label.NEI, "nei")):
        name = LABEL_BADGES[label][0]
        data.append(
            {
                "type": "bar",
                "orientation": "h",
                "name": name,
                "y": domains,
                "x": [r[key] for r in rows],
                "customdata": [r[f"{key}_share"] for r in rows],
                "marker": {"color": LABEL_COLOURS[label]},
                "hovertemplate": f"%{{y}}: %{{x}} {name.lower()} (%{{customdata:.0%}})<extra></extra>",
            }
        )
    return {
        "data": data,
        "layout": chart_layout(
            "Claims by domain",
            barmode="stack",
            xaxis={"title": {"text": "claims"}},
            yaxis={"automargin": True, "autorange": "reversed"},
            height=max(240, 90 + 36 * len(rows)),
        ),
    }


def label_distribution(summary: dict) -> dict:
    """Bar chart: claims per label over the period."""
    labels = [Label.SUPPORTED, Label.REFUTED, Label.NEI]
    return {
        "data": [
            {
                "type": "bar",
                "x": [LABEL_BADGES[label][0] for label in labels],
                "y": [summary["labels"].get(label, 0) for label in labels],
                "marker": {"color": [LABEL_COLOURS[label] for label in labels]},
                "text": [str(summary["labels"].get(label, 0)) for label in labels],
                "textposition": "auto",
                "hovertemplate": "%{x}: %{y} claims<extra></extra>",
                "name": "Claims",
            }
        ],
        "layout": chart_layout(
            "Claim label distribution", yaxis={"title": {"text": "claims"}}, showlegend=False
        ),
    }


def queue_aging(aging: dict) -> dict:
    """Stacked bars: open cases per age bucket, one series per tier.

    ``aging`` is ``{"buckets": [bucket label, ...], "tiers": {tier: [count per bucket]}}``.
    """
    return {
        "data": [
            {
                "type": "bar",
                "name": f"Level {tier}",
                "x": aging["buckets"],
                "y": counts,
                "marker": {"color": TIER_COLOURS.get(int(tier), "#5b6475")},
                "hovertemplate": f"Level {tier}, open %{{x}}: %{{y}} case(s)<extra></extra>",
            }
            for tier, counts in sorted(aging["tiers"].items())
        ],
        "layout": chart_layout(
            "Queue aging (open cases)",
            barmode="stack",
            yaxis={"title": {"text": "open cases"}},
            xaxis={"title": {"text": "age"}},
        ),
    }


def sla_attainment(attainment: dict) -> dict:
    """Stacked bars per tier: the share of cases that met their SLA and the share that missed it,
    with "n of m met" / "n of m missed" as text (each part opens its own cases).

    ``attainment`` is ``{tier: {"met": n, "total": n}}``.
    """
    tiers = sorted(attainment)

    def share(t: int, n: int) -> float | None:
        return round(n / attainment[t]["total"], 4) if attainment[t]["total"] else None

    missed = {t: attainment[t]["total"] - attainment[t]["met"] for t in tiers}
    return {
        "data": [
            {
                "type": "bar",
                "x": [f"Level {t}" for t in tiers],
                "y": [share(t, attainment[t]["met"]) for t in tiers],
                "text": [f"{attainment[t]['met']} of {attainment[t]['total']} met" for t in tiers],
                "textposition": "auto",
                "marker": {"color": [TIER_COLOURS.get(int(t), "#5b6475") for t in tiers]},
                "hovertemplate": "%{x}: %{text} (%{y:.0%})<extra></extra>",
                "name": "SLA met",
            },
            {
                "type": "bar",
                "x": [f"Level {t}" for t in tiers],
                "y": [share(t, missed[t]) for t in tiers],
                "text": [f"{missed[t]} of {attainment[t]['total']} missed" for t in tiers],
                "textposition": "auto",
                "marker": {"color": "#f3c1bb"},
                "hovertemplate": "%{x}: %{text} (%{y:.0%})<extra></extra>",
                "name": "SLA missed",
            },
        ],
        "layout": chart_layout(
            "SLA attainment by tier",
            barmode="stack",
            yaxis={"title": {"text": "share of cases"}, "range": [0, 1.05], "tickformat": ".0%"},
            showlegend=False,
        ),
    }


def escalation_volume(volume: dict) -> dict:
    """Lines: cases opened and resolved per day. ``volume`` is ``{"days", "opened", "resolved"}``."""
    return {
        "data": [
            {
                "type": "bar",
                "name": "Opened",
                "x": volume["days"],
                "y": volume["opened"],
                "marker": {"color": "#b42318"},
                "hovertemplate": "%{x|%d %b}: %{y} opened<extra></extra>",
            },
            {
                "type": "bar",
                "name": "Resolved",
                "x": volume["days"],
                "y": volume["resolved"],
                "marker": {"color": "#1b7f3b"},
                "hovertemplate": "%{x|%d %b}: %{y} resolved<extra></extra>",
            },
        ],
        "layout": chart_layout(
            "Escalation volume",
            barmode="group",
            yaxis={"title": {"text": "cases"}},
            xaxis={"title": {"text": "day"}},
        ),
    }


def count_step(top: int) -> int:
    """A round tick step (1, 2, 5, 10, 20, 50, ...) giving at most five ticks up to ``top`` calls."""
    step = 1
    while step * 5 < top:
        for factor in (2, 2.5, 2):  # 1 -> 2 -> 5 -> 10 -> 20 -> 50 -> 100 ...
            step = int(step * factor)
            if step * 5 >= top:
                break
    return step


def llm_usage(usage: dict) -> dict:
    """Stacked bars of prompt and completion tokens per day (left axis), LLM calls as a line (right).

    ``usage`` is ``audit.selectors.dashboard.llm_usage`` output. Calls are whole numbers, so the
    calls axis ticks at a round whole step; the legend sits under the plot, clear of the title.
    """
    return {
        "data": [
            {
                "type": "bar",
                "name": "Prompt tokens",
                "x": usage["days"],
                "y": usage["prompt_tokens"],
                "marker": {"color": "#2f5bd3"},
                "hovertemplate": "%{x|%d %b}: %{y} prompt tokens<extra></extra>",
            },
            {
                "type": "bar",
                "name": "Completion tokens",
                "x": usage["days"],
                "y": usage["completion_tokens"],
                "marker": {"color": "#7a3fc2"},
                "hovertemplate": "%{x|%d %b}: %{y} completion tokens<extra></extra>",
            },
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": "LLM calls",
                "x": usage["days"],
                "y": usage["llm_calls"],
                "yaxis": "y2",
                "line": {"color": "#a15c00"},
                "hovertemplate": "%{x|%d %b}: %{y} LLM calls<extra></extra>",
            },
        ],
        "layout": chart_layout(
            "LLM usage: calls and tokens per day",
            barmode="stack",
            xaxis={"title": {"text": "day"}},
            yaxis={"title": {"text": "tokens"}, "rangemode": "tozero"},
            yaxis2={
                "title": {"text": "calls"},
                "overlaying": "y",
                "side": "right",
                "rangemode": "tozero",
                "showgrid": False,
                "tick0": 0,
                "dtick": count_step(max(usage["llm_calls"], default=0)),
            },
            legend={"orientation": "h", "x": 0, "xanchor": "left", "y": -0.3, "yanchor": "top"},
            margin={"l": 64, "r": 56, "t": 48, "b": 96},
            height=360,
        ),
    }

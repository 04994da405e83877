"""Aggregates behind the compliance dashboard (audit side): a handful of GROUP BY queries.

Nothing here loads rows one by one: each function is one or two aggregate queries whose cost
grows with the number of days shown, not with the number of claims (100,000 claims stay fast;
see docs/ARCHITECTURE.md for the measured figures).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from django.db.models import Avg, Count, F, FloatField, Q
from django.db.models.fields.json import KT
from django.db.models.functions import Cast, TruncDate
from django.utils import timezone

from audit import constants, hooks
from audit.hooks import claim_escalation_filter
from audit.models import Answer, Claim, VerificationRun, Workspace
from audit.models.choices import Label
from audit.selectors.llm import llm_usage_by_day

DEFAULT_RANGE_DAYS = constants.DASHBOARD_DEFAULT_RANGE_DAYS
MAX_RANGE_DAYS = constants.DASHBOARD_MAX_RANGE_DAYS


@dataclass(frozen=True)
class DateRange:
    """An inclusive range of UTC days, and the one answer domain the dashboard is narrowed to ("": all)."""

    start: dt.date
    end: dt.date
    domain: str = ""

    def in_domain(self, path: str = "") -> Q:
        """The condition that keeps the rows of the domain (``path``: the lookup to the answer,
        ``"answer__"`` from a claim or a run); no condition when no domain is chosen."""
        return Q(**{f"{path}domain__iexact": self.domain}) if self.domain else Q()

    @classmethod
    def ending_today(cls, days: int = DEFAULT_RANGE_DAYS, today: dt.date | None = None) -> "DateRange":
        today = today or timezone.now().date()
        return cls(today - dt.timedelta(days=days - 1), today)

    def days(self) -> list[dt.date]:
        return [self.start + dt.timedelta(days=i) for i in range((self.end - self.start).days + 1)]

    def bounds(self) -> tuple[dt.datetime, dt.datetime]:
        """Return [start, end) as aware datetimes, so indexes on timestamps are used."""
        tz = dt.timezone.utc
        start = dt.datetime.combine(self.start, dt.time.min, tzinfo=tz)
        return start, dt.datetime.combine(self.end + dt.timedelta(days=1), dt.time.min, tzinfo=tz)


def claims_by_day_and_label(
    *, workspace: Workspace, period: DateRange
) -> dict[dt.date, dict[str, dict[str, int]]]:
    """Return {day: {label: {"n": claims, "relabelled": claims a reviewer relabelled}}} (one query).

    Claims count on the day their answer was created.
    """
    start, end = period.bounds()
    rows = (
        Claim.objects.filter(
            period.in_domain("answer__"),
            answer__workspace=workspace,
            answer__created_at__gte=start,
            answer__created_at__lt=end,
        )
        .annotate(day=TruncDate("answer__created_at"))
        .values("day", "label")
        .annotate(n=Count("id"), relabelled=Count("id", filter=~Q(label=F("machine_label"))))
        .order_by()
    )
    out: dict[dt.date, dict[str, dict[str, int]]] = {}
    for row in rows:
        out.setdefault(row["day"], {})[row["label"]] = {"n": row["n"], "relabelled": row["relabelled"]}
    return out


def audit_score_by_day(*, workspace: Workspace, period: DateRange) -> dict[dt.date, dict[str, float]]:
    """Return {day: {"audit_score", "faithfulness", "rag_score" (means; runs without a RAG score are
    left out of its mean), "runs": n}} of finished runs (one query)."""
    start, end = period.bounds()
    rows = (
        VerificationRun.objects.filter(
            period.in_domain("answer__"),
            answer__workspace=workspace,
            started_at__gte=start,
            started_at__lt=end,
            status=VerificationRun.Status.DONE,
        )
        .annotate(day=TruncDate("started_at"))
        .values("day")
        .annotate(
            audit_score=Avg("audit_score"),
            faithfulness=Avg("faithfulness"),
            runs=Count("id"),
            rag_score=Avg(Cast(KT("rag_score__score"), FloatField())),
        )
        .order_by()
    )
    return {
        r["day"]: {
            "audit_score": r["audit_score"],
            "faithfulness": r["faithfulness"],
            "runs": r["runs"],
            "rag_score": r["rag_score"],
        }
        for r in rows
    }


def trust_summary(*, workspace: Workspace, period: DateRange) -> dict[str, Any]:
    """Return the series of the trust-score trend and the label distribution of the period.

    ``trust`` per day is the mean audit score of the day's runs; ``supported_share`` the share
    of the day's claims labelled SUPPORTED. Days without data are None (a gap in the line).
    """
    labels = claims_by_day_and_label(workspace=workspace, period=period)
    scores = audit_score_by_day(workspace=workspace, period=period)
    days = period.days()
    totals = dict.fromkeys(Label.values, 0)
    relabelled = 0
    supported_share: list[float | None] = []
    refuted_share: list[float | None] = []
    nei_share: list[float | None] = []
    claim_counts: list[int] = []
    for day in days:
        counts = labels.get(day, {})
        n = sum(c["n"] for c in counts.values())
        claim_counts.append(n)
        for series, label in (
            (supported_share, Label.SUPPORTED),
            (refuted_share, Label.REFUTED),
            (nei_share, Label.NEI),
        ):
            series.append(round(counts.get(label, {}).get("n", 0) / n, 4) if n else None)
        for label, c in counts.items():
            totals[label] = totals.get(label, 0) + c["n"]
            relabelled += c["relabelled"]
    return {
        "days": [d.isoformat() for d in days],
        "trust": [round(scores[d]["audit_score"], 4) if d in scores else None for d in days],
        "rag_score": [
            round(scores[d]["rag_score"], 4) if scores.get(d, {}).get("rag_score") is not None else None
            for d in days
        ],
        "supported_share": supported_share,
        "refuted_share": refuted_share,
        "nei_share": nei_share,
        "claims": claim_counts,
        "runs": sum(s["runs"] for s in scores.values()),
        "labels": totals,
        "claims_total": sum(totals.values()),
        "human_relabels": relabelled,
    }


def incident_counts(*, workspace: Workspace, period: DateRange) -> dict[str, int]:
    """Return the answers of the period and how many a compliance decision suppressed (one query)."""
    start, end = period.bounds()
    return Answer.objects.filter(
        period.in_domain(), workspace=workspace, created_at__gte=start, created_at__lt=end
    ).aggregate(answers=Count("id"), suppressed_answers=Count("id", filter=Q(suppressed=True)))


def llm_usage(*, workspace: Workspace, period: DateRange) -> dict[str, Any]:
    """Return the LLM accounting of the period's runs: per-day series and totals (one query).

    ``configured`` says whether this deployment has an LLM endpoint now (``THEORIA["LLM_BASE_URL"]``);
    ``used`` whether any run of the period called one or recorded a failed call. Days without
    runs count zero.
    """
    from django.conf import settings

    start, end = period.bounds()
    by_day = {
        row["day"]: row
        for row in llm_usage_by_day(workspace=workspace, since=start, until=end, domain=period.domain)
    }
    days = period.days()
    keys = ("runs", "llm_calls", "prompt_tokens", "completion_tokens", "llm_latency_ms", "llm_failures")
    series = {key: [by_day[d][key] if d in by_day else 0 for d in days] for key in keys}
    totals = {key: sum(values) for key, values in series.items()}
    totals["llm_latency_ms"] = round(float(totals["llm_latency_ms"]), 1)
    totals["tokens"] = totals["prompt_tokens"] + totals["completion_tokens"]
    totals["llm_seconds"] = round(totals["llm_latency_ms"] / 1000.0, 1)
    conf = settings.THEORIA
    return {
        "days": [d.isoformat() for d in days],
        **series,
        "totals": totals,
        "configured": bool((conf.get("LLM_BASE_URL") or "").strip()),
        "model": conf.get("LLM_MODEL") or "",
        "used": bool(totals["llm_calls"] or totals["llm_failures"] or totals["tokens"]),
    }


def domain_breakdown(*, workspace: Workspace, period: DateRange) -> list[dict[str, Any]]:
    """Per answer domain of the period: answers, claims per label and shares, the refuted and
    unsupported (refuted or NEI) rates with their 95 % Wilson intervals and a "few claims" mark
    under ``DASHBOARD_FEW_CLAIMS``, and the mean audit score of its runs (three queries).

    Answers are counted from the answers of the period (those without claims included), as the
    answer list filtered by the domain and the range shows them; claims from the claims of those
    answers, as the claim list does. Rows are sorted by claims, most first; answers without a
    domain are "(none)".
    """
    start, end = period.bounds()
    answers = dict(
        Answer.objects.filter(
            period.in_domain(), workspace=workspace, created_at__gte=start, created_at__lt=end
        )
        .values("domain")
        .annotate(n=Count("id"))
        .order_by()
        .values_list("domain", "n")
    )
    rows = {
        row["answer__domain"]: row
        for row in Claim.objects.filter(
            period.in_domain("answer__"),
            answer__workspace=workspace,
            answer__created_at__gte=start,
            answer__created_at__lt=end,
        )
        .values("answer__domain")
        .annotate(
            claims=Count("id"),
            supported=Count("id", filter=Q(label=Label.SUPPORTED)),
            refuted=Count("id", filter=Q(label=Label.REFUTED)),
            nei=Count("id", filter=Q(label=Label.NEI)),
        )
        .order_by()
    }
    scores = dict(
        VerificationRun.objects.filter(
            period.in_domain("answer__"),
            answer__workspace=workspace,
            started_at__gte=start,
            started_at__lt=end,
            status=VerificationRun.Status.DONE,
        )
        .values("answer__domain")
        .annotate(score=Avg("audit_score"))
        .order_by()
        .values_list("answer__domain", "score")
    )
    out = []
    for domain in sorted(set(answers) | set(rows)):
        row = rows.get(domain) or {"claims": 0, "supported": 0, "refuted": 0, "nei": 0}
        n = row["claims"] or 1
        unsupported = row["refuted"] + row["nei"]
        out.append(
            {
                "domain": domain or "(none)",
                "answers": answers.get(domain, 0),
                "claims": row["claims"],
                "supported": row["supported"],
                "refuted": row["refuted"],
                "nei": row["nei"],
                "unsupported": unsupported,
                "supported_share": round(row["supported"] / n, 4),
                "refuted_share": round(row["refuted"] / n, 4),
                "nei_share": round(row["nei"] / n, 4),
                "unsupported_share": round(unsupported / n, 4),
                # how far a rate may be from the truth on this many claims (95 % Wilson interval)
                "refuted_interval": wilson_interval(row["refuted"], row["claims"]),
                "unsupported_interval": wilson_interval(unsupported, row["claims"]),
                "few_claims": row["claims"] < constants.DASHBOARD_FEW_CLAIMS,
                "score": round(scores[domain], 4) if scores.get(domain) is not None else None,
            }
        )
    return sorted(out, key=lambda r: (-r["claims"], r["domain"]))


def wilson_interval(k: int, n: int, z: float = constants.DASHBOARD_INTERVAL_Z) -> tuple[float, float] | None:
    """The Wilson score interval of the share k / n (None without claims): unlike k / n ± z·se, it
    stays inside [0, 1] and is honest on small n (3 of 9 refuted: 12 %–65 %)."""
    if n <= 0:
        return None
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * ((p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5) / (1 + z * z / n)
    return (round(max(0.0, centre - half), 4), round(min(1.0, centre + half), 4))


# long: one query and goal per success metric, in the order the tiles show them
def success_metrics(
    *, workspace: Workspace, period: DateRange, now: dt.datetime | None = None
) -> dict[str, Any]:
    """The success metrics (docs/SPEC_NOTES.md#success-metrics) over the period, each with its goal and whether it is met.

    - ``supported_unassisted``: share of audited claims SUPPORTED by the machine and never escalated
      or relabelled by a person (goal >= SUCCESS_SUPPORTED_SHARE_MIN);
    - ``escalated_missing_evidence``: share of audited claims that opened a review case while
      labelled NEI, i.e. escalated because evidence was missing (goal <= SUCCESS_MISSING_EVIDENCE_SHARE_MAX);
    - ``latency_ms``: mean duration of the period's interactive Audit-Local runs, the latency the
      audit adds to an answer (goal < SUCCESS_AUDIT_LATENCY_MS_MAX);
    - ``backlog_change``: change of the open knowledge-base correction backlog over the last
      quarter (now against SUCCESS_BACKLOG_WINDOW_DAYS ago; goal <= SUCCESS_BACKLOG_CHANGE_MAX).
    Four queries.
    """
    now = now or timezone.now()
    start, end = period.bounds()
    in_period = {
        "answer__workspace": workspace,
        "answer__created_at__gte": start,
        "answer__created_at__lt": end,
    }
    claims = Claim.objects.filter(period.in_domain("answer__"), **in_period).aggregate(
        total=Count("id"),
        supported=Count("id", filter=Q(machine_label=Label.SUPPORTED, label=Label.SUPPORTED)),
    )
    # claims of the period that people looked at (ever escalated: the claim_escalation_filter hook)
    cases = (
        Claim.objects.filter(claim_escalation_filter("any"), period.in_domain("answer__"), **in_period)
        .order_by()
        .aggregate(
            supported=Count(
                "id", distinct=True, filter=Q(machine_label=Label.SUPPORTED, label=Label.SUPPORTED)
            ),
            missing=Count("id", distinct=True, filter=Q(machine_label=Label.NEI)),
        )
    )
    counts = {
        "total": claims["total"],
        "unassisted": claims["supported"] - cases["supported"],
        "missing": cases["missing"],
    }
    latency = VerificationRun.objects.filter(
        period.in_domain("answer__"),
        answer__workspace=workspace,
        started_at__gte=start,
        started_at__lt=end,
        kind=VerificationRun.Kind.INTERACTIVE,
        mode=constants.MODE_AUDIT_LOCAL,
        status=VerificationRun.Status.DONE,
    ).aggregate(mean=Avg("duration_ms"), runs=Count("id"))
    then = now - dt.timedelta(days=constants.SUCCESS_BACKLOG_WINDOW_DAYS)
    open_now, open_then = hooks.correction_backlog(workspace=workspace, moments=[now, then]) or (0, 0)
    backlog = {"now": open_now, "then": open_then}
    total: int = counts["total"]

    def ratio(n: int) -> float:
        return round(n / total, 4)

    def share(n: int) -> float | None:
        return ratio(n) if total else None

    change = round((backlog["now"] - backlog["then"]) / backlog["then"], 4) if backlog["then"] else None
    metrics = {
        "supported_unassisted": {
            "value": share(counts["unassisted"]),
            "goal": constants.SUCCESS_SUPPORTED_SHARE_MIN,
            "met": None
            if not total
            else ratio(counts["unassisted"]) >= constants.SUCCESS_SUPPORTED_SHARE_MIN,
            "n": counts["unassisted"],
            "of": total,
        },
        "escalated_missing_evidence": {
            "value": share(counts["missing"]),
            "goal": constants.SUCCESS_MISSING_EVIDENCE_SHARE_MAX,
            "met": None
            if not total
            else ratio(counts["missing"]) <= constants.SUCCESS_MISSING_EVIDENCE_SHARE_MAX,
            "n": counts["missing"],
            "of": total,
        },
        "latency_ms": {
            "value": round(latency["mean"], 1) if latency["mean"] is not None else None,
            "goal": constants.SUCCESS_AUDIT_LATENCY_MS_MAX,
            "runs": latency["runs"],
            "met": None
            if latency["mean"] is None
            else latency["mean"] < constants.SUCCESS_AUDIT_LATENCY_MS_MAX,
        },
        "backlog_change": {
            "value": change,
            "goal": constants.SUCCESS_BACKLOG_CHANGE_MAX,
            "now": backlog["now"],
            "then": backlog["then"],
            "since": then.date(),
            "met": None if change is None else change <= constants.SUCCESS_BACKLOG_CHANGE_MAX,
        },
    }
    return metrics

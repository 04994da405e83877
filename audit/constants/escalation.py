"""Human escalation: SLA clocks per tier, business calendar, risk score, notifications.

Part of ``audit.constants`` (import from there: ``from audit.constants import NAME``)."""

from __future__ import annotations

from audit.constants.llm import IMPORTANCE_CRITICAL, IMPORTANCE_MATERIAL, IMPORTANCE_MINOR

# --- Human escalation (docs/SPEC_NOTES.md#human-escalation; used by escalation/policy.py) -----------------------
# Tier -> (clock, amount): "wall" seconds, "business" seconds inside the workspace's business
# hours, or "business_days" (a day = the length of the calendar's working day).
SLA_CLOCK_WALL = "wall"
SLA_CLOCK_BUSINESS = "business"
SLA_CLOCK_BUSINESS_DAYS = "business_days"
SLA_BY_TIER = {
    1: (SLA_CLOCK_WALL, 30 * 60),  # L1 on-call analyst: 30 minutes to acknowledge and triage
    2: (SLA_CLOCK_BUSINESS, 4 * 3600),  # L2 domain expert: 4 business hours
    3: (SLA_CLOCK_BUSINESS_DAYS, 1),  # L3 compliance lead: 1 business day
}
# A tier listed here has two clocks: its SLA_BY_TIER clock is to acknowledge, and acknowledging
# starts its resolution clock. At the other tiers the SLA_BY_TIER clock runs until the case is
# resolved. Either clock's breach is a breach (the sweep marks and alerts it).
SLA_ACKNOWLEDGE_TIERS = (1,)
# Resolution target per tier. L1 (project choice): 4 business hours from the acknowledgement to
# resolve or escalate, as long as L2 has. L2 and L3: their SLA_BY_TIER clock.
SLA_RESOLUTION_BY_TIER = {1: (SLA_CLOCK_BUSINESS, 4 * 3600), 2: SLA_BY_TIER[2], 3: SLA_BY_TIER[3]}
SLA_AT_RISK_SHARE = 0.80  # a case is "at risk" once this share of its tier's SLA is used
ESCALATION_TICKET_PREFIX = "COMP-ESC"
# One audit whose claims would open CASES_GROUPED_FROM new cases or more opens one case for its answer
# instead: the first claim that needs a person (REFUTED first) is its claim, every other one joins it
# (``ReviewCase.joined_claims``), its reasons are theirs together and the queue shows how many claims
# it holds. One request of 200 padded claims opened 200 cases and their notifications in 32 s.
CASES_GROUPED_FROM = 10
# a note on a case names at most this many of the claims it adds (the event's details list them all)
CASE_NOTE_CLAIMS_SHOWN = 10
# Default business calendar of a workspace without its own (Mon-Fri 09:00-17:00 UTC).
DEFAULT_CALENDAR_TIMEZONE = "UTC"
DEFAULT_WORKING_DAYS = (0, 1, 2, 3, 4)  # Monday = 0
DEFAULT_WORKDAY_START = "09:00"
DEFAULT_WORKDAY_END = "17:00"
# Risk score of a case in [0, 1]: weighted sum of the claim's importance, label, lack of
# confidence and whether its domain is regulated (weights sum to 1).
RISK_WEIGHTS = {"importance": 0.35, "label": 0.25, "doubt": 0.25, "regulated": 0.15}
RISK_IMPORTANCE = {IMPORTANCE_CRITICAL: 1.0, IMPORTANCE_MATERIAL: 0.6, IMPORTANCE_MINOR: 0.2}
RISK_LABEL = {"REFUTED": 1.0, "NEI": 0.6, "SUPPORTED": 0.2}
NOTIFICATION_MAX_ATTEMPTS = 3
WEBHOOK_TIMEOUT_S = 5.0
WEBHOOK_MAX_RESPONSE_BYTES = 64 * 1024  # a webhook's reply is not used; reading stops past this
EMAIL_TIMEOUT_S = 10  # SMTP connect/send timeout (Django EMAIL_TIMEOUT)
# A notification left "sending" this long (the sender crashed mid-send) is retried exactly once.
NOTIFICATION_STUCK_AFTER_S = 10 * 60

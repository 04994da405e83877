"""The analyst pages and the dashboard.

Part of ``audit.constants`` (import from there: ``from audit.constants import NAME``)."""

from __future__ import annotations

# --- Analyst pages and dashboard (docs/SPEC_NOTES.md#analyst-pages) ----------------------------------------------------
UI_CLAIMS_PER_PAGE = 50  # rows of a claim list page
UI_CASES_PER_PAGE = 50  # rows of the escalation queue page
# A queued job's page (an audit over the inline cost budget) reloads itself this often while the job
# waits or runs, and stops once it is done or failed.
UI_JOB_REFRESH_S = 3
UI_EVIDENCE_MIN_ALIGNMENT = (
    0.4  # a passage bears on a claim when its best sentence holds this share of the claim's content words
)
UI_NIGHTLY_REPORTS_LISTED = 60  # days of nightly reports listed on the report page
UI_PROPOSALS_LISTED = 20  # held revisions shown on the queue page (oldest first; the rest on the answers)
UI_HOME_DEADLINES = 3  # next deadlines on the home page
# Pages of bounded size whatever the answer's length: the queue's held revisions show previews (at most
# UI_PREVIEW_CHARS of the text as received and as proposed, no word diff past that, their first
# UI_PREVIEW_EDITS edits and revised claims; the answer's page has the rest). 20 held revisions of
# 878 KB answers made the queue page 129 MB.
UI_PREVIEW_CHARS = 2_000
UI_PREVIEW_EDITS = 10
# An answer page shows a long answer's text in parts of about UI_ANSWER_PART_CHARS characters
# (``?part=N``, cut between claims), with the links to the other parts; an 878 KB answer's page was 7.9 MB.
UI_ANSWER_PART_CHARS = 20_000
# The word diff of a revised answer (answer page, queue page) costs bounded time on any text: the
# common start and end are matched in one pass, the changed sentences in between are aligned, then
# the words of each changed stretch. Beyond these bounds the page says the texts are too long to
# compare instead of aligning them (difflib costs the product of the two lengths on repetitive text).
DIFF_MAX_CHANGED_SENTENCES = 300  # changed sentences (either side) aligned sentence by sentence
DIFF_MAX_WORD_CELLS = 400_000  # words × words compared over all changed stretches of one diff
# Success metrics (docs/SPEC_NOTES.md#success-metrics) (the dashboard's KPI tiles).
SUCCESS_SUPPORTED_SHARE_MIN = 0.90  # audited claims SUPPORTED without human intervention
SUCCESS_MISSING_EVIDENCE_SHARE_MAX = 0.05  # audited claims escalated because evidence was missing
SUCCESS_AUDIT_LATENCY_MS_MAX = 2000.0  # mean latency an Audit-Local audit adds to an answer
SUCCESS_BACKLOG_CHANGE_MAX = -0.30  # knowledge-base correction backlog change over a quarter
SUCCESS_BACKLOG_WINDOW_DAYS = 90  # the quarter the backlog change is measured over
DASHBOARD_DEFAULT_RANGE_DAYS = 30  # the dashboard shows the last 30 days unless a range is given
# a domain's rates on fewer claims than this are marked "few claims" (their 95 % Wilson interval,
# z below, is shown with every rate: 4 of 9 refuted reads 44 %, 19 %–73 %)
DASHBOARD_FEW_CLAIMS = 30
DASHBOARD_INTERVAL_Z = 1.96
DASHBOARD_MAX_RANGE_DAYS = 366  # a longer range is refused (400): the charts plot one point per day
# the dashboard's figures are cached per workspace and range until a row changes, and at most this long
DASHBOARD_CACHE_SECONDS = 120
# Queue-aging buckets of the dashboard: (upper bound in seconds, label); the last is open-ended.
QUEUE_AGING_BUCKETS = (
    (30 * 60, "< 30 min"),
    (4 * 3600, "30 min – 4 h"),
    (24 * 3600, "4 h – 1 day"),
    (3 * 24 * 3600, "1 – 3 days"),
    (None, "> 3 days"),
)

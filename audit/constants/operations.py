"""Operating modes, retention and freshness, and the nightly batch auditor.

Part of ``audit.constants`` (import from there: ``from audit.constants import NAME``)."""

from __future__ import annotations

# --- Operating modes (docs/SPEC_NOTES.md#modes) -------------------------------------------------------------
MODE_NORMAL = "normal"
MODE_AUDIT_LOCAL = "audit-local"
MODE_AUDIT_WEB = "audit-web"
MODES = (MODE_NORMAL, MODE_AUDIT_LOCAL, MODE_AUDIT_WEB)

# --- Data retention and freshness (docs/SPEC_NOTES.md#freshness-and-retention) ---------------------------
DEFAULT_RETENTION_DAYS = 90
DEFAULT_FRESHNESS_MONTHS = {"neuroscience": 18, "general": 36}
FALLBACK_FRESHNESS_MONTHS = 36
# A job a request queued (BackgroundJob: an audit over the inline cost budget, an upload's ingestion)
# is deleted by the daily retention purge this many days after it finished (its answer and documents
# stay; the job only held the request's copy of them), and one still queued or running this many days
# after it was queued is deleted too: the task queue's timeout (THEORIA_Q_TIMEOUT) ended it long
# before, and it would hold one of its user's QUEUED_AUDITS_PER_USER places for ever.
BACKGROUND_JOB_RETENTION_DAYS = 7

# --- Nightly batch auditor and retention (docs/SPEC_NOTES.md#nightly-auditor, docs/SPEC_NOTES.md#freshness-and-retention) ------------------------
# The nightly job re-checks the day's REFUTED/NEI claims below LOW_CONFIDENCE_THRESHOLD.
NIGHTLY_LABELS = ("REFUTED", "NEI")
NIGHTLY_BATCH_SIZE = 256  # claims embedded, searched and committed together (one transaction)
NIGHTLY_TOP_FAILING_DOCUMENTS = 10  # rows of "top failing KB documents" in the report
NIGHTLY_REVIEW_LIMIT = 200  # at most this many "recommended for human review" rows in the report
NIGHTLY_WEB_MAX_CLAIMS = 50  # web checks per nightly run (weakest claims first), where the workspace allows
# The nightly pass runs the fast depth unless the workspace sets verification_depth itself: the
# full depth measured 16 claims/s against 250 fast (1,000 bench claims, 2 cores), far from the
# target of 10,000 claims in 2 minutes. The claims whose label the fast pass would change are
# re-verified at the full depth before the change is recorded, at most this many per run.
NIGHTLY_VERIFICATION_DEPTH = "fast"
NIGHTLY_FULL_DEPTH_MAX_CLAIMS = 300
RETENTION_DELETE_BATCH = 500  # answers deleted per statement

# --- Sign-in (audit/security/signin.py) ----------------------------------------------------------------
# An address an account signed in from within this many days is the owner's: the per-account delay
# that failures from other addresses cause never applies to it.
SIGNIN_KNOWN_ADDRESS_DAYS = 90

"""Audit-Web: verification against allow-listed web sources.

Part of ``audit.constants`` (import from there: ``from audit.constants import NAME``)."""

from __future__ import annotations

# --- Audit-Web: controlled verification against allow-listed web sources (docs/SPEC_NOTES.md#escalation-to-audit-web) --
WEB_TIMEOUT_S = 10.0  # wall-clock limit of one external call, redirects and body included
WEB_MAX_RESPONSE_BYTES = 5 * 1024 * 1024  # body cap, enforced while streaming
WEB_MAX_REDIRECTS = 5  # each hop is checked against the allow-list and the address policy
WEB_CACHE_TTL_SECONDS = 24 * 3600  # a cached response is reused for this long
WEB_CACHE_MAX_BODY_BYTES = 2 * 1024 * 1024  # larger responses are used but not cached
WEB_RESULTS_PER_PROVIDER = 3  # documents kept per provider and claim
WEB_MAX_CLAIMS_PER_ANSWER = 10  # weakest first; the rest keep their local result
WEB_QUERY_MAX_TERMS = 10  # content words of the claim sent as the search query
WEB_PASSAGE_MAX_CHARS = 4000  # text of one web document handed to the verifier
WEB_SELFCHECK_METRIC = "selfcheck_disagreement"  # claim metric compared to the threshold
WEB_STALE_FLAG = "outdated_source"  # claim risk flag that escalates on its own

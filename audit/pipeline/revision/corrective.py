"""2. Corrective retrieval: targeted queries for the claims nothing supports (docs/SPEC_NOTES.md#quality-gates-and-the-revision-loop)."""

from __future__ import annotations

import re
from typing import Any

from audit.constants import CORRECTIVE_PASSAGES_PER_QUERY, CORRECTIVE_QUERIES_PER_CLAIM, IMPORTANCE_MINOR
from audit.pipeline.extraction import decompose
from audit.pipeline.revision.model import NOT_FOUND, Retrieve
from audit.pipeline.text import STOPWORDS, normalize
from audit.pipeline.types import ClaimVerdict, Passage


# --- 2. corrective retrieval (docs/SPEC_NOTES.md#quality-gates-and-the-revision-loop) ----------------------------------------------------
def targeted_queries(claim: ClaimVerdict, query: str = "") -> list[str]:
    """Search queries aimed at one unsupported claim: the claim, its atomic facts, its key terms."""
    text = claim.claim.text.strip()
    queries = [text]
    for fact in decompose(text):
        if fact not in queries:
            queries.append(fact)
    terms = list(
        dict.fromkeys(
            w
            for w in re.findall(r"[^\W_]+(?:[-'][^\W_]+)*", text)
            if w.lower() not in STOPWORDS and len(w) > 2
        )
    )
    key = " ".join(terms[:10])
    topic = " ".join(w for w in re.findall(r"[^\W_]+", query) if w.lower() not in STOPWORDS)[:120]
    if key and key not in queries:
        queries.append(f"{key} {topic}".strip() if topic and len(terms) < 4 else key)
    return queries[:CORRECTIVE_QUERIES_PER_CLAIM]


def corrective_retrieval(
    claims: list[ClaimVerdict], pool: list[Passage], retrieve: Retrieve, query: str = ""
) -> tuple[list[Passage], list[dict[str, Any]]]:
    """New passages for the claims nothing supports, and a record per claim of what was asked."""
    known_ids = {p.id for p in pool}
    known_texts = {normalize(p.text).strip() for p in pool}
    new: list[Passage] = []
    records = []
    for c in claims:
        if c.verdict != NOT_FOUND or c.claim.importance == IMPORTANCE_MINOR:
            continue
        queries = targeted_queries(c, query)
        found = []
        for passage in (retrieve(queries) or [])[: CORRECTIVE_PASSAGES_PER_QUERY * len(queries)]:
            key = normalize(passage.text).strip()
            if passage.id in known_ids or key in known_texts or not key:
                continue
            known_ids.add(passage.id)
            known_texts.add(key)
            new.append(passage)
            found.append(passage.id)
        records.append(
            {"claim_id": c.claim.claim_id, "claim": c.claim.text, "queries": queries, "new_passages": found}
        )
    return new, records

"""A claim revision did not reword keeps its verdict, and every marker of the final text is backed.

Revision adds hedges and qualifiers and removes markers the judge rejected; none of that changes
what a claim asserts, so re-verifying the revised text must not move its label (issue 13, rule 5).
Runs the real pipeline (embedding model, entailment judge) on hand-written passages.
"""

from __future__ import annotations

from audit.constants import UNSUPPORTED_QUALIFIER
from audit.pipeline import audit_answer
from audit.pipeline.extraction import citation_anchors
from audit.pipeline.retrieval import anchor_map, resolve_anchor
from audit.pipeline.revision import DISPUTED_QUALIFIER, claim_key, revise_audit, verdicts_to_keep
from audit.pipeline.types import ClaimDraft, Passage

QUERY = "How long are incident reports kept?"
PASSAGES = [
    Passage(
        id="1",
        anchors=("1",),
        text="Retention is managed by the records office. Incident reports must be kept for 7 years.",
    ),
    Passage(id="2", anchors=("2",), text="Level 1 analysts acknowledge cases within 30 minutes."),
]
ANSWER = (
    "The retention office is open on Mondays [1]. Incident reports are kept for several years by the records "
    "office [2]. Level 1 analysts acknowledge cases within 30 minutes [2]."
)


def test_claim_keys_ignore_markers_hedges_and_qualifiers_but_not_words():
    key = claim_key("The office is open on Mondays [1].")
    assert claim_key("The office is reportedly open on Mondays.") == key
    assert claim_key(f"The office is open on Mondays {UNSUPPORTED_QUALIFIER}.") == key
    assert claim_key(f"The office is open on Mondays {DISPUTED_QUALIFIER} [2].") == key
    assert claim_key("The office is open on Tuesdays.") != key


def test_a_verdict_is_kept_only_for_the_same_claim_with_no_new_marker():
    first = audit_answer(QUERY, "The retention office is open on Mondays [1].", PASSAGES)
    reuse = verdicts_to_keep(first)
    same = ClaimDraft("c1", "The retention office is reportedly open on Mondays.", (0, 10))
    cited_elsewhere = ClaimDraft("c1", "The retention office is open on Mondays.", (0, 10), citations=("2",))
    other = ClaimDraft("c1", "The retention office is open on Fridays.", (0, 10))
    assert reuse(same) is first.claims[0]
    assert reuse(cited_elsewhere) is None and reuse(other) is None


def test_audit_answer_keeps_a_reused_verdict_and_verifies_the_other_claims():
    first = audit_answer(QUERY, ANSWER, PASSAGES)
    kept = first.claims[0]
    again = audit_answer(
        QUERY,
        f"The retention office is open on Mondays {UNSUPPORTED_QUALIFIER}. "
        "Level 1 analysts acknowledge cases within 30 minutes [2].",
        PASSAGES,
        reuse=lambda draft: kept if claim_key(draft.text) == claim_key(kept.claim.text) else None,
    )
    assert (again.claims[0].label, again.claims[0].confidence) == (kept.label, kept.confidence)
    assert again.claims[0].claim.text.endswith(f"{UNSUPPORTED_QUALIFIER}.")  # the claim is the new wording
    assert again.claims[0].claim.importance == kept.claim.importance
    assert again.claims[1].label == "SUPPORTED" and again.claims[1].evidence[0].passage.id == "2"


def test_revision_keeps_labels_removes_unbacked_markers_and_moves_a_wrong_one_even_when_coverage_is_met():
    out = revise_audit(query=QUERY, answer=ANSWER, contexts=PASSAGES)
    received = {c.claim.claim_id: (c.label, round(c.confidence, 6)) for c in out.attempts[0].result.claims}
    assert received["c1"][0] == "NEI" and received["c2"][0] == "SUPPORTED"
    final = {c.claim.claim_id: (c.label, round(c.confidence, 6)) for c in out.final.claims}
    assert final["c1"] == received["c1"]  # the same claim, the same verdict, its marker gone
    # the weak claim's marker went; the misplaced one now names the passage that supports the claim
    assert out.final_text.startswith(
        "The retention office is open on Mondays. Incident reports are kept for "
        "several years by the records office [1]."
    )
    amap = anchor_map(out.passages)
    for claim in out.final.claims:
        for anchor in claim.claim.citations:
            assert claim.label == "SUPPORTED" and resolve_anchor(anchor, amap) is not None
    assert set(citation_anchors(out.final_text)) == {"1", "2"}

"""A served revision never hides a finding: the served text marks each change and names its finding
and case (audit.pipeline.revision.served)."""

from __future__ import annotations

from audit.pipeline.revision.served import ChangedClaim, mark_served

KANDEL = ChangedClaim(
    claim_id="c1",
    text="Place cells were discovered by Eric Kandel and Jonathan Dostrovsky in 1971 [1].",
    label="NEI",
    p_supported=0.42,
    strategy="citation",
    wording="Place cells were discovered by Eric Kandel and Jonathan Dostrovsky in 1971.",
    cited=False,
    cases=("COMP-ESC-000001",),
)


def test_each_change_is_marked_where_its_wording_ends_and_its_note_names_the_finding_then_the_case():
    served = (
        "Place cells were discovered by Eric Kandel and Jonathan Dostrovsky in 1971. They fire in places."
    )
    marked, (change,) = mark_served(served, [KANDEL])
    assert marked.startswith(
        "Place cells were discovered by Eric Kandel and Jonathan Dostrovsky in 1971 [R1]."
    )
    assert change.note == (
        "[R1] Not enough evidence (P(supported) 0.42): “Place cells were discovered by Eric Kandel and "
        "Jonathan Dostrovsky in 1971 [1].” — no source backs it well enough. Theoria removed its "
        "citation in the text served; a person reviews it in case COMP-ESC-000001."
    )
    assert marked.endswith(change.note)


def test_marks_follow_the_text_and_a_removed_claim_is_still_named_though_it_has_no_place():
    removed = ChangedClaim("c3", "The drug cures cancer.", "REFUTED", 0.03, "remove", "", False, ())
    qualified = ChangedClaim(
        "c2",
        "Aspirin cures headaches.",
        "NEI",
        0.6,
        "qualify",
        "Aspirin may relieve headaches.",
        True,
        ("T-2",),
    )
    text = "Place cells were discovered by Eric Kandel and Jonathan Dostrovsky in 1971. Aspirin may relieve headaches."
    marked, changes = mark_served(text, [removed, qualified, KANDEL])
    assert [(c.mark, c.claim_id, c.placed) for c in changes] == [
        ("R1", "c1", True),
        ("R2", "c2", True),
        ("R3", "c3", False),
    ]
    assert "in 1971 [R1]. Aspirin may relieve headaches [R2]." in marked
    assert (
        "[R3] Refuted (P(supported) 0.03): “The drug cures cancer.” — the evidence contradicts it. " in marked
    )
    assert "Theoria removed the claim in the text served; no review case holds it." in marked


def test_a_text_no_revision_changed_is_served_unmarked():
    assert mark_served("Nothing changed.", []) == ("Nothing changed.", [])

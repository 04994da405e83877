"""The revision loop and its strategies on hand-written answers (audit/pipeline/revision.py)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from audit.constants import (
    NO_ANSWER_NOTICE,
    SOFTENING_HEDGE,
    SOFTENING_PARENTHETICAL,
    SOFTENING_QUALIFY,
    UNSUPPORTED_QUALIFIER,
    Thresholds,
)
from audit.pipeline.extraction import citation_anchors
from audit.pipeline.retrieval import anchor_map, resolve_anchor
from audit.pipeline.revision import (
    DISPUTED_QUALIFIER,
    CitationAction,
    RevisionAttempt,
    RevisionOptions,
    Strategy,
    decide_revision,
    plan_revision,
    replay_edits,
    revise_answer,
    soften,
    targeted_queries,
    terminate,
    unsoften,
)
from audit.pipeline.types import Passage

QUERY = "What does the Gold card cost and what does it include?"


# Most cases exercise the removal strategy; the deployment default (qualify) is tested on its own.
REMOVE = RevisionOptions(unsupported_action="remove")


def _revise(answer, passages, verify, **kwargs):
    kwargs.setdefault("options", REMOVE)
    return revise_answer(
        query=QUERY,
        answer=answer,
        passages=passages,
        verify=lambda text, pool: verify(text, pool, QUERY),
        **kwargs,
    )


def _plan(answer, passages, verify, **kwargs):
    kwargs.setdefault("options", REMOVE)
    result = verify(answer, passages, QUERY)
    return plan_revision(answer, result, passages, **kwargs)


def _assert_markers_resolve(text, passages):
    amap = anchor_map(passages)
    for anchor in citation_anchors(text):
        assert resolve_anchor(anchor, amap) is not None, f"[{anchor}] names no passage in {text!r}"


def _assert_traceable(before, after, edits, claim_ids):
    """The ledger alone turns ``before`` into ``after``, and each edit names a claim and a strategy."""
    for e in edits:
        assert e.claim_id in claim_ids and e.strategy in set(Strategy)
    assert replay_edits(before, edits) == after


def test_it_corrects_a_contradicted_number_to_the_value_the_evidence_states(passages, verify):
    answer = "The annual fee for the Gold card is $200 [1]."
    text, edits = _plan(answer, passages, verify)
    assert text == "The annual fee for the Gold card is $150 [1]."
    (edit,) = edits
    assert (edit.strategy, edit.action, edit.claim_id) == (Strategy.CORRECT, "numeric", "c1")
    assert edit.details["replaced"] == [{"from": "$200", "to": "$150", "kind": "value"}]
    assert verify(text, passages, QUERY).claims[0].verdict == "supported"


def test_it_corrects_a_date_to_the_month_the_evidence_states(verify):
    pool = [
        Passage(id="p1", anchors=("1",), text="The new policy took effect in March 2024 for all branches.")
    ]
    answer = "The new policy took effect in June 2024 for all branches [1]."
    result = verify(answer, pool, QUERY)
    result.claims[0].verdict, result.claims[0].label = "contradicted", "REFUTED"  # as a date-aware judge says
    text, edits = plan_revision(answer, result, pool)
    assert text == "The new policy took effect in March 2024 for all branches [1]."
    assert edits[0].strategy == Strategy.CORRECT


def test_it_removes_a_material_sentence_that_nothing_supports_and_keeps_the_others(passages, verify):
    answer = (
        "The annual fee for the Gold card is $150 [1]. The card always includes comprehensive travel "
        "insurance for the whole family [1]. Gold card holders get free airport lounge access [3]."
    )
    text, edits = _plan(answer, passages, verify)
    assert text == (
        "The annual fee for the Gold card is $150 [1]. Gold card holders get free airport lounge access [3]."
    )
    (edit,) = edits
    assert (edit.strategy, edit.action, edit.claim_id) == (Strategy.REMOVE, "remove_sentence", "c2")
    _assert_traceable(answer, text, edits, {"c1", "c2", "c3"})


def test_it_qualifies_an_unsupported_claim_instead_when_configured(passages, verify):
    answer = "The annual fee for the Gold card is $150 [1]. The card always includes travel insurance for families."
    text, edits = _plan(answer, passages, verify, options=RevisionOptions(unsupported_action="qualify"))
    assert text.endswith(f"travel insurance for families {UNSUPPORTED_QUALIFIER}.")
    assert [e.strategy for e in edits] == [Strategy.QUALIFY]


def test_it_removes_only_the_unsupported_clause_of_a_sentence_that_also_states_a_supported_fact(
    passages, verify
):
    answer = (
        "The annual fee for the Gold card is $150, and the card always includes travel insurance "
        "for the whole family [1]."
    )
    result = verify(answer, passages, QUERY)
    assert [c.verdict for c in result.claims] == ["supported", "not_found"]
    text, edits = plan_revision(answer, result, passages, options=REMOVE)
    assert text == "The annual fee for the Gold card is $150 [1]."
    assert [(e.strategy, e.action) for e in edits] == [(Strategy.REMOVE, "remove_clause")]
    assert [c.verdict for c in verify(text, passages, QUERY).claims] == ["supported"]


@pytest.mark.parametrize(
    "style, expected",
    [
        ("hedge", f"The fee is {SOFTENING_HEDGE} charged in January"),
        ("qualify", f"{SOFTENING_QUALIFY} the fee is charged in January"),
        ("parenthetical", f"The fee is charged in January {SOFTENING_PARENTHETICAL}"),
    ],
)
def test_it_softens_a_weak_claim_in_the_configured_style(style, expected):
    assert soften("The fee is charged in January", style) == expected


def test_a_hedge_never_goes_inside_quoted_words():
    body = 'Help clients ask "What is the evidence for this belief?" and it is useful'
    assert (
        soften(body, "hedge")
        == f'Help clients ask "What is the evidence for this belief?" and it is {SOFTENING_HEDGE} useful'
    )
    assert (
        soften('Teach "What is the evidence?"', "hedge")
        == f'Teach "What is the evidence?" {SOFTENING_PARENTHETICAL}'
    )


def test_it_softens_weak_claims_and_does_not_soften_twice(verify):
    pool = [Passage(id="p1", anchors=("1",), text="Refunds are processed by the billing team.")]
    answer = "Refunds are processed quickly by the billing team [1]."
    text, edits = _plan(answer, pool, verify, options=RevisionOptions(softening="hedge"))
    # one decision for support: the passage only partly supports the claim, so its marker goes
    assert text == f"Refunds are {SOFTENING_HEDGE} processed quickly by the billing team."
    assert [(e.strategy, e.action) for e in edits] == [
        (Strategy.SOFTEN, "hedge"),
        (Strategy.CITATION, CitationAction.REMOVE),
    ]
    again, more = _plan(text, pool, verify)
    assert (again, more) == (text, [])


def test_it_rejects_an_unknown_softening_style():
    with pytest.raises(ValueError, match="softening"):
        RevisionOptions(softening="shout")


def test_it_replaces_a_citation_whose_passage_does_not_support_the_claim(passages, verify):
    answer = "Refunds are processed within 14 business days [1]."
    text, edits = _plan(answer, passages, verify)
    assert text == "Refunds are processed within 14 business days [2]."
    (edit,) = edits
    assert (edit.strategy, edit.action, edit.passage_id) == (Strategy.CITATION, CitationAction.REPLACE, "p2")


def test_it_adds_an_alternate_citation_next_to_a_marker_that_still_serves_the_sentence(passages, verify):
    answer = (
        "The annual fee for the Gold card is $150, and Gold card holders get free airport lounge access [1]."
    )
    text, edits = _plan(answer, passages, verify)
    assert (
        text
        == "The annual fee for the Gold card is $150, and Gold card holders get free airport lounge access [1][3]."
    )
    assert [(e.action, e.claim_id) for e in edits] == [(CitationAction.ADD_ALTERNATE, "c2")]


def test_it_cites_an_uncited_supported_claim(passages, verify):
    text, edits = _plan("Gold card holders get free airport lounge access.", passages, verify)
    assert text == "Gold card holders get free airport lounge access [3]."
    assert edits[0].action == CitationAction.ADD_ALTERNATE


def test_it_removes_a_citation_marker_that_names_no_passage(passages, verify):
    text, edits = _plan("Gold card holders get free airport lounge access [3][9].", passages, verify)
    assert text == "Gold card holders get free airport lounge access [3]."
    assert [(e.action, e.details.get("anchor")) for e in edits] == [(CitationAction.REMOVE, "9")]


def test_it_never_returns_an_empty_answer(passages, verify):
    text, edits = _plan("The card always includes travel insurance for the whole family.", passages, verify)
    assert text == NO_ANSWER_NOTICE
    assert edits[-1].action == "no_answer_notice"
    assert verify(text, passages, QUERY).claims == []


def test_it_removes_a_list_item_line_whole(passages, verify):
    answer = (
        "The Gold card:\n- The annual fee for the Gold card is $150 [1].\n"
        "- The card always includes travel insurance for the whole family.\n"
        "- Gold card holders get free airport lounge access [3]."
    )
    text, _ = _plan(answer, passages, verify)
    assert text == (
        "The Gold card:\n- The annual fee for the Gold card is $150 [1].\n"
        "- Gold card holders get free airport lounge access [3]."
    )


def test_it_builds_targeted_queries_from_the_claim_and_its_key_terms(passages, verify):
    claim = verify("The card always includes travel insurance for the whole family.", passages, QUERY).claims[
        0
    ]
    queries = targeted_queries(claim, QUERY)
    assert queries[0] == claim.claim.text
    assert queries[1] == "card always includes travel insurance whole family"


def test_corrective_retrieval_finds_evidence_and_the_revision_cites_it(passages, verify):
    store = [
        Passage(
            id="kb-7",
            text="The Gold card always includes travel insurance for the whole family.",
            source_type="kb",
        )
    ]
    asked = []

    def retrieve(queries):
        asked.append(queries)
        return [p for p in store if any("insurance" in q for q in queries)]

    answer = (
        "The annual fee for the Gold card is $150 [1]. "
        "The card always includes travel insurance for the whole family."
    )
    out = _revise(answer, passages, verify, retrieve=retrieve)
    assert asked and asked[0][0] == "The card always includes travel insurance for the whole family."
    # the passage found is not one of the request's: it is named by its position in the pool, no internal id
    assert out.final_text == (
        "The annual fee for the Gold card is $150 [1]. "
        "The card always includes travel insurance for the whole family [4]."
    )
    assert out.passages[3].id == "kb-7" and out.given == 3
    assert [(e.strategy, e.action, e.passage_id) for e in out.edits] == [
        (Strategy.CORRECTIVE_RETRIEVAL, CitationAction.ADD_ALTERNATE, "kb-7")
    ]
    assert out.attempts[0].retrieval[0]["new_passages"] == ["kb-7"]
    assert [c.verdict for c in out.final.claims] == ["supported", "supported"]
    assert out.warnings == []
    _assert_markers_resolve(out.final_text, out.passages)


def test_the_decision_gives_one_instruction_per_claim_that_needs_work(passages, verify):
    answer = (
        "The annual fee for the Gold card is $200 [1]. The card always includes travel insurance "
        "for the whole family. Gold card holders get free airport lounge access [3]."
    )
    decision = decide_revision(verify(answer, passages, QUERY).claims, 0, options=REMOVE)
    assert decision.should_revise and decision.reason == "Claims contradict evidence"
    assert [(i["claim_id"], i["strategy"]) for i in decision.instructions] == [
        ("c1", Strategy.CORRECT),
        ("c2", Strategy.REMOVE),
    ]
    assert decision.instructions[1]["instruction"].startswith('Remove or qualify claim: "The card always')


def test_it_does_not_revise_an_answer_that_meets_the_coverage_threshold(passages, verify):
    answer = (
        "The annual fee for the Gold card is $150 [1]. Gold card holders get free airport lounge access [3]."
    )
    out = _revise(answer, passages, verify)
    assert len(out.attempts) == 1 and out.final_text == answer
    assert out.stop_reason == "Coverage threshold met"


def test_it_stops_as_soon_as_a_revision_meets_the_coverage_threshold(passages, verify):
    answer = (
        "The annual fee for the Gold card is $200 [1]. Refunds are processed within 14 business days [2]. "
        "Gold card holders get free airport lounge access [3]."
    )
    out = _revise(answer, passages, verify)
    assert len(out.attempts) == 2 and out.stop_reason == "Coverage threshold met"
    assert out.attempts[0].summary["coverage"] < 0.85 <= out.attempts[1].summary["coverage"]
    assert out.kept == 1 and out.warnings == []
    assert out.final_text.startswith("The annual fee for the Gold card is $150 [1].")


class ScriptedRewriter:
    """Stands in for the remote LLM: returns the next scripted text, records what it was asked."""

    def __init__(self, *replies):
        self.replies = list(replies)
        self.calls = []

    def __call__(self, *, query, answer, instructions, passages):
        self.calls.append({"answer": answer, "instructions": instructions})
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return reply


def test_it_stops_after_the_maximum_number_of_revisions(passages, verify):
    original = "The card always includes travel insurance for the whole family [1]."
    rewriter = ScriptedRewriter(
        "The card always includes travel insurance for each family member [1].",
        "The card always includes travel insurance for all of the family [1].",
        "never asked",
    )
    out = _revise(original, passages, verify, rewriter=rewriter)
    assert len(rewriter.calls) == 2
    assert out.stop_reason == "Maximum revision cycles reached"
    # two rewrites, then only the markers of the last wording are checked: the LLM kept [1] on a
    # claim the passage does not support, so it goes (one decision for support)
    assert [a.author for a in out.attempts] == ["original", "llm", "llm", "offline"]
    assert [(e.strategy, e.action) for e in out.attempts[-1].edits] == [
        (Strategy.CITATION, CitationAction.REMOVE)
    ]
    assert out.final_text == "The card always includes travel insurance for all of the family."
    assert {w["code"] for w in out.warnings} == {"NO_IMPROVEMENT", "UNSUPPORTED_CLAIMS"}


def test_the_revision_limit_is_a_workspace_threshold(passages, verify):
    rewriter = ScriptedRewriter("The card always includes travel insurance for each family member [1].", "x")
    out = _revise(
        "The card always includes travel insurance for the whole family [1].",
        passages,
        verify,
        rewriter=rewriter,
        thresholds=Thresholds().updated({"max_revisions": 1}),
    )
    assert len(rewriter.calls) == 1 and out.stop_reason == "Maximum revision cycles reached"
    assert [a.author for a in out.attempts] == ["original", "llm", "offline"]  # the last: markers only
    assert {e.strategy for e in out.attempts[-1].edits} == {Strategy.CITATION}


def test_a_revision_that_makes_things_worse_is_detected_and_the_better_version_kept(passages, verify):
    original = (
        "The annual fee for the Gold card is $150 [1]. Refunds are processed within 30 business days [2]. "
        "Gold card holders get free airport lounge access [3]."
    )
    worse = (
        "The annual fee for the Gold card is $150 [1]. Refunds are processed within 30 business days, and "
        "the card always includes free travel insurance for the family [2]. "
        "Gold card holders get free airport lounge access [3]."
    )
    attempts = [
        RevisionAttempt(0, original, verify(original, passages, QUERY)),
        RevisionAttempt(1, worse, verify(worse, passages, QUERY)),
    ]
    assert attempts[1].summary["coverage"] < attempts[0].summary["coverage"]
    kept, warnings = terminate(attempts)
    assert kept == 0
    (warning,) = [w for w in warnings if w["code"] == "NO_IMPROVEMENT"]
    assert "attempt 0 is kept" in warning["message"]


def test_an_llm_correction_that_adds_a_statement_no_passage_supports_is_rejected(passages, verify):
    original = "Refunds are processed within 30 business days [2]."
    worse = (
        "Refunds are processed within 14 business days, and the card always includes travel insurance [2]."
    )
    out = _revise(original, passages, verify, rewriter=ScriptedRewriter(worse))
    assert (
        out.attempts[1].author == "offline" and "changes what the claim is about" in out.attempts[1].notes[0]
    )
    assert out.final_text == "Refunds are processed within 14 business days [2]."


def test_an_untraceable_llm_rewrite_is_rejected_and_the_offline_strategies_used(passages, verify):
    answer = (
        "The annual fee for the Gold card is $200 [1]. Gold card holders get free airport lounge access [3]."
    )
    rewriter = ScriptedRewriter("The annual fee for the Gold card is $150 [1]. Lounge access is free [3].")
    out = _revise(answer, passages, verify, rewriter=rewriter)
    assert out.attempts[1].author == "offline"
    assert "outside the claims" in out.attempts[1].notes[0]
    assert (
        out.final_text
        == "The annual fee for the Gold card is $150 [1]. Gold card holders get free airport lounge access [3]."
    )


def test_an_llm_rewrite_that_cites_no_passage_is_rejected(passages, verify):
    rewriter = ScriptedRewriter("The annual fee for the Gold card is $150 [7].")
    out = _revise("The annual fee for the Gold card is $200 [1].", passages, verify, rewriter=rewriter)
    assert out.attempts[1].author == "offline" and "[7]" in out.attempts[1].notes[0]
    assert out.final_text == "The annual fee for the Gold card is $150 [1]."


def test_a_failing_llm_falls_back_to_the_offline_strategies(passages, verify):
    rewriter = ScriptedRewriter(TimeoutError("no reply"))
    out = _revise("The annual fee for the Gold card is $200 [1].", passages, verify, rewriter=rewriter)
    assert out.attempts[1].author == "offline" and "TimeoutError" in out.attempts[1].notes[0]
    assert out.final_text == "The annual fee for the Gold card is $150 [1]."


def test_a_traceable_llm_rewrite_is_used_and_ledgered_per_claim(passages, verify):
    rewriter = ScriptedRewriter(
        "The annual fee for the Gold card is $150 [1]. Gold card holders get free airport lounge access [3]."
    )
    answer = (
        "The annual fee for the Gold card is $200 [1]. Gold card holders get free airport lounge access [3]."
    )
    out = _revise(answer, passages, verify, rewriter=rewriter)
    assert out.attempts[1].author == "llm"
    assert [(e["claim_id"], e["strategy"], e["attempt"]) for e in out.ledger_json()] == [("c1", "correct", 1)]
    assert rewriter.calls[0]["instructions"][0]["claim_id"] == "c1"


def test_citation_markers_stay_valid_and_every_edit_is_traceable_through_a_full_revision(passages, verify):
    answer = (
        "The annual fee for the Gold card is $200 [1][8]. Refunds are processed within 14 business days [1]. "
        "The card always includes travel insurance for the whole family [2]. "
        "Gold card holders get free airport lounge access."
    )
    out = _revise(answer, passages, verify)
    _assert_markers_resolve(out.final_text, passages)
    assert out.final_text == (
        "The annual fee for the Gold card is $150 [1]. "
        "Refunds are processed within 14 business days [2]. "
        "Gold card holders get free airport lounge access [3]."
    )
    for prev, attempt in zip(out.attempts, out.attempts[1:]):
        _assert_traceable(
            prev.text, attempt.text, attempt.edits, {c.claim.claim_id for c in prev.result.claims}
        )
    history = out.history_json()
    assert history[0]["text"] == answer and history[-1]["kept"]
    assert all(
        set(e) >= {"claim_id", "claim_text", "strategy", "before", "after", "span"}
        for row in history
        for e in row["edits"]
    )


def test_a_removed_clause_takes_along_the_marker_that_supported_only_it(passages, verify):
    answer = (
        "The annual fee for the Gold card is $150 [1], while the card always includes travel insurance "
        "for the whole family [2]."
    )
    text, edits = _plan(answer, passages, verify)
    assert text == "The annual fee for the Gold card is $150 [1]."
    assert [(e.strategy, e.action) for e in edits] == [
        (Strategy.REMOVE, "remove_clause"),
        (Strategy.CITATION, CitationAction.REMOVE),
    ]
    _assert_traceable(answer, text, edits, {"c1", "c2"})


@pytest.mark.parametrize(
    "body, style, expected",
    [
        (
            "Regulations may lead to higher costs",
            "hedge",
            f"Regulations may {SOFTENING_HEDGE} lead to higher costs",
        ),
        (
            "The rule does not apply to banks",
            "hedge",
            f"{SOFTENING_HEDGE.capitalize()}, the rule does not apply to banks",
        ),
        ("Paris hosts the games", "hedge", f"Paris hosts the games {SOFTENING_PARENTHETICAL}"),
        ("Paris hosts the games", "qualify", f"Paris hosts the games {SOFTENING_PARENTHETICAL}"),
    ],
)
def test_it_places_the_softening_where_the_sentence_allows_and_never_lowercases_a_name(body, style, expected):
    assert soften(body, style) == expected


def test_a_hedge_that_costs_a_weak_claim_its_support_is_taken_back_and_the_claim_never_removed(
    passages, verify
):
    def harsh(text, pool, query=QUERY):  # a verifier whose linguistic method punishes hedges hard
        result = verify(text, pool, query)
        for c in result.claims:
            if SOFTENING_HEDGE in c.claim.text:
                c.verdict, c.label, c.confidence = "contradicted", "REFUTED", 0.1
        return result

    weak = "Refunds are processed within 14 business days by the billing team [2]."
    answer = (
        f"The annual fee for the Gold card is $150 [1]. {weak} "
        "The card always includes travel insurance for the whole family."
    )
    out = _revise(
        answer,
        passages,
        harsh,
        options=RevisionOptions(correct_contradictions=False, unsupported_action="remove"),
    )
    hedged = "Refunds are reportedly processed within 14 business days by the billing team."
    assert out.attempts[1].text.endswith(hedged)  # the unsupported sentence went, the weak one was hedged
    assert [c.verdict for c in out.attempts[1].result.claims] == ["supported", "contradicted"]
    assert [(e.claim_id, e.strategy, e.action) for e in out.attempts[2].edits] == [("c2", "soften", "revert")]
    # restored wording; the marker of a passage that does not support it stays out
    assert out.final_text == f"The annual fee for the Gold card is $150 [1]. {weak.replace(' [2]', '')}"
    assert out.kept == 2 and out.warnings == [] and out.stop_reason == "Coverage threshold met"


@pytest.mark.parametrize("style", ["hedge", "qualify", "parenthetical"])
@pytest.mark.parametrize(
    "body",
    ["Regulations may lead to higher costs", "The rule does not apply to banks", "Paris hosts the games"],
)
def test_a_softening_can_be_taken_back_exactly(body, style):
    assert unsoften(soften(body, style)) == body


def test_a_correction_cites_a_numbered_request_passage_as_the_answer_already_does():
    from audit.pipeline.revision import marker_for
    from audit.pipeline.types import Passage

    assert marker_for(Passage(id="1", text="LTP was first described in 1973.")) == "[1]"
    assert (
        marker_for(Passage(id="kb_chunk_7", text="LTP was first described in 1973.")) == "[cite:kb_chunk_7]"
    )


def test_dropping_the_last_marker_of_a_sentence_leaves_no_space_before_its_full_stop():
    from audit.pipeline.revision import _rewrite_markers

    assert (
        _rewrite_markers("skills were preserved [cite:kb_chunk_5]", lambda a: []) == "skills were preserved"
    )
    assert _rewrite_markers("one [1] and two [2].", lambda a: [] if a == "2" else [a]) == "one [1] and two."


def test_a_correction_that_would_repeat_another_sentence_removes_the_sentence_instead(passages, verify):
    answer = "The annual fee for the Gold card is $150 [1]. The annual fee for the Gold card is $200 [1]."
    text, edits = _plan(answer, passages, verify)
    assert text == "The annual fee for the Gold card is $150 [1]."
    assert [(e.claim_id, e.action) for e in edits] == [("c2", "remove_sentence")]


def test_a_contradicted_claim_whose_rest_the_evidence_does_not_state_is_not_rewritten_into_it(verify):
    pool = [
        Passage(id="p1", anchors=("1",), text="Level 1 analysts must acknowledge a case within 30 minutes.")
    ]
    answer = "Level 1 analysts must file a written report within 45 minutes [1]."
    result = verify(answer, pool, QUERY)
    result.claims[0].verdict, result.claims[0].label = "contradicted", "REFUTED"
    text, edits = plan_revision(answer, result, pool)
    assert "file a written report" in text and "acknowledge" not in text
    assert Strategy.CORRECT not in {e.strategy for e in edits}


def test_a_correction_stands_only_when_the_judge_finds_the_corrected_claim_supported(passages, verify):
    answer = "The annual fee for the Gold card is $200 [1]."
    result = verify(answer, passages, QUERY)
    refused, edits = plan_revision(
        answer,
        result,
        passages,
        judge=lambda text, p: replace(verify(text, [p], QUERY).claims[0], label="NEI"),
    )
    assert "$200" in refused and Strategy.CORRECT not in {e.strategy for e in edits}
    accepted, edits = plan_revision(
        answer, result, passages, judge=lambda text, p: verify(text, [p], QUERY).claims[0]
    )
    assert accepted == "The annual fee for the Gold card is $150 [1]."
    assert edits[0].details["verified"]["label"] == "SUPPORTED"


def test_a_sentence_the_judge_supports_is_never_marked_disputed(passages, verify):
    answer = "Gold card holders get free airport lounge access worldwide [3]."
    result = verify(answer, passages, QUERY)
    # labelled contradicted (an LLM judge's word, say) although its passage states it
    result.claims[0].verdict, result.claims[0].label = "contradicted", "REFUTED"
    kept, edits = plan_revision(
        answer, result, passages, judge=lambda text, p: verify(text, [p], QUERY).claims[0]
    )
    assert kept == answer and DISPUTED_QUALIFIER not in kept
    assert not [e for e in edits if e.strategy == Strategy.QUALIFY]
    disputed, _ = plan_revision(
        answer,
        result,
        passages,
        judge=lambda text, p: replace(verify(text, [p], QUERY).claims[0], label="NEI"),
    )
    assert DISPUTED_QUALIFIER in disputed  # the judge does not support it: the answer says so

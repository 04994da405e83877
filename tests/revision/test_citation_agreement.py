"""The claim card, the edit history and the returned text agree on every citation, for each strategy
of the revision loop, with the LLM rewriting (the scripted server) and without it."""

from __future__ import annotations

import pytest

from audit.pipeline.retrieval import anchor_map, resolve_anchor
from audit.pipeline.revision import RevisionOptions, llm_rewriter, replay_edits, revise_answer
from tests.llm.fake_llm import ok

QUERY = "What does the Gold card offer?"
REMOVE = RevisionOptions(unsupported_action="remove")
CASES = {
    "correct": (
        "The annual fee for the Gold card is $200 [1].",
        "The annual fee for the Gold card is $150 [1].",
        RevisionOptions(),
    ),
    "citation": (
        "Gold card holders get free airport lounge access worldwide [2].",
        "Gold card holders get free airport lounge access worldwide [3].",
        RevisionOptions(),
    ),
    "remove": (
        "The annual fee for the Gold card is $150 [1]. The Gold card includes a free rental car every month [1].",
        "The annual fee for the Gold card is $150 [1].",
        REMOVE,
    ),
    "qualify": (
        "The annual fee for the Gold card is $150 [1]. The Gold card includes a free rental car every month [1].",
        "The annual fee for the Gold card is $150 [1]. The Gold card includes a free rental car every month.",
        RevisionOptions(),
    ),
    "soften": (
        "Refunds are processed within 14 business days by the billing team [2]. "
        "The card always includes travel insurance for the whole family.",
        "Refunds are reportedly processed within 14 business days by the billing team [2].",
        REMOVE,
    ),
}


def assert_agree(out):
    # the edit history leads to the returned text, attempt by attempt
    for attempt in out.attempts[1 : out.kept + 1]:
        assert replay_edits(out.attempts[attempt.number - 1].text, attempt.edits) == attempt.text
    assert out.final_text == out.attempts[out.kept].text
    amap = anchor_map(out.passages)
    cited = {
        c.claim.text: {p.id for a in c.claim.citations if (p := resolve_anchor(a, amap)) is not None}
        for c in out.final.claims
    }
    for c in out.final.claims:  # every marker of the returned text names a passage
        assert all(resolve_anchor(a, amap) is not None for a in c.claim.citations), c.claim.citations
    # the card names only a passage the returned text cites for that claim
    for cid, rev in out.claim_revisions().items():
        if rev["passage_id"]:
            assert rev["text"] and rev["passage_id"] in cited[rev["text"]], (cid, rev, cited)
        assert rev["cited"] == bool(rev["passage_id"])


@pytest.mark.parametrize("strategy", list(CASES))
@pytest.mark.parametrize("with_llm", [False, True], ids=["offline", "llm"])
def test_the_card_the_history_and_the_text_agree_on_every_citation(
    strategy, with_llm, passages, verify, llm_server, llm_client
):
    answer, rewrite, options = CASES[strategy]
    llm_server.route("TASK: rewrite_answer", ok(rewrite))
    out = revise_answer(
        query=QUERY,
        answer=answer,
        passages=passages,
        verify=lambda text, pool: verify(text, pool, QUERY),
        rewriter=llm_rewriter(llm_client) if with_llm else None,
        options=options,
    )
    assert out.revised
    strategies = {rev["strategy"] for rev in out.claim_revisions().values()}
    assert strategy in strategies or (strategy == "citation" and "corrective_retrieval" in strategies), (
        strategies
    )
    assert_agree(out)
    if with_llm and strategy != "citation":  # a citation alone is fixed offline, the claims being settled
        assert llm_server.calls("TASK: rewrite_answer")

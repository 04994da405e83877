"""The LLM's rewrite_answer in the revision loop, against a real OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

from audit.pipeline.revision import llm_rewriter, revise_answer
from tests.llm.fake_llm import Reply, ok

QUERY = "What does the Gold card cost?"
ANSWER = "The annual fee for the Gold card is $200 [1]. Gold card holders get free airport lounge access [3]."
FIXED = "The annual fee for the Gold card is $150 [1]. Gold card holders get free airport lounge access [3]."


def _revise(verify, passages, client):
    return revise_answer(
        query=QUERY,
        answer=ANSWER,
        passages=passages,
        verify=lambda t, p: verify(t, p, QUERY),
        rewriter=llm_rewriter(client),
    )


def test_it_sends_the_problems_and_the_passages_and_uses_the_rewrite(
    llm_server, llm_client, passages, verify
):
    llm_server.route("TASK: rewrite_answer", ok(FIXED))
    out = _revise(verify, passages, llm_client)
    assert out.final_text == FIXED and out.attempts[1].author == "llm"
    (call,) = llm_server.calls("TASK: rewrite_answer")
    prompt = call["body"]["messages"][-1]["content"]
    assert (
        "c1 (contradicted): The annual fee for the Gold card is $200. -> "
        'Correct claim based on evidence: "The annual fee for the Gold card is $200."'
    ) in prompt
    assert "[1] The annual fee for the Gold card is $150." in prompt
    assert llm_client.accounting.calls == 1


def test_a_server_error_falls_back_to_the_offline_rewrite(llm_server, llm_client, passages, verify):
    llm_server.route("TASK: rewrite_answer", Reply(status=500))
    out = _revise(verify, passages, llm_client)
    assert out.attempts[1].author == "offline" and "LLMError" in out.attempts[1].notes[0]
    assert out.final_text == FIXED


def test_no_configured_llm_means_no_rewriter():
    assert llm_rewriter(None) is None

"""The MiniCheck-style LLM judge: one claim against one chunk, Yes/No, read from logprobs where given."""

from __future__ import annotations

import math

import pytest

from audit.constants import AUDIT_SCORE_THRESHOLD, MINICHECK_MAX_CHUNKS
from audit.pipeline.llm.combine import weigh
from audit.pipeline.llm.judge import judge_claims
from audit.pipeline.llm.minicheck import audit_score, chunks, p_yes
from tests.llm.fake_llm import Reply

CLAIM = "The bank closes the account within ten days."
EVIDENCE = "If the customer asks in writing, the bank closes the account within ten days."


def _yes(p: float) -> Reply:
    return Reply(content="Yes" if p >= 0.5 else "No", logprobs={"Yes": math.log(p), "No": math.log(1 - p)})


def test_long_evidence_is_cut_into_chunks_of_whole_sentences_within_the_size():
    sentence = "The committee met on Monday and approved the annual budget for the regional offices."
    passage = " ".join([sentence] * 40)
    parts = chunks([passage], size=400, limit=100)
    assert len(parts) > 5 and all(len(p) <= 400 for p in parts)
    assert all(p.endswith("offices.") for p in parts) and "".join(parts).count(sentence) == 40
    assert len(chunks([passage] * 5)) == MINICHECK_MAX_CHUNKS


def test_p_yes_reads_the_first_tokens_logprobs_and_falls_back_to_the_text():
    assert p_yes("No", {"Yes": math.log(0.3), "No": math.log(0.6), "The": math.log(0.1)}) == pytest.approx(
        1 / 3
    )
    assert p_yes("Yes.", {}) == 1.0 and p_yes("no, it does not", {}) == 0.0
    assert p_yes("Maybe", {}) is None and p_yes("", {}) is None


def test_half_lands_on_the_supported_threshold():
    assert audit_score(0.5) == pytest.approx(AUDIT_SCORE_THRESHOLD)
    assert audit_score(0.49) < AUDIT_SCORE_THRESHOLD < audit_score(0.51)
    assert audit_score(1.0) == pytest.approx(1.0) and audit_score(0.0) == 0.0


def test_the_judge_asks_one_claim_against_one_chunk_for_one_token_with_logprobs(llm_server, make_client):
    llm_server.route("TASK: minicheck", _yes(0.2))
    client = make_client(judge_prompt="minicheck")

    (result,) = judge_claims(client, [(CLAIM, [EVIDENCE])])

    (request,) = llm_server.calls("TASK: minicheck")
    body = request["body"]
    assert body["logprobs"] is True and body["top_logprobs"] == 5 and body["max_tokens"] <= 4
    # one token is not streamed: llama-cpp-python 0.3.36 ends a stream asked for logprobs after its first chunk
    assert "stream" not in body and client.config.stream
    prompt = body["messages"][0]["content"]
    assert f"Document: {EVIDENCE}" in prompt and f"Claim: {CLAIM}" in prompt
    assert result.ran and result.verdict == "not_found" and result.details["p_yes"] == pytest.approx(0.2)
    assert result.details["logprobs"] is True and result.details["p_refuted"] is None
    assert result.score < AUDIT_SCORE_THRESHOLD


def test_reading_stops_at_the_first_chunk_that_supports_the_claim(llm_server, make_client):
    llm_server.route("TASK: minicheck", _yes(0.1), _yes(0.9), _yes(0.95))
    client = make_client(judge_prompt="minicheck")
    other = "The branch opens at nine on weekdays. " * 60  # two chunks of its own

    (result,) = judge_claims(client, [(CLAIM, [other, EVIDENCE])])

    assert len(llm_server.calls("TASK: minicheck")) == 2
    assert result.verdict == "supported" and result.details["p_yes"] == pytest.approx(0.9)
    assert result.details["chunks_read"] == 2 and result.score > AUDIT_SCORE_THRESHOLD
    # the same claim and evidence again in this audit: no new call
    judge_claims(client, [(CLAIM, [other, EVIDENCE])])
    assert len(llm_server.calls("TASK: minicheck")) == 2


def test_a_reply_that_is_neither_yes_nor_no_is_invalid_and_counts_against_the_breaker(
    llm_server, make_client
):
    llm_server.route("TASK: minicheck", Reply(content="The document is about banks."))
    client = make_client(judge_prompt="minicheck")

    (result,) = judge_claims(client, [(CLAIM, [EVIDENCE])])

    assert not result.ran and "neither Yes nor No" in result.details["reason"]
    assert client.accounting.failures and client.accounting.failures[-1]["kind"] == "invalid_json"


def test_a_yes_no_reading_never_argues_about_refutation():
    # the offline judge refutes; the LLM says "not supported": they agree, P(refuted) stays the offline one
    agree = weigh(0.05, 0.95, audit_score(0.1), None, threshold=0.8, refuted_threshold=0.5)
    assert not agree.disagreement and agree.p_refuted == pytest.approx(0.95)
    # the offline judge is confident the claim is supported; the LLM says No: a person decides
    disagree = weigh(0.97, 0.0, audit_score(0.1), None, threshold=0.8, refuted_threshold=0.5)
    assert disagree.disagreement and disagree.confidence == 0.97


@pytest.mark.slow  # a benchmark-sized run: the evaluation (or the fit) over the whole set
def test_evaluate_runs_the_contrastive_suite_through_the_minicheck_judge_against_the_scripted_server(
    llm_server,
):
    import io
    import re

    from django.core.management import call_command

    from audit.evaluation.contrast import FAMILIES, load_suite

    def reading(body):  # an endpoint that says Yes when every word of the claim is in the document
        prompt = body["messages"][0]["content"]
        doc = re.search(r"Document: (.*)\nClaim: ", prompt, re.S).group(1).lower()
        claim = prompt.rsplit("Claim: ", 1)[1].lower()
        words = re.findall(r"[a-z0-9]+", claim)
        p = 0.9 if all(w in doc for w in words) else 0.1
        return {"Yes": math.log(p), "No": math.log(1 - p)}

    llm_server.route("TASK: minicheck", Reply(content="Yes", logprobs=reading))
    out = io.StringIO()
    call_command(
        "evaluate",
        "--contrast",
        "--judge",
        "llm",
        "--llm-url",
        llm_server.base_url,
        "--llm-judge-prompt",
        "minicheck",
        stdout=out,
        stderr=io.StringIO(),
    )
    text = out.getvalue()
    assert "Contrastive suite" in text and all(f"\n{f}" in text for f in FAMILIES)
    asked = {
        c["body"]["messages"][0]["content"].rsplit("Claim: ", 1)[1]
        for c in llm_server.calls("TASK: minicheck")
    }
    assert asked and asked <= {row["hypothesis"] for row in load_suite()}
    assert all(c["body"]["logprobs"] is True for c in llm_server.calls("TASK: minicheck"))


def test_an_unknown_judge_prompt_setting_is_refused_in_one_sentence(monkeypatch):
    from django.core.exceptions import ImproperlyConfigured

    from audit.constants import LLM_JUDGE_PROMPTS
    from theoria.settings.env import envchoice

    monkeypatch.setenv("THEORIA_LLM_JUDGE_PROMPT", "mini-check")
    with pytest.raises(
        ImproperlyConfigured, match="THEORIA_LLM_JUDGE_PROMPT must be one of batched, minicheck"
    ):
        envchoice("THEORIA_LLM_JUDGE_PROMPT", "batched", LLM_JUDGE_PROMPTS)
    monkeypatch.setenv("THEORIA_LLM_JUDGE_PROMPT", "MiniCheck")
    assert envchoice("THEORIA_LLM_JUDGE_PROMPT", "batched", LLM_JUDGE_PROMPTS) == "minicheck"

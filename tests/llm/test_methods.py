"""LLM-backed methods against the scripted server: extraction, isolated judge, CoVe, SelfCheck,
drafting and rewriting, each with its fallback."""

from __future__ import annotations

import json

import pytest

from audit.pipeline.llm import LLMError
from audit.pipeline.llm.cove import cove_check
from audit.pipeline.llm.drafting import NO_ANSWER, draft_answer, draft_offline, make_rewriter
from audit.pipeline.llm.extraction import METHOD_LLM, METHOD_OFFLINE, extract_claims
from audit.pipeline.llm.judge import judge_claim
from audit.pipeline.llm.selfcheck import selfcheck
from audit.pipeline.types import ClaimDraft, Passage
from tests.llm.fake_llm import Reply, claims_in, ok, per_claim

ANSWER = "The hippocampus consolidates memory [1]. It was named by Arantius in 1587 [2]."
EVIDENCE = ["The hippocampus consolidates long-term memory.", "Arantius named the hippocampus in 1564."]


def user_message(request: dict) -> str:
    return request["body"]["messages"][-1]["content"]


# --- extraction ---------------------------------------------------------------------------
def test_it_extracts_llm_claims_anchored_to_their_sentences(llm_server, make_client):
    llm_server.route(
        "TASK: extract_claims",
        ok(
            {
                "claims": [
                    {"text": "The hippocampus consolidates memory."},
                    {"text": "Arantius named the hippocampus."},
                    {"text": "The hippocampus was named in 1587."},
                ]
            }
        ),
    )
    out = extract_claims(make_client(), ANSWER, "What does the hippocampus do?")
    assert out.method == METHOD_LLM and out.fallback == ""
    assert [c.claim_id for c in out.claims] == ["c1", "c2", "c3"]
    first_sentence_end = ANSWER.index("[1].") + 4
    assert out.claims[0].span[1] <= first_sentence_end and out.claims[0].citations == ("1",)
    assert out.claims[1].citations == ("2",) and out.claims[2].citations == ("2",)
    assert out.claims[2].type == "numeric"
    body = llm_server.requests[0]["body"]
    assert body["temperature"] == 0.0 and body["seed"] == 7  # deterministic prompt


@pytest.mark.parametrize(
    "bad", [Reply(content=""), ok("not json at all"), ok({"claims": [{"id": 1}]}), Reply(status=500)]
)
def test_it_falls_back_to_the_offline_extractor_on_any_failure(llm_server, make_client, bad):
    llm_server.route("TASK: extract_claims", bad)
    client = make_client(max_retries=0)
    out = extract_claims(client, ANSWER)
    assert out.method == METHOD_OFFLINE and out.fallback
    assert out.claims[0].text.startswith("The hippocampus consolidates memory")
    assert client.accounting.failures


def test_it_extracts_offline_without_a_client():
    out = extract_claims(None, ANSWER)
    assert out.method == METHOD_OFFLINE and out.fallback == "no LLM configured" and len(out.claims) == 2


# --- isolated verification -----------------------------------------------------------------
@pytest.mark.parametrize(
    "verdict, label, vote",
    [
        ("SUPPORTED", "SUPPORTED", "supported"),
        ("PARTIAL", "NEI", "not_found"),
        ("UNSUPPORTED", "NEI", "not_found"),
        ("CONTRADICTED", "REFUTED", "contradicted"),
    ],
)
def test_it_maps_the_judge_verdicts_to_fever_labels(llm_server, make_client, verdict, label, vote):
    llm_server.route(
        "TASK: isolated_verification",
        per_claim("results", lambda _: {"verdict": verdict, "reasoning": "because [2]"}),
    )
    result = judge_claim(make_client(), "Arantius named it in 1587.", EVIDENCE)
    assert result.ran and result.details["fever_label"] == label and result.verdict == vote
    assert result.details["reasoning"] == "because [2]"


def test_it_judges_claims_in_batches_each_with_its_own_evidence(llm_server, make_client):
    from audit.constants import LLM_BATCH_CLAIMS
    from audit.pipeline.llm.judge import judge_claims

    llm_server.route(
        "TASK: isolated_verification",
        per_claim(
            "results",
            lambda text: {
                "verdict": "CONTRADICTED" if "1587" in text else "SUPPORTED",
                "reasoning": "per passage [1]",
            },
        ),
    )
    items = [(f"Claim number {i} holds.", [f"evidence {i}"]) for i in range(LLM_BATCH_CLAIMS + 1)]
    items.append(("Arantius named the hippocampus in 1587.", [EVIDENCE[1]]))
    results = judge_claims(make_client(), items)
    assert len(llm_server.calls("TASK: isolated_verification")) == 2  # 10 claims, batches of 8
    assert [r.details["judge_verdict"] for r in results] == ["SUPPORTED"] * (LLM_BATCH_CLAIMS + 1) + [
        "CONTRADICTED"
    ]
    # the two batches run concurrently: find the first by its content
    [first] = [r for r in llm_server.calls("TASK: isolated_verification") if "evidence 0" in user_message(r)]
    assert "Evidence for c1:\n[1] evidence 0" in user_message(first) and "evidence 8" not in user_message(
        first
    )
    assert (
        first["body"]["max_tokens"] == 40 + 90 * LLM_BATCH_CLAIMS
    )  # the task's own cap, per claim of the batch


def test_it_reports_a_claim_the_judge_left_out_as_not_run(llm_server, make_client):
    from audit.pipeline.llm.judge import judge_claims

    llm_server.route(
        "TASK: isolated_verification",
        ok({"results": [{"claim_id": "c2", "verdict": "SUPPORTED", "reasoning": "stated in [1]"}]}),
    )
    first, second = judge_claims(make_client(), [("One claim here.", EVIDENCE), ("Another claim.", EVIDENCE)])
    assert not first.ran and "no verdict" in first.details["reason"] and second.ran


def test_it_shows_the_judge_only_the_claim_and_its_evidence(llm_server, make_client):
    llm_server.route(
        "TASK: isolated_verification",
        per_claim("results", lambda _: {"verdict": "SUPPORTED", "reasoning": "it says so"}),
    )
    judge_claim(make_client(), "The hippocampus consolidates memory.", EVIDENCE)
    sent = user_message(llm_server.requests[0])
    assert "The hippocampus consolidates memory." in sent and EVIDENCE[0] in sent
    assert "1587 [2]" not in sent and "What does" not in sent  # neither the draft nor the question


def test_it_reports_the_judge_as_not_run_when_the_llm_fails(llm_server, make_client):
    client = make_client(max_retries=0)  # default route: HTTP 500
    result = judge_claim(client, "claim", EVIDENCE)
    assert not result.ran and "server_error" in result.details["reason"]
    assert judge_claim(None, "claim", EVIDENCE).details["reason"] == "no LLM configured"


# --- CoVe -----------------------------------------------------------------------------------
def test_it_answers_cove_questions_without_showing_the_claim(llm_server, make_client):
    claim = "Arantius named the hippocampus in 1587."
    llm_server.route(
        "TASK: cove_questions",
        per_claim(
            "results",
            lambda _: {
                "questions": ["Who named the hippocampus?", "In which year was the hippocampus named?"]
            },
        ),
    )
    llm_server.route(
        "TASK: cove_answer",
        ok(
            {
                "answers": [
                    {"question": 1, "answer": "Arantius", "found": True},
                    {"question": 2, "answer": "1564", "found": True},
                ]
            }
        ),
    )
    llm_server.route(
        "TASK: cove_compare", per_claim("results", lambda _: {"verdicts": ["CONSISTENT", "INCONSISTENT"]})
    )
    result = cove_check(make_client(), claim, EVIDENCE)
    answers = llm_server.calls("TASK: cove_answer")
    assert len(answers) == 1 and all(
        claim not in user_message(r) and "1587" not in user_message(r) for r in answers
    )
    assert result.ran and result.details["cove_consistency"] == 0.5 and result.verdict == "contradicted"
    assert [q["answer"] for q in result.details["questions"]] == ["Arantius", "1564"]


def test_it_does_not_run_cove_when_a_step_fails(llm_server, make_client):
    llm_server.route(
        "TASK: cove_questions", per_claim("results", lambda _: {"questions": ["Who named the hippocampus?"]})
    )
    llm_server.route("TASK: cove_answer", ok("{broken"))
    result = cove_check(make_client(), "claim", EVIDENCE)
    assert not result.ran and "invalid_json" in result.details["reason"]


# --- SelfCheck ------------------------------------------------------------------------------
CLAIMS = [
    ClaimDraft("c1", "The hippocampus consolidates memory.", (0, 10)),
    ClaimDraft("c2", "Arantius named the hippocampus in 1587.", (11, 20)),
]


def test_it_measures_selfcheck_disagreement_from_drawn_samples(llm_server, make_client):
    llm_server.route("TASK: selfcheck_sample", ok("sample one"), ok("sample two"), ok("sample three"))
    llm_server.route(
        ("TASK: selfcheck_judge", "sample one"),
        ok(
            {
                "results": [
                    {"claim_id": "c1", "verdict": "SUPPORTS"},
                    {"claim_id": "c2", "verdict": "CONTRADICTS"},
                ]
            }
        ),
    )
    llm_server.route(
        "TASK: selfcheck_judge",
        ok(
            {
                "results": [
                    {"claim_id": "c1", "verdict": "SUPPORTS"},
                    {"claim_id": "c2", "verdict": "NOT_MENTION"},
                ]
            }
        ),
    )
    out = selfcheck(make_client(), "What does the hippocampus do?", CLAIMS, EVIDENCE, k=3, threshold=0.4)
    assert out.ran and len(out.samples) == 3
    assert out.results["c1"].details["selfcheck_disagreement"] == 0.0 and out.results["c1"].flags == []
    assert out.results["c2"].details["selfcheck_disagreement"] == 1.0
    assert out.results["c2"].flags == ["selfcheck_disagreement"]
    samples = llm_server.calls("TASK: selfcheck_sample")
    assert {r["body"]["temperature"] for r in samples} == {0.7}
    assert len({r["body"]["seed"] for r in samples}) == 3  # distinct seeds: real alternatives


def test_it_reports_no_selfcheck_disagreement_when_no_sample_was_drawn(llm_server, make_client):
    llm_server.route("TASK: selfcheck_sample", Reply(content=""))
    out = selfcheck(make_client(), "What does the hippocampus do?", CLAIMS, EVIDENCE, k=2, threshold=0.4)
    assert not out.ran and out.samples == []
    assert all(not r.ran and "selfcheck_disagreement" not in r.details for r in out.results.values())
    assert selfcheck(None, "q", CLAIMS, EVIDENCE, threshold=0.4).reason == "no LLM configured"


# --- drafting and rewriting -----------------------------------------------------------------
PASSAGES = [Passage(id="kb-1", text=EVIDENCE[0]), Passage(id="kb-2", text=EVIDENCE[1])]


def test_it_drafts_an_answer_with_anchors_that_name_the_passages(llm_server, make_client):
    llm_server.route(
        "TASK: draft_answer",
        ok("The hippocampus consolidates long-term memory [1]. It was named in 1564 [2][7]."),
    )
    draft = draft_answer(make_client(), "What does the hippocampus do?", PASSAGES)
    assert draft.method == "llm_draft"
    assert draft.text == "The hippocampus consolidates long-term memory [1]. It was named in 1564 [2]."
    assert [p.anchors for p in draft.passages] == [("1",), ("2",)]


@pytest.mark.parametrize(
    "reply, why",
    [
        (
            ok("The hippocampus consolidates long-term memory [1]. It was named", finish_reason="length"),
            "cut off",
        ),
        (
            ok(
                "TASK: draft_answer Answer the question using ONLY the numbered passages. [1] The hippocampus [1]."
            ),
            "repeats the prompt",
        ),
    ],
)
def test_it_refuses_a_draft_cut_off_at_the_limit_or_echoing_the_prompt(llm_server, make_client, reply, why):
    llm_server.route("TASK: draft_answer", reply)
    client = make_client()
    draft = draft_answer(client, "Which memory does the hippocampus hold?", PASSAGES)
    assert draft.method == "extractive_draft" and draft.fallback == "schema"
    assert why in client.accounting.failures[-1]["message"]


def test_a_draft_with_a_dash_rule_of_its_own_is_no_echo(llm_server, make_client):
    text = "The hippocampus consolidates long-term memory [1].\n\n---\n\nArantius named it in 1564 [2]."
    llm_server.route("TASK: draft_answer", ok(text))
    client = make_client()
    draft = draft_answer(client, "What does the hippocampus do?", PASSAGES)
    assert draft.method == "llm_draft" and "Arantius named it in 1564 [2]." in draft.text
    assert client.accounting.failures == []


def test_it_refuses_a_draft_without_anchors_and_drafts_offline(llm_server, make_client):
    llm_server.route("TASK: draft_answer", ok("The hippocampus does many things."))
    client = make_client()
    draft = draft_answer(client, "Which memory does the hippocampus hold?", PASSAGES)
    assert draft.method == "extractive_draft" and draft.fallback == "schema"
    assert draft.text == "The hippocampus consolidates long-term memory [1]."
    assert client.accounting.failures[-1]["kind"] == "schema"


def test_it_drafts_offline_deterministically_and_says_when_sources_do_not_answer():
    assert draft_offline("hippocampus named", PASSAGES) == draft_offline("hippocampus named", PASSAGES)
    assert draft_offline("volcano eruptions", PASSAGES) == NO_ANSWER
    assert draft_answer(None, "hippocampus", PASSAGES).method == "extractive_draft"


def test_it_rewrites_an_answer_for_the_revision_loop(llm_server, make_client):
    llm_server.route(
        "TASK: rewrite_answer", ok("The hippocampus consolidates memory [1]. Arantius named it in 1564 [2].")
    )
    rewriter = make_rewriter(make_client())
    instructions = [
        {
            "claim_id": "c2",
            "claim": "It was named by Arantius in 1587.",
            "verdict": "contradicted",
            "strategy": "correct",
            "instruction": "Correct the year",
        }
    ]
    passages = [Passage(id="kb-1", text=EVIDENCE[0], anchors=("1",)), Passage(id="kb-2", text=EVIDENCE[1])]
    text = rewriter(query="q", answer=ANSWER, instructions=instructions, passages=passages)
    assert text.endswith("in 1564 [2].")
    sent = user_message(llm_server.requests[0])
    assert "[1] The hippocampus" in sent and "[cite:kb-2] Arantius" in sent and "Correct the year" in sent
    assert make_rewriter(None) is None


def test_it_raises_from_the_rewriter_when_the_llm_fails_so_the_loop_goes_offline(llm_server, make_client):
    rewriter = make_rewriter(make_client(max_retries=0))
    with pytest.raises(LLMError):
        rewriter(query="q", answer=ANSWER, instructions=[], passages=PASSAGES)


def test_it_keeps_prompts_deterministic():
    from audit.pipeline.llm import prompts

    assert prompts.numbered_passages(["a", "b"]) == "[1] a\n\n[2] b"
    assert prompts.messages("TASK: x\nDo it.", "input") == [
        {"role": "user", "content": "TASK: x\nDo it.\n\n---\n\ninput"}
    ]


def test_it_puts_the_instructions_in_the_user_message_for_models_that_drop_system_messages(
    llm_server, make_client
):
    llm_server.route(
        "TASK: isolated_verification",
        per_claim("results", lambda _: {"verdict": "SUPPORTED", "reasoning": "it says so"}),
    )
    judge_claim(make_client(), "The hippocampus consolidates memory.", EVIDENCE)
    sent = llm_server.requests[0]["body"]["messages"]
    assert [m["role"] for m in sent] == ["user"] and sent[0]["content"].startswith(
        "TASK: isolated_verification"
    )


def test_it_drops_extracted_claims_that_are_not_in_the_answer(llm_server, make_client):
    llm_server.route(
        "TASK: extract_claims",
        ok(
            {
                "claims": [
                    {"text": "The hippocampus consolidates memory."},
                    {"text": "Dolphins sleep with one brain hemisphere awake."},
                ]
            }
        ),
    )
    out = extract_claims(make_client(), ANSWER)
    assert out.method == METHOD_LLM and [c.text for c in out.claims] == [
        "The hippocampus consolidates memory."
    ]


def test_it_extracts_offline_when_no_llm_claim_is_grounded_in_the_answer(llm_server, make_client):
    llm_server.route("TASK: extract_claims", ok({"claims": [{"text": "Dolphins sleep with one eye open."}]}))
    client = make_client()
    out = extract_claims(client, ANSWER)
    assert out.method == METHOD_OFFLINE and out.fallback == "schema" and len(out.claims) == 2
    assert client.accounting.failures[-1]["message"] == "no extracted claim is grounded in the answer"


# --- round two: bounded, split, once per text ----------------------------------------------
def test_a_judge_batch_cut_off_at_the_cap_is_split_and_asked_again_not_dropped(llm_server, make_client):
    from audit.pipeline.llm.judge import judge_claims

    def verdicts(body):
        listed = claims_in(body)
        return json.dumps(
            {
                "results": [
                    {"claim_id": cid, "verdict": "SUPPORTED", "reasoning": "Stated in [1]."} for cid in listed
                ]
            }
        )

    # a batch of 4 loops to the cap; batches of 2 fit
    llm_server.route(
        ("TASK: isolated_verification", "Claim c4:"),
        ok('{"results": [{"claim_id": "c1", "reas', finish_reason="length"),
    )
    llm_server.route("TASK: isolated_verification", Reply(content=verdicts))
    items = [(f"The hippocampus holds memory number {n}.", [EVIDENCE[0]]) for n in range(4)]
    results = judge_claims(make_client(), items)
    assert all(r.ran and r.details["judge_verdict"] == "SUPPORTED" for r in results)
    sizes = [len(claims_in(r["body"])) for r in llm_server.requests]
    assert sizes == [4, 2, 2] and [r.details["batch_size"] for r in results] == [2, 2, 2, 2]


def test_the_judge_judges_each_claim_once_per_text_and_evidence(llm_server, make_client):
    from audit.pipeline.llm.judge import judge_claims

    llm_server.route(
        "TASK: isolated_verification",
        per_claim("results", lambda _: {"verdict": "SUPPORTED", "reasoning": "Stated in [1]."}),
    )
    client = make_client()
    first = judge_claims(client, [("Claim one holds.", EVIDENCE), ("Claim two holds.", EVIDENCE)])
    again = judge_claims(client, [("Claim one holds.", EVIDENCE), ("Claim two, corrected.", EVIDENCE)])
    assert all(r.ran for r in first + again)
    assert [len(claims_in(r["body"])) for r in llm_server.requests] == [2, 1]
    assert client.accounting.calls == 2


def test_selfcheck_discards_samples_that_echo_the_prompt(llm_server, make_client):
    llm_server.route(
        "TASK: selfcheck_sample",
        ok("TASK: selfcheck_sample\nAnswer the question in a short paragraph, using the numbered passages."),
        ok("Passages:\n[1] The hippocampus consolidates memory.\n\nQuestion: What does it do?"),
        ok("The hippocampus consolidates memory --- and it was named in 1564."),
    )
    llm_server.route("TASK: selfcheck_judge", per_claim("results", lambda _: {"verdict": "SUPPORTS"}))
    client = make_client(concurrency=1)
    claims = [ClaimDraft(claim_id="c1", text="The hippocampus consolidates memory.", span=(0, 10))]
    outcome = selfcheck(client, "What does the hippocampus do?", claims, EVIDENCE, k=3, threshold=0.5)
    assert outcome.samples == ["The hippocampus consolidates memory --- and it was named in 1564."]
    assert outcome.results["c1"].details["samples_drawn"] == 1
    assert [f["kind"] for f in client.accounting.failures] == ["echo", "echo"]

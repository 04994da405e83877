"""A whole audit against a real OpenAI-compatible server (skipped unless THEORIA_TEST_LLM_BASE_URL is set).

See docs/LLM.md for starting llama.cpp's server:
    THEORIA_TEST_LLM_BASE_URL=http://127.0.0.1:8080/v1 .venv/bin/python -m pytest tests/llm/test_integration.py
Optional: THEORIA_TEST_LLM_MODEL (default "default"), THEORIA_TEST_LLM_API_KEY, THEORIA_TEST_LLM_TIMEOUT_S.
A real model's answers vary, so this checks the contract, not the verdicts: the audit completes,
every claim has a label, the LLM was really called and accounted for, at least one LLM method
really ran (an audit where every LLM step fell back offline fails), and each LLM method either
ran or says why not. ``make test-llm`` runs this file and ``tests/llm/test_real_server.py``
against llama-cpp-python's server.
"""

from __future__ import annotations

import os
import re

import pytest

from audit.pipeline.audit import audit_answer
from audit.pipeline.llm import LLMClient, LLMConfig
from audit.pipeline.llm.base import Completion
from audit.pipeline.llm.drafting import draft_answer
from audit.pipeline.types import Passage

BASE_URL = os.environ.get("THEORIA_TEST_LLM_BASE_URL", "")
pytestmark = pytest.mark.skipif(not BASE_URL, reason="THEORIA_TEST_LLM_BASE_URL is not set (see docs/LLM.md)")

CONTEXTS = [
    {
        "id": "p1",
        "text": "The hippocampus is a structure of the medial temporal lobe that consolidates "
        "declarative memories from short-term to long-term storage.",
    },
    {
        "id": "p2",
        "text": "The anatomist Giulio Cesare Aranzi (Arantius) named the hippocampus in 1564, "
        "after its resemblance to a seahorse.",
    },
]
ANSWER = (
    "The hippocampus consolidates declarative memories into long-term storage [1]. "
    "Arantius named the hippocampus in 1587 [2]."
)


def real_client(**overrides) -> LLMClient:
    options = {
        "base_url": BASE_URL,
        "model": os.environ.get("THEORIA_TEST_LLM_MODEL", "default"),
        "api_key": os.environ.get("THEORIA_TEST_LLM_API_KEY", ""),
        "timeout_s": float(os.environ.get("THEORIA_TEST_LLM_TIMEOUT_S", "60")),
        "max_retries": 1,
        "concurrency": int(os.environ.get("THEORIA_TEST_LLM_CONCURRENCY", "1")),
        **overrides,
    }
    return LLMClient(LLMConfig(**options))


def test_it_runs_a_whole_audit_against_the_real_server():
    client = real_client()
    result = audit_answer("What does the hippocampus do and who named it?", ANSWER, CONTEXTS, llm=client)
    assert result.claims and all(c.label in ("SUPPORTED", "REFUTED", "NEI") for c in result.claims)
    acc = client.accounting
    assert acc.calls > 0 and acc.prompt_tokens > 0 and acc.latency_ms > 0
    ran = {m for c in result.claims for m in c.method_names}
    assert ran & {"llm_judge", "llm_cove", "selfcheck"}, f"no LLM method ran: {result.methods_not_run}"
    for name in ("llm_judge", "llm_cove", "selfcheck"):
        assert name in ran or name in result.methods_not_run
    if "selfcheck" in ran:
        assert any("selfcheck_disagreement" in c.metrics for c in result.claims)
    assert acc.calls == sum(acc.calls_by_purpose.values())
    print(
        f"\nreal LLM audit: {acc.calls} calls, {acc.prompt_tokens}+{acc.completion_tokens} tokens, "
        f"{acc.latency_ms:.0f} ms LLM time, {len(acc.failures)} failures, structured {acc.structured}, "
        f"labels {[c.label for c in result.claims]}, ran {sorted(ran)}"
    )


class RecordingClient(LLMClient):
    """The real client, keeping each reply the server sent (what the test judges the draft by)."""

    def __init__(self, config: LLMConfig):
        super().__init__(config)
        self.replies: list[Completion] = []

    def complete_reply(self, **kwargs) -> Completion:
        reply = super().complete_reply(**kwargs)
        self.replies.append(reply)
        return reply


def test_it_drafts_an_answer_with_anchors_from_the_real_server():
    client = RecordingClient(real_client().config)
    passages = [Passage(id=c["id"], text=c["text"]) for c in CONTEXTS]
    draft = draft_answer(client, "Who named the hippocampus?", passages)
    assert client.accounting.calls_by_purpose.get("draft_answer") == 1
    (reply,) = client.replies
    # the server's reply judged here on its face, not by the drafting code's own checks: a usable
    # draft is one the server finished, that cites passage 1 or 2 and does not hand the prompt back
    # (its task line, its "Passages:" label). gemma3-270m is a base model: it repeats the prompt
    # until the token cap whatever the cap (measured: 1,200 tokens of it), so this asks for the LLM's
    # draft exactly when the server wrote one, and otherwise for the refusal that names what it wrote
    finished = reply.finish_reason == "stop"
    echoed = "TASK: draft_answer" in reply.text or "Passages:" in reply.text
    cited = bool(re.search(r"\[[12]\]", reply.text))
    failures = client.accounting.failures
    print(
        f"\nreal LLM draft: finish_reason {reply.finish_reason}, echoed the prompt {echoed}, "
        f"cites a passage {cited}, kept as {draft.method}: {reply.text[:120]!r}"
    )
    if finished and cited and not echoed:
        # the LLM's draft, not the extractive fallback: this fails when a usable draft is refused
        assert draft.method == "llm_draft", f"LLM drafting failed ({draft.fallback}): {failures}"
        assert draft.text and re.search(r"\[[12]\]", draft.text)
        assert failures == []
    else:
        why = "cut off" if reply.truncated else "repeats the prompt" if echoed else "cites no passage"
        assert draft.method == "extractive_draft" and draft.fallback == "schema", draft
        assert [f["purpose"] for f in failures] == ["draft_answer"], failures
        assert why in failures[0]["message"], failures
        assert draft.text and re.search(r"\[[12]\]", draft.text)  # the extractive draft cites too

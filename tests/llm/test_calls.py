"""LLM calls per audit, counted by the scripted server (docs/LLM.md#calls-per-audit)."""

from __future__ import annotations

from tests.llm.calls_per_audit import count_calls


def test_an_audit_judges_each_claim_once_whichever_judge_labels_it():
    default, judge_llm = count_calls("audit"), count_calls("audit-judge-llm")
    assert default["judge"] == judge_llm["judge"] == 1  # two claims, one batch, asked once
    assert sum(default.values()) == sum(judge_llm.values()) == 12


def test_the_revision_loop_asks_again_only_about_what_its_edit_changed():
    calls = count_calls("revision")
    assert calls["selfcheck_sample"] == 3  # the question and passages did not change: no new samples
    assert calls["cove_questions"] == 2 and calls["cove_answer"] == 3  # only the corrected claim again
    assert calls["rewrite_answer"] == 1 and calls["extract_claims"] == 2
    assert sum(calls.values()) <= 24

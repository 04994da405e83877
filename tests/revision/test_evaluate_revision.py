"""``manage.py evaluate_revision``: figures on a benchmark answers file, and its refusals."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command


def _write(tmp_path, records):
    path = tmp_path / "answers.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    return path


def test_it_refuses_a_missing_answers_file_in_one_sentence(tmp_path):
    with pytest.raises(CommandError, match=r"^The answers file .*missing\.jsonl does not exist\.$"):
        call_command("evaluate_revision", "--answers", str(tmp_path / "missing.jsonl"), verbosity=0)


def test_it_refuses_a_file_without_a_usable_answer(tmp_path, capsys):
    path = _write(tmp_path, [{"id": "x", "query": "q"}])
    with pytest.raises(CommandError, match="holds no usable answer"):
        call_command("evaluate_revision", "--answers", str(path), verbosity=0)
    assert "skipped: missing field(s): answer, contexts" in capsys.readouterr().err


def test_it_refuses_a_negative_revision_limit(tmp_path):
    path = _write(tmp_path, [{"id": "x", "query": "q", "answer": "a", "contexts": []}])
    with pytest.raises(CommandError, match="--max-revisions must be 0 or more"):
        call_command("evaluate_revision", "--answers", str(path), "--max-revisions", "-1", verbosity=0)


@pytest.mark.slow
def test_it_revises_benchmark_answers_and_reports_the_figures(tmp_path, capsys):
    contexts = [
        "[1] https://example.org/fees\n\nThe annual fee for the Gold card is $150. "
        "The fee is charged every January.",
        "[2] https://example.org/lounges\n\nGold card holders get free airport lounge access worldwide.",
    ]
    records = [
        {
            "id": "a1",
            "query": "What does the Gold card cost?",
            "contexts": contexts,
            "answer": "The annual fee for the Gold card is $150 [1]. Gold card holders get free airport "
            "lounge access worldwide [2]. The card also always includes a personal concierge who "
            "books restaurants in every city of the world [2].",
            "sentences": [{"text": "The annual fee for the Gold card is $150 [1].", "hallucinated": False}],
        },
        {
            "id": "a2",
            "query": "Do Gold card holders get lounge access?",
            "contexts": contexts,
            "answer": "Gold card holders get free airport lounge access worldwide [2].",
        },
    ]
    out_json = tmp_path / "figures.json"
    call_command(
        "evaluate_revision", "--answers", str(_write(tmp_path, records)), "--json", str(out_json), verbosity=0
    )
    report = capsys.readouterr().out
    figures = json.loads(out_json.read_text())
    assert figures["answers"] == 2
    assert figures["supported_claims_removed"] == 0 and figures["untraceable"] == []
    assert figures["unsupported_rate_after"] <= 0.05
    assert "unsupported rate among material claims: before" in report
    assert "edits traceable to a claim and a strategy: PASS" in report
    assert figures["markers_checked"] >= 2 and figures["unbacked_markers"] == []
    assert "backing no claim of their sentence (the judge on that passage): 0 of" in report

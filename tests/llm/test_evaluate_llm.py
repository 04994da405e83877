"""``manage.py evaluate --judge llm``: the nli judge with an endpoint's verdicts weighed in, measured on
a claims file against any endpoint by URL (here the scripted server)."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from tests.llm.fake_llm import per_claim

SUPPORTED = (
    "The hippocampus consolidates long-term memory.",
    "The hippocampus consolidates long-term memory.",
)
UNSUPPORTED = (
    "The hippocampus is reported to the board every month.",
    "The hippocampus consolidates memory.",
)


@pytest.fixture
def claims_file(tmp_path):
    rows = [
        {
            "id": f"c{i}",
            "dataset": "wice",
            "claim": (SUPPORTED if i % 2 else UNSUPPORTED)[0],
            "evidence": [{"id": "[1]", "text": (SUPPORTED if i % 2 else UNSUPPORTED)[1]}],
            "label": "SUPPORTED" if i % 2 else "NEI",
            "meta": {"question": f"q{i}"},
        }
        for i in range(24)
    ]
    claims = tmp_path / "claims.jsonl"
    claims.write_text("".join(json.dumps(r) + "\n" for r in rows))
    answers = tmp_path / "answers.jsonl"
    answers.write_text("")
    return str(claims), str(answers)


@pytest.mark.slow  # a benchmark-sized run: the evaluation (or the fit) over the whole set
def test_evaluate_judge_llm_measures_the_endpoint_by_url_beside_the_offline_judge(llm_server, claims_file):
    # an endpoint that calls everything SUPPORTED: it must not flip a confident offline doubt
    llm_server.route(
        "TASK: isolated_verification",
        per_claim("results", lambda _: {"verdict": "SUPPORTED", "reasoning": "Stated in [1]."}),
    )
    claims, answers = claims_file
    out = io.StringIO()
    call_command(
        "evaluate",
        "--judge",
        "llm",
        "--llm-url",
        llm_server.base_url,
        "--claims",
        claims,
        "--answers",
        answers,
        "--claims-only",
        "--folds",
        "2",
        stdout=out,
        stderr=io.StringIO(),
    )
    text = out.getvalue()
    assert "Claims, DEV, judge llm" in text
    line = next(x for x in text.splitlines() if x.startswith("LLM judge: answered"))
    assert "answered 24 of 24 claims" in line and "offline" in line and "with the LLM weighed in" in line
    # the 12 unsupported claims: the offline judge's confident doubt stands and goes to review
    assert "labels changed 0;" in line and "sent to review) 12." in line
    # two distinct claims (text and evidence) among the 24: judged once each, in one call
    assert len(llm_server.calls("TASK: isolated_verification")) == 1


def test_evaluate_judge_llm_without_an_endpoint_says_so_in_one_sentence(claims_file, settings):
    settings.THEORIA = {**settings.THEORIA, "LLM_BASE_URL": ""}
    claims, answers = claims_file
    with pytest.raises(CommandError, match="--judge llm needs an endpoint"):
        call_command(
            "evaluate", "--judge", "llm", "--claims", claims, "--answers", answers, stdout=io.StringIO()
        )

"""LLM accounting on the pages: the dashboard's LLM-usage widget and each run's calls, tokens,
latency and failures on the answer and claim pages (issue 4, "visible on the run and later on
the dashboard")."""

from __future__ import annotations

import datetime as dt
import json
import re

import pytest
from django.utils import timezone

from tests.ui.conftest import build_answer

pytestmark = pytest.mark.django_db

FAILURE = {
    "purpose": "judge",
    "kind": "timeout",
    "message": "no reply within 2.0 s",
    "attempts": 3,
    "at": "2026-11-20T10:00:00+00:00",
}


def _with_llm(answer, *, calls, prompt, completion, latency_ms, failures=()):
    """Give the answer's run the LLM accounting an audit with an LLM would have stored."""
    from audit.models import VerificationRun

    VerificationRun.objects.filter(answer=answer).update(
        llm_calls=calls,
        prompt_tokens=prompt,
        completion_tokens=completion,
        llm_latency_ms=latency_ms,
        llm_failures=list(failures),
    )
    return answer


@pytest.fixture
def no_llm(settings):
    settings.THEORIA = {**settings.THEORIA, "LLM_BASE_URL": "", "LLM_MODEL": ""}
    return settings


@pytest.fixture
def with_llm(settings):
    settings.THEORIA = {
        **settings.THEORIA,
        "LLM_BASE_URL": "http://127.0.0.1:8080/v1",
        "LLM_MODEL": "qwen2.5-7b",
    }
    return settings


def _figure(html: str, key: str) -> dict:
    found = re.search(rf'<script id="{key}" type="application/json">(.*?)</script>', html, re.S)
    assert found, f"no figure {key} in the page"
    return json.loads(found.group(1))


def _totals(html: str) -> dict[str, str]:
    table = re.search(r'<table class="table compact" id="llm-totals">(.*?)</table>', html, re.S).group(1)
    return dict(re.findall(r'<th scope="row">(.*?)</th><td>(.*?)</td>', table))


def test_it_says_no_llm_is_configured_when_none_is_and_no_run_called_one(client, lead, workspace, no_llm):
    build_answer(workspace)
    client.force_login(lead)
    html = client.get("/dashboard/").content.decode()
    assert "No LLM configured — all methods ran offline." in html
    assert 'id="chart-llm-usage"' not in html and 'id="llm-totals"' not in html


def test_it_charts_llm_calls_and_tokens_per_day_of_the_range_with_totals(client, lead, workspace, with_llm):
    today = timezone.now()
    yesterday = today - dt.timedelta(days=1)
    _with_llm(
        build_answer(workspace, created_at=yesterday)[0],
        calls=4,
        prompt=1200,
        completion=300,
        latency_ms=2500.0,
        failures=[FAILURE],
    )
    _with_llm(
        build_answer(workspace, created_at=yesterday)[0],
        calls=2,
        prompt=800,
        completion=200,
        latency_ms=1500.0,
    )
    _with_llm(
        build_answer(workspace, created_at=today)[0], calls=1, prompt=100, completion=50, latency_ms=400.0
    )
    old = today - dt.timedelta(days=60)  # outside the default 30 days
    _with_llm(
        build_answer(workspace, created_at=old)[0], calls=9, prompt=9000, completion=900, latency_ms=9000.0
    )
    client.force_login(lead)

    html = client.get("/dashboard/").content.decode()

    assert "No LLM configured" not in html
    figure = _figure(html, "llm-usage")
    series = {trace["name"]: trace for trace in figure["data"]}
    days = series["LLM calls"]["x"]
    assert days[-2:] == [yesterday.date().isoformat(), today.date().isoformat()] and len(days) == 30
    assert series["LLM calls"]["y"][-2:] == [6, 1] and sum(series["LLM calls"]["y"]) == 7
    assert series["Prompt tokens"]["y"][-2:] == [2000, 100] and series["Completion tokens"]["y"][-2:] == [
        500,
        50,
    ]
    assert series["LLM calls"]["yaxis"] == "y2" and figure["layout"]["title"]["text"].startswith("LLM usage")
    assert figure["layout"]["yaxis2"]["dtick"] == 2, "whole, round call ticks up to the busiest day's 6"
    assert _totals(html) == {
        "LLM calls": "7",
        "Prompt tokens": "2100",
        "Completion tokens": "550",
        "LLM time": "4.4 s",
        "Failed calls": "1",
        "Verification runs": "3",
    }

    # the old run counts once its day is in the chosen range
    start = (old - dt.timedelta(days=1)).date().isoformat()
    wide = client.get("/dashboard/", {"date_from": start}).content.decode()
    assert _totals(wide)["LLM calls"] == "16" and _totals(wide)["Prompt tokens"] == "11100"


def test_it_says_a_configured_llm_was_not_called_in_the_range(client, lead, workspace, with_llm):
    build_answer(workspace)
    client.force_login(lead)
    html = client.get("/dashboard/").content.decode()
    assert (
        "No LLM configured" not in html
        and "An LLM is configured (qwen2.5-7b), but no run of this period called it" in html
    )
    assert _totals(html)["LLM calls"] == "0" and _figure(html, "llm-usage")["data"][2]["y"][-1] == 0


def test_it_charts_calls_made_earlier_when_no_llm_is_configured_now(client, lead, workspace, no_llm):
    _with_llm(build_answer(workspace)[0], calls=3, prompt=30, completion=12, latency_ms=90.0)
    client.force_login(lead)
    html = client.get("/dashboard/").content.decode()
    assert "No LLM configured — all methods ran offline." not in html
    assert "No LLM is configured now; these calls were made while one was." in html
    assert _totals(html)["LLM calls"] == "3"


def test_it_shows_the_runs_llm_calls_tokens_latency_and_failures_on_the_answer_and_claim_pages(
    client, analyst, workspace
):
    answer, claims = build_answer(workspace)
    _with_llm(answer, calls=5, prompt=1234, completion=321, latency_ms=2345.6, failures=[FAILURE, FAILURE])
    client.force_login(analyst)
    for path in (f"/answers/{answer.public_id}/", f"/claims/{claims[0].pk}/"):
        html = client.get(path).content.decode()
        assert '<dd id="run-llm-calls">5</dd>' in html, path
        assert '<dd id="run-llm-tokens">1234 prompt · 321 completion</dd>' in html, path
        assert '<dd id="run-llm-latency">2346 ms</dd>' in html, path
        assert (
            "2 failed" in html and "judge</strong>: timeout after 3 attempts — no reply within 2.0 s" in html
        ), path


def test_it_says_a_run_used_no_llm_on_the_answer_and_claim_pages(client, analyst, workspace):
    answer, claims = build_answer(workspace)
    client.force_login(analyst)
    for path in (f"/answers/{answer.public_id}/", f"/claims/{claims[0].pk}/"):
        html = client.get(path).content.decode()
        assert '<dd id="run-llm-calls">not used: offline methods ran</dd>' in html, path
        assert "run-llm-failure-list" not in html, path


def test_it_ticks_the_calls_axis_at_round_whole_steps():
    from audit.web.charts import count_step

    assert [count_step(top) for top in (0, 4, 6, 11, 26, 140, 260, 2600)] == [1, 1, 2, 5, 10, 50, 100, 1000]

"""The LLM judge's weight, fitted for the connected endpoint and model (`evaluate --judge llm --fit`),
against the scripted server: an informative model earns a weight, a random one none; the fit is
stored per endpoint and model, shown in the workspace settings, put in force, rolled back, and the
LLM's readings are cached so a run resumes."""

from __future__ import annotations

import hashlib
import io
import json

import pytest
from django.core.management import call_command

from audit.evaluation.entailment_fit import BENCHMARKS_DIR
from tests.llm.fake_llm import ok, per_claim

CLAIMS = BENCHMARKS_DIR / "claims_dev.jsonl"
SAMPLE = ["--every", "25", "--max-claims", "40"]
pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(not CLAIMS.is_file(), reason="the DEV claims are not here"),
]


def gold_by_claim() -> dict[str, str]:
    rows = [json.loads(line) for line in CLAIMS.read_text().splitlines() if line.strip()]
    return {r["claim"].strip(): r["label"] for r in rows}


def script(llm_server, verdict_of) -> None:
    llm_server.route(
        "TASK: isolated_verification",
        per_claim("results", lambda text: {"verdict": verdict_of(text), "reasoning": "From the passage."}),
    )


def informative(gold):
    return lambda text: {"SUPPORTED": "SUPPORTED", "REFUTED": "CONTRADICTED"}.get(
        gold.get(text), "UNSUPPORTED"
    )


def random_verdicts(text: str) -> str:
    return ("SUPPORTED", "UNSUPPORTED", "CONTRADICTED", "PARTIAL")[
        hashlib.sha256(text.encode()).digest()[0] % 4
    ]


def fit(llm_server, tmp_path, *extra) -> str:
    out = io.StringIO()
    call_command(
        "evaluate",
        "--judge",
        "llm",
        "--fit",
        "--llm-url",
        llm_server.base_url,
        "--llm-model",
        "test-model",
        "--fit-cache",
        str(tmp_path),
        *SAMPLE,
        *extra,
        stdout=out,
        stderr=io.StringIO(),
    )
    return out.getvalue()


@pytest.fixture
def prompt_mode(settings):
    settings.THEORIA = {**settings.THEORIA, "LLM_STRUCTURED": "prompt", "LLM_MAX_RETRIES": 0}


@pytest.mark.slow  # a benchmark-sized run: the evaluation (or the fit) over the whole set
def test_an_informative_model_earns_a_weight_and_the_fit_is_stored_in_force_and_shown(
    llm_server, tmp_path, prompt_mode, workspace, settings
):
    from audit.selectors.llm import llm_status
    from audit.services.llm import llm_setup_for

    script(llm_server, informative(gold_by_claim()))
    printed = fit(llm_server, tmp_path)
    assert "stored as LLM weight v1" in printed, printed
    version = workspace.llm_weight_versions.get()
    assert version.weight > 0 and version.model == "test-model", printed
    held = version.metrics["held_out"]
    assert held["with_llm"]["bacc"] > held["offline"]["bacc"], held
    settings.THEORIA = {**settings.THEORIA, "LLM_BASE_URL": llm_server.base_url, "LLM_MODEL": "test-model"}
    shown = llm_status(workspace=workspace)["judge_weight"]
    assert (shown["source"], shown["weight"]) == ("fit v1", version.weight)
    config = llm_setup_for(workspace=workspace).client.config
    assert (config.judge_weight, config.judge_margin, config.weight_source) == (
        version.weight,
        version.margin,
        "fit v1",
    )
    # another model at the same endpoint has no fit: unfitted
    settings.THEORIA = {**settings.THEORIA, "LLM_MODEL": "other-model"}
    assert llm_setup_for(workspace=workspace).client.config.weight_source == "unfitted"


def test_a_random_model_is_fitted_to_no_weight(llm_server, tmp_path, prompt_mode, workspace):
    script(llm_server, random_verdicts)
    printed = fit(llm_server, tmp_path)
    version = workspace.llm_weight_versions.get()
    assert version.weight == 0.0 and "weight 0" in printed, printed
    assert (
        version.metrics["held_out"]["with_llm"]["bacc"] <= version.metrics["held_out"]["offline"]["bacc"] + 2
    )


def test_the_fit_resumes_from_its_cache_and_stops_at_max_calls(llm_server, tmp_path, prompt_mode, workspace):
    script(llm_server, informative(gold_by_claim()))
    first = fit(llm_server, tmp_path, "--max-calls", "1", "--dry-run")
    assert len(llm_server.calls("TASK: isolated_verification")) == 1
    assert "not stored" in first and not workspace.llm_weight_versions.exists()
    fit(llm_server, tmp_path, "--dry-run")
    asked = len(llm_server.calls("TASK: isolated_verification"))
    assert asked > 1
    fit(llm_server, tmp_path)  # everything is in the cache now: no call
    assert len(llm_server.calls("TASK: isolated_verification")) == asked
    assert workspace.llm_weight_versions.count() == 1


def test_a_fit_is_rolled_back_to_an_earlier_one_or_to_none(llm_server, tmp_path, prompt_mode, workspace):
    from audit.selectors.llm import llm_weighing
    from audit.services.llm_weight import llm_weight_store

    def store(weight):
        return llm_weight_store(
            workspace=workspace,
            endpoint=llm_server.base_url + "/",
            model="test-model",
            judge_prompt="batched",
            weight=weight,
            margin=0.05,
            metrics={},
            n_claims=30,
            llm_calls=4,
        )

    first, second = store(0.3), store(0.6)
    first.refresh_from_db()
    assert (first.status, second.status) == ("inactive", "active")
    url = llm_server.base_url
    out = io.StringIO()
    args = ["--workspace", workspace.slug, "--llm", "--llm-url", url, "--llm-model", "test-model"]
    call_command("calibrate", *args, "--rollback", str(first.number), stdout=out)
    assert llm_weighing(workspace=workspace, endpoint=url, model="test-model")["weight"] == 0.3
    call_command("calibrate", *args, "--rollback", "none", stdout=out)
    now = llm_weighing(workspace=workspace, endpoint=url, model="test-model")
    assert (now["source"], now["weight"]) == ("unfitted", 0.0)
    assert "unfitted" in out.getvalue()


def test_a_model_answering_garbage_is_read_to_the_end_and_fitted_to_no_say(
    llm_server, tmp_path, prompt_mode, workspace
):
    # gemma-3-270m's MiniCheck reading: it echoes the task line; the fit's breaker ignores the failure
    # rate (the unusable replies are what it measures), so every claim is asked and the fit is stored
    llm_server.route("TASK: minicheck", ok("TASK: miniche"))
    printed = fit(llm_server, tmp_path, "--llm-judge-prompt", "minicheck")
    version = workspace.llm_weight_versions.get()
    assert (version.weight, version.margin, version.judge_prompt) == (0.0, 1.0, "minicheck"), printed
    assert "asked about 40 and gave a usable reading of 0" in printed, printed

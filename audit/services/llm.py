"""Build the LLM client for one run of one workspace, and store what it cost on the run.

The decision "LLM or offline" is made here, once per run, from the deployment settings
(``settings.THEORIA["LLM_*"]``) and the workspace:

* no ``LLM_BASE_URL``: offline, nothing to warn about (the claim cards say which methods ran);
* ``allow_external_calls`` off (data residency) and the endpoint neither loopback nor declared
  inside the boundary (``LLM_INSIDE_RESIDENCY``): offline, with a warning;
* the workspace's daily token budget (``llm_token_budget``, 0 = unlimited) already spent today
  (UTC): offline, with a warning; otherwise the client gets the remaining tokens as its budget
  and stops (with a warning) if the run reaches them.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from urllib.parse import urlparse

from django.conf import settings
from django.utils import timezone

from audit.constants import LLM_CONCURRENCY, LLM_TIME_BUDGET_S
from audit.models import VerificationRun, Workspace
from audit.pipeline.llm import LLMClient, LLMConfig
from audit.pipeline.llm.endpoint import FORMS, PROMPT
from audit.selectors.llm import llm_tokens_used, llm_weighing, start_of_day

DEFAULT_MODEL = "default"  # llama.cpp's server serves its one model whatever the name


@dataclass
class LLMSetup:
    """The client for a run (None: offline), why it is offline, and warnings for the run."""

    client: LLMClient | None
    offline_reason: str = ""
    warnings: list[dict[str, Any]] = field(default_factory=list)


def endpoint_is_local(base_url: str) -> bool:
    """True for a loopback endpoint (localhost, 127.0.0.0/8, ::1): no data leaves the host."""
    host = (urlparse(base_url).hostname or "").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def llm_setup_for(
    *, workspace: Workspace, now: datetime | None = None, time_budget_s: float | None = None
) -> LLMSetup:
    """Return the LLM client one run of ``workspace`` may use, or the reason it runs offline.

    The client's time budget (``time_budget_s``, default the setting ``LLM_TIME_BUDGET_S`` or
    ``audit.constants.LLM_TIME_BUDGET_S``) starts now: build the setup when the request starts
    and pass it on (drafting, the audit and its revision share it).
    """
    conf = settings.THEORIA
    base_url = (conf.get("LLM_BASE_URL") or "").strip()
    if not base_url:
        return LLMSetup(None, "no LLM configured")
    if urlparse(base_url).scheme not in ("http", "https") or not urlparse(base_url).hostname:
        return LLMSetup(
            None,
            "LLM endpoint misconfigured",
            [
                {
                    "code": "llm_misconfigured",
                    "message": f"THEORIA_LLM_BASE_URL {base_url!r} is not an http(s) URL: offline methods used.",
                }
            ],
        )
    if not workspace.allow_external_calls and not (
        conf.get("LLM_INSIDE_RESIDENCY") or endpoint_is_local(base_url)
    ):
        return LLMSetup(
            None,
            "data residency: this workspace allows no external calls",
            [
                {
                    "code": "llm_residency",
                    "message": "The LLM endpoint is outside the data-residency boundary: offline methods used.",
                }
            ],
        )
    remaining = None
    if workspace.llm_token_budget:
        used = llm_tokens_used(workspace=workspace, since=start_of_day(now or timezone.now()))
        remaining = workspace.llm_token_budget - used
        if remaining <= 0:
            return LLMSetup(
                None,
                "daily LLM token budget exceeded",
                [
                    {
                        "code": "llm_budget_exceeded",
                        "message": f"Daily LLM token budget of {workspace.llm_token_budget} reached "
                        f"({used} used today): offline methods used.",
                    }
                ],
            )
    structured = (conf.get("LLM_STRUCTURED") or "auto").strip()
    if structured not in ("auto", PROMPT, *FORMS):
        structured = "auto"
    config = LLMConfig(
        base_url=base_url,
        model=conf.get("LLM_MODEL") or DEFAULT_MODEL,
        api_key=conf.get("LLM_API_KEY") or "",
        timeout_s=float(conf.get("LLM_TIMEOUT_S", 20.0)),
        max_retries=int(conf.get("LLM_MAX_RETRIES", 2)),
        concurrency=int(conf.get("LLM_CONCURRENCY", LLM_CONCURRENCY)),
        token_budget=remaining,
        time_budget_s=time_budget_s or float(conf.get("LLM_TIME_BUDGET_S") or 0) or LLM_TIME_BUDGET_S,
        structured=structured,
        stream=bool(conf.get("LLM_STREAM", True)),
        judge_prompt=conf.get("LLM_JUDGE_PROMPT") or "batched",  # checked when settings load
        **_weighing(workspace, base_url, conf.get("LLM_MODEL") or DEFAULT_MODEL),
    )
    return LLMSetup(LLMClient(config))


def _weighing(workspace: Workspace, base_url: str, model: str) -> dict[str, Any]:
    """The LLMConfig fields of the judge's weight in force: the workspace's fit of this endpoint and
    model, or the unfitted defaults (the LLM moves no verdict; disagreements go to review)."""
    w = llm_weighing(workspace=workspace, endpoint=base_url, model=model)
    return {"judge_weight": w["weight"], "judge_margin": w["margin"], "weight_source": w["source"]}


def llm_run_fields(setup: LLMSetup) -> dict[str, Any]:
    """``VerificationRun`` field values for the LLM cost of a run (zeros when offline)."""
    if setup.client is None:
        return {
            "llm_calls": 0,
            "prompt_tokens": 0,
            "completion_tokens": 0,
            "llm_latency_ms": 0.0,
            "llm_failures": [],
        }
    return setup.client.accounting.run_fields()


def llm_run_warnings(setup: LLMSetup) -> list[dict[str, Any]]:
    """Warnings for the run: the setup's (residency, budget) and the client's (budget reached)."""
    return list(setup.warnings) + (list(setup.client.accounting.warnings) if setup.client else [])


def run_record_llm_usage(*, run: VerificationRun, setup: LLMSetup) -> VerificationRun:
    """Store the LLM accounting and warnings of ``setup`` on ``run`` (inside the caller's transaction)."""
    fields = llm_run_fields(setup)
    for name, value in fields.items():
        setattr(run, name, value)
    extra = [w for w in llm_run_warnings(setup) if w not in (run.warnings or [])]
    run.warnings = list(run.warnings or []) + extra
    run.full_clean()
    run.save(update_fields=[*fields, "warnings"])
    return run

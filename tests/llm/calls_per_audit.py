"""LLM calls per audit, counted on the wire by the scripted server (docs/LLM.md#calls-per-audit).

    OMP_WAIT_POLICY=PASSIVE .venv/bin/python -m tests.llm.calls_per_audit

Runs one two-claim answer (one claim supported, one with a wrong year) through ``audit_answer``
with every LLM method, under the default judge and under judge ``llm``, then through the revision
loop (``revise_audit``) with the LLM rewriting, and prints the requests the server received per
run and per task. :func:`count_calls` is what ``tests/llm/test_calls.py`` checks.
"""

from __future__ import annotations

import json
import re
from collections import Counter

from audit.pipeline.llm import LLMClient, LLMConfig
from audit.pipeline.llm.endpoint import endpoints_reset
from tests.llm.fake_llm import FakeLLMServer, Reply, ok
from tests.llm.test_pipeline import ANSWER, CONTEXTS, QUERY, script_a_working_llm

TASK_OF = {
    "TASK: extract_claims": "extract_claims",
    "TASK: isolated_verification": "judge",
    "TASK: cove_questions": "cove_questions",
    "TASK: cove_answer": "cove_answer",
    "TASK: cove_compare": "cove_compare",
    "TASK: selfcheck_sample": "selfcheck_sample",
    "TASK: selfcheck_judge": "selfcheck_judge",
    "TASK: rewrite_answer": "rewrite_answer",
    "TASK: probe": "probe",
}
CORRECTED = "The hippocampus consolidates long-term memory [1]. Arantius named the hippocampus in 1564 [2]."


def _extract(body: dict) -> str:
    """Extraction as a model does it: the answer's sentences, citation markers dropped."""
    answer = body["messages"][-1]["content"].rsplit("Answer:", 1)[-1]
    sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+", answer.strip()) if s.strip()]
    return json.dumps({"claims": [{"text": re.sub(r"\s*\[\d+\]", "", s)} for s in sentences]})


def _task(request: dict) -> str:
    text = json.dumps(request["body"].get("messages", []))
    return next((task for marker, task in TASK_OF.items() if marker in text), "other")


def count_calls(run: str) -> Counter:
    """{task: requests} of one run: ``audit`` (default judge), ``audit-judge-llm`` or ``revision``."""
    from audit.constants import Thresholds
    from audit.pipeline.audit import audit_answer
    from audit.pipeline.revision import RevisionOptions, revise_audit

    endpoints_reset()
    server = FakeLLMServer().start()
    try:
        server.route("TASK: extract_claims", Reply(content=_extract))
        server.route(  # distinct samples, as a sampling temperature gives
            "TASK: selfcheck_sample",
            Reply(content=lambda body: f"The hippocampus consolidates memory (sample {body.get('seed')})."),
        )
        script_a_working_llm(server)
        server.route("TASK: rewrite_answer", ok(CORRECTED))
        client = LLMClient(
            LLMConfig(base_url=server.base_url, model="m", timeout_s=10.0, structured="prompt")
        )
        if run == "revision":
            initial = audit_answer(QUERY, ANSWER, CONTEXTS, llm=client)
            revise_audit(
                query=QUERY,
                answer=ANSWER,
                contexts=CONTEXTS,
                initial=initial,
                llm=client,
                options=RevisionOptions(),
            )
        else:
            thresholds = Thresholds(judge="llm") if run == "audit-judge-llm" else None
            audit_answer(QUERY, ANSWER, CONTEXTS, llm=client, thresholds=thresholds)
        assert client.accounting.calls == len(server.requests), "every request is counted once"
        return Counter(_task(r) for r in server.requests)
    finally:
        server.stop()
        endpoints_reset()


def main() -> None:
    for run in ("audit", "audit-judge-llm", "revision"):
        calls = count_calls(run)
        detail = ", ".join(f"{task} {n}" for task, n in sorted(calls.items()))
        print(f"{run}: {sum(calls.values())} calls ({detail})")


if __name__ == "__main__":
    main()

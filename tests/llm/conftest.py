"""Fixtures of the LLM tests: a scripted OpenAI-compatible server and clients pointed at it."""

from __future__ import annotations

import time

import pytest

from tests.llm.fake_llm import FakeLLMServer


@pytest.fixture
def llm_server():
    from audit.pipeline.llm.endpoint import endpoints_reset

    endpoints_reset()  # breakers and probed forms are per process: each test starts fresh
    server = FakeLLMServer().start()
    yield server
    server.stop()
    endpoints_reset()


@pytest.fixture
def make_client(llm_server):
    """Return a factory of LLMClient pointed at the scripted server (fast retries by default)."""
    from audit.pipeline.llm import LLMClient, LLMConfig

    def factory(**overrides):
        sleeps: list[float] = []

        def sleep(seconds: float) -> None:  # really waits; keeps the waits for assertions
            sleeps.append(seconds)
            time.sleep(seconds)

        options = {
            "base_url": llm_server.base_url,
            "model": "test-model",
            "timeout_s": 10.0,
            "max_retries": 2,
            "concurrency": 2,
            "structured": "prompt",
            **overrides,
        }
        client = LLMClient(LLMConfig(**options), sleep=sleep)
        client.sleeps = sleeps
        return client

    return factory

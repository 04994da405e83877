"""LLM-backed verification methods through any OpenAI-compatible endpoint (docs/LLM.md).

Plain Python. Every method takes an :class:`LLMClient` or None and falls back to its offline
counterpart (or reports that it did not run) on any failure, which the client's
:class:`LLMAccounting` records. Modules: ``client`` (transport, retries, budget, accounting),
``prompts`` (templates + reply schemas), ``extraction``, ``judge`` (isolated verification),
``cove``, ``selfcheck``, ``drafting`` (draft and rewrite).
"""

from audit.pipeline.llm.client import LLMAccounting, LLMClient, LLMConfig, LLMError

__all__ = ["LLMAccounting", "LLMClient", "LLMConfig", "LLMError"]

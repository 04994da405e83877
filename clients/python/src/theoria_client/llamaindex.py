"""A LlamaIndex callback handler that audits each query's answer (``pip install theoria-client[llamaindex]``).

    from llama_index.core.callbacks import CallbackManager
    theoria = TheoriaLlamaIndexHandler(mode="audit-local")          # THEORIA_URL, THEORIA_TOKEN
    engine = index.as_query_engine(callback_manager=CallbackManager([theoria]))
    response = engine.query("What does LTP require?")
    response.metadata["theoria"]     # {"faithfulness": …, "claims": [{"label": …}, …], …}

When an outermost query ends, the handler sends its question, the response's text and its source
nodes (the retrieved passages, in rank order) to ``POST /api/v1/audits`` in the chosen mode, and
attaches the verdict to ``response.metadata["theoria"]``; ``results`` (by event id) and
``last_result`` keep it too. An audit that fails raises unless ``raise_error=False``.
"""

from __future__ import annotations

from typing import Any

from llama_index.core.callbacks.base_handler import BaseCallbackHandler
from llama_index.core.callbacks.schema import CBEventType, EventPayload
from llama_index.core.schema import NodeWithScore

from theoria_client._hook import AnswerAuditor
from theoria_client.client import Theoria
from theoria_client.models import AuditResult

BASE_TRACE_EVENT = "root"  # the parent id LlamaIndex gives an outermost event (callbacks.base)


def node_context(node: NodeWithScore, position: int) -> dict[str, Any]:
    """A source node as an audit context: its id, text, title (``title`` or ``file_name``) and URI."""
    meta = node.node.metadata or {}
    context: dict[str, Any] = {
        "id": str(node.node.node_id or position)[:200],
        "text": node.node.get_content(),
    }
    title = meta.get("title") or meta.get("file_name")
    if title:
        context["title"] = str(title)[:500]
    if meta.get("uri") or meta.get("url") or meta.get("source"):
        context["uri"] = str(meta.get("uri") or meta.get("url") or meta.get("source"))[:2000]
    return context


class TheoriaLlamaIndexHandler(BaseCallbackHandler):
    """Audits the response of each outermost ``QUERY`` event with its source nodes."""

    def __init__(
        self,
        base_url: str | None = None,
        token: str | None = None,
        *,
        mode: str | None = "audit-local",
        client: Theoria | None = None,
        raise_error: bool = True,
        **audit_options: Any,
    ) -> None:
        super().__init__(event_starts_to_ignore=[], event_ends_to_ignore=[])
        self.auditor: AnswerAuditor[str] = AnswerAuditor(
            base_url, token, mode=mode, client=client, raise_error=raise_error, audit_options=audit_options
        )
        self.client, self.mode, self.raise_error = self.auditor.client, mode, raise_error
        self.results, self.errors = self.auditor.results, self.auditor.errors
        self._questions: dict[str, str] = {}
        self._parents: dict[str, str] = {}

    @property
    def last_result(self) -> AuditResult | None:
        """The verdict of the latest audit this handler sent."""
        return self.auditor.last_result

    def on_event_start(
        self,
        event_type: CBEventType,
        payload: dict[str, Any] | None = None,
        event_id: str = "",
        parent_id: str = "",
        **kwargs: Any,
    ) -> str:
        if event_type == CBEventType.QUERY:
            self._parents[event_id] = parent_id
            if parent_id in (BASE_TRACE_EVENT, "") or parent_id not in self._parents:
                question = (payload or {}).get(EventPayload.QUERY_STR)
                if question is not None:
                    self._questions[event_id] = str(getattr(question, "query_str", question))
        return event_id

    def on_event_end(
        self,
        event_type: CBEventType,
        payload: dict[str, Any] | None = None,
        event_id: str = "",
        **kwargs: Any,
    ) -> None:
        if event_type != CBEventType.QUERY:
            return
        self._parents.pop(event_id, None)
        question = self._questions.pop(event_id, None)
        response = (payload or {}).get(EventPayload.RESPONSE)
        answer = getattr(response, "response", None)
        if response is None or not question or not isinstance(answer, str) or not answer.strip():
            return
        nodes = getattr(response, "source_nodes", None) or []
        contexts = [node_context(node, i) for i, node in enumerate(nodes, start=1)]
        result = self.auditor.audit_answer(event_id, question, answer, contexts)
        if result is None:
            return
        response.metadata = {**(response.metadata or {}), "theoria": result.verdict()}

    def start_trace(self, trace_id: str | None = None) -> None:
        return None

    def end_trace(self, trace_id: str | None = None, trace_map: dict[str, list[str]] | None = None) -> None:
        return None

"""A LangChain callback handler that audits each answer of a chain (``pip install theoria-client[langchain]``).

    theoria = TheoriaCallbackHandler(mode="audit-local")          # THEORIA_URL, THEORIA_TOKEN
    answer = chain.invoke("What does LTP require?", config={"callbacks": [theoria]})
    theoria.last_result.verdict()    # {"faithfulness": …, "claims": [{"label": …}, …], …}

When the outermost run the handler sees ends, the handler sends its input (the question), its
output (the answer) and the documents every retriever inside it returned (the contexts, in the
order retrieved) to ``POST /api/v1/audits`` in the chosen mode. The verdict is kept in
``results`` (by run id) and ``last_result``, and attached to the output where it can carry it: a
message's ``response_metadata["theoria"]``, a dict output's ``"theoria"`` key. A plain string
cannot carry metadata: read ``last_result``.

An audit that fails raises (``raise_error = True``): an answer the team asked to audit is never
served as if it had been. Pass ``raise_error=False`` to log the error in ``errors`` instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.documents import Document
from langchain_core.messages import BaseMessage

from theoria_client._hook import AnswerAuditor
from theoria_client.client import Theoria
from theoria_client.models import AuditResult

QUESTION_KEYS = ("question", "query", "input")
ANSWER_KEYS = ("answer", "output", "result", "text")


def _text(value: Any, keys: Sequence[str]) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, BaseMessage):
        return value.content if isinstance(value.content, str) else value.text
    if isinstance(value, dict):
        for key in keys:
            if isinstance(value.get(key), (str, BaseMessage)):
                return _text(value[key], keys)
    return None


def document_context(document: Document, position: int) -> dict[str, Any]:
    """A retrieved document as an audit context: its id (else its position), text, title and source."""
    meta = document.metadata or {}
    context: dict[str, Any] = {
        "id": str(document.id or meta.get("id") or position)[:200],
        "text": document.page_content,
    }
    if meta.get("title"):
        context["title"] = str(meta["title"])[:500]
    if meta.get("source") or meta.get("uri"):
        context["uri"] = str(meta.get("uri") or meta.get("source"))[:2000]
    return context


class TheoriaCallbackHandler(BaseCallbackHandler):
    """Audits the answer of each outermost chain run, with the documents its retrievers returned."""

    raise_error = True

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
        super().__init__()
        self.auditor: AnswerAuditor[UUID] = AnswerAuditor(
            base_url, token, mode=mode, client=client, raise_error=raise_error, audit_options=audit_options
        )
        self.client, self.mode, self.raise_error = self.auditor.client, mode, raise_error
        self.results, self.errors = self.auditor.results, self.auditor.errors
        self._root_of: dict[UUID, UUID] = {}
        self._question: dict[UUID, str] = {}
        self._documents: dict[UUID, list[Document]] = {}

    @property
    def last_result(self) -> AuditResult | None:
        """The verdict of the latest audit this handler sent."""
        return self.auditor.last_result

    def _root(self, run_id: UUID, parent_run_id: UUID | None) -> UUID:
        root = self._root_of.get(parent_run_id, run_id) if parent_run_id else run_id
        self._root_of[run_id] = root
        return root

    def on_chain_start(
        self,
        serialized: dict[str, Any] | None,
        inputs: dict[str, Any] | Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        root = self._root(run_id, parent_run_id)
        if root == run_id:
            question = _text(inputs, QUESTION_KEYS)
            if question:
                self._question[root] = question
            self._documents[root] = []

    def on_retriever_start(
        self,
        serialized: dict[str, Any] | None,
        query: str,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        root = self._root(run_id, parent_run_id)
        self._question.setdefault(root, query)

    def on_retriever_end(
        self, documents: Sequence[Document], *, run_id: UUID, parent_run_id: UUID | None = None, **kwargs: Any
    ) -> None:
        root = self._root_of.get(run_id, run_id)
        self._documents.setdefault(root, []).extend(documents)

    def on_chain_error(
        self, error: BaseException, *, run_id: UUID, parent_run_id: UUID | None = None, **kwargs: Any
    ) -> None:
        if self._root_of.get(run_id) == run_id:
            self._forget(run_id)

    def on_chain_end(
        self, outputs: dict[str, Any] | Any, *, run_id: UUID, parent_run_id: UUID | None = None, **kwargs: Any
    ) -> None:
        if self._root_of.get(run_id, run_id) != run_id:
            return
        question, documents = self._question.get(run_id), self._documents.get(run_id, [])
        self._forget(run_id)
        answer = _text(outputs, ANSWER_KEYS)
        if not question or not answer:
            return
        contexts: list[dict[str, Any]] = []
        seen: set[tuple[str | None, str]] = set()
        for document in documents:
            if (document.id, document.page_content) not in seen:
                seen.add((document.id, document.page_content))
                contexts.append(document_context(document, len(contexts) + 1))
        result = self.auditor.audit_answer(run_id, question, answer, contexts)
        if result is not None:
            self._attach(outputs, result)

    @staticmethod
    def _attach(outputs: Any, result: AuditResult) -> None:
        if isinstance(outputs, BaseMessage):
            outputs.response_metadata["theoria"] = result.verdict()
        elif isinstance(outputs, dict):
            for value in outputs.values():
                if isinstance(value, BaseMessage):
                    value.response_metadata["theoria"] = result.verdict()
            outputs["theoria"] = result.verdict()

    def _forget(self, root: UUID) -> None:
        for run, its_root in list(self._root_of.items()):
            if its_root == root:
                del self._root_of[run]
        self._question.pop(root, None)
        self._documents.pop(root, None)

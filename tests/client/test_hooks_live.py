"""The LangChain and LlamaIndex hooks against the live server: a chain's answer audited with the
documents its retriever returned, the verdict attached to the answer."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

from tests.client.conftest import ANSWER, LTP, QUERY

# transaction: the live server reads what the test writes (role groups: UserFactory makes them again)
pytestmark = pytest.mark.django_db(transaction=True)

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "langchain_rag.py"
API_DOC = Path(__file__).resolve().parents[2] / "docs" / "API.md"


def load_example():
    spec = importlib.util.spec_from_file_location("langchain_rag_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # pydantic (the retriever's fields) resolves names through it
    spec.loader.exec_module(module)
    return module


def test_the_docs_example_chain_is_audited_in_under_ten_lines(live_server, tokens, capsys):
    example = load_example()
    block = (
        EXAMPLE.read_text().split("# --- the lines a team adds to its chain ---")[1].split("# --- end ---")[0]
    )
    added = [line for line in block.splitlines() if line.strip()]
    pip = re.findall(r'^pip install "\./clients/python\[langchain\]"$', API_DOC.read_text(), re.M)

    answer, result = example.main(live_server.url, tokens["submitter"])

    assert pip and len(added) + 1 < 10  # the pip install, then the lines in the chain
    assert answer == example.ANSWER and result.mode == "audit-local"
    assert [c.label for c in result.claims] == ["SUPPORTED", "REFUTED"]
    assert result.claims[0].evidence[0].source_id == "kb-ltp"  # the retrieved document, by its id
    printed = capsys.readouterr().out
    assert "SUPPORTED" in printed and "REFUTED" in printed and "1985" in printed


def test_a_chat_chains_message_carries_the_verdict_in_its_metadata(live_server, tokens):
    from langchain_core.documents import Document
    from langchain_core.language_models.fake_chat_models import FakeListChatModel
    from langchain_core.prompts import ChatPromptTemplate
    from langchain_core.runnables import RunnablePassthrough

    from theoria_client.langchain import TheoriaCallbackHandler

    retriever = load_example().KeywordRetriever(documents=[Document(LTP, id="kb1")])
    prompt = ChatPromptTemplate.from_template("{context}\n\n{question}")
    chain = (
        {"context": retriever, "question": RunnablePassthrough()}
        | prompt
        | FakeListChatModel(responses=[ANSWER])
    )
    theoria = TheoriaCallbackHandler(
        live_server.url, tokens["submitter"], mode="audit-local", domain="neuroscience"
    )

    message = chain.invoke(QUERY, config={"callbacks": [theoria]})

    verdict = message.response_metadata["theoria"]
    assert verdict == theoria.last_result.verdict() and verdict["verified"]
    assert [c["label"] for c in verdict["claims"]] == ["SUPPORTED", "REFUTED"]
    assert verdict["escalations"] and 0 <= verdict["faithfulness"] < 1


def test_a_refused_audit_stops_the_chain_unless_told_otherwise(live_server, tokens):
    from theoria_client import BadRequest
    from theoria_client.langchain import TheoriaCallbackHandler

    example = load_example()
    strict = TheoriaCallbackHandler(live_server.url, tokens["submitter"], mode="fast")
    lenient = TheoriaCallbackHandler(live_server.url, tokens["submitter"], mode="fast", raise_error=False)

    with pytest.raises(BadRequest, match="mode"):
        example.build_chain().invoke(QUERY, config={"callbacks": [strict]})
    answer = example.build_chain().invoke(QUERY, config={"callbacks": [lenient]})

    assert answer == example.ANSWER and lenient.last_result is None
    assert [e.errors for e in lenient.errors] == [{"mode": ['"fast" is not a valid choice.']}]


def test_a_llamaindex_query_engines_response_carries_the_verdict(live_server, tokens):
    from llama_index.core.callbacks import CallbackManager
    from llama_index.core.llms import CompletionResponse, CustomLLM, LLMMetadata
    from llama_index.core.llms.callbacks import llm_completion_callback
    from llama_index.core.query_engine import RetrieverQueryEngine
    from llama_index.core.retrievers import BaseRetriever
    from llama_index.core.schema import NodeWithScore, TextNode

    from theoria_client.llamaindex import TheoriaLlamaIndexHandler

    class FixedLLM(CustomLLM):  # offline: always the same answer
        @property
        def metadata(self) -> LLMMetadata:
            return LLMMetadata()

        @llm_completion_callback()
        def complete(self, prompt, formatted=False, **kwargs):
            return CompletionResponse(text=ANSWER)

        @llm_completion_callback()
        def stream_complete(self, prompt, formatted=False, **kwargs):
            yield CompletionResponse(text=ANSWER, delta=ANSWER)

    class LocalRetriever(BaseRetriever):
        def _retrieve(self, query_bundle):
            node = TextNode(text=LTP, id_="kb1", metadata={"title": "Synaptic Plasticity Overview"})
            return [NodeWithScore(node=node, score=1.0)]

    theoria = TheoriaLlamaIndexHandler(live_server.url, tokens["submitter"], mode="audit-local")
    callbacks = CallbackManager([theoria])
    engine = RetrieverQueryEngine.from_args(
        LocalRetriever(callback_manager=callbacks), llm=FixedLLM(), callback_manager=callbacks
    )

    response = engine.query(QUERY)

    verdict = response.metadata["theoria"]
    assert response.response == ANSWER and verdict == theoria.last_result.verdict()
    assert [c["label"] for c in verdict["claims"]] == ["SUPPORTED", "REFUTED"]
    assert theoria.last_result.claims[0].evidence[0].title == "Synaptic Plasticity Overview"

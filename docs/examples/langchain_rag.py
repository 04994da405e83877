"""A RAG chain audited by Theoria, offline: a local keyword retriever over three passages and a
fake LLM (langchain-core's FakeListLLM) that answers with one true and one false sentence.

    make run                                                     # one terminal: the server
    pip install "./clients/python[langchain]"                    # another: the client
    export THEORIA_TOKEN=$(.venv/bin/python manage.py create_token frontend --role Submitter)
    python docs/examples/langchain_rag.py

It prints each claim of the answer with Theoria's label and confidence. The lines between the
markers in ``main`` are all a team adds to its own chain; tests/client/test_hooks_live.py runs this
file against the Django test server.
"""

import re

from langchain_core.documents import Document
from langchain_core.language_models.fake import FakeListLLM
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import PromptTemplate
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import RunnablePassthrough

QUESTION = "What does long-term potentiation require?"
PASSAGES = [
    Document(
        id="kb-ltp",
        page_content="Long-term potentiation (LTP) at the Schaffer collateral synapses of the hippocampal CA1 "
        "region is dependent on NMDA receptor activation. LTP was first described by Bliss and Lømo in 1973.",
        metadata={"title": "Synaptic Plasticity Overview", "source": "kb://synaptic_plasticity_overview"},
    ),
    Document(
        id="kb-ltd",
        page_content="Long-term depression (LTD) weakens synapses after prolonged low-frequency stimulation.",
        metadata={"title": "Long-term depression"},
    ),
    Document(
        id="kb-sleep",
        page_content="Sleep spindles are bursts of oscillatory activity during stage 2 sleep.",
        metadata={"title": "Sleep spindles"},
    ),
]
# what the fake LLM answers: the first sentence is supported by passage [1], the second contradicts it
ANSWER = (
    "Long-term potentiation requires NMDA receptor activation [1]. "
    "LTP was first described by Bliss and Lømo in 1985 [1]."
)


class KeywordRetriever(BaseRetriever):
    """The passages sharing the most words with the question (a local retriever: no index, no model)."""

    documents: list[Document]
    k: int = 1

    def _get_relevant_documents(self, query: str, *, run_manager) -> list[Document]:
        words = set(re.findall(r"\w+", query.lower()))
        overlap = lambda d: len(words & set(re.findall(r"\w+", d.page_content.lower())))  # noqa: E731
        return sorted(self.documents, key=overlap, reverse=True)[: self.k]


def build_chain():
    retriever = KeywordRetriever(documents=PASSAGES)
    prompt = PromptTemplate.from_template("Answer from the passages.\n{context}\n\nQuestion: {question}")
    passages = lambda docs: "\n".join(f"[{i}] {d.page_content}" for i, d in enumerate(docs, 1))  # noqa: E731
    llm = FakeListLLM(responses=[ANSWER])
    return {"context": retriever | passages, "question": RunnablePassthrough()} | prompt | llm | StrOutputParser()


def main(url: str | None = None, token: str | None = None):
    chain = build_chain()
    # --- the lines a team adds to its chain ---
    from theoria_client.langchain import TheoriaCallbackHandler

    theoria = TheoriaCallbackHandler(url, token, mode="audit-local")  # url, token: THEORIA_URL, THEORIA_TOKEN
    answer = chain.invoke(QUESTION, config={"callbacks": [theoria]})
    for card in theoria.last_result.claims:
        print(f"{card.label:9} {card.confidence:.2f}  {card.text}")
    # --- end ---
    return answer, theoria.last_result


if __name__ == "__main__":
    main()

"""PubMed, arXiv and page providers against local servers serving their formats."""

from __future__ import annotations

from datetime import date

import pytest

from audit.pipeline.web import (
    ArxivProvider,
    FailureReason,
    FetchPolicy,
    PageProvider,
    PubMedProvider,
    WebError,
    WebLookup,
    claim_query,
    safe_fetch,
)

from .conftest import ARXIV_PATH, PUBMED_PATH, Reply, atom_xml, efetch_xml, esearch_xml, xml_reply

CLAIM = "Long-term potentiation requires NMDA receptor activation [1]."


class DirectClient:
    """The pipeline's client shape over safe_fetch, with the test host allow-listed."""

    def __init__(self):
        self.calls = []

    def get(self, url, *, provider, content_types, query=""):
        self.calls.append((provider, url, query))
        return safe_fetch(
            url, FetchPolicy(("127.0.0.1",), allow_private=True, timeout_s=3.0, content_types=content_types)
        )


def test_it_derives_the_query_from_the_claim_words_only():
    assert claim_query(CLAIM) == "long-term potentiation requires nmda receptor activation"
    assert claim_query("See https://internal.example/kb/42 for the 3.2% rise in 2021.") == "see rise 2021"
    assert len(claim_query(" ".join(f"word{i}" for i in range(40))).split()) == 10


def test_it_searches_pubmed_then_fetches_the_abstracts(web_server):
    web_server.route(PUBMED_PATH + "esearch.fcgi", xml_reply(esearch_xml(["111", "222"])))
    web_server.route(
        PUBMED_PATH + "efetch.fcgi",
        xml_reply(
            efetch_xml(
                [
                    {
                        "pmid": "111",
                        "title": "NMDA receptors and LTP",
                        "abstract": "LTP requires <i>NMDA</i> receptor activation.",
                        "year": "2021",
                        "month": "Feb",
                    },
                    {"pmid": "222", "title": "Unrelated", "abstract": "Something else.", "year": "1999"},
                ]
            )
        ),
    )
    provider = PubMedProvider(web_server.url(PUBMED_PATH))
    documents = provider.find(WebLookup(query=claim_query(CLAIM)), client=DirectClient())
    assert [d.source_id for d in documents] == ["pmid:111", "pmid:222"]
    first = documents[0]
    assert first.url == "https://pubmed.ncbi.nlm.nih.gov/111/" and first.published == date(2021, 2, 1)
    assert first.text == "NMDA receptors and LTP. Results: LTP requires NMDA receptor activation."
    assert first.hash.startswith("sha256:") and first.provenance()["query"] == claim_query(CLAIM)
    search, fetch = web_server.requests
    assert search.query["term"] == [claim_query(CLAIM)] and search.query["db"] == ["pubmed"]
    assert fetch.query["id"] == ["111,222"]


def test_it_returns_nothing_from_pubmed_when_the_search_finds_nothing(web_server):
    web_server.route(PUBMED_PATH + "esearch.fcgi", xml_reply(esearch_xml([])))
    provider = PubMedProvider(web_server.url(PUBMED_PATH))
    assert provider.find(WebLookup(query="nothing"), client=DirectClient()) == []
    assert web_server.paths() == [PUBMED_PATH + "esearch.fcgi"]


@pytest.mark.parametrize(
    "body",
    [
        "<eSearchResult><IdList><Id>1</Id></IdList>",  # truncated
        "not xml at all",
        '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa"><!ENTITY b "&a;&a;&a;">]><eSearchResult>&b;</eSearchResult>',
        "<html><body>Service unavailable</body></html>",  # well-formed, wrong document
    ],
)
def test_it_reports_malformed_pubmed_xml(web_server, body):
    web_server.route(PUBMED_PATH + "esearch.fcgi", xml_reply(body))
    with pytest.raises(WebError) as info:
        PubMedProvider(web_server.url(PUBMED_PATH)).find(WebLookup(query="q"), client=DirectClient())
    assert info.value.reason is FailureReason.MALFORMED


def test_it_searches_arxiv_and_parses_the_atom_feed(web_server):
    web_server.route(
        ARXIV_PATH,
        xml_reply(
            atom_xml(
                [
                    {
                        "id": "2101.00001v2",
                        "title": "Synaptic plasticity\n  in models",
                        "summary": "We show LTP needs NMDA.",
                        "published": "2021-01-05T10:00:00Z",
                    },
                ]
            ),
            content_type="application/atom+xml",
        ),
    )
    provider = ArxivProvider(web_server.url(ARXIV_PATH))
    [document] = provider.find(WebLookup(query="nmda receptor ltp"), client=DirectClient())
    assert document.source_id == "arxiv:2101.00001v2" and document.url == "http://arxiv.org/abs/2101.00001v2"
    assert document.title == "Synaptic plasticity in models" and document.published == date(2021, 1, 5)
    assert web_server.requests[0].query["search_query"] == ["all:nmda OR all:receptor OR all:ltp"]


def test_it_reports_an_arxiv_error_entry_and_a_broken_feed_as_malformed(web_server):
    provider = ArxivProvider(web_server.url(ARXIV_PATH))
    web_server.route(
        ARXIV_PATH,
        xml_reply(atom_xml([{"id": "api/errors#bad", "title": "Error", "summary": "malformed query"}])),
    )
    with pytest.raises(WebError) as info:
        provider.find(WebLookup(query="q"), client=DirectClient())
    assert info.value.reason is FailureReason.MALFORMED and "malformed query" in info.value.message
    web_server.route(ARXIV_PATH, xml_reply("<feed xmlns='http://www.w3.org/2005/Atom'><entry>"))
    with pytest.raises(WebError):
        provider.find(WebLookup(query="q"), client=DirectClient())


def test_it_turns_an_allow_listed_page_into_text(web_server):
    html = (
        "<html><head><title>Ignored</title><meta name='citation_title' content='LTP review'>"
        "<meta name='citation_publication_date' content='2022/06/01'><script>var secret=1;</script>"
        "<style>p{}</style></head><body><nav>Menu</nav><h1>LTP</h1><p>LTP requires NMDA &amp; calcium.</p>"
        "</body></html>"
    )
    web_server.route("/paper", Reply(200, {"Content-Type": "text/html; charset=utf-8"}, html.encode()))
    [document] = PageProvider().find(
        WebLookup(query="q", urls=(web_server.url("/paper"),)), client=DirectClient()
    )
    assert document.title == "LTP review" and document.published == date(2022, 6, 1)
    assert document.text == "LTP\nLTP requires NMDA & calcium."
    assert document.source_id.startswith("url:")


def test_it_refuses_a_page_of_another_type(web_server):
    web_server.route("/file.pdf", Reply(200, {"Content-Type": "application/pdf"}, b"%PDF"))
    with pytest.raises(WebError) as info:
        PageProvider().find(WebLookup(query="q", urls=(web_server.url("/file.pdf"),)), client=DirectClient())
    assert info.value.reason is FailureReason.CONTENT_TYPE

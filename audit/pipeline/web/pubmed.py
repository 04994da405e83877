"""PubMed through NCBI E-utilities: esearch for PMIDs, then efetch for titles and abstracts.

Both answers are XML from outside, parsed with defusedxml (no DTDs, no entities); anything that
is not the expected shape raises WebError(MALFORMED).
"""

from __future__ import annotations

from datetime import date
from urllib.parse import urlencode
from xml.etree.ElementTree import Element

from defusedxml import ElementTree
from defusedxml.common import DefusedXmlException

from .base import WebClient, WebDocument, WebLookup, WebProvider, malformed, now_utc

XML_TYPES = ("text/xml", "application/xml")
ARTICLE_URL = "https://pubmed.ncbi.nlm.nih.gov/{pmid}/"
MONTHS = {m: i for i, m in enumerate("jan feb mar apr may jun jul aug sep oct nov dec".split(), start=1)}


def parse_xml(body: bytes, provider: str, url: str) -> Element:
    """Parse untrusted XML; raise WebError(MALFORMED) on a syntax error or a DTD/entity."""
    try:
        root: Element = ElementTree.fromstring(body)  # defusedxml ships no types
        return root
    except (ElementTree.ParseError, DefusedXmlException, ValueError) as exc:
        raise malformed(provider, url, str(exc)[:200]) from None


def _text(element: Element | None) -> str:
    return " ".join("".join(element.itertext()).split()) if element is not None else ""


def _month(value: str) -> int:
    value = (value or "").strip().lower()
    if value.isdigit():
        return min(max(int(value), 1), 12)
    return MONTHS.get(value[:3], 1)


def _pub_date(article: Element) -> date | None:
    """The electronic article date if present, else the journal issue date (year at least)."""
    for path in ("ArticleDate", "Journal/JournalIssue/PubDate"):
        node = article.find(path)
        if node is None:
            continue
        year = (node.findtext("Year") or "").strip()
        if not year:
            medline = (node.findtext("MedlineDate") or "").strip()
            year = medline[:4]
        if year.isdigit():
            day = (node.findtext("Day") or "1").strip()
            try:
                return date(
                    int(year), _month(node.findtext("Month") or "1"), int(day) if day.isdigit() else 1
                )
            except ValueError:
                return date(int(year), 1, 1)
    return None


class PubMedProvider(WebProvider):
    """Search PubMed for the claim's query and return the top abstracts."""

    name = "pubmed"
    content_types = XML_TYPES

    def __init__(self, base_url: str):
        self.base_url = base_url if base_url.endswith("/") else base_url + "/"

    def find(self, lookup: WebLookup, *, client: WebClient) -> list[WebDocument]:
        if not lookup.query:
            return []
        search_url = (
            self.base_url
            + "esearch.fcgi?"
            + urlencode(
                {
                    "db": "pubmed",
                    "term": lookup.query,
                    "retmax": lookup.max_results,
                    "retmode": "xml",
                    "sort": "relevance",
                    "tool": "theoria-audit",
                }
            )
        )
        root = parse_xml(self._get(client, search_url, lookup.query).body, self.name, search_url)
        if root.tag != "eSearchResult":
            raise malformed(self.name, search_url, f"expected eSearchResult, got {root.tag}")
        ids = [i.strip() for i in (e.text or "" for e in root.findall("IdList/Id")) if i.strip().isdigit()]
        ids = ids[: lookup.max_results]
        if not ids:
            return []
        fetch_url = (
            self.base_url
            + "efetch.fcgi?"
            + urlencode(
                {
                    "db": "pubmed",
                    "id": ",".join(ids),
                    "retmode": "xml",
                    "rettype": "abstract",
                    "tool": "theoria-audit",
                }
            )
        )
        root = parse_xml(self._get(client, fetch_url, lookup.query).body, self.name, fetch_url)
        if root.tag != "PubmedArticleSet":
            raise malformed(self.name, fetch_url, f"expected PubmedArticleSet, got {root.tag}")
        retrieved = now_utc()
        documents = []
        for item in root.findall("PubmedArticle"):
            citation = item.find("MedlineCitation")
            article = citation.find("Article") if citation is not None else None
            pmid = (citation.findtext("PMID") or "").strip() if citation is not None else ""
            if article is None or not pmid.isdigit():
                continue
            title = _text(article.find("ArticleTitle"))
            parts = []
            for node in article.findall("Abstract/AbstractText"):
                label = node.get("Label")
                body = _text(node)
                if body:
                    parts.append(f"{label.title()}: {body}" if label else body)
            abstract = " ".join(parts)
            if not (title or abstract):
                continue
            documents.append(
                WebDocument(
                    provider=self.name,
                    source_id=f"pmid:{pmid}",
                    url=ARTICLE_URL.format(pmid=pmid),
                    title=title[:500],
                    text=f"{title}. {abstract}".strip() if abstract else title,
                    query=lookup.query,
                    retrieved_at=retrieved,
                    published=_pub_date(article),
                    request_url=fetch_url,
                    extra={"pmid": pmid, "journal": _text(article.find("Journal/Title"))[:300]},
                )
            )
        return documents

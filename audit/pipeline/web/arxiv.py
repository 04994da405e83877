"""arXiv through its Atom API (``/api/query?search_query=...``)."""

from __future__ import annotations

from datetime import date
from urllib.parse import urlencode

from .base import WebClient, WebDocument, WebLookup, WebProvider, malformed, now_utc
from .pubmed import parse_xml

ATOM = "{http://www.w3.org/2005/Atom}"
ATOM_TYPES = ("application/atom+xml", "application/xml", "text/xml")
SEARCH_TERMS = 6  # arXiv ORs these and ranks by relevance; more terms only add noise


def _clean(value: str | None) -> str:
    return " ".join((value or "").split())


def _date(value: str) -> date | None:
    try:
        return date.fromisoformat((value or "")[:10])
    except ValueError:
        return None


class ArxivProvider(WebProvider):
    """Search arXiv for the claim's query and return the top abstracts."""

    name = "arxiv"
    content_types = ATOM_TYPES

    def __init__(self, base_url: str):
        self.base_url = base_url

    def find(self, lookup: WebLookup, *, client: WebClient) -> list[WebDocument]:
        terms = lookup.query.split()[:SEARCH_TERMS]
        if not terms:
            return []
        search_query = " OR ".join(f"all:{term}" for term in terms)
        url = (
            self.base_url
            + ("&" if "?" in self.base_url else "?")
            + urlencode(
                {
                    "search_query": search_query,
                    "start": 0,
                    "max_results": lookup.max_results,
                    "sortBy": "relevance",
                }
            )
        )
        root = parse_xml(self._get(client, url, lookup.query).body, self.name, url)
        if root.tag != f"{ATOM}feed":
            raise malformed(self.name, url, f"expected an Atom feed, got {root.tag}")
        retrieved = now_utc()
        documents = []
        for entry in root.findall(f"{ATOM}entry")[: lookup.max_results]:
            entry_id = _clean(entry.findtext(f"{ATOM}id"))
            if "/api/errors" in entry_id:  # arXiv reports a bad query as an entry
                raise malformed(self.name, url, _clean(entry.findtext(f"{ATOM}summary")) or "error entry")
            title = _clean(entry.findtext(f"{ATOM}title"))
            summary = _clean(entry.findtext(f"{ATOM}summary"))
            if not entry_id or not (title or summary):
                continue
            arxiv_id = entry_id.rstrip("/").rsplit("/abs/", 1)[-1]
            link = next(
                (
                    href
                    for ln in entry.findall(f"{ATOM}link")
                    if (href := ln.get("href")) and ln.get("rel", "alternate") == "alternate"
                ),
                entry_id,
            )
            documents.append(
                WebDocument(
                    provider=self.name,
                    source_id=f"arxiv:{arxiv_id}",
                    url=link,
                    title=title[:500],
                    text=f"{title}. {summary}".strip(),
                    query=lookup.query,
                    retrieved_at=retrieved,
                    published=_date(entry.findtext(f"{ATOM}published") or ""),
                    request_url=url,
                    extra={"arxiv_id": arxiv_id, "updated": _clean(entry.findtext(f"{ATOM}updated"))},
                )
            )
        return documents

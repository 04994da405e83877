"""The web provider interface, the documents providers return, and what may leave the system.

A provider turns a :class:`WebLookup` into :class:`WebDocument` s through a :class:`WebClient`
(the safe fetcher, or the Django service's client that adds the cache, the residency switch and
the call log). The lookup holds only the search query derived from the claim text
(:func:`claim_query`) and public URLs the claim cites; knowledge-base snippets and user data are
never part of it, so they cannot leave the system.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from datetime import date, datetime, timezone
from typing import Any, Protocol

from audit import constants
from audit.pipeline.text import STOPWORDS, words
from audit.pipeline.types import Passage

from .fetch import FailureReason, FetchResponse, WebError

_URL_RE = re.compile(r"https?://[^\s<>\"'\])]+", re.IGNORECASE)
_CITATION_MARK_RE = re.compile(r"\[[^\]]{0,40}\]|\((?:source|cite)[^)]{0,40}\)", re.IGNORECASE)


class WebClient(Protocol):
    """Performs one GET for a provider; raises WebError when refused or failed."""

    def get(
        self, url: str, *, provider: str, content_types: tuple[str, ...], query: str = ""
    ) -> FetchResponse: ...


@dataclass(frozen=True)
class WebLookup:
    """What a provider may send out for one claim: a derived query and cited public URLs."""

    query: str
    urls: tuple[str, ...] = ()
    max_results: int = constants.WEB_RESULTS_PER_PROVIDER


@dataclass
class WebDocument:
    """A document found on the web, with where and how it was obtained."""

    provider: str
    source_id: str  # "pmid:38012345", "arxiv:2101.00001v2", "url:<sha256 prefix>"
    url: str
    title: str
    text: str
    query: str
    retrieved_at: datetime
    published: date | None = None
    request_url: str = ""  # the API call that returned it
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def hash(self) -> str:
        return "sha256:" + hashlib.sha256(self.text.encode("utf-8")).hexdigest()

    def provenance(self) -> dict[str, Any]:
        """The provenance stored on the evidence row (docs/SPEC_NOTES.md#analyst-pages + docs/SPEC_NOTES.md#escalation-to-audit-web)."""
        return {
            "provider": self.provider,
            "query": self.query,
            "url": self.url,
            "request_url": self.request_url,
            "retrieved_at": self.retrieved_at.isoformat(),
            "hash": self.hash,
            "published": self.published.isoformat() if self.published else None,
            **self.extra,
        }

    def as_passage(self) -> Passage:
        return Passage(
            id=f"web:{self.source_id}",
            text=self.text[: constants.WEB_PASSAGE_MAX_CHARS],
            title=self.title,
            uri=self.url,
            source_type="web",
            published=self.published,
            anchors=(self.source_id,),
        )


class WebProvider:
    """A source of web evidence. Subclasses set ``name`` and ``content_types``."""

    name = ""
    content_types: tuple[str, ...] = ()

    def find(self, lookup: WebLookup, *, client: WebClient) -> list[WebDocument]:
        raise NotImplementedError

    def _get(self, client: WebClient, url: str, query: str) -> FetchResponse:
        return client.get(url, provider=self.name, content_types=self.content_types, query=query)


def claim_query(text: str, *, max_terms: int = constants.WEB_QUERY_MAX_TERMS) -> str:
    """Derive a search query from a claim: its distinct content words, in order, URLs removed."""
    text = _CITATION_MARK_RE.sub(" ", _URL_RE.sub(" ", text or ""))
    seen: list[str] = []
    for word in words(text):
        if word in STOPWORDS or len(word) < 2 or word in seen:
            continue
        seen.append(word)
        if len(seen) >= max_terms:
            break
    return " ".join(seen)


def urls_in(text: str) -> list[str]:
    """Return the http(s) URLs written in a text, trailing punctuation removed."""
    return [u.rstrip(".,;:") for u in _URL_RE.findall(text or "")]


def now_utc() -> datetime:
    return datetime.now(timezone.utc)


def malformed(provider: str, url: str, detail: str) -> WebError:
    return WebError(FailureReason.MALFORMED, f"{provider}: malformed response: {detail}", url=url)

"""Audit-Web: controlled verification against allow-listed web sources (plain Python, no Django).

- ``fetch``: the safe fetcher (allow-list on every hop, SSRF checks, size/time/type limits);
- ``base``: the provider interface, web documents and the query derived from a claim;
- ``pubmed``, ``arxiv``, ``page``: the providers; ``rule``: which claims go to the web (the
  Audit-Web rule); ``step``: the web step (lookups through the caller's client, methods, revision).
The Django side (cache, call log, residency switch, storing evidence) is ``audit.services.web``
and ``audit.services.web_client``.
"""

from __future__ import annotations

from .arxiv import ArxivProvider
from .base import WebClient, WebDocument, WebLookup, WebProvider, claim_query, urls_in
from .fetch import FailureReason, FetchPolicy, FetchResponse, WebError, safe_fetch
from .page import PageProvider
from .pubmed import PubMedProvider

# provider name -> class; constructors take the provider's base URL where it has one
REGISTRY: dict[str, type[WebProvider]] = {
    PubMedProvider.name: PubMedProvider,
    ArxivProvider.name: ArxivProvider,
    PageProvider.name: PageProvider,
}


def build_providers(*, pubmed_base_url: str, arxiv_base_url: str) -> list[WebProvider]:
    """Return one instance of each provider, search providers first."""
    return [PubMedProvider(pubmed_base_url), ArxivProvider(arxiv_base_url), PageProvider()]


__all__ = [
    "REGISTRY",
    "ArxivProvider",
    "FailureReason",
    "FetchPolicy",
    "FetchResponse",
    "PageProvider",
    "PubMedProvider",
    "WebClient",
    "WebDocument",
    "WebError",
    "WebLookup",
    "WebProvider",
    "build_providers",
    "claim_query",
    "safe_fetch",
    "urls_in",
]

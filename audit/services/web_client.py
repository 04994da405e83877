"""Audit-Web's HTTP client: the one way the providers reach the network.

:class:`WebCallClient` enforces the workspace's residency switch and the allow-list, serves and
fills the response cache (``WebCacheEntry``), fetches through the pipeline's guarded
``safe_fetch`` and records every call as an ``ExternalCall`` (provider, URL, status, duration,
cache hit, failure reason). The verification flow that uses it is ``audit.services.web``.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import logging
import time
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from audit import constants
from audit.models import Answer, Claim, ExternalCall, WebCacheEntry, Workspace
from audit.pipeline.web import (
    FailureReason,
    FetchPolicy,
    FetchResponse,
    WebError,
    WebProvider,
    build_providers,
    safe_fetch,
)
from audit.pipeline.web.fetch import check_url

logger = logging.getLogger(__name__)

REFUSALS = frozenset(
    {
        FailureReason.RESIDENCY,
        FailureReason.INVALID_URL,
        FailureReason.SCHEME,
        FailureReason.DOMAIN,
        FailureReason.PRIVATE_ADDRESS,
    }
)


def web_providers() -> list[WebProvider]:
    """The configured providers (``THEORIA["PUBMED_BASE_URL"]``, ``["ARXIV_BASE_URL"]``), which
    reach the network through :class:`WebCallClient`."""
    return build_providers(
        pubmed_base_url=settings.THEORIA["PUBMED_BASE_URL"], arxiv_base_url=settings.THEORIA["ARXIV_BASE_URL"]
    )


def _cache_key(provider: str, url: str) -> str:
    return hashlib.sha256(f"{provider} {url}".encode("utf-8")).hexdigest()


class WebCallClient:
    """The providers' client: residency switch, allow-list, cache, safe fetch and the call log.

    Each ``get`` writes one ``ExternalCall`` row. The residency switch and the allow-list are
    checked before the cache, so a cached response is never served where a call is forbidden.
    """

    def __init__(
        self,
        *,
        workspace: Workspace,
        answer: Answer | None = None,
        deferred: bool = False,
        claims: dict[str, Claim] | None = None,
    ):
        self.workspace = workspace
        self.answer = answer
        self.claims = claims or {}  # the stored answer's claims, by claim id
        self.claim: Claim | None = None  # set before each claim's lookups (``begin_claim``)
        # deferred: the answer is not stored yet; the calls are kept (``pending``, with the claim id
        # set in ``claim_id`` before each claim's lookups) and written by ``flush`` once it is
        self.deferred = deferred
        self.claim_id = ""
        self.pending: list[tuple[ExternalCall, str]] = []
        self.calls = 0
        self.cache_hits = 0
        self.answered = 0  # calls with a usable response (OK or CACHED, less those rejected later)
        self._last: dict[tuple[str, str], ExternalCall] = {}  # (provider, url) -> its latest call
        self.ttl = timedelta(seconds=constants.WEB_CACHE_TTL_SECONDS)

    def begin_claim(self, claim_id: str) -> None:
        """The lookups that follow are for this claim (its stored row, when there is one)."""
        self.claim, self.claim_id = self.claims.get(claim_id), claim_id

    def policy(self, content_types: tuple[str, ...]) -> FetchPolicy:
        theoria = settings.THEORIA
        return FetchPolicy(
            allowed_domains=tuple(self.workspace.web_allowed_domains or ()),
            allow_private=bool(theoria.get("WEB_ALLOW_PRIVATE_ADDRESSES", False)),
            timeout_s=float(theoria.get("WEB_TIMEOUT_S") or constants.WEB_TIMEOUT_S),
            max_bytes=int(theoria.get("WEB_MAX_RESPONSE_BYTES") or constants.WEB_MAX_RESPONSE_BYTES),
            content_types=content_types,
        )

    def _record(
        self,
        *,
        provider: str,
        url: str,
        query: str,
        status: str,
        started: float,
        response: FetchResponse | None = None,
        error: WebError | None = None,
        cache_hit: bool = False,
    ) -> ExternalCall:
        self.calls += 1
        self.cache_hits += int(cache_hit)
        self.answered += int(status in (ExternalCall.Status.OK, ExternalCall.Status.CACHED))
        call = ExternalCall(
            workspace=self.workspace,
            answer=self.answer,
            claim=self.claim,
            provider=provider,
            url=url[:2000],
            query=query[:500],
            status=status,
            cache_hit=cache_hit,
            duration_ms=round((time.monotonic() - started) * 1000.0, 3),
            http_status=(response.status if response else (error.status if error else None)),
            response_bytes=len(response.body) if response else 0,
            redirects=list(response.redirects) if response else [],
            failure_reason=error.reason.value if error else "",
            failure_detail=(error.message[:500] if error else ""),
        )
        call.full_clean()
        if self.deferred:
            self.pending.append((call, self.claim_id))
        else:
            call.save()
        self._last[(provider, url)] = call
        return call

    def flush(self, *, answer: Answer, claims: dict[str, Claim]) -> None:
        """Write the deferred calls against the stored ``answer`` and its ``claims`` (by claim id)."""
        for call, claim_id in self.pending:
            call.answer, call.claim = answer, claims.get(claim_id)
        ExternalCall.objects.bulk_create([call for call, _ in self.pending])
        self.pending = []

    def reject(self, error: WebError, provider: str) -> None:
        """Mark a response the provider could not parse: its call failed, its cache entry goes."""
        call = self._last.get((provider, error.url))
        if call is None:
            return
        if call.status in (ExternalCall.Status.OK, ExternalCall.Status.CACHED):
            self.answered -= 1
            call.status = ExternalCall.Status.FAILED
        call.cache_hit, call.failure_reason, call.failure_detail = (
            False,
            error.reason.value,
            error.message[:500],
        )
        if call.pk is not None:
            ExternalCall.objects.filter(pk=call.pk).update(
                status=ExternalCall.Status.FAILED,
                cache_hit=False,
                failure_reason=error.reason.value,
                failure_detail=error.message[:500],
            )
        WebCacheEntry.objects.filter(key=_cache_key(provider, error.url)).delete()

    def get(
        self, url: str, *, provider: str, content_types: tuple[str, ...], query: str = ""
    ) -> FetchResponse:
        started = time.monotonic()
        policy = self.policy(content_types)
        try:
            if not self.workspace.allow_external_calls:
                raise WebError(
                    FailureReason.RESIDENCY,
                    "the workspace's data-residency switch forbids external calls",
                    url=url,
                )
            check_url(url, policy)
        except WebError as error:
            self._record(
                provider=provider,
                url=url,
                query=query,
                status=ExternalCall.Status.REFUSED,
                started=started,
                error=error,
            )
            raise
        now = timezone.now()
        key = _cache_key(provider, url)
        entry = WebCacheEntry.objects.filter(key=key, expires_at__gt=now).first()
        if entry is not None and entry.content_type in content_types:
            response = FetchResponse(
                url=entry.final_url,
                status=entry.http_status,
                content_type=entry.content_type,
                body=bytes(entry.body),
            )
            self._record(
                provider=provider,
                url=url,
                query=query,
                status=ExternalCall.Status.CACHED,
                started=started,
                response=response,
                cache_hit=True,
            )
            return response
        try:
            response = safe_fetch(url, policy)
        except WebError as error:
            status = ExternalCall.Status.REFUSED if error.reason in REFUSALS else ExternalCall.Status.FAILED
            self._record(provider=provider, url=url, query=query, status=status, started=started, error=error)
            raise
        self._record(
            provider=provider,
            url=url,
            query=query,
            status=ExternalCall.Status.OK,
            started=started,
            response=response,
        )
        if len(response.body) <= constants.WEB_CACHE_MAX_BODY_BYTES:
            self._store(key, provider, url, response, now)
        return response

    def _store(self, key: str, provider: str, url: str, response: FetchResponse, now: dt.datetime) -> None:
        try:
            with transaction.atomic():
                WebCacheEntry.objects.update_or_create(
                    key=key,
                    defaults={
                        "provider": provider,
                        "url": url[:2000],
                        "final_url": response.url[:2000],
                        "http_status": response.status,
                        "content_type": response.content_type,
                        "body": response.body,
                        "fetched_at": now,
                        "expires_at": now + self.ttl,
                    },
                )
        except IntegrityError:  # another worker cached the same URL at the same moment: theirs stands
            pass


def web_cache_purge(*, now: dt.datetime | None = None) -> int:
    """Delete expired cache entries; return how many (the daily schedule calls it)."""
    deleted, _ = WebCacheEntry.objects.filter(expires_at__lte=now or timezone.now()).delete()
    return deleted

"""Fetch one URL from the outside world, safely (plain Python, no Django).

Every request and every redirect hop is checked before a byte is sent:
- the scheme is http or https, the URL carries no credentials, its host is on the allow-list
  (the host itself or a subdomain of an allowed domain);
- the host is resolved once and every address it resolves to must be public (not private,
  loopback, link-local, multicast, reserved, unspecified, nor an IPv4 address mapped into IPv6)
  unless ``FetchPolicy.allow_private`` is set (tests only). The connection then goes to the
  address that was checked, never to a second resolution, so a DNS answer that changes between
  the check and the connect (DNS rebinding) cannot redirect it; TLS still verifies the host name;
- redirects are followed by hand, at most ``max_redirects`` hops, each checked again;
- the response must have an accepted content type and no content encoding (no decompression
  bombs); the body is read in pieces, refused as soon as it passes ``max_bytes``, and the whole
  call must finish within ``timeout_s`` (a server that trickles bytes is cut off too).

Failures raise :class:`WebError` with a :class:`FailureReason` code, so callers can record why.
"""

from __future__ import annotations

import http.client
import ipaddress
import re
import socket
import ssl
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any
from urllib.parse import urljoin, urlsplit

from audit import constants

REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
READ_PIECE_BYTES = 64 * 1024
USER_AGENT = "TheoriaAudit/1.0 (claim verification; +https://theoria.ai)"
# socket.getaddrinfo or a stand-in: (host, port, type=...) -> [(family, type, proto, canonname,
# sockaddr)], the address first in sockaddr
Resolver = Callable[..., list[tuple[Any, ...]]]


class FailureReason(str, Enum):
    """Why an external call did not produce a usable response."""

    RESIDENCY = "residency", "Data residency forbids external calls"
    INVALID_URL = "invalid_url", "Invalid URL"
    SCHEME = "scheme", "Scheme not allowed"
    DOMAIN = "domain", "Domain not on the allow-list"
    PRIVATE_ADDRESS = "private_address", "Host resolves to a non-public address"
    DNS = "dns", "Host name did not resolve"
    CONNECTION = "connection", "Connection failed"
    TIMEOUT = "timeout", "Time limit exceeded"
    TOO_LARGE = "too_large", "Response larger than the size limit"
    CONTENT_TYPE = "content_type", "Content type not accepted"
    REDIRECTS = "redirects", "Too many redirects"
    HTTP_STATUS = "http_status", "Unexpected HTTP status"
    MALFORMED = "malformed", "Malformed response"

    label: str  # set on each member by __new__

    def __new__(cls, value: str, label: str) -> FailureReason:
        member = str.__new__(cls, value)
        member._value_ = value
        member.label = label
        return member


class WebError(Exception):
    """An external call failed or was refused; ``reason`` says why, ``url`` where."""

    def __init__(
        self, reason: FailureReason, message: str, *, url: str = "", status: int | None = None
    ) -> None:
        super().__init__(message)
        self.reason = reason
        self.url = url
        self.status = status

    @property
    def message(self) -> str:
        return str(self.args[0]) if self.args else ""


@dataclass(frozen=True)
class FetchPolicy:
    """What one call may do: where it may go, how long it may take and how much it may read."""

    allowed_domains: tuple[str, ...]
    allow_private: bool = False
    timeout_s: float = constants.WEB_TIMEOUT_S
    max_bytes: int = constants.WEB_MAX_RESPONSE_BYTES
    max_redirects: int = constants.WEB_MAX_REDIRECTS
    content_types: tuple[str, ...] = ()  # accepted media types; empty accepts any
    verify_tls: bool = True


@dataclass
class FetchResponse:
    """A successful response: final URL, status, media type and the (capped) body."""

    url: str
    status: int
    content_type: str
    body: bytes
    redirects: list[str] = field(default_factory=list)
    address: str = ""
    duration_ms: float = 0.0

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", errors="replace")


def normalize_domain(entry: str) -> str:
    """Lower-case an allow-list entry and strip a leading ``*.``/``.`` and a trailing dot."""
    entry = (entry or "").strip().lower()
    if entry.startswith("*."):
        entry = entry[2:]
    return entry.strip(".")


# top-level names that are never public (RFC 6761, RFC 6762, RFC 8375, RFC 9476, common private ones)
SPECIAL_USE_TLDS = frozenset(
    "localhost local localdomain internal intranet lan home corp private test example invalid onion arpa alt".split()
)
_LABEL_RE = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?")
# The shape of an allow-list entry as the API schema declares it (audit.api.views.workspace_settings):
# an optional "*.", labels as _LABEL_RE (any letter case), a top-level name of letters or xn--.
# allowed_domain_problem checks more (special-use names, IDNA); every name it takes as ASCII fits.
ALLOWED_DOMAIN_PATTERN = r"^\s*(\*\.)?([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+([A-Za-z]{2,63}|[Xx][Nn]--[A-Za-z0-9-]{1,59})\.?\s*$"


def allowed_domain_problem(entry: object) -> str | None:
    """Why ``entry`` cannot be on a workspace's web allow-list (None when it can).

    Only a real public host name can: two labels at least, letters, digits and inner hyphens, a
    top-level name of letters (or an xn-- one); never a wildcard alone, an address (the
    allow-list is by name; the fetcher checks the addresses a name resolves to), a port or a
    path, nor a special-use name such as ``localhost``, ``*.internal`` or ``metadata.local``.
    A leading ``*.`` is allowed: subdomains are always included.
    """
    if not isinstance(entry, str):
        return "must be a host name (text)."
    raw = entry.strip()
    name = normalize_domain(raw)
    shown = f'"{raw[:80]}"'
    if not name or "*" in name:
        return f"{shown} is a wildcard; name the domain (its subdomains are included)."
    if any(ch in name for ch in "/:@?#[] \\"):
        return f"{shown} is not a host name: give the name only, without scheme, port or path."
    try:
        ipaddress.ip_address(name)
    except ValueError:
        pass
    else:
        return f"{shown} is an address; the allow-list takes public host names only."
    try:
        name = name.encode("idna").decode("ascii")
    except UnicodeError:
        return f"{shown} is not a valid host name."
    labels = name.split(".")
    if len(name) > 253 or not all(_LABEL_RE.fullmatch(label) for label in labels):
        return f"{shown} is not a valid host name."
    if len(labels) < 2:
        return f"{shown} is not a public host name (a name of one label is local)."
    tld = labels[-1]
    if tld in SPECIAL_USE_TLDS:
        return f"{shown} is not a public host name (.{tld} is for local or special use)."
    if not (tld.isalpha() or tld.startswith("xn--")):
        return f"{shown} is not a public host name (.{tld} is no top-level domain)."
    return None


def host_allowed(host: str, allowed_domains: Iterable[str]) -> bool:
    """Return whether ``host`` is an allowed domain or a subdomain of one."""
    host = normalize_domain(host)
    for entry in allowed_domains:
        domain = normalize_domain(entry)
        if domain and (host == domain or host.endswith("." + domain)):
            return True
    return False


# Ranges Python's ``is_global`` counts as global but that no server should be sent to: the IPv6
# transition mechanisms carry an IPv4 address inside (6to4 2002::/16, Teredo 2001::/32, NAT64
# 64:ff9b::/96 and 64:ff9b:1::/48, IPv4-compatible ::/96), so "2002:7f00:1::" is 127.0.0.1 through
# a relay; plus the old 6bone, the IPv6 documentation ranges and the 6to4 relay anycast block.
NON_PUBLIC_NETWORKS = tuple(
    ipaddress.ip_network(net)
    for net in (
        "2002::/16",
        "2001::/32",
        "64:ff9b::/96",
        "64:ff9b:1::/48",
        "::/96",
        "3ffe::/16",
        "2001:db8::/32",
        "3fff::/20",
        "192.88.99.0/24",
        "100.64.0.0/10",
        "192.0.0.0/24",
        "198.18.0.0/15",
    )
)


def address_is_public(address: str) -> bool:
    """Return whether an IP address may be contacted from a server (globally routable unicast,
    not a transition address that carries another one inside)."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if any(ip.version == net.version and ip in net for net in NON_PUBLIC_NETWORKS):
        return False
    if (
        ip.is_private
        or ip.is_loopback
        or ip.is_link_local
        or ip.is_multicast
        or ip.is_reserved
        or ip.is_unspecified
    ):
        return False
    return ip.is_global


@dataclass(frozen=True)
class _Target:
    scheme: str
    host: str
    port: int
    path: str  # path and query, as sent on the request line


def check_url(url: str, policy: FetchPolicy) -> _Target:
    """Validate a URL against the scheme rule and the allow-list; raise WebError if refused."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise WebError(FailureReason.INVALID_URL, f"invalid URL: {exc}", url=url) from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise WebError(
            FailureReason.SCHEME,
            f"scheme {scheme or '(none)'!r} is not allowed; only http and https",
            url=url,
        )
    if parts.username is not None or parts.password is not None:
        raise WebError(FailureReason.INVALID_URL, "URLs with credentials are refused", url=url)
    host = (parts.hostname or "").rstrip(".")
    if not host:
        raise WebError(FailureReason.INVALID_URL, "URL has no host", url=url)
    try:
        host = host.encode("idna").decode("ascii").lower()
    except UnicodeError:
        raise WebError(FailureReason.INVALID_URL, f"invalid host name {host!r}", url=url) from None
    if not host_allowed(host, policy.allowed_domains):
        raise WebError(FailureReason.DOMAIN, f"host {host} is not on the workspace allow-list", url=url)
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    return _Target(scheme, host, port or (443 if scheme == "https" else 80), path)


def resolve(
    target: _Target, policy: FetchPolicy, *, resolver: Resolver = socket.getaddrinfo, url: str = ""
) -> str:
    """Resolve the host, check every address, and return the one to connect to."""
    try:
        infos = resolver(target.host, target.port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError, OSError) as exc:
        raise WebError(FailureReason.DNS, f"host {target.host} did not resolve: {exc}", url=url) from None
    addresses: list[str] = [info[4][0] for info in infos]
    if not addresses:
        raise WebError(FailureReason.DNS, f"host {target.host} did not resolve", url=url)
    if not policy.allow_private:
        for address in addresses:
            try:
                public = address_is_public(address)
            except ValueError:
                public = False
            if not public:
                raise WebError(
                    FailureReason.PRIVATE_ADDRESS,
                    f"host {target.host} resolves to non-public address {address}",
                    url=url,
                )
    return addresses[0]


class _PinnedHTTPConnection(http.client.HTTPConnection):
    """An HTTP connection to an address checked beforehand (the Host header keeps the name)."""

    def __init__(self, host: str, port: int, address: str, timeout: float) -> None:
        super().__init__(host, port, timeout=timeout)
        self._address = address

    def connect(self) -> None:
        self.sock = socket.create_connection((self._address, self.port), self.timeout)


class _PinnedHTTPSConnection(http.client.HTTPSConnection):
    """An HTTPS connection to a checked address; the certificate is verified for the host name."""

    def __init__(self, host: str, port: int, address: str, timeout: float, context: ssl.SSLContext) -> None:
        super().__init__(host, port, timeout=timeout, context=context)
        self._address = address
        self._tls = context  # the one HTTPSConnection keeps as its private _context

    def connect(self) -> None:
        sock = socket.create_connection((self._address, self.port), self.timeout)
        self.sock = self._tls.wrap_socket(sock, server_hostname=self.host)


def _media_type(header: str | None) -> str:
    return (header or "").split(";", 1)[0].strip().lower()


def _remaining(deadline: float, url: str) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise WebError(FailureReason.TIMEOUT, "time limit exceeded", url=url)
    return left


def safe_fetch(
    url: str,
    policy: FetchPolicy,
    *,
    headers: dict[str, str] | None = None,
    resolver: Resolver = socket.getaddrinfo,
    method: str = "GET",
    body: bytes | None = None,
) -> FetchResponse:
    """GET (or ``method`` with ``body``: webhooks POST) ``url`` under ``policy`` (see the module
    docstring) and return the response.

    Raise :class:`WebError` on any refusal or failure; nothing is read past the limits.
    """
    started = time.monotonic()
    deadline = started + policy.timeout_s
    redirects: list[str] = []
    current = url
    while True:
        target = check_url(current, policy)
        address = resolve(target, policy, resolver=resolver, url=current)
        timeout = _remaining(deadline, current)
        conn: http.client.HTTPConnection
        if target.scheme == "https":
            context = ssl.create_default_context()
            if not policy.verify_tls:
                context.check_hostname = False
                context.verify_mode = ssl.CERT_NONE
            conn = _PinnedHTTPSConnection(target.host, target.port, address, timeout, context)
        else:
            conn = _PinnedHTTPConnection(target.host, target.port, address, timeout)
        try:
            status, location, content_type, payload = _exchange(
                conn, target, current, policy, deadline, headers, method=method, body=body
            )
        finally:
            conn.close()
        if status in REDIRECT_STATUSES and location:
            if len(redirects) >= policy.max_redirects:
                raise WebError(
                    FailureReason.REDIRECTS, f"more than {policy.max_redirects} redirects", url=current
                )
            redirects.append(current)
            current = urljoin(current, location)
            continue
        return FetchResponse(
            url=current,
            status=status,
            content_type=content_type,
            body=payload,
            redirects=redirects,
            address=address,
            duration_ms=(time.monotonic() - started) * 1000.0,
        )


# long: one HTTP exchange: every limit is checked on the same socket as it is read
def _exchange(
    conn: http.client.HTTPConnection,
    target: _Target,
    url: str,
    policy: FetchPolicy,
    deadline: float,
    headers: dict[str, str] | None,
    *,
    method: str = "GET",
    body: bytes | None = None,
) -> tuple[int, str, str, bytes]:
    """Send one request and read its answer within the limits; return status, location, type, body."""
    request_headers = {
        "User-Agent": USER_AGENT,
        "Accept-Encoding": "identity",
        "Accept": ", ".join(policy.content_types) or "*/*",
    }
    request_headers.update(headers or {})
    try:
        conn.request(method, target.path, body=body, headers=request_headers)
        sock = conn.sock  # getresponse() drops conn.sock when the server closes after the body
        sock.settimeout(_remaining(deadline, url))
        response = conn.getresponse()
        status = response.status
        if status in REDIRECT_STATUSES:
            return status, response.getheader("Location", ""), "", b""
        if not 200 <= status < 300:
            raise WebError(
                FailureReason.HTTP_STATUS, f"HTTP {status} from {target.host}", url=url, status=status
            )
        encoding = (response.getheader("Content-Encoding") or "identity").strip().lower()
        if encoding != "identity":
            raise WebError(
                FailureReason.CONTENT_TYPE,
                f"content encoding {encoding!r} is not accepted",
                url=url,
                status=status,
            )
        content_type = _media_type(response.getheader("Content-Type"))
        if policy.content_types and content_type not in policy.content_types:
            raise WebError(
                FailureReason.CONTENT_TYPE,
                f"content type {content_type or '(none)'!r} is not one of {', '.join(policy.content_types)}",
                url=url,
                status=status,
            )
        declared = response.getheader("Content-Length")
        if declared and declared.isdigit() and int(declared) > policy.max_bytes:
            raise WebError(
                FailureReason.TOO_LARGE,
                f"declared length {declared} bytes exceeds the {policy.max_bytes}-byte limit",
                url=url,
                status=status,
            )
        pieces: list[bytes] = []
        size = 0
        while True:
            sock.settimeout(_remaining(deadline, url))
            piece = response.read1(READ_PIECE_BYTES)
            if not piece:
                break
            size += len(piece)
            if size > policy.max_bytes:
                raise WebError(
                    FailureReason.TOO_LARGE,
                    f"body exceeds the {policy.max_bytes}-byte limit",
                    url=url,
                    status=status,
                )
            pieces.append(piece)
        return status, "", content_type, b"".join(pieces)
    except WebError:
        raise
    except (socket.timeout, TimeoutError):
        raise WebError(
            FailureReason.TIMEOUT, f"no answer from {target.host} within the time limit", url=url
        ) from None
    except ssl.SSLError as exc:
        raise WebError(FailureReason.CONNECTION, f"TLS failure with {target.host}: {exc}", url=url) from None
    except (http.client.HTTPException, OSError) as exc:
        raise WebError(
            FailureReason.CONNECTION, f"connection to {target.host} failed: {exc}", url=url
        ) from None


def post_json(
    url: str, payload: dict[str, Any], *, allow_private: bool = False, resolver: Resolver = socket.getaddrinfo
) -> FetchResponse:
    """POST ``payload`` as JSON to a webhook ``url`` (an alert channel, the deep-check
    announcement) under the same guard as Audit-Web: http(s) only, no credentials in the URL,
    every resolved address public and pinned (``allow_private``: only where a deployment or a
    test says so), no redirects, ``WEBHOOK_TIMEOUT_S``, a reply read to
    ``WEBHOOK_MAX_RESPONSE_BYTES``. Raises WebError on any refusal or failure.
    """
    import json

    host = urlsplit(url).hostname or ""
    policy = FetchPolicy(
        allowed_domains=(host,) if host else (),
        allow_private=allow_private,
        timeout_s=constants.WEBHOOK_TIMEOUT_S,
        max_bytes=constants.WEBHOOK_MAX_RESPONSE_BYTES,
        max_redirects=0,
    )
    return safe_fetch(
        url,
        policy,
        method="POST",
        body=json.dumps(payload).encode(),
        headers={"Content-Type": "application/json"},
        resolver=resolver,
    )

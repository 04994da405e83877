"""The safe fetcher against a real HTTP server on 127.0.0.1 (audit.pipeline.web.fetch)."""

from __future__ import annotations

import socket
import time

import pytest

from audit.pipeline.web.fetch import (
    FailureReason,
    FetchPolicy,
    WebError,
    address_is_public,
    host_allowed,
    safe_fetch,
)

from .conftest import Reply, stream_reply, xml_reply

TEST_POLICY = FetchPolicy(allowed_domains=("127.0.0.1",), allow_private=True, timeout_s=3.0)


def _fail(url: str, policy: FetchPolicy = TEST_POLICY, **kwargs) -> WebError:
    with pytest.raises(WebError) as info:
        safe_fetch(url, policy, **kwargs)
    return info.value


def test_it_fetches_an_allow_listed_url_and_reports_status_type_and_body(web_server):
    web_server.route("/doc", xml_reply("<a>ok</a>"))
    response = safe_fetch(web_server.url("/doc?x=1"), TEST_POLICY)
    assert (response.status, response.content_type, response.body) == (200, "text/xml", b"<a>ok</a>")
    assert response.address == "127.0.0.1" and response.redirects == []
    seen = web_server.requests[0]
    assert seen.query == {"x": ["1"]} and seen.headers["Accept-Encoding"] == "identity"


def test_it_refuses_a_host_not_on_the_allow_list_without_contacting_it(web_server):
    web_server.route("/doc", xml_reply("<a/>"))
    error = _fail(web_server.url("/doc", host="localhost"))
    assert error.reason is FailureReason.DOMAIN and "localhost" in error.message
    assert web_server.requests == []


@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://127.0.0.1/x", "gopher://127.0.0.1:70/_x"])
def test_it_refuses_schemes_other_than_http_and_https(url):
    assert _fail(url).reason is FailureReason.SCHEME


def test_it_refuses_urls_with_credentials(web_server):
    assert _fail(f"http://user:pw@127.0.0.1:{web_server.port}/").reason is FailureReason.INVALID_URL
    assert web_server.requests == []


def test_it_follows_an_allowed_redirect_and_refuses_one_to_a_disallowed_host(web_server):
    web_server.route("/hop", Reply(302, {"Location": "/doc"}))
    web_server.route("/doc", xml_reply("<a/>"))
    response = safe_fetch(web_server.url("/hop"), TEST_POLICY)
    assert response.url == web_server.url("/doc") and response.redirects == [web_server.url("/hop")]

    web_server.requests.clear()
    web_server.route("/away", Reply(301, {"Location": web_server.url("/secret", host="localhost")}))
    error = _fail(web_server.url("/away"))
    assert error.reason is FailureReason.DOMAIN and error.url.endswith("/secret")
    assert web_server.paths() == ["/away"]  # the disallowed hop was never requested


def test_it_stops_after_the_redirect_limit(web_server):
    web_server.route("/loop", Reply(302, {"Location": "/loop"}))
    error = _fail(web_server.url("/loop"), FetchPolicy(("127.0.0.1",), allow_private=True, max_redirects=3))
    assert error.reason is FailureReason.REDIRECTS and len(web_server.requests) == 4


def test_it_refuses_a_host_resolving_to_a_private_address_when_the_setting_is_off(web_server):
    web_server.route("/doc", xml_reply("<a/>"))
    policy = FetchPolicy(allowed_domains=("localhost", "127.0.0.1"), allow_private=False)
    error = _fail(web_server.url("/doc", host="localhost"), policy)
    assert error.reason is FailureReason.PRIVATE_ADDRESS and "127.0.0.1" in error.message
    assert _fail(web_server.url("/doc"), policy).reason is FailureReason.PRIVATE_ADDRESS
    assert web_server.requests == []


def test_it_refuses_a_name_when_any_of_its_addresses_is_private():
    def resolver(host, port, type=0):  # a DNS answer mixing a public and an internal address
        return [
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.216.34", port)),
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("169.254.169.254", port)),
        ]

    error = _fail("http://example.org/", FetchPolicy(("example.org",)), resolver=resolver)
    assert error.reason is FailureReason.PRIVATE_ADDRESS and "169.254.169.254" in error.message


def test_it_connects_to_the_address_it_checked_not_to_a_second_resolution(web_server):
    answers = iter(["127.0.0.1", "10.9.9.9"])  # a rebinding DNS: the second answer differs

    def resolver(host, port, type=0):
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (next(answers), port))]

    web_server.route("/doc", xml_reply("<a/>"))
    policy = FetchPolicy(allowed_domains=("docs.test",), allow_private=True, timeout_s=3.0)
    response = safe_fetch(f"http://docs.test:{web_server.port}/doc", policy, resolver=resolver)
    assert response.address == "127.0.0.1" and web_server.requests[0].host == f"docs.test:{web_server.port}"


@pytest.mark.parametrize(
    "address,public",
    [
        ("127.0.0.1", False),
        ("10.1.2.3", False),
        ("172.16.0.1", False),
        ("192.168.1.1", False),
        ("169.254.169.254", False),
        ("0.0.0.0", False),
        ("224.0.0.1", False),
        ("100.64.0.1", False),
        ("::1", False),
        ("fe80::1", False),
        ("::ffff:10.0.0.1", False),
        ("fc00::1", False),
        ("8.8.8.8", True),
        ("130.14.29.110", True),
        ("2606:4700::1111", True),
    ],
)
def test_it_classifies_addresses(address, public):
    assert address_is_public(address) is public


def test_it_matches_allowed_domains_and_their_subdomains_only():
    assert host_allowed("eutils.ncbi.nlm.nih.gov", ["nih.gov"])
    assert host_allowed("ARXIV.org", ["*.arxiv.org", "arxiv.org"])
    assert not host_allowed("evilarxiv.org", ["arxiv.org"])
    assert not host_allowed("arxiv.org.evil.com", ["arxiv.org"])


def test_it_times_out_on_a_server_that_does_not_answer(web_server):
    web_server.route("/slow", Reply(200, {"Content-Type": "text/xml"}, b"<a/>", delay_s=5))
    started = time.monotonic()
    error = _fail(web_server.url("/slow"), FetchPolicy(("127.0.0.1",), allow_private=True, timeout_s=0.5))
    assert error.reason is FailureReason.TIMEOUT
    assert time.monotonic() - started < 2


def test_it_cuts_off_a_server_that_trickles_bytes_past_the_time_limit(web_server):
    web_server.route("/drip", stream_reply(10_000, piece=10, pause_s=0.05))
    started = time.monotonic()
    error = _fail(web_server.url("/drip"), FetchPolicy(("127.0.0.1",), allow_private=True, timeout_s=0.6))
    assert error.reason is FailureReason.TIMEOUT
    assert time.monotonic() - started < 2


def test_it_refuses_a_50_mb_streamed_body_at_the_cap_quickly(web_server):
    web_server.route("/huge", stream_reply(50 * 1024 * 1024))
    policy = FetchPolicy(("127.0.0.1",), allow_private=True, max_bytes=1024 * 1024, timeout_s=10)
    started = time.monotonic()
    error = _fail(web_server.url("/huge"), policy)
    elapsed = time.monotonic() - started
    assert error.reason is FailureReason.TOO_LARGE and "1048576" in error.message
    assert elapsed < 2, f"took {elapsed:.2f}s"


def test_it_refuses_a_declared_length_over_the_cap_before_reading(web_server):
    web_server.route("/big", Reply(200, {"Content-Type": "text/xml"}, b"x" * 5000))
    error = _fail(web_server.url("/big"), FetchPolicy(("127.0.0.1",), allow_private=True, max_bytes=1000))
    assert error.reason is FailureReason.TOO_LARGE and "declared" in error.message


def test_it_refuses_unaccepted_content_types_and_encodings(web_server):
    web_server.route("/exe", Reply(200, {"Content-Type": "application/octet-stream"}, b"MZ"))
    web_server.route("/gz", Reply(200, {"Content-Type": "text/xml", "Content-Encoding": "gzip"}, b"\x1f\x8b"))
    policy = FetchPolicy(("127.0.0.1",), allow_private=True, content_types=("text/xml",))
    assert _fail(web_server.url("/exe"), policy).reason is FailureReason.CONTENT_TYPE
    assert _fail(web_server.url("/gz"), policy).reason is FailureReason.CONTENT_TYPE


def test_it_reports_http_errors_and_refused_connections(web_server):
    web_server.route("/down", Reply(503, {"Content-Type": "text/plain"}, b"busy"))
    error = _fail(web_server.url("/down"))
    assert (error.reason, error.status) == (FailureReason.HTTP_STATUS, 503)
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()
    assert _fail(f"http://127.0.0.1:{port}/").reason is FailureReason.CONNECTION

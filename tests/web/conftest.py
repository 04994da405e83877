"""Real HTTP servers on 127.0.0.1 for the web-verification tests, and the documents they serve.

``web_server`` is a threaded stdlib HTTP server: a test registers a handler per path
(``server.route("/esearch.fcgi", xml_response(...))``) and reads back every request it received
(``server.requests``), so a test can prove what left the system and what never reached it.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import pytest

PUBMED_PATH = "/entrez/eutils/"
ARXIV_PATH = "/api/query"


@dataclass
class Reply:
    """What a route answers: status, headers and a body (bytes, or an iterable of pieces)."""

    status: int = 200
    headers: dict = field(default_factory=dict)
    body: object = b""
    delay_s: float = 0.0  # wait before answering (timeouts)


@dataclass
class Seen:
    path: str
    query: dict
    headers: dict
    host: str


class LocalServer:
    def __init__(self):
        self.routes: dict[str, object] = {}
        self.requests: list[Seen] = []
        self.stop = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # keep test output clean
                pass

            def do_GET(self):
                parts = urlsplit(self.path)
                server.requests.append(
                    Seen(parts.path, parse_qs(parts.query), dict(self.headers), self.headers.get("Host", ""))
                )
                handler = server.routes.get(parts.path)
                reply = handler(self) if callable(handler) else handler
                if reply is None:
                    reply = Reply(404, {"Content-Type": "text/plain"}, b"not found")
                if reply.delay_s:
                    server.stop.wait(reply.delay_s)
                try:
                    self.send_response(reply.status)
                    body = reply.body
                    for key, value in reply.headers.items():
                        self.send_header(key, value)
                    if isinstance(body, bytes):
                        self.send_header("Content-Length", str(len(body)))
                        self.end_headers()
                        self.wfile.write(body)
                    else:  # a stream: no length, close when done
                        self.send_header("Connection", "close")
                        self.end_headers()
                        for piece in body:
                            if server.stop.is_set():
                                break
                            self.wfile.write(piece)
                            self.wfile.flush()
                        self.close_connection = True
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.httpd.block_on_close = False
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.thread.start()

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"

    def route(self, path: str, reply) -> None:
        self.routes[path] = reply

    def paths(self) -> list[str]:
        return [seen.path for seen in self.requests]

    def close(self):
        self.stop.set()
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def web_server():
    server = LocalServer()
    yield server
    server.close()


def xml_reply(text: str, content_type: str = "text/xml; charset=UTF-8") -> Reply:
    return Reply(200, {"Content-Type": content_type}, text.encode("utf-8"))


def stream_reply(
    total_bytes: int, piece: int = 64 * 1024, content_type: str = "text/xml", pause_s: float = 0.0
) -> Reply:
    """A body of ``total_bytes`` sent as a stream without Content-Length."""

    def pieces():
        sent = 0
        while sent < total_bytes:
            size = min(piece, total_bytes - sent)
            sent += size
            if pause_s:
                time.sleep(pause_s)
            yield b"x" * size

    return Reply(200, {"Content-Type": content_type}, pieces())


def esearch_xml(ids: list[str]) -> str:
    id_list = "".join(f"<Id>{i}</Id>" for i in ids)
    return (
        f'<?xml version="1.0" encoding="UTF-8" ?>\n<eSearchResult><Count>{len(ids)}</Count>'
        f"<RetMax>{len(ids)}</RetMax><RetStart>0</RetStart><IdList>{id_list}</IdList></eSearchResult>"
    )


def efetch_xml(articles: list[dict]) -> str:
    """PubMed efetch XML for ``[{"pmid", "title", "abstract", "year", "month"}]``."""
    items = []
    for a in articles:
        items.append(
            f'<PubmedArticle><MedlineCitation Status="MEDLINE" Owner="NLM"><PMID Version="1">{a["pmid"]}</PMID>'
            f'<Article PubModel="Print"><Journal><JournalIssue CitedMedium="Internet"><PubDate>'
            f"<Year>{a.get('year', '2024')}</Year><Month>{a.get('month', 'Mar')}</Month></PubDate></JournalIssue>"
            f"<Title>{a.get('journal', 'Journal of Neuroscience')}</Title></Journal>"
            f"<ArticleTitle>{a['title']}</ArticleTitle>"
            f'<Abstract><AbstractText Label="RESULTS">{a["abstract"]}</AbstractText></Abstract>'
            f"</Article></MedlineCitation></PubmedArticle>"
        )
    return '<?xml version="1.0" ?>\n<PubmedArticleSet>' + "".join(items) + "</PubmedArticleSet>"


def atom_xml(entries: list[dict]) -> str:
    """An arXiv Atom feed for ``[{"id", "title", "summary", "published"}]``."""
    items = []
    for e in entries:
        items.append(
            f"<entry><id>http://arxiv.org/abs/{e['id']}</id><updated>{e.get('published', '2023-05-01T00:00:00Z')}</updated>"
            f"<published>{e.get('published', '2023-05-01T00:00:00Z')}</published><title>{e['title']}</title>"
            f"<summary>{e['summary']}</summary><author><name>A. Author</name></author>"
            f'<link href="http://arxiv.org/abs/{e["id"]}" rel="alternate" type="text/html"/></entry>'
        )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n<feed xmlns="http://www.w3.org/2005/Atom">'
        '<title type="html">ArXiv Query</title><id>http://arxiv.org/api/x</id>' + "".join(items) + "</feed>"
    )


# --- Django side: settings pointed at the local server, and an answer with weak claims ----------

WEAK_CLAIM = "Long-term potentiation requires NMDA receptor activation."
STRONG_CLAIM = "The hippocampus is located in the medial temporal lobe."
KB_SECRET = "Internal memo 7731: patient cohort B showed CONFIDENTIAL-KB-TEXT results."
SUPPORTING_ABSTRACT = (
    "Long-term potentiation requires NMDA receptor activation at hippocampal synapses; "
    "blocking NMDA receptors prevents long-term potentiation."
)


@pytest.fixture
def web_settings(settings, web_server):
    """THEORIA pointed at the local server, private addresses allowed, short limits."""
    settings.THEORIA = {
        **settings.THEORIA,
        "WEB_ALLOW_PRIVATE_ADDRESSES": True,
        "PUBMED_BASE_URL": web_server.url(PUBMED_PATH),
        "ARXIV_BASE_URL": web_server.url(ARXIV_PATH),
        "WEB_TIMEOUT_S": 2.0,
        "WEB_MAX_RESPONSE_BYTES": 1024 * 1024,
    }
    return settings


@pytest.fixture
def web_workspace(workspace):
    workspace.web_allowed_domains = ["127.0.0.1"]
    workspace.allow_external_calls = True
    workspace.save(update_fields=["web_allowed_domains", "allow_external_calls"])
    return workspace


def make_answer(
    workspace,
    *,
    weak_text: str = WEAK_CLAIM,
    query: str = "Question from patient John Doe about LTP",
    local_uri: str = "kb://memo-7731",
):
    """An audited answer: c1 weak (NEI, one unhelpful KB passage), c2 supported; and its run."""
    from audit.models import Answer, Claim, Evidence, VerificationRun

    text = f"{weak_text} {STRONG_CLAIM}"
    answer = Answer.objects.create(
        workspace=workspace,
        query=query,
        text=text,
        original_text=text,
        mode="audit-local",
        domain="neuroscience",
    )
    weak = Claim.objects.create(
        answer=answer,
        claim_id="c1",
        text=weak_text,
        span_start=0,
        span_end=len(weak_text),
        label="NEI",
        machine_label="NEI",
        verdict="not_found",
        confidence=0.22,
        importance="material",
        methods=["entailment"],
    )
    Evidence.objects.create(
        claim=weak,
        rank=0,
        source_type="kb",
        source_id="kb_chunk_7731",
        title="Memo 7731",
        uri=local_uri,
        snippet=KB_SECRET,
        hash="sha256:" + "0" * 64,
        relevance=0.3,
        entailment=0.1,
    )
    strong = Claim.objects.create(
        answer=answer,
        claim_id="c2",
        text=STRONG_CLAIM,
        span_start=len(weak_text) + 1,
        span_end=len(text),
        label="SUPPORTED",
        machine_label="SUPPORTED",
        verdict="supported",
        confidence=0.95,
        importance="material",
        methods=["entailment"],
    )
    Evidence.objects.create(
        claim=strong,
        rank=0,
        source_type="kb",
        source_id="kb_chunk_1",
        title="Anatomy",
        uri="kb://anatomy",
        snippet=STRONG_CLAIM,
        hash="sha256:" + "1" * 64,
        relevance=0.9,
        entailment=0.93,
    )
    VerificationRun.objects.create(answer=answer, mode="audit-local", claim_count=2, methods=["entailment"])
    return answer


def serve_pubmed(server, articles: list[dict]):
    server.route(PUBMED_PATH + "esearch.fcgi", xml_reply(esearch_xml([a["pmid"] for a in articles])))
    server.route(PUBMED_PATH + "efetch.fcgi", xml_reply(efetch_xml(articles)))


def serve_arxiv(server, entries: list[dict]):
    server.route(ARXIV_PATH, xml_reply(atom_xml(entries), content_type="application/atom+xml"))


SUPPORTING_ARTICLE = {
    "pmid": "31415",
    "title": "NMDA receptors gate long-term potentiation",
    "abstract": SUPPORTING_ABSTRACT,
    "year": "2024",
    "month": "Jan",
}

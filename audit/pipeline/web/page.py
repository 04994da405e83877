"""The generic allow-listed page fetcher: an HTML (or plain-text) page to text.

It fetches only URLs the claim itself cites (``WebLookup.urls``); the client refuses any that
is not on the allow-list. Scripts, styles and other non-content elements are dropped; the title
and a publication date come from ``<title>`` and the usual citation meta tags.
"""

from __future__ import annotations

import hashlib
from datetime import date
from html.parser import HTMLParser

from .base import WebClient, WebDocument, WebLookup, WebProvider, now_utc

PAGE_TYPES = ("text/html", "application/xhtml+xml", "text/plain")
SKIPPED_TAGS = frozenset(
    {"script", "style", "noscript", "template", "svg", "head", "nav", "footer", "iframe"}
)
BLOCK_TAGS = frozenset(
    {
        "p",
        "div",
        "br",
        "li",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "tr",
        "section",
        "article",
        "blockquote",
        "pre",
        "dd",
        "dt",
    }
)
TITLE_META = ("citation_title", "dc.title", "og:title")
DATE_META = ("citation_publication_date", "citation_date", "article:published_time", "dc.date", "date")


class _TextExtractor(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title = ""
        self.meta: dict[str, str] = {}
        self._skip = 0
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "meta":
            values = dict(attrs)
            key = (values.get("name") or values.get("property") or "").lower()
            content = values.get("content")
            if key and content:
                self.meta.setdefault(key, content)
        elif tag == "title":
            self._in_title = True
        elif tag in SKIPPED_TAGS:
            self._skip += 1
        elif tag in BLOCK_TAGS:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        elif tag in SKIPPED_TAGS and self._skip:
            self._skip -= 1
        elif tag in BLOCK_TAGS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
        elif not self._skip:
            self.parts.append(data)


def well_formed_tags(html: str) -> str:
    """``html`` with every "<" that opens no tag written as "&lt;", and an unclosed comment cut.

    A "<" opens a tag when a ">" follows before the next "<" (a comment: when "-->" follows).
    The standard library's parser reads an unclosed tag or comment on to the end of the page,
    from each one again, which costs the square of the page's length ("<a<a<a…", '<a x="<a x="…'
    or "<!--<!--…"); after this pass each character is read a bounded number of times. Linear:
    the next ">" is looked up once and reused until the scan passes it.
    """
    out: list[str] = []
    pos = 0
    gt = -2  # the next ">" at or after the current "<" (-1: none left)
    while True:
        lt = html.find("<", pos)
        if lt == -1:
            out.append(html[pos:])
            break
        if html.startswith("<!--", lt):
            end = html.find("-->", lt + 4)
            if end == -1:  # a comment that never closes hides the rest of the page, as in a browser
                out.append(html[pos:lt])
                break
            out.append(html[pos : end + 3])
            pos = end + 3
            continue
        if gt != -1 and gt < lt:
            gt = html.find(">", lt + 1)
        if gt == -1:  # no ">" is left: every "<" from here on is text
            out.append(html[pos:].replace("<", "&lt;"))
            break
        following = html.find("<", lt + 1, gt)
        if following != -1:  # another "<" before the ">": this one is text
            out.append(html[pos:lt] + "&lt;")
            pos = lt + 1
            continue
        out.append(html[pos : gt + 1])
        pos = gt + 1
    return "".join(out)


def html_to_text(html: str) -> tuple[str, str, dict[str, str]]:
    """Return (title, text, meta) of an HTML page; text keeps paragraph breaks."""
    parser = _TextExtractor()
    parser.feed(well_formed_tags(html))
    parser.close()
    lines = (" ".join(line.split()) for line in "".join(parser.parts).split("\n"))
    text = "\n".join(line for line in lines if line)
    return " ".join(parser.title.split()), text, parser.meta


def meta_date(meta: dict[str, str]) -> date | None:
    for key in DATE_META:
        value = (meta.get(key) or "").strip().replace("/", "-")
        if len(value) >= 4 and value[:4].isdigit():
            try:
                return date.fromisoformat(value[:10])
            except ValueError:
                return date(int(value[:4]), 1, 1)
    return None


class PageProvider(WebProvider):
    """Fetch the allow-listed pages a claim cites and return their text."""

    name = "page"
    content_types = PAGE_TYPES

    def find(self, lookup: WebLookup, *, client: WebClient) -> list[WebDocument]:
        documents = []
        for url in lookup.urls[: lookup.max_results]:
            response = self._get(client, url, lookup.query)
            raw = response.text
            meta: dict[str, str]
            if response.content_type == "text/plain":
                title, text, meta = (
                    "",
                    "\n".join(" ".join(ln.split()) for ln in raw.splitlines() if ln.strip()),
                    {},
                )
            else:
                title, text, meta = html_to_text(raw)
            if not text:
                continue
            title = next((meta[k] for k in TITLE_META if meta.get(k)), title)
            digest = hashlib.sha256(response.url.encode("utf-8")).hexdigest()[:16]
            documents.append(
                WebDocument(
                    provider=self.name,
                    source_id=f"url:{digest}",
                    url=response.url,
                    title=title[:500],
                    text=text,
                    query=lookup.query,
                    retrieved_at=now_utc(),
                    published=meta_date(meta),
                    request_url=url,
                )
            )
        return documents

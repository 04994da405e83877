"""Evidence retrieval for claims (docs/SPEC_NOTES.md#evidence-and-retrieval).

For each claim: the passages its citation anchors name come first when the anchor is valid
(relevance 1.0, ``cited=True``); otherwise, and in addition, hybrid search (dense cosine + BM25,
see ``index.HybridIndex``) over the passages sent with the request and over the workspace
knowledge base; passages that share a number with a numeric claim get the numeric boost
(+0.2). Claims are embedded once, in one batch, and searched with ``search_many``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

import numpy as np

from audit.constants import MIN_SEARCH_RELEVANCE, Thresholds
from audit.pipeline.encodings import EncodingStore
from audit.pipeline.extraction import split_sentences
from audit.pipeline.index import HybridIndex, SearchIndex
from audit.pipeline.numbers import extract_quantities, shares_number
from audit.pipeline.types import ClaimDraft, EvidenceHit, Passage

Embed = Callable[[list[str]], Any]  # texts -> one vector per text (the process embedder's encode)

CONTEXT_CHUNK_SENTENCES = 3  # request passages are searched as windows of this many sentences
SEARCH_FANOUT = 3  # ask each index for top_k * this many before merging and boosting

_HEADER_ANCHOR_RE = re.compile(r"^\s*\[(\w[\w.\-]*)\]")


@dataclass
class KnowledgeBase:
    """A workspace KB: an index over chunk ids, a lookup from ids to ``Passage`` and, optionally,
    the chunks' stored vectors by id (so answer-level scoring never embeds a chunk again) and the
    store of its sentences' encodings (so the judge never encodes a chunk's sentence again)."""

    index: SearchIndex
    lookup: Callable[[list[str]], Mapping[str, Passage]]
    vectors: Callable[[list[str]], Mapping[str, np.ndarray]] | None = None
    # its sentences' encodings, computed at ingestion (encodings.py); None: encoded when read
    encodings: EncodingStore | None = None


def as_passages(contexts: Iterable[str | Mapping[str, Any] | Passage] | None) -> list[Passage]:
    """Accept strings, dicts ({"id", "text", "title", "uri", …}) or Passages."""
    out: list[Passage] = []
    for i, c in enumerate(contexts or []):
        if isinstance(c, Passage):
            out.append(c)
        elif isinstance(c, str):
            out.append(Passage(id=f"ctx{i + 1}", text=c))
        elif isinstance(c, dict):
            out.append(
                Passage(
                    id=str(c.get("id") or f"ctx{i + 1}"),
                    text=str(c.get("text") or ""),
                    title=str(c.get("title") or ""),
                    uri=str(c.get("uri") or c.get("url") or ""),
                    source_type=str(c.get("source_type") or "context"),
                    published=_as_date(c.get("published") or c.get("published_at")),
                    domain=str(c.get("domain") or ""),
                    anchors=tuple(str(a) for a in c.get("anchors") or ()),
                )
            )
        else:
            raise TypeError(f"context {i + 1}: expected str, dict or Passage, got {type(c).__name__}")
    return out


def _as_date(value: object) -> date | None:
    """A date from a date, a datetime or an ISO string ("2024-05-01", "2024-05-01T10:00:00Z"); else None."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    try:
        return date.fromisoformat(str(value)[:10])
    except ValueError:
        return None


def anchor_map(passages: list[Passage]) -> dict[str, Passage]:
    """Citation key -> passage: explicit anchors, the id, "cite:<id>", a leading "[n]" header,
    and the 1-based position ("[2]" = the second passage) when nothing else claims that key."""
    amap: dict[str, Passage] = {}
    for p in passages:
        keys = list(p.anchors) + [p.id, f"cite:{p.id}"]
        m = _HEADER_ANCHOR_RE.match(p.text)
        if m:
            keys.append(m.group(1))
        for k in keys:
            amap.setdefault(k.lower(), p)
            amap.setdefault(k.strip("[]").lower(), p)
    for i, p in enumerate(passages, start=1):
        amap.setdefault(str(i), p)
    return amap


def resolve_anchor(anchor: str, amap: dict[str, Passage]) -> Passage | None:
    a = anchor.lower()
    if a in amap:
        return amap[a]
    if a.startswith("cite:"):
        key = a[5:]
        for k, p in amap.items():  # a chunk-hash prefix
            if len(key) >= 6 and k.startswith((key, "cite:" + key)):
                return p
    return None


def _windows(passages: list[Passage]) -> tuple[list[str], list[str], list[int]]:
    ids, texts, owner = [], [], []
    for pi, p in enumerate(passages):
        sents = split_sentences(p.text) or [p.text]
        for j in range(0, len(sents), CONTEXT_CHUNK_SENTENCES):
            ids.append(f"{pi}:{j}")
            texts.append(" ".join(sents[j : j + CONTEXT_CHUNK_SENTENCES]))
            owner.append(pi)
    return ids, texts, owner


def passage_vectors(
    passages: list[Passage], *, kb: KnowledgeBase | None = None, embed: Embed | None = None
) -> list[np.ndarray]:
    """One unit vector per passage, the way search sees it: a knowledge-base chunk's stored vector
    (``kb.vectors``), else the mean of the passage's search windows. Retrieval embedded those
    windows already, so with the process embedder its cache answers and nothing is embedded again."""
    stored: Mapping[str, np.ndarray] = {}
    if kb is not None and kb.vectors is not None:
        wanted = [p.id for p in passages if p.source_type == "kb"]
        stored = kb.vectors(wanted) if wanted else {}
    out: list[np.ndarray | None] = [stored.get(p.id) if p.source_type == "kb" else None for p in passages]
    todo = [i for i, v in enumerate(out) if v is None]
    if todo:
        if embed is None:
            from audit.pipeline.embedding import get_embedder

            embed = get_embedder().encode
        _, texts, owner = _windows([passages[i] for i in todo])
        vecs = np.asarray(embed(texts), dtype=np.float32) if texts else np.zeros((0, 1), np.float32)
        for j, i in enumerate(todo):
            rows = vecs[[k for k, o in enumerate(owner) if o == j]]
            out[i] = rows.mean(axis=0) if len(rows) else None
    result = []
    for v in out:
        v = np.asarray(v, dtype=np.float32)
        norm = float(np.linalg.norm(v))
        if not np.all(np.isfinite(v)) or norm == 0.0:
            raise ValueError("degenerate passage vector")
        result.append(v / norm)
    return result


def _cited(claim: ClaimDraft, amap: dict[str, Passage]) -> dict[str, EvidenceHit]:
    """The passages ``claim``'s citation anchors name (``anchor_map``), in its order, once each."""
    hits: dict[str, EvidenceHit] = {}
    for anchor in claim.citations:
        p = resolve_anchor(anchor, amap)
        if p is not None and p.id not in hits:
            hits[p.id] = EvidenceHit(passage=p, relevance=1.0, cited=True)
    return hits


def retrieve(
    claims: list[ClaimDraft],
    contexts: list[Passage],
    *,
    kb: KnowledgeBase | None = None,
    embed: Embed | None = None,
    thresholds: Thresholds | None = None,
    claim_vecs: np.ndarray | None = None,
) -> list[list[EvidenceHit]]:
    """The evidence hits of each claim, best first (cited passages first)."""
    t = thresholds or Thresholds()  # pure-function default (tests); the audit and the jobs pass theirs
    top_k = t.retrieval_top_k
    if not claims:
        return []
    amap = anchor_map(contexts)
    cited_of = [_cited(claim, amap) for claim in claims]  # the passages a claim cites come first
    if embed is None and (contexts or (claim_vecs is None and kb is not None)):
        from audit.pipeline.embedding import get_embedder

        embed = (
            get_embedder().encode
        )  # the passages' windows are embedded even when the claims' vectors are given
    if claim_vecs is None and embed is not None and (contexts or kb is not None):
        claim_vecs = embed([c.text for c in claims])
    texts = [c.text for c in claims]
    ctx_results: list[list[tuple[str, float]]] = [[] for _ in claims]
    win_owner: dict[str, int] = {}
    if contexts:
        ids, wtexts, owner = _windows(contexts)
        win_owner = dict(zip(ids, owner))
        index = HybridIndex()
        assert embed is not None and claim_vecs is not None  # both set above whenever there are contexts
        index.add(ids, wtexts, embed(wtexts))
        ctx_results = index.search_many(texts, claim_vecs, k=min(len(ids), top_k * SEARCH_FANOUT))
    kb_results: list[list[tuple[str, float]]] = [[] for _ in claims]
    kb_passages: Mapping[str, Passage] = {}
    if kb is not None and len(kb.index):
        assert claim_vecs is not None  # embedded above whenever there is a knowledge base
        kb_results = kb.index.search_many(texts, claim_vecs, k=top_k * SEARCH_FANOUT)
        wanted = sorted({i for res in kb_results for i, _ in res})
        kb_passages = kb.lookup(wanted) if wanted else {}

    all_hits = []
    for ci, claim in enumerate(claims):
        hits = cited_of[ci]
        cq = extract_quantities(claim.text)
        searched: dict[str, EvidenceHit] = {}
        for wid, score in ctx_results[ci]:
            p = contexts[win_owner[wid]]
            if p.id in hits:
                continue
            if p.id not in searched or searched[p.id].relevance < score:
                searched[p.id] = EvidenceHit(passage=p, relevance=score)
        for cid, score in kb_results[ci]:
            chunk = kb_passages.get(cid)
            if chunk is None or chunk.id in hits:
                continue
            if chunk.id not in searched or searched[chunk.id].relevance < score:
                searched[chunk.id] = EvidenceHit(passage=chunk, relevance=score)
        for h in searched.values():
            if shares_number(cq, h.passage.text):
                h.relevance = min(1.0, h.relevance + t.numeric_boost)
        ranked = sorted(
            (h for h in searched.values() if h.relevance >= MIN_SEARCH_RELEVANCE),
            key=lambda h: (-h.relevance, h.passage.id),
        )
        cited = list(hits.values())
        all_hits.append((cited + ranked)[: max(top_k, len(cited))])
    return all_hits


def search_filtered(
    index: SearchIndex,
    text: str,
    vec: np.ndarray,
    *,
    k: int,
    keep: Callable[[list[str]], set[str]],
    numeric_boost: float = 0.0,
    texts: Callable[[list[str]], Mapping[str, str]] | None = None,
) -> list[tuple[str, float]]:
    """The ``k`` best (id, score) pairs of ``index`` for one query among the ids ``keep`` lets through.

    The same scoring as :func:`retrieve` uses for the knowledge base: the index's fused hybrid
    score, plus ``numeric_boost`` for a passage sharing a number with the query (``texts(ids)``
    gives the passages' texts), and nothing below ``MIN_SEARCH_RELEVANCE``. ``keep(ids)`` returns
    the ids that pass the caller's filters, for a whole batch at once. Filters are applied to a
    growing candidate list (``k * SEARCH_FANOUT``, then doubled) until enough pass or the index is
    exhausted, so a narrow filter still finds its passages without scoring the whole index for a wide one.
    """
    size = len(index)
    if not size or k < 1:
        return []
    quantities = extract_quantities(text) if numeric_boost and texts is not None else []
    fetch = min(size, k * SEARCH_FANOUT)
    while True:
        found = index.search(text, vec, k=fetch)
        allowed = keep([i for i, _ in found]) if found else set()
        kept = [(i, float(score)) for i, score in found if i in allowed]
        if quantities and kept and texts is not None:  # quantities are read only when texts is given
            bodies = texts([i for i, _ in kept])
            kept = [
                (
                    i,
                    min(1.0, score + numeric_boost)
                    if shares_number(quantities, bodies.get(i, ""))
                    else score,
                )
                for i, score in kept
            ]
        kept = [(i, score) for i, score in kept if score >= MIN_SEARCH_RELEVANCE]
        if len(kept) >= k * SEARCH_FANOUT or fetch >= size or len(found) < fetch:
            break
        fetch = min(size, fetch * 2)
    return sorted(kept, key=lambda pair: (-pair[1], pair[0]))[:k]

"""The weighted RAG verification score of docs/SPEC_NOTES.md#the-rag-score: answer-source alignment (0.4), citation
coverage (0.3) and fact verification (0.3), each with the seed's fallbacks.

Plain Python. ``rag_score`` returns ``{"alignment", "citation_coverage", "fact_score", "score",
"method"}``; ``method`` names how each part was computed:

- alignment: ``embedding`` — mean cosine of the answer to each of its top sources (at most
  ``RAG_ALIGNMENT_SOURCES``, best retrieved first). The answer's vector is the caller's
  ``answer_vector`` (the pipeline passes the mean of its claims' vectors, which retrieval embedded)
  and the sources' come from ``source_vectors`` (what search holds: a chunk's stored vector, a
  request passage's windows), so the score embeds nothing new; without them, both are embedded
  here (the source's first ``SOURCE_TEXT_CHARS`` characters). ``keyword`` when the embedding fails — the
  seed's keyword overlap (share of the answer's content words found in a source, averaged over
  the sources); ``neutral`` (``RAG_NEUTRAL_SCORE``) without any source.
- citation_coverage: ``citations`` — sources the answer cites (a resolving anchor, or the
  source's title or id written out) over all sources, plus ``RAG_CITATION_PATTERN_STEP`` per
  citation pattern ("[Source: 1]", "according to", "in the … report") up to
  ``RAG_CITATION_PATTERN_MAX``, capped at 1; ``neutral`` without sources.
- fact_score: ``claim_labels`` — claims the verification labelled SUPPORTED over all claims (the
  seed's verified / total, decided by the pipeline's own judge); ``neutral`` without claims.

``score`` is the weighted mean under ``Thresholds.rag_score_weights`` (divided by their sum).
"""

from __future__ import annotations

import re
from typing import Any, Callable

import numpy as np

from audit.constants import (
    RAG_ALIGNMENT_SOURCES,
    RAG_CITATION_PATTERN_MAX,
    RAG_CITATION_PATTERN_STEP,
    RAG_NEUTRAL_SCORE,
    Thresholds,
)
from audit.pipeline.extraction import citation_anchors, strip_citations
from audit.pipeline.retrieval import anchor_map, resolve_anchor
from audit.pipeline.text import content_stems
from audit.pipeline.types import ClaimVerdict, Passage

# a source marker holds no bracket of its own and at most 200 characters: one that never closes
# is given up at the next bracket, not read to the end of the text once per marker
CITATION_PATTERNS = re.compile(
    r"\[\s{0,8}+source\s{0,8}+:[^\[\]]{0,200}+\]|\(\s{0,8}+source\s{0,8}+:[^()]{0,200}+\)|\baccording to\b|\bper the\b|\bas (?:stated|reported) in\b"
    r"|\b(?:states|reports|shows|notes) that\b"
    r"|\bin the (?:[\w-]+ ){0,4}(?:filing|report|study|paper|article|document|guideline|review|source)s?\b",
    re.IGNORECASE,
)
SOURCE_TEXT_CHARS = 2000  # characters of a source embedded for alignment


def top_sources(
    verdicts: list[ClaimVerdict], contexts: list[Passage], k: int = RAG_ALIGNMENT_SOURCES
) -> list[Passage]:
    """The answer's top sources: its claims' evidence by best relevance (cited first), else the contexts."""
    best: dict[str, tuple[float, Passage]] = {}
    for v in verdicts:
        for hit in v.evidence:
            score = 2.0 if hit.cited else float(hit.relevance)
            if hit.passage.id not in best or best[hit.passage.id][0] < score:
                best[hit.passage.id] = (score, hit.passage)
    ranked = [p for _, p in sorted(best.values(), key=lambda pair: (-pair[0], pair[1].id))]
    return (ranked or list(contexts))[:k]


def keyword_alignment(answer: str, sources: list[Passage]) -> float:
    """The fallback of docs/SPEC_NOTES.md#the-rag-score: share of the answer's content words in each source, averaged."""
    words = set(content_stems(answer))
    if not words or not sources:
        return 0.0
    return float(np.mean([len(words & set(content_stems(p.text))) / len(words) for p in sources]))


def embedding_alignment(
    answer: str,
    sources: list[Passage],
    embed: Callable[[list[str]], Any] | None,
    *,
    answer_vector: np.ndarray | None = None,
    source_vectors: Callable[[list[Passage]], list[np.ndarray]] | None = None,
) -> float:
    """Mean cosine (clipped at 0) of the answer to each source; what is not given is embedded in one call."""
    texts = [] if answer_vector is not None else [answer]
    if source_vectors is None:
        texts += [p.text[:SOURCE_TEXT_CHARS] for p in sources]
    if texts and embed is None:
        raise RuntimeError("no embedding function for what is not given")
    embedded = list(np.asarray(embed(texts), dtype=np.float32)) if texts and embed is not None else []
    head = [np.asarray(answer_vector, dtype=np.float32)] if answer_vector is not None else [embedded.pop(0)]
    rest = [np.asarray(v, dtype=np.float32) for v in source_vectors(sources)] if source_vectors else embedded
    vecs = np.stack(head + rest)
    norms = np.linalg.norm(vecs, axis=1)
    if not np.all(np.isfinite(vecs)) or np.any(norms == 0):
        raise ValueError("degenerate embedding")
    vecs = vecs / norms[:, None]
    return float(np.mean(np.clip(vecs[1:] @ vecs[0], 0.0, 1.0)))


def citation_coverage(answer: str, sources: list[Passage]) -> float:
    """Sources cited / all sources plus the citation-pattern bonus, capped at 1."""
    amap = anchor_map(sources)
    cited = {p.id for a in citation_anchors(answer) if (p := resolve_anchor(a, amap)) is not None}
    lowered = answer.lower()
    for p in sources:
        names = [p.title.strip()] + ([p.id] if not p.id.isdigit() else [])
        if any(len(n) >= 3 and re.search(rf"(?<!\w){re.escape(n.lower())}(?!\w)", lowered) for n in names):
            cited.add(p.id)
    explicit = len(cited & {p.id for p in sources}) / len(sources)
    bonus = min(len(CITATION_PATTERNS.findall(answer)) * RAG_CITATION_PATTERN_STEP, RAG_CITATION_PATTERN_MAX)
    return min(1.0, explicit + bonus)


def rag_score(
    answer: str,
    verdicts: list[ClaimVerdict],
    contexts: list[Passage],
    *,
    thresholds: Thresholds | None = None,
    embed: Callable[[list[str]], Any] | None = None,
    answer_vector: np.ndarray | None = None,
    source_vectors: Callable[[list[Passage]], list[np.ndarray]] | None = None,
) -> dict[str, Any]:
    """The RAG score of one audited answer (docs/SPEC_NOTES.md#the-rag-score; see the module docstring)."""
    t = thresholds or Thresholds()  # pure-function default (tests); ``summarize`` passes its job's
    method: dict[str, Any] = {}
    sources = top_sources(verdicts, contexts)
    plain = strip_citations(answer or "")
    if not sources or not plain:
        alignment, method["alignment"] = RAG_NEUTRAL_SCORE, "neutral"
    else:
        try:
            if embed is None and (answer_vector is None or source_vectors is None):
                raise RuntimeError("no embedding function")
            alignment = embedding_alignment(
                plain, sources, embed, answer_vector=answer_vector, source_vectors=source_vectors
            )
            method["alignment"] = "embedding"
        except Exception as exc:  # noqa: BLE001 - any failure of the model falls back, as the seed says
            alignment, method["alignment"] = keyword_alignment(plain, sources), "keyword"
            method["alignment_fallback"] = f"embedding failed: {type(exc).__name__}"
    cite_sources = list(contexts) or sources
    if cite_sources:
        coverage, method["citation_coverage"] = citation_coverage(answer or "", cite_sources), "citations"
    else:
        coverage, method["citation_coverage"] = RAG_NEUTRAL_SCORE, "neutral"
    if verdicts:
        facts, method["fact_score"] = (
            sum(v.label == "SUPPORTED" for v in verdicts) / len(verdicts),
            "claim_labels",
        )
    else:
        facts, method["fact_score"] = RAG_NEUTRAL_SCORE, "neutral"
    parts = {"alignment": alignment, "citation_coverage": coverage, "fact_score": facts}
    weights = t.rag_score_weights
    total = sum(weights.values()) or 1.0
    score = sum(weights.get(name, 0.0) * value for name, value in parts.items()) / total
    return {
        **{k: round(v, 4) for k, v in parts.items()},
        "score": round(min(1.0, max(0.0, score)), 4),
        "method": method,
    }

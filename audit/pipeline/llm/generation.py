"""Generation modes of docs/SPEC_NOTES.md#verification-depths-and-profiles for answers Theoria drafts with an LLM, and their
human-readable citation keys.

``strict`` — only what the passages state, every sentence cited (maximum citation density);
``natural`` — readable prose, each factual statement cited; ``classical`` — free prose with few
citations, written as ``[Title](url)`` links. The LLM cites passages by number (``[1]``, ReClaim
style); the numbers are then replaced by keys derived from each passage: its web domain
(``arxiv.org`` -> ``[Arxiv]``), else its title (``GLM-4.7 Technical Report`` -> ``[GLM47]``), with
``-2``, ``-3`` on a collision (``[Arxiv]``, ``[Arxiv-2]``). The keys are added to the passages'
anchors, so the pipeline resolves them like any citation. Drafting itself (the LLM call, the
refusal of a draft that cites nothing, the offline fallback) is ``drafting.draft_answer``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import urlparse

from audit.constants import CITATION_KEY_MAX_CHARS, DEFAULT_GENERATION_MODE, GENERATION_MODES
from audit.pipeline.extraction import citation_anchors
from audit.pipeline.llm.client import LLMClient
from audit.pipeline.llm.drafting import draft_answer
from audit.pipeline.llm.prompts import DRAFT_SYSTEM
from audit.pipeline.types import Passage

MODE_INSTRUCTIONS = {
    "strict": """MODE: strict
- State only facts the passages state, in their terms; add no background, advice or generalisation.
- One fact per sentence; end every sentence with the numbers of ALL passages that support it, like [1][3].""",
    "natural": """MODE: natural
- Write clear, natural prose that answers the question.
- End each sentence that states a fact with the number of the passage that supports it, like [2].""",
    "classical": """MODE: classical
- Write fluent, well-organised prose for a quick answer.
- Cite sparingly: the number of the passage you rely on most, like [1], after the statements it supports.""",
}
_NUMBER_RE = re.compile(r"\[(\d{1,3})\]")
_GENERIC_LABELS = {"www", "m", "export", "co", "ac", "com", "org", "net", "edu", "gov", "info"}
_TITLE_STOPWORDS = {"a", "an", "the", "of", "on", "in", "and", "for", "to"}


@dataclass
class Generation:
    """A drafted answer in one mode: text with its citation keys, the passages (keys added to their
    anchors), and how it was written (``method``/``fallback`` as ``drafting.Draft``)."""

    text: str
    passages: list[Passage]
    mode: str
    method: str
    fallback: str = ""
    keys: dict[str, str] = field(default_factory=dict)  # citation key -> passage id


def system_prompt(mode: str) -> str:
    """The drafting prompt of a mode (``TASK: draft_answer`` first, then ``MODE: <mode>``)."""
    return f"{DRAFT_SYSTEM}\n{MODE_INSTRUCTIONS[mode]}"


def _ascii_alnum(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]", "", unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode())


def _is_anchor_key(key: str) -> bool:
    return citation_anchors(f"[{key}]") == (key,)


def base_key(passage: Passage) -> str:
    """The key before collisions: the web domain's name, else the title's first significant word."""
    parsed = urlparse(passage.uri or "")
    if parsed.scheme in ("http", "https") and parsed.hostname:
        labels = [label for label in parsed.hostname.lower().split(".")[:-1] if label not in _GENERIC_LABELS]
        if labels:
            key = _ascii_alnum(labels[-1]).capitalize()
            if len(key) >= 2 and _is_anchor_key(key):
                return key[:CITATION_KEY_MAX_CHARS]
    words = [w for w in (passage.title or "").split() if _ascii_alnum(w)]
    significant = [w for w in words if w.lower() not in _TITLE_STOPWORDS] or words
    key = ""
    for word in significant:  # "GLM-4.7 Technical Report" -> "GLM47"; a 1-letter word takes the next one too
        key += _ascii_alnum(word)
        if len(key) >= 2:
            break
    key = key[:1].upper() + key[1:CITATION_KEY_MAX_CHARS]
    return key if key[:1].isalpha() and len(key) >= 2 and _is_anchor_key(key) else "Source"


def citation_keys(passages: list[Passage]) -> list[str]:
    """One key per passage, in order: ``Arxiv``, ``Arxiv-2``, ``Arxiv-3`` on collisions (case-blind)."""
    seen: dict[str, int] = {}
    keys = []
    for passage in passages:
        key = base_key(passage)
        n = seen.get(key.lower(), 0) + 1
        seen[key.lower()] = n
        keys.append(key if n == 1 else f"{key}-{n}")
    return keys


def _link(passage: Passage, key: str) -> str:
    """A classical citation: a ``[Title](url)`` link (the claim extractor leaves its title out of the
    claim), or the passage's key where it has no URL (a link to nowhere would be a bare title)."""
    if not passage.uri:
        return f"[{key}]"
    title = (passage.title or passage.id).replace("[", "(").replace("]", ")")
    return f"[{title}]({passage.uri})"


def with_keys(text: str, passages: list[Passage], mode: str) -> tuple[str, list[Passage], dict[str, str]]:
    """Replace ``[n]`` markers by the mode's citation style; the passages gain their keys as anchors."""
    keys = citation_keys(passages)
    if mode == "classical":
        text = _NUMBER_RE.sub(
            lambda m: (
                _link(passages[int(m.group(1)) - 1], keys[int(m.group(1)) - 1])
                if 1 <= int(m.group(1)) <= len(passages)
                else ""
            ),
            text,
        )
        used = {key for p, key in zip(passages, keys) if not p.uri}
        keyed = [
            replace(p, anchors=tuple(dict.fromkeys((*p.anchors, key)))) if key in used else p
            for p, key in zip(passages, keys)
        ]
        return text, keyed, {key: p.id for key, p in zip(keys, passages) if key in used}
    text = _NUMBER_RE.sub(
        lambda m: f"[{keys[int(m.group(1)) - 1]}]" if 1 <= int(m.group(1)) <= len(passages) else "", text
    )
    keyed = [replace(p, anchors=tuple(dict.fromkeys((*p.anchors, key)))) for p, key in zip(passages, keys)]
    return text, keyed, {key: p.id for key, p in zip(keys, passages)}


def generate(
    client: LLMClient | None, query: str, passages: list[Passage], mode: str = DEFAULT_GENERATION_MODE
) -> Generation:
    """Draft an answer to ``query`` in ``mode`` (offline extractive draft when no LLM is usable)."""
    if mode not in GENERATION_MODES:
        raise ValueError(f"generation mode must be one of {', '.join(GENERATION_MODES)}")
    draft = draft_answer(client, query, passages, system=system_prompt(mode))
    text, keyed, keys = with_keys(draft.text, draft.passages, mode)
    return Generation(
        text=text, passages=keyed, mode=mode, method=draft.method, fallback=draft.fallback, keys=keys
    )


def draft_for(
    client: LLMClient, query: str, contexts: Sequence[dict[str, Any]], mode: str
) -> tuple[str, tuple[dict[str, Any], ...], dict[str, Any]]:
    """Draft the answer of a request that sent none (:func:`generate` over its ``contexts``): the
    text, the contexts with the citation keys the draft gave them (``anchors``), and how it was
    drafted (method, fallback, mode, keys, and the client's calls and tokens so far)."""
    passages = [
        Passage(id=str(c["id"]), text=c["text"], title=c.get("title", ""), uri=c.get("uri", ""))
        for c in contexts
    ]
    draft = generate(client, query, passages, mode)
    keys = {p.id: [k for k, pid in draft.keys.items() if pid == p.id] for p in draft.passages}
    keyed = tuple({**c, "anchors": keys[str(c["id"])]} if keys.get(str(c["id"])) else c for c in contexts)
    accounting = client.accounting.run_fields()
    drafted = {
        "method": draft.method,
        "fallback": draft.fallback,
        "generation_mode": draft.mode,
        "citation_keys": draft.keys,
        "llm_calls": accounting["llm_calls"],
        "prompt_tokens": accounting["prompt_tokens"],
        "completion_tokens": accounting["completion_tokens"],
    }
    return draft.text, keyed, drafted

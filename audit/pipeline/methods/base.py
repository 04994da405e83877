"""Verification methods are plug-ins: subclass ``VerificationMethod``, decorate with ``@register``.

A method looks at claims and the evidence retrieved for them and returns one ``MethodResult``
per claim; its ``name`` is recorded on the claim card. ``verify_many`` gets every claim of an
answer at once so that a method can batch (the entailment judge embeds once per answer).
The LLM methods (``methods/llm.py``: ``llm_judge``, ``llm_cove``, ``selfcheck``) register the same way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from audit.constants import Thresholds
from audit.pipeline.types import ClaimDraft, EvidenceHit, MethodResult

# The roles a method's result can play in labelling a claim (``VerificationMethod.label_role``).
ROLE_SUPPORT, ROLE_JUDGE, ROLE_NUMERIC, ROLE_STRUCTURE = "support", "judge", "numeric", "structure"


@dataclass
class VerifyContext:
    thresholds: Thresholds = field(default_factory=Thresholds)
    now: datetime = field(default_factory=lambda: datetime.now(timezone.utc))
    domain: str = ""
    query: str = ""
    embed: object = None  # callable texts -> (n, d) unit vectors; defaults to get_embedder().encode
    encode_tokens: object = None  # texts -> (vectors, piece matrices); defaults to encode_with_tokens
    encodings: object = None  # an encodings.EncodingStore: sentences encoded at ingestion (the KB's)
    progress: object = None  # callable(n) told as batches of n claims are done (progress bars)
    llm: object = None  # an audit.pipeline.llm.LLMClient when one is configured (LLM methods)
    binding: bool = True  # the role binding runs (the job's switch: the bench compares without it)
    # method name -> {id of the item's ClaimDraft: MethodResult}, for later methods (``results_for``)
    results: dict[str, Any] = field(default_factory=dict)


def record_results(
    ctx: VerifyContext, name: str, claims: list[ClaimDraft], results: list[MethodResult]
) -> None:
    """Keep method ``name``'s results for the methods after it, each under its claim's own
    ``ClaimDraft`` object: claim ids ("c1", "c2", ...) repeat across the answers of a nightly batch."""
    ctx.results[name] = {id(claim): r for claim, r in zip(claims, results)}


def results_for(ctx: VerifyContext, claim: ClaimDraft) -> dict[str, MethodResult]:
    """What the methods run before left for ``claim`` (the very object ``verify_many`` was given),
    by method name."""
    key = id(claim)
    return {name: by_claim[key] for name, by_claim in ctx.results.items() if key in by_claim}


def verify_context(
    thresholds: Thresholds,
    *,
    domain: str | None = "",
    query: str | None = "",
    now: datetime | None = None,
    embed: Any = None,
    encode_tokens: Any = None,
    progress: Any = None,
    llm: Any = None,
    binding: bool = True,
    encodings: Any = None,
) -> VerifyContext:
    """The one way to build the context the methods run in (the pipeline's audit and structured
    audit, the deep-check, web and nightly services): a missing domain or query is "", a missing
    ``now`` the current UTC time; ``embed`` / ``encode_tokens`` left None default in the methods;
    ``encodings`` the store of sentences encoded at ingestion (the knowledge base's), read before encoding."""
    return VerifyContext(
        thresholds=thresholds,
        now=now or datetime.now(timezone.utc),
        domain=domain or "",
        query=query or "",
        embed=embed,
        encode_tokens=encode_tokens,
        progress=progress,
        llm=llm,
        binding=binding,
        encodings=encodings,
    )


class VerificationMethod:
    """Base class: override ``verify`` (one claim) or ``verify_many`` (a batch)."""

    name: str = ""
    display_name: str = ""
    offline: bool = True  # runs without an LLM or the network
    # What the result means to the claim's label (``scoring.label_claim`` reads results by role, not
    # by name): SUPPORT gives P(supported) and P(refuted); JUDGE stands in for it when it ran; NUMERIC
    # and STRUCTURE are contradiction checks that override both. "" = only the method's flags count.
    label_role: str = ""

    def verify(self, claim: ClaimDraft, hits: list[EvidenceHit], ctx: VerifyContext) -> MethodResult:
        raise NotImplementedError

    def verify_many(
        self, items: list[tuple[ClaimDraft, list[EvidenceHit]]], ctx: VerifyContext
    ) -> list[MethodResult]:
        return [self.verify(claim, hits, ctx) for claim, hits in items]


REGISTRY: dict[str, VerificationMethod] = {}


def register(cls: type[VerificationMethod]) -> type[VerificationMethod]:
    if not cls.name:
        raise ValueError(f"{cls.__name__} has no name")
    REGISTRY[cls.name] = cls()
    return cls


def get_method(name: str) -> VerificationMethod:
    try:
        return REGISTRY[name]
    except KeyError:
        raise KeyError(
            f"unknown verification method {name!r}; known: {', '.join(sorted(REGISTRY))}"
        ) from None

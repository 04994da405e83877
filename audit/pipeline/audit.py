"""The pipeline's entry points: ``audit_answer`` (a whole answer) and ``verify_claim`` / ``verify_claims``.

Plain Python: the Django service (``audit.services.audit``), the commands, the nightly batch and
the LLM/revision issues all call these. Offline (Audit-Local) by default; SelfCheck needs an LLM
and is reported as not run.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import datetime, timezone
from typing import Any

import numpy as np

from audit.constants import (
    AUDIT_READ_BUDGET_CHARS,
    AUDIT_READ_COST_PER_CLAIM,
    MAX_VERIFIED_CLAIM_CHARS,
    OVER_BUDGET_FLAG,
    TOO_LONG_FLAG,
    Thresholds,
)
from audit.pipeline import scoring
from audit.pipeline.binding import Encode
from audit.pipeline.extraction import clean_sentence, is_assertion, split_sentences
from audit.pipeline.job import VerificationJob
from audit.pipeline.llm.client import LLMClient
from audit.pipeline.llm.extraction import extract_claims as llm_extract_claims
from audit.pipeline.memory import free_pages_back
from audit.pipeline.methods import (
    LLM_METHODS,
    OFFLINE_METHODS,
    REGISTRY,
    VerificationMethod,
    VerifyContext,
    record_results,
    verify_context,
)
from audit.pipeline.methods.llm import answer_selfcheck_disagreement, llm_methods_not_run
from audit.pipeline.rag_score import rag_score
from audit.pipeline.retrieval import KnowledgeBase, as_passages, passage_vectors, retrieve
from audit.pipeline.types import AuditResult, ClaimDraft, ClaimVerdict, EvidenceHit, MethodResult, Passage

# the passages of a request as the pure-function API takes them: strings, dicts or Passages
Contexts = Sequence[str | dict[str, Any] | Passage]

NOT_RUN_OFFLINE = {"selfcheck": "SelfCheck sampling needs an LLM; not run in offline Audit-Local mode"}


def resolve_thresholds(thresholds: Thresholds | Mapping[str, Any] | None) -> Thresholds:
    """The pure-function API's thresholds: a ``Thresholds``, a workspace override dict, or None for
    the seed values (commands, tests and evaluation calling ``audit_answer`` without a workspace;
    the verification paths pass a ``VerificationJob`` whose thresholds the service read)."""
    if thresholds is None:
        return Thresholds()
    if isinstance(thresholds, Thresholds):
        return thresholds
    return Thresholds().updated(dict(thresholds))


def resolve_embed(embed: Encode | None) -> Encode:
    if embed is not None:
        return embed
    from audit.pipeline.embedding import get_embedder

    return get_embedder().encode


def run_methods(
    items: list[tuple[ClaimDraft, list[EvidenceHit]]],
    ctx: VerifyContext,
    methods: tuple[str, ...] = OFFLINE_METHODS,
    overrides: dict[str, VerificationMethod] | None = None,
) -> list[ClaimVerdict]:
    """Run the named methods (in the order given) on every claim and label each claim.

    ``overrides`` maps a method name to an instance used instead of the registered one (e.g. an
    entailment judge with a cross-validation fold's model, or an LLM variant).
    """
    # a claim longer than MAX_VERIFIED_CLAIM_CHARS is no sentence anyone wrote: the methods never
    # read it (their parses and cross-encoder passes grow with its length) and it is reported
    # as not verified, never dropped
    too_long = {i for i, (claim, _) in enumerate(items) if len(claim.text) > MAX_VERIFIED_CLAIM_CHARS}
    if too_long:
        read = [i for i in range(len(items)) if i not in too_long]
        verdicts = dict(zip(read, run_methods([items[i] for i in read], ctx, methods, overrides)))
        return [verdicts[i] if i in verdicts else _too_long(*items[i]) for i in range(len(items))]
    per_claim: list[dict[str, MethodResult]] = [{} for _ in items]
    ctx.results = {}  # keyed by the claims' objects (``record_results``): never an earlier call's
    chosen = [(name, (overrides or {}).get(name) or REGISTRY[name]) for name in methods]
    # the LLM methods are independent of each other and of the offline ones: they run side by
    # side (the endpoint's slots bound the calls in flight) while the offline methods run here
    remote = [(name, m) for name, m in chosen if not m.offline and getattr(ctx, "llm", None) is not None]
    pool = ThreadPoolExecutor(max_workers=len(remote)) if len(remote) > 1 else None
    futures = {name: pool.submit(m.verify_many, items, ctx) for name, m in remote} if pool else {}
    try:
        for name, method in chosen:
            results = futures[name].result() if name in futures else method.verify_many(items, ctx)
            record_results(ctx, name, [claim for claim, _ in items], results)
            for i, r in enumerate(results):
                per_claim[i][name] = r
    finally:
        if pool is not None:
            pool.shutdown()
    return [
        scoring.label_claim(claim, hits, per_claim[i], ctx.thresholds)
        for i, (claim, hits) in enumerate(items)
    ]


def _too_long(claim: ClaimDraft, hits: list[EvidenceHit], flag: str = TOO_LONG_FLAG) -> ClaimVerdict:
    """The verdict of a claim no method read (longer than MAX_VERIFIED_CLAIM_CHARS, or past the
    audit's read budget: ``flag``): not verified."""
    return ClaimVerdict(
        claim=claim,
        label=scoring.NEI,
        verdict="not_found",
        confidence=0.0,
        evidence=hits,
        methods=[],
        risk_flags=[flag],
        metrics={"claim_chars": len(claim.text)},
    )


def read_budget() -> int:
    """The characters of claims one audit reads (``AUDIT_READ_BUDGET_CHARS``, read at call time)."""
    return AUDIT_READ_BUDGET_CHARS


def over_read_budget(claims: Sequence[ClaimDraft], budget: int | None = None) -> set[int]:
    """The positions of the claims an audit does not read: in the answer's order, every claim after
    the claims read so far cost ``budget`` (a claim costs its characters and ``AUDIT_READ_COST_PER_CLAIM``) (a claim too long to verify costs nothing:
    it is never read either). The first claim is always read when it is not too long. ``budget``
    defaults to ``AUDIT_READ_BUDGET_CHARS``."""
    budget = read_budget() if budget is None else budget
    unread: set[int] = set()
    spent = 0
    for i, claim in enumerate(claims):
        if len(claim.text) > MAX_VERIFIED_CLAIM_CHARS:
            continue
        size = len(claim.text) + AUDIT_READ_COST_PER_CLAIM
        if spent and spent + size > budget:
            unread.add(i)
            continue
        spent += size
    return unread


def verify_claims(
    claims: Sequence[tuple[str, Contexts]],
    *,
    thresholds: Thresholds | Mapping[str, Any] | None = None,
    domain: str = "",
    now: datetime | None = None,
    embed: Encode | None = None,
    methods: tuple[str, ...] = OFFLINE_METHODS,
    overrides: dict[str, VerificationMethod] | None = None,
    progress: Callable[[int], object] | None = None,
    encode_tokens: Encode | None = None,
    llm: LLMClient | None = None,
) -> list[ClaimVerdict]:
    """Verify many (claim text, evidence passages) pairs against their own evidence only.

    ``progress(n)`` is called as the entailment judge finishes each batch of n claims; ``llm`` is
    the client an LLM judge may call (the LLM methods themselves run only when named in ``methods``).
    """
    t = resolve_thresholds(thresholds)
    ctx = verify_context(
        t,
        now=now,
        domain=domain,
        embed=resolve_embed(embed),
        progress=progress,
        encode_tokens=encode_tokens,
        llm=llm,
    )
    items: list[tuple[ClaimDraft, list[EvidenceHit]]] = []
    for i, (text, evidence) in enumerate(claims):
        passages = as_passages(evidence)
        claim = ClaimDraft(claim_id=f"c{i + 1}", text=text, span=(0, len(text)))
        hits = [EvidenceHit(passage=p, relevance=1.0, cited=True) for p in passages if p.text.strip()]
        items.append((claim, hits))
    return run_methods(items, ctx, methods, overrides)


def verify_claim(
    claim_text: str,
    evidence_passages: Contexts,
    *,
    thresholds: Thresholds | Mapping[str, Any] | None = None,
    domain: str = "",
    now: datetime | None = None,
    embed: Encode | None = None,
) -> ClaimVerdict:
    """Verify one claim against the given passages (str, dict or Passage)."""
    return verify_claims(
        [(claim_text, evidence_passages)], thresholds=thresholds, domain=domain, now=now, embed=embed
    )[0]


def audit_job(
    job: VerificationJob,
    *,
    kb: KnowledgeBase | tuple[Any, ...] | None = None,
    now: datetime | None = None,
    embed: Encode | None = None,
    overrides: dict[str, VerificationMethod] | None = None,
    encode_tokens: Encode | None = None,
    reuse: Callable[[ClaimDraft], ClaimVerdict | None] | None = None,
) -> AuditResult:
    """Audit the job's answer (:func:`audit_passages` with the job's query, text, passages, domain,
    reference, the plan's thresholds and methods, and the client of its LLM methods): the job's
    passages are typed and its thresholds resolved already."""
    return audit_passages(
        job.query,
        job.answer_text,
        list(job.passages),
        kb=KnowledgeBase(*kb) if isinstance(kb, tuple) else kb,
        reference=job.reference,
        domain=job.domain,
        thresholds=job.plan.thresholds,
        now=now,
        embed=embed,
        methods=job.plan.methods,
        llm=job.llm_methods,
        overrides=overrides,
        encode_tokens=encode_tokens,
        reuse=reuse,
        claims=None if job.claims is None else list(job.claims),
        binding=job.binding,
    )


def audit_answer(
    query: str,
    answer: str,
    contexts: Contexts | None = None,
    *,
    kb: KnowledgeBase | tuple[Any, ...] | None = None,
    reference: str | None = None,
    domain: str | None = None,
    thresholds: Thresholds | Mapping[str, Any] | None = None,
    now: datetime | None = None,
    embed: Encode | None = None,
    methods: tuple[str, ...] = OFFLINE_METHODS,
    llm: LLMClient | None = None,
    overrides: dict[str, VerificationMethod] | None = None,
    encode_tokens: Encode | None = None,
    reuse: Callable[[ClaimDraft], ClaimVerdict | None] | None = None,
    claims: list[ClaimDraft] | None = None,
    binding: bool = True,
) -> AuditResult:
    """Audit ``answer`` to ``query`` against the request ``contexts`` and the workspace ``kb``.

    ``llm`` (an ``audit.pipeline.llm.LLMClient``, docs/LLM.md) adds LLM claim extraction and the
    ``LLM_METHODS``; each falls back to its offline counterpart on any failure.

    ``kb`` is a ``KnowledgeBase(index, lookup)`` or an ``(index, lookup)`` tuple where ``lookup(ids)``
    returns {id: Passage}. ``thresholds`` is a ``Thresholds`` or a workspace override dict.
    ``reuse(claim)`` returns a verdict already reached for that claim on the same evidence (the
    revision loop: a claim whose words it did not change), which the claim keeps, or None.
    ``claims`` are the offline extractor's claims of ``answer`` when the caller already extracted
    them (a job's ``claims``): they are not extracted again.
    """
    return audit_passages(
        query,
        answer,
        as_passages(contexts),
        kb=KnowledgeBase(*kb) if isinstance(kb, tuple) else kb,
        reference=reference,
        domain=domain,
        thresholds=resolve_thresholds(thresholds),
        now=now,
        embed=embed,
        methods=methods,
        llm=llm,
        overrides=overrides,
        encode_tokens=encode_tokens,
        reuse=reuse,
        claims=claims,
        binding=binding,
    )


# long: the pipeline's stages in order, sharing the embedder, the index and the context
def audit_passages(
    query: str,
    answer: str,
    passages: list[Passage],
    *,
    kb: KnowledgeBase | None = None,
    reference: str | None = None,
    domain: str | None = None,
    thresholds: Thresholds,
    now: datetime | None = None,
    embed: Encode | None = None,
    methods: tuple[str, ...] = OFFLINE_METHODS,
    llm: LLMClient | None = None,
    overrides: dict[str, VerificationMethod] | None = None,
    encode_tokens: Encode | None = None,
    reuse: Callable[[ClaimDraft], ClaimVerdict | None] | None = None,
    claims: list[ClaimDraft] | None = None,
    binding: bool = True,
) -> AuditResult:
    """The pipeline's stages (:func:`audit_answer`) on ``passages`` already typed and
    ``thresholds`` resolved (a job's, :func:`audit_job`): claims, retrieval over the passages and
    the knowledge base, the methods, the labels and the answer-level result."""
    started = time.perf_counter()
    t = thresholds
    now = now or datetime.now(timezone.utc)
    shared_model = embed is None and encode_tokens is None and t.verification_depth == "full"
    embed = resolve_embed(embed)
    # offline extractor without a usable LLM (``claims``, when given, are its result)
    extraction = llm_extract_claims(llm, answer or "", query or "", offline_claims=claims)
    claims = extraction.claims
    # past the read budget a claim is neither embedded, searched nor read by any method
    # (AUDIT_READ_BUDGET_CHARS): it is NEI with OVER_BUDGET_FLAG, and the run lists each of them
    unread = over_read_budget(claims)
    read = [i for i in range(len(claims)) if i not in unread]
    row_of = {i: k for k, i in enumerate(read)}  # a read claim's row among the embedded ones
    texts = [claims[i].text for i in read]
    # claims and the query only: embedding the whole answer in the same batch would pad every
    # claim to the answer's length (256 pieces) and cost more than everything else together
    if not (claims or query):
        vecs = None
    elif shared_model:
        # one forward pass gives retrieval the claims' vectors and the judge their word pieces
        # (the embedder keeps both), so the judge never embeds a claim again
        from audit.pipeline.embedding import get_embedder

        vecs = get_embedder().encode_with_tokens(texts + [query or ""])[0]
    else:
        vecs = embed(texts + [query or ""])
    claim_vecs = vecs[: len(read)] if vecs is not None else None
    prior = [
        _too_long(c, [], OVER_BUDGET_FLAG) if i in unread else (reuse(c) if reuse is not None else None)
        for i, c in enumerate(claims)
    ]
    fresh = [i for i, p in enumerate(prior) if p is None]
    # a claim too long to verify is not searched either (its numbers alone would be compared with
    # every number of the evidence): it keeps no evidence
    searched = [i for i in fresh if len(claims[i].text) <= MAX_VERIFIED_CLAIM_CHARS]
    found = retrieve(
        [claims[i] for i in searched],
        passages,
        kb=kb,
        embed=embed,
        thresholds=t,
        claim_vecs=claim_vecs[[row_of[i] for i in searched]] if claim_vecs is not None else None,
    )
    hits_of = dict(zip(searched, found))
    fresh_hits = [hits_of.get(i, []) for i in fresh]
    ctx = verify_context(
        t,
        now=now,
        domain=domain,
        query=query,
        embed=embed,
        llm=llm,
        encode_tokens=encode_tokens,
        encodings=kb.encodings if kb is not None else None,
    )
    ctx.binding = binding  # the job's switch (the bench compares without the role binding)
    if llm is not None:
        methods = (*methods, *(m for m in LLM_METHODS if m not in methods))
    fresh_verdicts = run_methods([(claims[i], h) for i, h in zip(fresh, fresh_hits)], ctx, methods, overrides)
    # one verdict per claim, in the claims' order: run_methods answers every claim it is given, and a
    # shortfall raises here rather than dropping a claim from the report
    fresh_of = dict(zip(fresh, fresh_verdicts, strict=True))
    # a kept verdict keeps its claim's reading too (a hedge or a qualifier does not make a claim minor)
    verdicts = [
        fresh_of[i]
        if p is None
        else replace(
            p, claim=replace(c, type=p.claim.type, importance=p.claim.importance), metrics=dict(p.metrics)
        )
        for i, (c, p) in enumerate(zip(claims, prior))
    ]
    hits = [v.evidence for v in verdicts]
    for i, h in zip(fresh, fresh_hits):
        hits[i] = h

    query_vec = vecs[-1] if (vecs is not None and query) else None
    for i, v in enumerate(verdicts):
        relevance = (
            scoring.cosine(query_vec, claim_vecs[row_of[i]])
            if query_vec is not None and claim_vecs is not None and i in row_of
            else None
        )
        v.metrics = {**scoring.claim_card_metrics(v, t, relevance), **v.metrics}

    free_pages_back()  # the models have read: the heap's free pages go back (audit/pipeline/memory.py)
    any_evidence = bool(passages) or bool(kb is not None and len(kb.index))
    return summarize(
        query,
        answer,
        verdicts,
        passages,
        thresholds=t,
        now=now,
        embed=embed,
        vecs=vecs,
        any_evidence=any_evidence,
        reference=reference,
        hits=hits,
        source_vectors=lambda sources: passage_vectors(sources, kb=kb, embed=embed),
        reference_searchable=bool(passages or kb is not None),
        overrides=overrides,
        encode_tokens=encode_tokens,
        started=started,
        methods_not_run={
            **llm_methods_not_run(verdicts, llm, extraction),
            **(NOT_RUN_OFFLINE if llm is None else {}),
        },
    )


# long: the answer-level metrics in the result's order, each reading the verdicts and the vectors
def summarize(
    query: str,
    answer: str,
    verdicts: list[ClaimVerdict],
    passages: list[Passage],
    *,
    thresholds: Thresholds,
    now: datetime,
    embed: Encode,
    vecs: np.ndarray | None = None,
    any_evidence: bool = True,
    reference: str | None = None,
    reference_searchable: bool = False,
    overrides: dict[str, VerificationMethod] | None = None,
    encode_tokens: Encode | None = None,
    started: float | None = None,
    methods_not_run: dict[str, Any] | None = None,
    rag_text: str | None = None,
    hits: list[list[EvidenceHit]] | None = None,
    source_vectors: Callable[[list[Passage]], list[np.ndarray]] | None = None,
) -> AuditResult:
    """The answer-level result of verified claims: RAGAS-style metrics, the RAG score, risk flags,
    quality gates and the audit score. ``vecs`` are the read claims' embeddings followed by the query's
    (answer relevance); ``hits`` each claim's retrieved passages (with ``passages``, the context of
    context recall); ``rag_text`` is the text the RAG score reads (default: ``answer``);
    ``source_vectors(passages)`` the vectors search holds for its sources (``retrieval.passage_vectors``),
    which with the claims' vectors spares the RAG score's alignment any embedding."""
    t = thresholds
    started = time.perf_counter() if started is None else started
    # context recall: how much of the reference the retrieved context states, the context being
    # every passage this audit drew on (the request's and the knowledge base's); the one metric
    # that runs a method (the entailment judge), before the scores that read the verdicts
    recall = (
        _context_recall(
            reference,
            _retrieved_context(passages, hits or []),
            thresholds=t,
            now=now,
            embed=embed,
            overrides=overrides,
            encode_tokens=encode_tokens,
        )
        if reference is not None and reference_searchable
        else None
    )
    metrics: dict[str, Any] = {
        "claims": len(verdicts),
        "faithfulness": scoring.faithfulness(verdicts),
        "answer_relevance": 0.0,
        "context_precision": 0.0,
        "context_recall": recall,
        "evidence_coverage": scoring.coverage(verdicts, any_evidence),
        "unsupported_rate": scoring.unsupported_rate(verdicts),
        "mean_confidence": float(np.mean([v.confidence for v in verdicts])) if verdicts else 0.0,
        "selfcheck_disagreement": answer_selfcheck_disagreement(verdicts),
        "label_counts": {
            lab: sum(v.label == lab for v in verdicts) for lab in ("SUPPORTED", "REFUTED", "NEI")
        },
    }
    # the answer's meaning: the mean of its claims' vectors (answer relevance and the RAG score's alignment)
    answer_vector = (
        np.asarray(vecs[:-1], dtype=np.float32).mean(axis=0) if vecs is not None and verdicts else None
    )
    if answer_vector is not None and vecs is not None and query:
        # answer relevance: cosine of the question to the answer's meaning
        metrics["answer_relevance"] = max(0.0, scoring.cosine(vecs[-1], answer_vector))
    if passages:
        supporting = {
            h.passage.id
            for v in verdicts
            for h in v.evidence
            if h.entailment >= t.audit_score_threshold or (v.label == "SUPPORTED" and h is v.evidence[0])
        }
        metrics["context_precision"] = scoring.context_precision([p.id in supporting for p in passages])

    metrics["rag_score"] = rag_score(
        answer if rag_text is None else rag_text,
        verdicts,
        passages,
        thresholds=t,
        embed=embed,
        answer_vector=answer_vector,
        source_vectors=source_vectors,
    )

    risk_flags: list[dict[str, Any]] = []
    if not any_evidence:
        risk_flags.append(
            {"type": "no_evidence", "severity": "high", "description": "No documents matched the query"}
        )
    severity = {
        "no_evidence": "high",
        "conflict": "high",
        "outdated_source": "medium",
        TOO_LONG_FLAG: "high",
        OVER_BUDGET_FLAG: "high",
    }
    unread = [v for v in verdicts if OVER_BUDGET_FLAG in v.risk_flags]
    if unread:
        metrics["not_read"] = {
            "claims": len(unread),
            "characters": sum(len(v.claim.text) for v in unread),
            "read_budget_chars": read_budget(),
        }
    for v in verdicts:
        for flag in v.risk_flags:
            if flag == "no_evidence" and not any_evidence:
                continue
            risk_flags.append(
                {
                    "type": flag,
                    "severity": severity.get(flag, "medium"),
                    "claim_id": v.claim.claim_id,
                    "description": _flag_text(flag, v),
                }
            )
    gates = scoring.quality_gates(metrics, verdicts, t)
    score = scoring.audit_score(metrics, t)
    flagged = (
        not all(gates.values())
        or score < t.audit_score_threshold
        or any(v.label != "SUPPORTED" and v.claim.importance != "minor" for v in verdicts)
        or any(f["severity"] == "high" for f in risk_flags)
    )
    return AuditResult(
        query=query or "",
        answer=answer or "",
        claims=verdicts,
        metrics=metrics,
        audit_score=score,
        risk_flags=risk_flags,
        warnings=scoring.warnings_for(verdicts),
        quality_gates=gates,
        flagged=flagged,
        methods_not_run=dict(methods_not_run or {}),
        duration_ms=round(1000 * (time.perf_counter() - started), 2),
        passages=passages,
    )


def _context_recall(
    reference: str,
    context: list[Passage],
    *,
    thresholds: Thresholds,
    now: datetime,
    embed: Encode,
    overrides: dict[str, VerificationMethod] | None,
    encode_tokens: Encode | None,
) -> float:
    """The share of the reference's assertions that the entailment judge finds SUPPORTED by
    ``context`` (0.0 for a reference that asserts nothing)."""
    ref_sents = [clean_sentence(s) for s in split_sentences(reference)]
    ref_sents = [s for s in ref_sents if is_assertion(s)]
    if not ref_sents:
        return 0.0
    ref_verdicts = verify_claims(
        [(s, context) for s in ref_sents],
        thresholds=thresholds,
        now=now,
        embed=embed,
        methods=("entailment",),
        overrides=overrides,
        encode_tokens=encode_tokens,
    )
    return sum(v.label == "SUPPORTED" for v in ref_verdicts) / len(ref_sents)


def _retrieved_context(passages: list[Passage], hits: list[list[EvidenceHit]]) -> list[Passage]:
    """Return the request passages, then each other passage retrieved for some claim, once each."""
    context = {p.id: p for p in passages}
    for claim_hits in hits:
        for h in claim_hits:
            context.setdefault(h.passage.id, h.passage)
    return list(context.values())


def _flag_text(flag: str, v: ClaimVerdict) -> str:
    return {
        "no_evidence": "No passage matched this claim",
        "conflict": "Sources disagree on this claim",
        "outdated_source": "Its evidence is older than the freshness policy allows",
        TOO_LONG_FLAG: (
            f"Not verified: {len(v.claim.text):,} characters in one sentence, over the "
            f"{MAX_VERIFIED_CLAIM_CHARS:,} a claim may have"
        ),
        OVER_BUDGET_FLAG: (
            f"Not verified: the claims before it used the audit's read budget of {read_budget():,} characters"
        ),
    }.get(flag, flag)

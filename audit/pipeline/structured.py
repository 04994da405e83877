"""Post-verification of structured JSON answers (docs/SPEC_NOTES.md#structured-answers).

Plain Python. :func:`discover_fields` walks a JSON answer (objects and lists, any depth) and
returns every field that has a sibling ``<field>_source_refs``: its path (``a.b[2].c``), its text
and the ids of the passages it cites; a list of strings under such a field gives one field per item
(``a.points[0]``). :func:`verify_fields` then runs stages 4-6 of that section on them:

- stage 4, isolated verification: each field is judged against the passages its refs name and
  nothing else (not the rest of the JSON, not the other passages), by the pipeline's methods (the
  entailment judge, structural and numeric checks, and the isolated LLM judge when configured);
- stage 5, citation fix: a field not SUPPORTED is judged again against each of the best other
  passages (hybrid search); those the same judge calls SUPPORTED are proposed beside the finding —
  ``REPLACE`` (an alternative beats the refs' confidence by ``CITATION_REPLACE_MARGIN``, the
  revision loop's rule), ``ADD_ALTERNATE`` (it does not: keep the refs, add it), or ``REMOVE`` (no
  passage supports it). The label stays the verdict on the refs as submitted;
- stage 6, numeric QA: the ``numeric`` method compares the field's quantities with its passages'.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from datetime import timezone as dt_timezone
from typing import TYPE_CHECKING, Any, TypeVar

from audit.constants import (
    CITATION_REPLACE_MARGIN,
    STRUCTURED_FIX_CANDIDATES,
    STRUCTURED_MAX_DEPTH,
    STRUCTURED_MAX_FIELDS,
    STRUCTURED_REFS_SUFFIX,
)
from audit.errors import InvalidInput
from audit.pipeline.extraction import claim_type, importance
from audit.pipeline.job import VerificationJob
from audit.pipeline.json_limits import depth_of
from audit.pipeline.local_audit import LocalAudit
from audit.pipeline.methods import VerifyContext, verify_context
from audit.pipeline.types import AuditResult, ClaimDraft, ClaimVerdict, EvidenceHit, Passage

if TYPE_CHECKING:
    import numpy as np

    from audit.constants import Thresholds
    from audit.pipeline.llm.client import LLMClient

T = TypeVar("T")
# the pipeline's method runner (``audit.run_methods``) and the hybrid search (``retrieval.retrieve``)
RunMethods = Callable[
    [list[tuple[ClaimDraft, list[EvidenceHit]]], VerifyContext, tuple[str, ...]], list[ClaimVerdict]
]
Search = Callable[[list[ClaimDraft], list[Passage]], list[list[EvidenceHit]]]


class StructuredError(ValueError):
    """A malformed structured answer; ``path`` names the offending value (``a.b[2].c_source_refs[1]``)."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path
        self.message = message


@dataclass(frozen=True)
class StructuredField:
    path: str  # "a.b[2].c", or "a.points[0]" for an item of a list field
    text: str
    source_refs: tuple[str, ...]


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _field_texts(value: object, path: str) -> list[tuple[str, str]]:
    if isinstance(value, str) and value.strip():
        return [(path, value)]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return [(path, json.dumps(value))]
    if isinstance(value, list) and value and all(isinstance(v, str) and v.strip() for v in value):
        return [(f"{path}[{i}]", v) for i, v in enumerate(value)]
    raise StructuredError(
        path, "a field with source refs must be a non-blank string, a number or a list of non-blank strings."
    )


def _refs(value: object, path: str, known: set[str] | None) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise StructuredError(path, "must be a list of passage ids.")
    refs = []
    for i, ref in enumerate(value):
        if isinstance(ref, bool) or not isinstance(ref, (str, int)) or not str(ref).strip():
            raise StructuredError(
                f"{path}[{i}]", "must be a passage id (a non-blank string or a whole number)."
            )
        if known is not None and str(ref) not in known:
            raise StructuredError(f"{path}[{i}]", f'names no passage sent in contexts ("{ref}").')
        refs.append(str(ref))
    return tuple(dict.fromkeys(refs))


def discover_fields(
    answer_json: object, context_ids: Iterable[object] | None = None
) -> list[StructuredField]:
    """Every field with a sibling ``<field>_source_refs``, in document order; raises StructuredError.

    ``context_ids`` (when given) are the passage ids a ref may name.
    """
    known = None if context_ids is None else {str(i) for i in context_ids}
    if not isinstance(answer_json, dict):
        raise StructuredError("answer_json", "must be a JSON object.")
    if depth_of(answer_json, STRUCTURED_MAX_DEPTH) > STRUCTURED_MAX_DEPTH:
        raise StructuredError(
            "answer_json",
            f"is nested more than {STRUCTURED_MAX_DEPTH} levels deep; at most {STRUCTURED_MAX_DEPTH} are verified.",
        )
    found: list[StructuredField] = []

    def walk(node: object, path: str) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key.endswith(STRUCTURED_REFS_SUFFIX):
                    refs_path = _join(path, key)
                    base = key[: -len(STRUCTURED_REFS_SUFFIX)]
                    if not base or base not in node:
                        raise StructuredError(refs_path, f'has no sibling field "{base}" to verify.')
                    refs = _refs(value, refs_path, known)
                    found.extend(
                        StructuredField(p, text, refs)
                        for p, text in _field_texts(node[base], _join(path, base))
                    )
                else:
                    walk(value, _join(path, key))
        elif isinstance(node, list):
            for i, item in enumerate(node):
                walk(item, f"{path}[{i}]")

    walk(answer_json, "")
    if not found:
        raise StructuredError(
            "answer_json", f'has no field with a sibling "<field>{STRUCTURED_REFS_SUFFIX}" to verify.'
        )
    if len(found) > STRUCTURED_MAX_FIELDS:
        raise StructuredError(
            "answer_json",
            f"has {len(found)} fields with source refs; at most "
            f"{STRUCTURED_MAX_FIELDS} are verified per answer.",
        )
    return found


def canonical_text(answer_json: dict[str, Any]) -> str:
    """The stored text of a structured answer: its JSON, keys in the order sent."""
    return json.dumps(answer_json, ensure_ascii=False, indent=2)


def ordered_json(text: str, stored: T) -> T:
    """The structured answer as sent, keys in their order: parsed from the stored text (a JSONB
    column on PostgreSQL keeps the keys in its own order), else ``stored``."""
    try:
        parsed: T = json.loads(text)
    except (TypeError, ValueError):
        return stored
    return parsed if parsed == stored else stored


def field_claims(fields: list[StructuredField], text: str, query: str = "") -> list[ClaimDraft]:
    """One claim per field; spans point at the field's value inside ``text`` (0, 0 when not found)."""
    claims, cursor = [], 0
    for n, f in enumerate(fields, 1):
        needle = json.dumps(f.text, ensure_ascii=False)[1:-1]
        at = text.find(needle, cursor)
        span = (at, at + len(needle)) if at >= 0 else (cursor, cursor)
        cursor = max(cursor, span[1])
        ctype = claim_type(f.text)
        claims.append(
            ClaimDraft(
                claim_id=f"c{n}",
                text=f.text,
                span=span,
                type=ctype,
                importance=importance(f.text, query, ctype=ctype, first=n == 1),
                citations=f.source_refs,
                sentence=f.text,
            )
        )
    return claims


def verify_fields(
    claims: list[ClaimDraft],
    passages: list[Passage],
    ctx: VerifyContext,
    methods: tuple[str, ...],
    *,
    run_methods: RunMethods,
    search: Search,
) -> tuple[list[ClaimVerdict], list[dict[str, Any] | None]]:
    """Stages 4-6 on the field claims; returns their verdicts and a citation fix (or None) per field.

    ``run_methods(items, ctx, methods)`` is the pipeline's method runner; ``search(claims, passages)``
    returns each claim's best passages by hybrid search (``retrieval.retrieve``).
    """
    by_id = {p.id: p for p in passages}
    items = [
        (c, [EvidenceHit(passage=by_id[r], relevance=1.0, cited=True) for r in c.citations if r in by_id])
        for c in claims
    ]
    verdicts = run_methods(items, ctx, methods)
    fixes: list[dict[str, Any] | None] = [None] * len(claims)
    weak = [i for i, v in enumerate(verdicts) if v.label != "SUPPORTED"]
    if not weak:
        return verdicts, fixes
    unanchored = [replace(claims[i], citations=()) for i in weak]
    found = search(unanchored, passages)
    trials: list[tuple[ClaimDraft, list[EvidenceHit]]] = []
    owners: list[tuple[int, str]] = []
    for i, hits in zip(weak, found):
        others = [h.passage for h in hits if h.passage.id not in claims[i].citations][
            :STRUCTURED_FIX_CANDIDATES
        ]
        for p in others:
            trials.append(
                (
                    replace(claims[i], claim_id=f"{claims[i].claim_id}:{p.id}"),
                    [EvidenceHit(passage=p, relevance=1.0, cited=True)],
                )
            )
            owners.append((i, p.id))
    trial_verdicts = run_methods(trials, replace(ctx, results={}), methods) if trials else []
    supported: dict[int, list[tuple[str, float]]] = {}
    for (i, pid), tv in zip(owners, trial_verdicts):
        if tv.label == "SUPPORTED":
            supported.setdefault(i, []).append((pid, round(float(tv.confidence), 4)))
    for i in weak:
        refs = list(claims[i].citations)
        alternates = sorted(supported.get(i, []), key=lambda pair: -pair[1])
        if alternates:
            # the revision loop's rule: another passage takes the place of the cited ones only when
            # it beats them by CITATION_REPLACE_MARGIN; otherwise it is added beside them
            beats = alternates[0][1] - float(verdicts[i].confidence) >= CITATION_REPLACE_MARGIN
            action = "REPLACE" if beats or not refs else "ADD_ALTERNATE"
            new_refs = (refs if action == "ADD_ALTERNATE" else []) + [pid for pid, _ in alternates]
            fixes[i] = {
                "action": action,
                "source_refs": new_refs,
                "supported_by": [{"ref": pid, "confidence": conf} for pid, conf in alternates],
            }
        elif refs:
            fixes[i] = {"action": "REMOVE", "source_refs": [], "supported_by": []}
    return verdicts, fixes


@dataclass
class StructuredResult:
    result: AuditResult  # over the field claims
    fields: list[StructuredField]
    fixes: list[dict[str, Any] | None]
    text: str  # the stored text (canonical JSON)


def audit_structured(
    query: str,
    answer_json: dict[str, Any],
    contexts: Sequence[str | Mapping[str, Any] | Passage] | None,
    *,
    thresholds: Thresholds,
    domain: str = "",
    now: datetime | None = None,
    embed: Callable[[list[str]], np.ndarray] | None = None,
    llm: LLMClient | None = None,
    methods: tuple[str, ...] | None = None,
) -> StructuredResult:
    """Discover, verify (stages 4-6) and score a structured answer against the request's passages,
    with the job's ``thresholds``."""
    import time
    from datetime import timezone

    from audit.pipeline.audit import NOT_RUN_OFFLINE, resolve_embed, run_methods, summarize
    from audit.pipeline.methods import LLM_METHODS, OFFLINE_METHODS
    from audit.pipeline.retrieval import as_passages, passage_vectors, retrieve

    started = time.perf_counter()
    t = thresholds
    embed = resolve_embed(embed)
    now = now or datetime.now(timezone.utc)
    passages = as_passages(contexts)
    fields = discover_fields(answer_json, [p.id for p in passages])
    text = canonical_text(answer_json)
    claims = field_claims(fields, text, query)
    methods = tuple(methods or OFFLINE_METHODS)
    if llm is not None:
        methods = (*methods, *(m for m in LLM_METHODS if m not in methods))
    ctx = verify_context(t, now=now, domain=domain, query=query, embed=embed, llm=llm)
    verdicts, fixes = verify_fields(
        claims,
        passages,
        ctx,
        methods,
        run_methods=run_methods,
        search=lambda cs, ps: retrieve(cs, ps, embed=embed, thresholds=t) if ps else [[] for _ in cs],
    )
    vecs = embed([c.text for c in claims] + [query or ""])
    rag_text = " ".join(f.text + "".join(f" [cite:{r}]" for r in f.source_refs) for f in fields)
    result = summarize(
        query,
        text,
        verdicts,
        passages,
        thresholds=t,
        now=now,
        embed=embed,
        vecs=vecs,
        any_evidence=bool(passages),
        started=started,
        rag_text=rag_text,
        source_vectors=lambda sources: passage_vectors(sources, embed=embed),
        methods_not_run=NOT_RUN_OFFLINE if llm is None else {},
    )
    return StructuredResult(result=result, fields=fields, fixes=fixes, text=text)


def fields_check(answer_json: object, contexts: list[dict[str, Any]]) -> None:
    """Raise InvalidInput naming the path of the first malformed field or source ref of a
    structured answer (before any audit)."""
    try:
        discover_fields(answer_json, [str(c.get("id")) for c in contexts or []])
    except StructuredError as exc:
        where = exc.path if exc.path == "answer_json" else f"answer_json.{exc.path}"
        raise InvalidInput(where, exc.message) from None


def structured_audit(
    job: VerificationJob, answer_json: dict[str, Any], contexts: tuple[dict[str, Any], ...]
) -> LocalAudit:
    """Verify each field of ``answer_json`` (already checked: :func:`fields_check`) against
    the contexts its refs name, as an audit whose claims carry their field's note (its path, refs
    and the citation fix proposed beside the finding); no revision: its text is not rewritten."""
    started_at = datetime.now(dt_timezone.utc)
    plan = job.plan
    outcome = audit_structured(
        job.query,
        answer_json,
        list(contexts),
        thresholds=plan.thresholds,
        domain=job.domain,
        llm=job.llm_methods,
        methods=plan.methods,
    )
    result = outcome.result
    result.methods_not_run = {**result.methods_not_run, **plan.not_run}
    notes = {
        f"c{n}": {"structured": {"field": f.path, "source_refs": list(f.source_refs), "citation_fix": fix}}
        for n, (f, fix) in enumerate(zip(outcome.fields, outcome.fixes), 1)
    }
    return LocalAudit(
        started_at=started_at,
        result=result,
        outcome=None,
        notes=notes,
    )

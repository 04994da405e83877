"""Synthetic data for ``nightly_audit --bench N``: a scratch workspace, a KB and N weak claims.

The knowledge base is made of template facts about invented entities; each claim restates
one fact (should become SUPPORTED), contradicts one (a changed number or an antonym) or talks
about something the KB does not hold. Every claim is stored as NEI or REFUTED below the
low-confidence threshold, on answers received on the benchmark day, so the nightly run selects
them all. Deterministic for a given N (seeded random generator).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import random

import numpy as np
from django.db import transaction

from audit import constants
from audit.models import Answer, Chunk, Claim, Document, Workspace
from audit.selectors.weak_claims import day_bounds

BENCH_SLUG = "nightly-bench"
_SYLLABLES = "ka lo mi nu ra se ti vo ze pa qu li do ne ba".split()
_RELATIONS = [
    ("regulates", "deregulates"),
    ("increases", "decreases"),
    ("activates", "inhibits"),
    ("requires", "does not require"),
    ("precedes", "follows"),
    ("stabilises", "destabilises"),
]
_OBJECTS = (
    "calcium signalling|memory consolidation|protein folding|reporting obligations|capital buffers|"
    "synaptic pruning|liquidity ratios|cortisol release|audit trails|sleep spindles".split("|")
)


def _name(rng: random.Random) -> str:
    return "".join(rng.choice(_SYLLABLES) for _ in range(3)).capitalize()


def _fact(rng: random.Random) -> tuple[str, str, str, str, int]:
    return _name(rng), *rng.choice(_RELATIONS), rng.choice(_OBJECTS), rng.randint(1990, 2025)


def _sentence(subject: str, relation: str, obj: str, year: int) -> str:
    return f"{subject} {relation} {obj} according to the {year} survey."


def _hash(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


# long: the bench workspace's bulk inserts, one table after the other
def bench_seed(*, claims: int, chunks: int, day: dt.date, seed: int = 7) -> Workspace:
    """Recreate the bench workspace with ``chunks`` KB chunks and ``claims`` weak claims on ``day``.

    The chunks are embedded first; everything is then written in one transaction."""
    from audit.pipeline.embedding import get_embedder

    rng = random.Random(seed)
    facts = []
    texts = []
    for _ in range(chunks):
        chunk_facts = [_fact(rng) for _ in range(4)]
        facts.extend(chunk_facts)
        texts.append(" ".join(_sentence(s, pos, o, y) for s, pos, _neg, o, y in chunk_facts))
    vectors = get_embedder().encode(texts).astype("<f4")
    with transaction.atomic():
        Workspace.objects.filter(slug=BENCH_SLUG).delete()
        workspace = Workspace.objects.create(
            name="Nightly benchmark", slug=BENCH_SLUG, allow_external_calls=False
        )
        docs_n = max(1, chunks // 10)
        documents = Document.objects.bulk_create(
            [
                Document(
                    workspace=workspace,
                    title=f"Bench document {d}",
                    uri=f"kb://bench-{d}",
                    domain="neuroscience" if d % 2 else "general",
                    content_hash=_hash(f"doc{d}"),
                    published_at=dt.date(2015 + d % 11, 1 + d % 12, 1),
                )
                for d in range(docs_n)
            ]
        )
        Chunk.objects.bulk_create(
            [
                Chunk(
                    document=documents[c % docs_n],
                    ordinal=c // docs_n,
                    text=text,
                    start_offset=0,
                    end_offset=len(text),
                    content_hash=_hash(text),
                    embedding=np.ascontiguousarray(vectors[c]).tobytes(),
                    search_vector=vectors[c],
                )
                for c, text in enumerate(texts)
            ],
            batch_size=1000,
        )
        Workspace.objects.filter(id=workspace.id).update(kb_version=1)
        start, _ = day_bounds(day)
        per_answer = 10
        answers = Answer.objects.bulk_create(
            [
                Answer(
                    workspace=workspace,
                    query="benchmark question",
                    text="",
                    mode=constants.MODE_AUDIT_LOCAL,
                    created_at=start + dt.timedelta(seconds=i),
                    public_id=f"a-bench-{i:07d}",
                )
                for i in range((claims + per_answer - 1) // per_answer)
            ],
            batch_size=1000,
        )
        rows = []
        for i in range(claims):
            subject, pos, neg, obj, year = rng.choice(facts)
            kind = i % 3
            if kind == 0:
                text = _sentence(subject, pos, obj, year)
            elif kind == 1:
                text = _sentence(subject, neg, obj, year) if i % 2 else _sentence(subject, pos, obj, year + 7)
            else:
                text = f"{_name(rng)} {rng.choice(_RELATIONS)[0]} {rng.choice(_OBJECTS)} in {rng.randint(1990, 2025)} trials."
            rows.append(
                Claim(
                    answer=answers[i // per_answer],
                    claim_id=f"c{i % per_answer + 1}",
                    text=text,
                    label=Claim.Label.REFUTED if kind == 1 else Claim.Label.NEI,
                    machine_label=Claim.Label.REFUTED if kind == 1 else Claim.Label.NEI,
                    confidence=round(rng.uniform(0.05, 0.55), 3),
                    importance=constants.IMPORTANCE_MATERIAL,
                )
            )
        Claim.objects.bulk_create(rows, batch_size=1000)
        return workspace

"""The stacker's unrelated-evidence rows: DEV claims paired with another group's evidence, labelled NEI."""

from __future__ import annotations

from audit.evaluation.bench_data import claim_evidence_texts, group_key
from audit.evaluation.nli_fit import UNRELATED_MAX_SHARED, unrelated_rows
from audit.pipeline.text import content_stems

# four groups on one subject (their evidence shares most of each other's claim words) and two apart
TOPICS = [
    (
        "Incident reports are kept for seven years by the records office.",
        "The records office keeps incident reports.",
    ),
    (
        "The records office keeps incident reports in a locked archive.",
        "Incident reports are kept in an archive.",
    ),
    (
        "Incident reports are kept by the records office after review.",
        "The records office reviews incident reports.",
    ),
    (
        "The records office deletes incident reports after seven years.",
        "Incident reports are kept for seven years.",
    ),
    ("The hippocampus consolidates long-term memory.", "Memory consolidation depends on the hippocampus."),
    (
        "Dopamine neurons signal a reward prediction error.",
        "Midbrain dopamine neurons signal reward prediction errors.",
    ),
]
RECORDS = [
    {
        "id": f"r{k}",
        "dataset": "wice",
        "claim": claim,
        "evidence": [{"id": "e", "text": text}],
        "label": "SUPPORTED",
    }
    for k, (claim, text) in enumerate(TOPICS)
]


def test_each_row_pairs_a_claim_with_evidence_of_another_group_that_shares_few_of_its_words():
    rows = unrelated_rows(RECORDS, 12, seed=3)
    assert len(rows) == 12 and all(r["label"] == "NEI" for r in rows)
    by_claim = {r["claim"]: r for r in RECORDS}
    for row in rows:
        own = by_claim[row["claim"]]
        other = next(r for r in RECORDS if claim_evidence_texts(r) == [e["text"] for e in row["evidence"]])
        assert group_key(other) != group_key(own)
        claim = set(content_stems(row["claim"]))
        shared = claim & set(content_stems(" ".join(claim_evidence_texts(row))))
        assert len(shared) <= UNRELATED_MAX_SHARED * len(claim)


def test_the_rows_are_the_same_for_the_same_seed():
    assert unrelated_rows(RECORDS, 8, seed=3) == unrelated_rows(RECORDS, 8, seed=3)

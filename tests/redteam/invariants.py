"""The rules of issue 13, checked on one ``POST /api/v1/audits`` response.

1. Claim cards describe the answer as received (text, no qualifier; a change of the answer is
   recorded as a ``revision`` on a card).
2. A claim refuted as received opens its case (reason ``refuted``; ``auto_corrected`` too when
   the loop corrected it).
3. A correction keeps the claim's subject and verifies SUPPORTED against its passage with the
   same judge that labels claims.
4. A citation the revision added names a passage that supports the claim under that judge.
6. Clean returned text: every marker resolves to a passage id, no internal ids, no repeated
   sentences, number agreement.
"""

from __future__ import annotations

import re

from audit.constants import UNSUPPORTED_QUALIFIER
from audit.pipeline import verify_claim
from audit.pipeline.extraction import CITATION_RE, citation_anchors, split_sentences
from audit.pipeline.revision import DISPUTED_QUALIFIER
from audit.pipeline.text import content_stems

QUALIFIERS = (UNSUPPORTED_QUALIFIER, DISPUTED_QUALIFIER, "reportedly", "(unverified)")
BAD_AGREEMENT = re.compile(
    r"(?<![\d.,])1 (?:business |calendar |working )?(?:days|hours|years|months|weeks|minutes)\b"
)


def passage_text(card: dict, passage_id: str, contexts: list[dict]) -> str:
    for c in contexts:
        if str(c.get("id")) == passage_id:
            return c["text"]
    for ev in card["evidence"]:
        if ev["source_id"] == passage_id:
            return ev["snippet"]
    from audit.models import Chunk

    chunk = (
        Chunk.objects.filter(pk=int(passage_id.rsplit("_", 1)[-1])).first()
        if passage_id.startswith("kb_chunk_")
        else None
    )
    assert chunk is not None, f"passage {passage_id} of {card['claim_id']} is nowhere"
    return chunk.text


def kept_share(before: str, after: str) -> float:
    stems = set(content_stems(before))
    return len(stems & set(content_stems(after))) / len(stems) if stems else 1.0


def check_rules(data: dict, original: str, contexts: list[dict]) -> None:
    cards = data["claims"]
    # rule 1: the cards are the answer as received
    assert data["original_answer"] == original
    received = set(content_stems(original))
    for card in cards:
        assert not any(
            q.lower() in card["text"].lower() for q in QUALIFIERS if q.lower() not in original.lower()
        ), card
        assert set(content_stems(card["text"])) <= received, card["text"]
    if data["answer"] != original:
        assert any(card["revision"] for card in cards), "the answer changed but no card records a revision"
    # rule 2: refuted as received -> a case, with the correction to confirm
    for card in cards:
        reasons = {r for e in card["escalations"] if e["type"] == "review" for r in e["reasons"]}
        if card["label"] == "REFUTED":
            assert "refuted" in reasons, card
            if card["revision"] and card["revision"]["strategy"] == "correct":
                assert "auto_corrected" in reasons, card
    # rules 3 and 4: a correction or an added citation stands only where the judge says SUPPORTED
    for card in cards:
        rev = card["revision"]
        if not rev:
            continue
        if rev["strategy"] == "correct":
            assert rev["passage_id"] and rev["label"] == "SUPPORTED", card
            assert kept_share(card["text"], rev["text"]) >= 0.6, (
                f"subject changed: {card['text']!r} -> {rev['text']!r}"
            )
        if (
            rev["passage_id"]
            and rev["strategy"] in ("correct", "citation", "corrective_retrieval")
            and rev["text"]
        ):
            verdict = verify_claim(rev["text"], [passage_text(card, rev["passage_id"], contexts)])
            assert verdict.label == "SUPPORTED", (rev, verdict.label, verdict.confidence)
    # rule 6: clean returned text
    answer = data["answer"]
    by_anchor = {c["anchor"]: c for c in data["citations"]}
    for anchor in citation_anchors(answer):
        assert by_anchor.get(anchor, {}).get("id"), (
            f"marker [{anchor}] resolves to no passage: {data['citations']}"
        )
    assert "[cite:kb_" not in answer and "[cite:chunk" not in answer
    sentences = [CITATION_RE.sub("", s).strip().lower() for s in split_sentences(answer)]
    sentences = [s for s in sentences if s]
    assert len(sentences) == len(set(sentences)), f"repeated sentence in {answer!r}"
    if not BAD_AGREEMENT.search(original):
        assert not BAD_AGREEMENT.search(answer), answer

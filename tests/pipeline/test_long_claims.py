"""Bounded work on one planted over-long sentence (issue 34): a 100 KB answer of the families that
took 12-38 s to audit is reported not verified, and a normal claim against such a context is
verified without parsing it. The work is counted (texts encoded, sentences parsed), never timed."""

from __future__ import annotations

import pytest

from audit.constants import BINDING_MAX_SENTENCE_CHARS, MAX_VERIFIED_CLAIM_CHARS
from audit.pipeline import audit_answer, binding
from tests.pipeline import scaling

# the families of the HTTP scaling report over 8 s at 100,000 characters before the limit
SLOW_FAMILIES = (
    "starred words",
    "abbreviations",
    "digits and hyphens",
    "number pairs",
    "one long citation list",
)
SIZE = 100_000
QUERY = "What is it?"


class CountingEncoder:
    """The real embedder's ``encode``, counting the texts and characters it is given."""

    def __init__(self, embedder) -> None:
        self.embedder = embedder
        self.texts = 0
        self.chars = 0

    def __call__(self, texts):
        texts = list(texts)
        self.texts += len(texts)
        self.chars += sum(len(t) for t in texts)
        return self.embedder.encode(texts)


def _new_parses(before: set[str]) -> list[str]:
    return [t for t in binding.PARSES.docs if t not in before]


@pytest.mark.parametrize("family", SLOW_FAMILIES)
def test_a_100kb_sentence_of_a_slow_family_is_reported_not_verified_without_being_read(embedder, family):
    text = scaling.ADVERSARIAL[family](SIZE)
    encode = CountingEncoder(embedder)
    parsed_before = set(binding.PARSES.docs)

    result = audit_answer(QUERY, text, [{"id": "1", "text": text}], embed=encode)

    assert len(result.claims) == 1
    claim = result.claims[0]
    assert len(claim.claim.text) > MAX_VERIFIED_CLAIM_CHARS
    assert (claim.label, claim.verdict, claim.confidence) == ("NEI", "not_found", 0.0)
    assert claim.methods == [] and claim.evidence == []
    assert "too_long_to_verify" in claim.risk_flags
    flag = next(f for f in result.risk_flags if f["type"] == "too_long_to_verify")
    assert flag["severity"] == "high" and flag["claim_id"] == claim.claim.claim_id
    assert "Not verified" in flag["description"] and result.flagged
    # no method parsed it, and the encoder read a handful of texts (the claim, the query, the
    # answer and its source for the answer-level metrics), not the sentence's words or phrases
    assert _new_parses(parsed_before) == []
    assert encode.texts <= 6
    assert encode.chars <= 4 * SIZE


@pytest.mark.parametrize("family", SLOW_FAMILIES)
def test_a_normal_claim_against_a_100kb_planted_context_is_verified_without_parsing_it(embedder, family):
    # "Then": a planted sentence no other test parsed (a parse from the cache would count as none)
    context = "LTP needs 2 NMDA receptors. Then " + scaling.ADVERSARIAL[family](SIZE)
    parsed_before = set(binding.PARSES.docs)
    assert not any(t.startswith("Then ") for t in parsed_before)

    result = audit_answer(QUERY, "LTP needs 2 NMDA receptors in 1973 [1].", [{"id": "1", "text": context}])

    claim = result.claims[0]
    assert "too_long_to_verify" not in claim.risk_flags
    assert claim.method_names and claim.evidence[0].passage.id == "1"
    assert all(len(t) <= BINDING_MAX_SENTENCE_CHARS for t in _new_parses(parsed_before))


def test_a_claim_at_the_length_limit_is_still_verified(embedder, ltp_passages):
    words = "LTP in the hippocampus requires NMDA receptor activation and "
    answer = (words * (MAX_VERIFIED_CLAIM_CHARS // len(words)))[: MAX_VERIFIED_CLAIM_CHARS - 10] + "synapses."

    result = audit_answer("What does LTP require?", answer, ltp_passages)

    assert [len(c.claim.text) <= MAX_VERIFIED_CLAIM_CHARS for c in result.claims] == [True]
    assert result.claims[0].method_names
    assert "too_long_to_verify" not in result.claims[0].risk_flags


def test_the_bindings_batched_parse_skips_an_over_long_sentence_that_shares_the_claims_words(
    embedder, monkeypatch
):
    # the binding reads every claim here (as it reads one headed for SUPPORTED); the planted sentence
    # shares the claim's words, so it is a candidate for the answer's one batched parse, and is over the cap
    from audit.pipeline.methods import structure

    monkeypatch.setattr(structure, "binding_can_change", lambda *args, **kwargs: True)
    planted = "Meanwhile NMDA receptors " + " ".join(
        f"item{i}" for i in range(BINDING_MAX_SENTENCE_CHARS // 4)
    )
    parsed_before = set(binding.PARSES.docs)

    audit_answer(
        QUERY, "LTP needs NMDA receptors [1].", [{"id": "1", "text": f"LTP needs NMDA receptors. {planted}."}]
    )

    new = _new_parses(parsed_before)
    assert new and all(len(t) <= BINDING_MAX_SENTENCE_CHARS for t in new)


@pytest.mark.django_db
def test_the_too_long_flag_shows_on_every_page_that_lists_the_claim(client, lead, workspace):
    """It showed on the claim page only, not on the answer, the claim list or the case (issue 46)."""
    from escalation import services
    from tests.factories import AnswerFactory, ClaimFactory

    answer = AnswerFactory(workspace=workspace, text="A very long sentence.")
    claim = ClaimFactory(
        answer=answer, claim_id="c1", label="NEI", confidence=0.0, risk_flags=["too_long_to_verify"]
    )
    ClaimFactory(answer=answer, claim_id="c2", label="REFUTED", confidence=0.1)
    (case, *_) = services.cases_open_for_answer(answer=answer)
    assert case.claim_id == claim.pk
    client.force_login(lead)

    for url in (
        f"/answers/{answer.public_id}/",
        "/claims/",
        f"/claims/{claim.pk}/",
        f"/escalations/{case.ticket}/",
    ):
        page = client.get(url)
        assert page.status_code == 200, url
        assert page.content.decode().count("too long to verify") == 1, url

"""Evidence as analysts read it: markdown stripped, the verdict's sentence highlighted in its snippet."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from audit.web.presentation import evidence_view, sentence_spans, strip_markdown
from tests.ui.conftest import build_answer, open_case

SNIPPET = (
    "# Dopamine and Reward Prediction Error\n\nMidbrain dopamine neurons signal a reward prediction error. "
    "Parkinson's disease is characterised by the loss of dopamine neurons in the substantia nigra. "
    "Motor symptoms usually appear after about 60 to 80 percent of these neurons have been lost."
)


def _claim(text, label, **results):
    return SimpleNamespace(text=text, label=label, method_results=results)


def _evidence(snippet=SNIPPET, rank=0, source_id="kb_chunk_3"):
    return SimpleNamespace(snippet=snippet, rank=rank, source_id=source_id)


def test_it_strips_markdown_headings_emphasis_links_and_list_markers():
    assert strip_markdown("# Title\n\nSome **bold** and [a link](http://x.org) text.\n- item\n> quote") == (
        "Title\nSome bold and a link text.\nitem\nquote"
    )


def test_it_splits_sentences_without_breaking_initials_or_abbreviations():
    text = "Patient H.M. (Henry Molaison) had surgery. It helped, e.g. with seizures. Title\nNext"
    assert [text[a:b] for a, b in sentence_spans(text)] == [
        "Patient H.M. (Henry Molaison) had surgery.",
        "It helped, e.g. with seizures.",
        "Title",
        "Next",
    ]


def test_it_highlights_the_sentence_holding_the_claims_quantity_not_the_first_similar_one():
    claim = _claim(
        "Parkinson's disease symptoms appear after about 70% of nigral dopamine neurons are lost.",
        "NEI",
        numeric={
            "details": {
                "items": [{"claim_value": "70%", "evidence_value": "60 to 80 percent", "match": True}]
            }
        },
    )
    view = evidence_view(claim, _evidence())
    assert view["sentence"].startswith("Motor symptoms usually appear after about 60 to 80 percent")
    assert not view["before"].startswith("#")
    assert view["polarity"] == "related" and view["bears"]


def test_a_supported_claims_aligned_sentence_supports_it():
    view = evidence_view(
        _claim("Dopamine neurons signal a reward prediction error.", "SUPPORTED"), _evidence()
    )
    assert view["sentence"] == "Midbrain dopamine neurons signal a reward prediction error."
    assert view["polarity"] == "supports"


def test_a_structural_finding_or_a_differing_quantity_contradicts():
    sentence = "Parkinson's disease is characterised by the loss of dopamine neurons in the substantia nigra."
    claim = _claim(
        "Parkinson's disease spares dopamine neurons in the substantia nigra.",
        "REFUTED",
        structure={
            "details": {"findings": [{"rule": "antonym", "sentence": sentence, "passage_id": "kb_chunk_3"}]}
        },
    )
    view = evidence_view(claim, _evidence())
    assert view["sentence"] == sentence and view["polarity"] == "contradicts"
    claim = _claim(
        "Motor symptoms appear after about 20 percent of these neurons are lost.",
        "REFUTED",
        numeric={"details": {"items": [{"evidence_value": "60 to 80 percent", "match": False}]}},
    )
    assert evidence_view(claim, _evidence())["polarity"] == "contradicts"


def test_an_unrelated_passage_does_not_bear_on_the_claim():
    view = evidence_view(
        _claim("Levodopa was first synthesized in 1911.", "NEI"),
        _evidence("# Synaptic Plasticity\n\nLTP strengthens synapses after high-frequency stimulation."),
    )
    assert not view["bears"] and view["polarity"] == "related"


@pytest.mark.django_db
def test_the_claim_card_and_the_case_page_highlight_the_claims_own_evidence(client, analyst, workspace):
    from audit.models import Evidence

    _answer, claims = build_answer(workspace)
    refuted = claims[1]
    Evidence.objects.filter(claim=refuted).update(
        snippet="# Hippocampus Anatomy\n\nThe hippocampus is in the temporal lobe. The hippocampus proper has three layers."
    )
    Evidence.objects.create(
        claim=refuted,
        rank=1,
        source_type="kb",
        source_id="kb_chunk_9",
        title="Basal Ganglia",
        snippet="The striatum receives cortical input.",
        hash="sha256:" + "0" * 64,
    )
    case = open_case(refuted)
    client.force_login(analyst)
    html = client.get(f"/claims/{refuted.pk}/").content.decode()
    assert (
        '<mark class="align align--contradicts" title="Contradicts the claim">The hippocampus proper has three layers.</mark>'
        in html
    )
    shown = html.split('id="ev-h"')[1].split("Claim card (JSON)")[0]  # the JSON card keeps the raw snippet
    assert "# Hippocampus" not in shown and "kb://hippocampus_anatomy" in shown
    page = client.get(f"/escalations/{case.ticket}/").content.decode()
    assert "The hippocampus proper has three layers.</mark>" in page
    assert "Basal Ganglia" not in page and "Evidence 1" not in page

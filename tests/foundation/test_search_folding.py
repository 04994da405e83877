"""Search is blind to accents and case: "lomo" finds "Lømo", "LØMO" finds "lomo", on the pages and
the API, on SQLite and PostgreSQL (``search_text``, folded on every write)."""

from __future__ import annotations

import pytest

from audit.models import Answer, Claim
from audit.pipeline.text import fold
from tests.factories import AnswerFactory, ClaimFactory

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "text, folded",
    [("Lømo", "lomo"), ("ÅNGSTRÖM", "angstrom"), ("Straße", "strasse"), ("Æsir Łódź", "aesir lodz")],
)
def test_fold_drops_accents_and_case(text, folded):
    assert fold(text) == folded


@pytest.fixture
def lomo(workspace):
    answer = AnswerFactory(
        workspace=workspace, query="Who described LTP?", text="Bliss and Lømo described it."
    )
    claim = ClaimFactory(answer=answer, claim_id="c1", text="Terje Lømo described long-term potentiation.")
    other = AnswerFactory(workspace=workspace, query="Who?", text="Someone else entirely.")
    ClaimFactory(answer=other, claim_id="c1", text="Hebb proposed the rule.")
    return answer, claim


def test_the_folded_column_is_written_by_save_by_bulk_create_and_by_a_partial_save(workspace):
    answer = AnswerFactory(workspace=workspace, query="Qué", original_text="Lømo", text="Lømo")
    assert Answer.objects.get(pk=answer.pk).search_text == "que\nlomo\nlomo"
    (bulk,) = Claim.objects.bulk_create(
        [Claim(answer=answer, claim_id="c9", text="Ångström units", span_start=0, span_end=1)]
    )
    assert Claim.objects.get(pk=bulk.pk).search_text == "angstrom units"
    answer.text = "Bliss"
    answer.save(update_fields=["text"])
    assert Answer.objects.get(pk=answer.pk).search_text == "que\nlomo\nbliss"


@pytest.mark.parametrize("query", ["lomo", "Lømo", "LOMO", "lømo"])
def test_the_claim_search_finds_lomo_however_it_is_typed(client, analyst, lomo, query):
    _, claim = lomo
    client.force_login(analyst)
    html = client.get("/claims/", {"q": query}).content.decode()
    assert claim.text in html and "Hebb proposed the rule." not in html


@pytest.mark.parametrize("query", ["lomo", "LØMO"])
def test_the_answer_search_finds_lomo_however_it_is_typed(client, analyst, lomo, query):
    answer, _ = lomo
    client.force_login(analyst)
    html = client.get("/answers/", {"q": query}).content.decode()
    assert answer.public_id in html and "Someone else entirely." not in html


def test_the_api_claim_search_folds_too(client, auditor, lomo):
    _, claim = lomo
    client.force_login(auditor)
    body = client.get("/api/v1/claims", {"q": "lomo"}).json()
    assert [c["text"] for c in body["results"]] == [claim.text]

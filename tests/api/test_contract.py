"""What the schema declares is what the API enforces (``audit.api.schema``): values outside a
declared range or choice, blank values and values that are no boolean answer 400 naming the
parameter; values inside are accepted."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db


@pytest.fixture
def reader(client_for, auditor):
    return client_for(auditor)


@pytest.mark.parametrize(
    "url, name",
    [
        ("/api/v1/claims?relabelled=null", "relabelled"),
        ("/api/v1/claims?relabelled=", "relabelled"),  # the pages take "" as any; the API as no boolean
        ("/api/v1/cases?tier=", "tier"),
        ("/api/v1/answers?suppressed=maybe", "suppressed"),
        ("/api/v1/claims?confidence_min=1.5", "confidence_min"),
        ("/api/v1/claims?confidence_max=-0.1", "confidence_max"),
        ("/api/v1/claims?page_size=0", "page_size"),
        ("/api/v1/runs?page_size=501", "page_size"),
        ("/api/v1/evidence?page_size=null", "page_size"),
        ("/api/v1/settings/mode-preview?mode=", "mode"),
        ("/api/v1/claim-cards/daily-bundle?date=", "date"),
        ("/api/v1/claim-cards/daily-bundle?threshold=1.01", "threshold"),
        ("/api/v1/curation-items?status=", "status"),  # an empty value is no choice
    ],
)
def test_a_value_the_schema_does_not_allow_is_refused_naming_the_parameter(reader, url, name):
    response = reader.get(url)
    assert response.status_code == 400, response.content
    assert name in response.json()["errors"]


@pytest.mark.parametrize(
    "url",
    [
        "/api/v1/claims?relabelled=false&confidence_min=0&confidence_max=1&page_size=500",
        "/api/v1/answers?suppressed=TRUE",
        "/api/v1/claim-cards/daily-bundle?threshold=1&format=json",
        "/api/v1/settings/mode-preview?mode=normal",
    ],
)
def test_a_value_the_schema_allows_is_accepted(reader, url):
    assert reader.get(url).status_code == 200


def test_an_answer_of_spaces_is_refused_as_the_schema_says(client_for, submitter):
    response = client_for(submitter).post("/api/v1/audits", {"query": "q", "answer": "   "}, format="json")
    assert response.status_code == 400
    assert response.json()["errors"] == {"answer": ["May not be blank."]}


def test_a_moment_with_an_offset_postgresql_cannot_store_is_read_in_utc(reader):
    # Python reads offsets up to 23:59, PostgreSQL up to 15:59: the filter turns the moment into UTC
    assert reader.get("/api/v1/cases?opened_after=3194-01-18T22:45:09-17:33").status_code == 200
    assert (
        reader.get("/api/v1/reviewed-examples?decided_after=2026-01-01T00:00:00%2B20:00").status_code == 200
    )
    response = reader.get("/api/v1/cases?opened_before=9999-12-31T23:00:00-20:00")  # past year 9999 in UTC
    assert response.status_code == 400 and "opened_before" in response.json()["errors"]


@pytest.mark.parametrize(
    "method, path",
    [("get", "/api/v1/runs/abc"), ("get", "/api/v1/documents/-1"), ("delete", "/api/v1/documents/1.5")],
)
@pytest.mark.parametrize("debug", [False, True])
def test_an_id_of_the_wrong_shape_answers_the_json_404_with_debug_on_or_off(
    client_for, admin_user_obj, settings, method, path, debug
):
    settings.DEBUG = debug  # DEBUG on (`make run`): Django's HTML debug page unless the API answers

    response = getattr(client_for(admin_user_obj), method)(path)

    assert response.status_code == 404 and response["Content-Type"] == "application/json"
    assert response.json() == {"detail": "Not found.", "errors": {}}


def test_the_schema_declares_that_request_texts_hold_no_nul(client_for, auditor):
    from audit.api.schema import NO_NUL, NO_NUL_NONBLANK

    schemas = client_for(auditor).get("/api/v1/schema/?format=json").json()["components"]["schemas"]
    note = schemas["CaseNoteApiInput"]["properties"]
    audit = schemas["AuditCreateInput"]["properties"]

    assert {audit["query"]["pattern"], audit["answer"]["pattern"]} == {NO_NUL_NONBLANK}
    assert audit["conversation_id"]["oneOf"][0]["pattern"] == NO_NUL  # or blank: "" holds no NUL
    assert "pattern" not in audit["mode"]
    assert {p.get("pattern") for p in note.values() if p.get("type") == "string"} <= {NO_NUL, NO_NUL_NONBLANK}

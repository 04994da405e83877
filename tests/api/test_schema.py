"""The OpenAPI 3 schema is valid, documents every endpoint, and the docs pages load no CDN asset."""

from __future__ import annotations

import re

import pytest
import yaml
from openapi_spec_validator import validate


@pytest.fixture
def schema(client, db):
    response = client.get("/api/v1/schema/?format=json")
    assert response.status_code == 200
    return response.json()


def test_it_serves_a_valid_openapi_3_schema(schema):
    validate(schema)  # raises on any violation of the OpenAPI 3 specification

    assert schema["openapi"].startswith("3.")


def test_it_documents_every_endpoint_of_the_api(schema):
    paths = set(schema["paths"])

    assert {
        "/api/v1/audits",
        "/api/v1/answers",
        "/api/v1/answers/{answer_id}",
        "/api/v1/answers/{answer_id}/claims/{claim_id}",
        "/api/v1/claims",
        "/api/v1/evidence",
        "/api/v1/runs",
        "/api/v1/claim-cards/export",
        "/api/v1/claim-cards/daily-bundle",
        "/api/v1/documents",
        "/api/v1/documents/{id}",
        "/api/v1/settings/workspace",
        "/api/v1/settings/thresholds",
        "/api/v1/settings/users/{username}",
        "/api/v1/settings/conversations/{conversation_id}",
    } <= paths


def test_it_documents_the_claim_card_and_the_audit_request(schema):
    components = schema["components"]["schemas"]

    assert list(components["ClaimCard"]["properties"]) == [
        "claim_id",
        "answer_id",
        "text",
        "mode",
        "label",
        "confidence",
        "evidence",
        "p_supported",
        "machine_label",
        "reviewer_label",
        "verification_methods",
        "metrics",
        "timestamps",
        "escalations",
        "revision",
    ]
    revision = components["ClaimRevision"]["properties"]
    assert list(revision) == ["strategy", "text", "label", "confidence", "passage_id", "status", "sentence"]
    request = components["AuditCreateInput"]
    assert request["required"] == ["query"]
    assert request["properties"]["mode"]["$ref"] == "#/components/schemas/ModeEnum"
    assert components["ModeEnum"]["enum"] == ["normal", "audit-local", "audit-web"]
    parameters = {p["name"] for p in schema["paths"]["/api/v1/claims"]["get"]["parameters"]}
    assert {
        "label",
        "confidence_min",
        "confidence_max",
        "date_from",
        "date_to",
        "mode",
        "domain",
        "escalation",
        "page",
        "page_size",
    } <= parameters


def test_it_also_serves_the_schema_as_yaml(client, db):
    response = client.get("/api/v1/schema/")

    validate(yaml.safe_load(response.content))


def test_it_serves_the_docs_page_with_local_assets_only(client, db):
    response = client.get("/api/v1/docs/")

    assert response.status_code == 200
    html = response.content.decode()
    sources = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert sources and all(not s.startswith(("http://", "https://", "//")) for s in sources), sources
    assert "/static/drf_spectacular_sidecar/" in html


def test_every_operation_has_a_unique_id_and_a_described_success_response(schema):
    ids = [
        op["operationId"]
        for item in schema["paths"].values()
        for method, op in item.items()
        if method in ("get", "post", "put", "patch", "delete")
    ]
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)
    assert not [i for i in ids if re.search(r"_\d+$", i)]  # no numeral suffixes from collisions
    for path, item in schema["paths"].items():
        for method, op in item.items():
            if method not in ("get", "post", "put", "patch", "delete"):
                continue
            ok = {code: r for code, r in op["responses"].items() if code.startswith("2")}
            assert ok, (path, method)
            if method == "get" and path.startswith("/api/v1/reports/nightly"):
                assert all(r.get("content") for r in ok.values()), (path, "has no response shape")


def test_schema_generation_warns_about_nothing():
    from django.core.management import call_command
    from drf_spectacular.drainage import GENERATOR_STATS

    GENERATOR_STATS.reset()
    call_command("spectacular", "--file", "/dev/null", "--fail-on-warn")


def _operations(schema):
    for path, item in schema["paths"].items():
        for method, op in item.items():
            if method in ("get", "post", "put", "patch", "delete"):
                yield path, method, op


def test_every_operation_declares_the_errors_it_can_answer_with_the_one_error_body(schema):
    error = schema["components"]["schemas"]["Error"]
    assert set(error["properties"]) == {"detail", "errors", "code"} and error["required"] == [
        "detail",
        "errors",
    ]
    for path, method, op in _operations(schema):
        codes = set(op["responses"])
        expected = {"400"}
        if path != "/api/v1/auth/token":
            expected |= {"401", "403"}
        if "{" in path:
            expected.add("404")
        if method in ("post", "put", "patch"):
            expected |= {"409", "413", "415"}
        assert expected <= codes, (method, path, sorted(codes))
        body = op["responses"]["400"]["content"]["application/json"]["schema"]
        assert body == {"$ref": "#/components/schemas/Error"}, (method, path)
    assert "429" in schema["paths"]["/api/v1/audits"]["post"]["responses"]
    assert "429" in schema["paths"]["/api/v1/auth/token"]["post"]["responses"]


def _parameter(schema, path, name):
    found = [p for p in schema["paths"][path]["get"]["parameters"] if p["name"] == name]
    assert found, (path, name)
    return found[0]["schema"]


def test_query_parameters_declare_the_ranges_and_choices_that_are_enforced(schema):
    for name in ("confidence_min", "confidence_max"):
        declared = _parameter(schema, "/api/v1/claims", name)
        assert (declared["minimum"], declared["maximum"]) == (0, 1)
    assert _parameter(schema, "/api/v1/claims", "page")["minimum"] == 1
    page_size = _parameter(schema, "/api/v1/claims", "page_size")
    assert (page_size["minimum"], page_size["maximum"]) == (1, 500)
    threshold = _parameter(schema, "/api/v1/claim-cards/daily-bundle", "threshold")
    assert (threshold["minimum"], threshold["maximum"]) == (0, 1)
    assert _parameter(schema, "/api/v1/cases", "tier")["enum"] == [1, 2, 3]
    status = _parameter(schema, "/api/v1/cases", "status")
    assert set(status["items"]["enum"]) >= {"open", "resolved"}
    assert _parameter(schema, "/api/v1/cases", "open")["enum"] == ["any", "false", "true"]
    assert _parameter(schema, "/api/v1/claims", "relabelled")["type"] == "boolean"
    overrides = schema["components"]["schemas"]["ThresholdsInput"]["properties"]["threshold_overrides"]
    assert overrides["additionalProperties"] is False
    assert overrides["properties"]["max_revisions"] == {"type": "integer", "minimum": 0, "maximum": 10}


def test_every_query_parameter_has_a_type_so_a_client_cannot_send_what_the_api_refuses(schema):
    """A method filter has no model field to read its type from: an untyped parameter ({}) lets a
    generated client send "" for a day, which the API refuses (schemathesis found it on entered_to)."""
    untyped = [
        (path, method, parameter["name"])
        for path, operations in schema["paths"].items()
        for method, operation in operations.items()
        for parameter in operation.get("parameters", [])
        if not parameter.get("schema")
    ]
    assert untyped == []

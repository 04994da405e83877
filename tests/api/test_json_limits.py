"""Malformed bodies are a 400 naming the problem, never a 500: JSON nested too deeply, integers
too long, ``.jsonl`` uploads and ``answer_json`` alike (``audit.pipeline.json_limits``), and every
integer field of the API and the admin console is range-checked."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from audit import constants, roles

pytestmark = pytest.mark.django_db

DEEP = "[" * 100_000 + "]" * 100_000
HUGE = "1" + "0" * 399  # a 400-digit integer


def _post_raw(client, path, body: str, method="post"):
    return getattr(client, method)(path, data=body, content_type="application/json")


@pytest.fixture
def lead_client(client_for, make_user):
    return client_for(make_user("lead9", roles.L3_LEAD))


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/auth/token",  # no sign-in needed: it was a RecursionError (500) for anyone
        "/api/v1/cases/open",
        "/api/v1/cases/COMP-ESC-2026-000001/note",
        "/api/v1/cases/COMP-ESC-2026-000001/resolve",
        "/api/v1/audits",
        "/api/v1/retrieve",
    ],
)
def test_json_nested_100000_deep_gets_400_naming_the_nesting(lead_client, path):
    response = _post_raw(lead_client, path, DEEP)
    assert response.status_code == 400, response.content[:300]
    assert f"nested more than {constants.JSON_MAX_DEPTH} levels deep" in response.json()["detail"]


def test_json_nested_just_past_the_limit_is_refused_and_within_it_is_read(lead_client):
    deep = "[" * (constants.JSON_MAX_DEPTH + 1) + "]" * (constants.JSON_MAX_DEPTH + 1)
    assert _post_raw(lead_client, "/api/v1/cases/open", deep).status_code == 400
    within = '{"answer_id": "a-1", "claim_id": "c1", "reason": "x", "extra": %s}' % (
        "[" * (constants.JSON_MAX_DEPTH - 1) + "]" * (constants.JSON_MAX_DEPTH - 1)
    )
    response = _post_raw(lead_client, "/api/v1/cases/open", within)
    assert "nested" not in response.json()["detail"]  # read, then refused for what it says


def test_a_400_digit_integer_gets_400_naming_its_field(lead_client):
    response = _post_raw(
        lead_client, "/api/v1/cases/COMP-ESC-2026-000001/note", '{"note": "n", "version": %s}' % HUGE
    )
    assert response.status_code == 400
    assert response.json()["errors"] == {
        "version": [
            f"is an integer of 400 digits; at most {constants.JSON_MAX_INT_DIGITS} digits are accepted."
        ]
    }
    response = _post_raw(lead_client, "/api/v1/auth/token", '{"username": "x", "password": 1e999}')
    assert response.status_code == 400 and "password" in response.json()["errors"]


def test_a_version_beyond_the_columns_range_is_refused_as_a_value(lead_client):
    response = _post_raw(
        lead_client, "/api/v1/cases/COMP-ESC-2026-000001/note", '{"note": "n", "version": 99999999999}'
    )
    assert response.status_code == 400 and "version" in response.json()["errors"]


def test_a_400_digit_threshold_gets_400_not_an_overflow(client_for, admin_user_obj):
    from audit.constants import threshold_problem, whole_number_problem

    assert whole_number_problem(10**400, 1, 10) == "must be between 1 and 10."
    assert threshold_problem("audit_score_threshold", 10**400) == (
        "audit_score_threshold",
        "must be a number between 0 and 1.",
    )
    client = client_for(admin_user_obj)
    response = client.put("/api/v1/settings/thresholds", {"max_revisions": 10**17}, format="json")
    assert response.status_code == 400 and "max_revisions" in str(response.json()["errors"])


def test_a_jsonl_upload_nested_too_deeply_is_refused_naming_the_line_and_stores_nothing(
    client_for, admin_user_obj
):
    from audit.models import Document

    line = '{"id": "a", "text": "Policy text.", "extra": %s}\n' % ("[" * 5000 + "]" * 5000)
    upload = SimpleUploadedFile("records.jsonl", line.encode(), content_type="application/json")
    response = client_for(admin_user_obj).post("/api/v1/documents", {"file": upload}, format="multipart")
    assert response.status_code == 400, response.content[:300]
    assert "cannot be ingested: line 1 is nested more than 32 levels deep" in response.json()["detail"]
    assert not Document.objects.exists()


def test_answer_json_deeper_than_its_cap_is_refused_naming_answer_json(client_for, make_user):
    nested: dict = {"claim": "LTP needs NMDA receptors.", "claim_source_refs": ["1"]}
    for _ in range(constants.STRUCTURED_MAX_DEPTH):
        nested = {"inner": nested}
    body = {
        "query": "q",
        "answer_json": nested,
        "contexts": [{"id": "1", "text": "LTP needs NMDA receptors."}],
    }
    response = client_for(make_user("front9", roles.SUBMITTER)).post("/api/v1/audits", body, format="json")
    assert response.status_code == 400, response.content[:300]
    assert response.json()["errors"] == {
        "answer_json": [
            f"is nested more than {constants.STRUCTURED_MAX_DEPTH} levels deep; "
            f"at most {constants.STRUCTURED_MAX_DEPTH} are verified."
        ]
    }


def test_every_integer_field_an_api_client_sends_is_range_checked():
    from django.urls import get_resolver
    from rest_framework import serializers

    def fields(serializer, path=""):
        for name, field in serializer.fields.items():
            where = f"{path}{name}"
            if field.read_only:
                continue
            inner = getattr(field, "child", None)
            if isinstance(field, serializers.ListSerializer):
                yield from fields(field.child, where + "[].")
            elif isinstance(field, serializers.BaseSerializer):
                yield from fields(field, where + ".")
            elif inner is not None:
                if isinstance(inner, serializers.BaseSerializer):
                    yield from fields(inner, where + "[].")
                else:
                    yield where + "[]", inner
            else:
                yield where, field

    checked, unbounded = 0, []
    for pattern in _api_patterns(get_resolver()):
        view = getattr(pattern.callback, "cls", None)
        for attr in ("InputSerializer", "serializer_class"):
            serializer_class = getattr(view, attr, None)
            if serializer_class is None:
                continue
            for where, field in fields(serializer_class()):
                if isinstance(field, serializers.IntegerField):
                    checked += 1
                    if field.max_value is None or field.min_value is None:
                        unbounded.append(f"{view.__name__}.{where}")
    assert checked >= 5
    assert unbounded == []


def _api_patterns(resolver, prefix=""):
    from django.urls import URLPattern, URLResolver

    for entry in resolver.url_patterns:
        if isinstance(entry, URLResolver):
            yield from _api_patterns(entry, prefix + str(entry.pattern))
        elif isinstance(entry, URLPattern) and (prefix + str(entry.pattern)).startswith("api/"):
            yield entry


def test_every_integer_field_of_the_admin_console_is_range_checked(rf, admin_user_obj):
    from django import forms
    from django.contrib import admin
    from django.core.validators import MaxValueValidator

    from audit.admin.workspace_settings import WorkspaceSettingsForm

    request = rf.get("/admin/")
    request.user = admin_user_obj
    unbounded, checked = [], 0
    for model_admin in admin.site._registry.values():
        if model_admin.__module__.startswith("django_q"):
            continue  # the task queue's pages are read-only (they build no form without a row)
        forms_of = [model_admin.get_form(request)] + [
            inline.get_formset(request).form for inline in model_admin.get_inline_instances(request)
        ]
        for form_class in forms_of:
            for name, field in form_class.base_fields.items():
                if not isinstance(field, forms.IntegerField) or isinstance(field, forms.FloatField):
                    continue  # (a FloatField is an IntegerField to Django's forms)
                checked += 1
                model = getattr(form_class._meta, "model", None)
                model_field = next((f for f in model._meta.fields if f.name == name), None) if model else None
                limits = [*field.validators, *(model_field.validators if model_field else [])]
                if not any(isinstance(v, MaxValueValidator) for v in limits):
                    unbounded.append(f"{form_class.__name__}.{name}")
    from audit.services.workspaces import workspace_get_default

    for name, field in WorkspaceSettingsForm(workspace=workspace_get_default()).fields.items():
        if (
            isinstance(field, forms.IntegerField)
            and not isinstance(field, forms.FloatField)
            and "weights" not in name
        ):
            checked += 1
            if field.max_value is None:
                unbounded.append(f"settings page {name}")
    assert checked >= 6
    assert unbounded == []

"""Workspace isolation, generated from the URL configuration and the admin registry.

Every route of ``theoria.urls`` (pages and API) and every model of the admin console is walked
by a user of each role of workspace B (the Admin role and a superuser included) and by an
anonymous client, with every method, against the identifiers of workspace A's rows. A route
with a path parameter this file cannot fill fails the test, so a new endpoint cannot skip it.

What must hold: no response carries A's text; a request naming A's row answers exactly as one
naming a row that does not exist (uniform 404, no hint of what exists); A's rows are unchanged.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re

import pytest
from django.contrib import admin
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from audit import roles

METHODS = ("get", "post", "put", "patch", "delete")
# (A's name is not among them: a superuser's switch lists the workspaces by name)
SECRETS = ("alpha-secret query", "alpha-secret claim text", "Alpha secret handbook", "alpha-secret snippet")
DAY = dt.date(2026, 1, 15)


def routes():
    """(route, name, parameter names) of every URL pattern outside the admin console."""

    def walk(patterns, prefix=""):
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                yield from walk(pattern.url_patterns, prefix + str(pattern.pattern))
            elif isinstance(pattern, URLPattern):
                yield prefix + str(pattern.pattern), pattern

    for route, pattern in walk(get_resolver().url_patterns):
        if route.startswith("admin/"):
            continue  # the admin console is walked from its registry below
        yield route, pattern.name, sorted(pattern.pattern.regex.groupindex)


def _values(a, *, missing: bool) -> dict:
    """Path values naming A's rows (or rows that exist nowhere)."""
    if missing:
        return {
            "answer_id": "a-1999-01-01-00000000",
            "claim_id": "c99",
            "ticket": "COMP-ESC-999999",
            "username": "nobody-anywhere",
            "conversation_id": "no-such-conversation",
            "date": "1999-01-01",
            "pk": 99999999,
        }
    return {
        "answer_id": a["answer"].public_id,
        "claim_id": "c1",
        "ticket": a["case"].ticket,
        "username": a["user"].username,
        "conversation_id": a["conversation"].external_id,
        "date": DAY.isoformat(),
        "pk": None,
    }


PK_OF = {
    "api-document-detail": "document",
    "claim-detail": "claim",
    "claim-open-case": "claim",
    "api-run-detail": "run",
    "api-job-detail": "job",
    "job-detail": "job",
}  # which of A's rows a route's <pk> names


def _url(route: str, name: str | None, params: list[str], a: dict, *, missing: bool) -> str:
    if name is None:
        if params:
            pytest.fail(f"route {route!r} takes parameters but has no name to reverse: name it")
        return "/" + route
    values = _values(a, missing=missing)
    kwargs = {}
    for param in params:
        if param not in values:
            pytest.fail(f"route {name!r} has a parameter {param!r} this test cannot fill: add it to _values")
        if param == "pk" and not missing:
            if name not in PK_OF:
                pytest.fail(f"route {name!r} takes a pk of a model this test does not know: add it to PK_OF")
            kwargs[param] = a[PK_OF[name]].pk
        else:
            kwargs[param] = values[param]
    return reverse(name, kwargs=kwargs)


def _body(a: dict) -> dict:
    """A write body that names A's rows wherever an endpoint takes an identifier."""
    return {
        "answer_id": a["answer"].public_id,
        "claim_id": "c1",
        "ticket": a["case"].ticket,
        "owner": a["user"].username,
        "reason": "probe",
        "note": "probe",
        "rationale": "probe",
        "decision": "suppress",
        "confirm": "on",
        "version": 1,
        "default_mode": "audit-web",
        "workspace": a["workspace"].slug,
        "username": a["user"].username,
    }


def _text(response) -> str:
    if getattr(response, "streaming", False):
        return b"".join(response.streaming_content).decode("utf-8", "replace")
    return response.content.decode("utf-8", "replace")


def _normalised(response) -> tuple:
    """Status and body with request-specific tokens (CSRF, dates of the request) removed."""

    def plain(text: str) -> str:
        return re.sub(
            r"(a-\d{4}-\d\d-\d\d-[0-9a-f]{8}|nobody-anywhere|no-such-conversation|COMP-ESC-\d{6}|"
            r"1999-01-01|2026-01-15|c99|c1|\d+)",
            "X",
            text,
        )

    if response.status_code == 302:
        return 302, plain(response.get("Location", ""))
    return response.status_code, plain(
        re.sub(r'(csrfmiddlewaretoken" value="|csrfToken: ")[^"]+', r"\1", _text(response))
    )


def _snapshot(a: dict) -> dict:
    from audit.models import AuditEvent, Document, UserProfile, Workspace
    from escalation.models import ReviewCase

    case = ReviewCase.objects.get(pk=a["case"].pk)
    workspace = Workspace.objects.get(pk=a["workspace"].pk)
    answer = type(a["answer"]).objects.get(pk=a["answer"].pk)
    return {
        "case": (case.status, case.version, case.owner_id, case.tier, case.events.count()),
        "answer": (answer.suppressed, list(answer.claims.values_list("label", "confidence"))),
        "workspace": (
            workspace.default_mode,
            workspace.threshold_overrides,
            workspace.retention_days,
            workspace.kb_version,
            workspace.regulated_domains,
        ),
        "documents": Document.objects.filter(workspace=workspace).count(),
        "events": AuditEvent.objects.filter(workspace=workspace).count(),
        "profile": UserProfile.objects.get(user=a["user"]).default_mode,
        "conversation": type(a["conversation"]).objects.get(pk=a["conversation"].pk).default_mode,
    }


@pytest.fixture
def alpha(workspace, make_user):
    """Workspace A: an answer with a refuted claim, its case, a document, a conversation, a nightly report."""
    from audit.models import Answer, Claim, Conversation, Document, Evidence, VerificationRun
    from audit.models.nightly import NightlyReport
    from escalation import services

    workspace.name = "Alpha workspace"
    workspace.save()
    user = make_user("alpha-analyst", roles.L1_ANALYST)
    answer = Answer.objects.create(
        workspace=workspace,
        query="alpha-secret query",
        text="An answer.",
        original_text="An answer.",
        mode=Answer.Mode.AUDIT_LOCAL,
        created_at=dt.datetime(2026, 1, 15, 12, tzinfo=dt.timezone.utc),
    )
    claim = Claim.objects.create(
        answer=answer,
        claim_id="c1",
        text="alpha-secret claim text",
        label="REFUTED",
        machine_label="REFUTED",
        confidence=0.1,
        importance="material",
        span_start=0,
        span_end=5,
    )
    Evidence.objects.create(
        claim=claim,
        rank=0,
        source_type="kb",
        source_id="kb_chunk_1",
        title="Alpha secret handbook",
        uri="kb://alpha",
        snippet="alpha-secret snippet",
        hash="sha256:" + hashlib.sha256(b"alpha").hexdigest(),
        relevance=0.7,
        entailment=0.2,
    )
    document = Document.objects.create(
        workspace=workspace, uri="kb://alpha", title="Alpha secret handbook", content_hash="sha256:alpha"
    )
    conversation = Conversation.objects.create(workspace=workspace, external_id="alpha-conversation")
    NightlyReport.objects.create(
        workspace=workspace,
        date=DAY,
        status="done",
        finished_at=dt.datetime(2026, 1, 16, 1, tzinfo=dt.timezone.utc),
        report={"note": "alpha-secret claim text"},
    )
    run = VerificationRun.objects.create(
        answer=answer, mode=Answer.Mode.AUDIT_LOCAL, warnings=["alpha-secret warning"]
    )
    (case,) = services.cases_open_for_answer(answer=answer)
    from audit.models import BackgroundJob

    job = BackgroundJob.objects.create(  # a queued audit of A's, holding A's text
        workspace=workspace,
        user=user,
        kind=BackgroundJob.KIND_AUDIT,
        request={"query": "alpha-secret query", "answer": "alpha-secret claim text"},
        result={"note": "alpha-secret claim text"},
    )
    from audit.services.reviewed_examples import review_example_record

    review_example_record(  # a reviewed example copies the claim's text and evidence
        claim=claim,
        source="case",
        decision="confirm",
        reviewer_label="REFUTED",
        actor=user,
        reference=case.ticket,
    )
    return {
        "workspace": workspace,
        "user": user,
        "answer": answer,
        "claim": claim,
        "document": document,
        "conversation": conversation,
        "case": case,
        "run": run,
        "job": job,
    }


@pytest.fixture
def beta_users(db, django_user_model):
    """One user of workspace B per role, a staff Admin, and a superuser whose home is B."""
    from django.contrib.auth.models import Group

    from audit.models import UserProfile, Workspace

    beta = Workspace.objects.create(name="Beta", slug="beta")
    users = []
    for role in (*roles.ALL_ROLES, None):
        name = "beta-" + (re.sub(r"\W+", "-", role.lower()) if role else "superuser")
        extra = (
            {"is_staff": True, "is_superuser": True} if role is None else {"is_staff": role == roles.ADMIN}
        )
        user = django_user_model.objects.create_user(username=name, password="pw", **extra)
        if role:
            user.groups.add(Group.objects.get(name=role))
        UserProfile.objects.create(user=user, workspace=beta)
        users.append(user)
    return users


def _clients(beta_users):
    yield "anonymous", Client()
    for user in beta_users:
        client = Client()
        client.force_login(user)
        yield user.username, client


def _call(client, method: str, url: str, body: dict):
    if method == "get":
        return client.get(url)
    if method == "post" and not url.startswith("/api/"):
        return client.post(url, body)  # pages take forms
    return getattr(client, method)(url, data=json.dumps(body), content_type="application/json")


def test_the_walk_covers_every_route_of_the_url_configuration():
    names = [name for _, name, _ in routes()]
    assert {"api-case-list", "api-case-open", "escalation-queue", "home", "api-claim-card-export"} <= set(
        names
    )


@pytest.mark.django_db
def test_no_route_lets_another_workspace_read_or_change_a_row(alpha, beta_users):
    before = _snapshot(alpha)
    body = _body(alpha)
    failures = []
    for who, client in _clients(beta_users):
        for route, name, params in routes():
            if name in ("logout", "workspace-switch"):
                continue  # logging out ends the walk's session; the switch is tested on its own below
            for method in METHODS:
                url = _url(route, name, params, alpha, missing=False)
                response = _call(client, method, url, body)
                text = _text(response)
                leaked = [s for s in SECRETS if s in text]
                if leaked:
                    failures.append(f"{who} {method.upper()} {route}: {response.status_code} shows {leaked}")
                if response.status_code >= 500:
                    failures.append(f"{who} {method.upper()} {route}: {response.status_code}")
                if params and method == "get":
                    same = _normalised(
                        _call(client, method, _url(route, name, params, alpha, missing=True), body)
                    )
                    if _normalised(response) != same:
                        failures.append(
                            f"{who} GET {route}: A's row answers {response.status_code}, "
                            f"a missing row {same[0]} (or another body)"
                        )
    assert not failures, "\n".join(failures[:40])
    assert _snapshot(alpha) == before


@pytest.mark.django_db
def test_no_admin_console_page_shows_another_workspaces_rows(alpha, beta_users):
    from audit.admin.site import workspace_path

    before = _snapshot(alpha)
    failures = []
    for who, client in _clients(beta_users):
        for model in admin.site._registry:
            info = (model._meta.app_label, model._meta.model_name)
            text = _text(client.get(reverse("admin:%s_%s_changelist" % info)))
            failures += [f"{who} {model.__name__} list shows {s}" for s in SECRETS if s in text]
            path = workspace_path(model)
            if path is None:
                continue
            row = model._default_manager.filter(
                **({"pk": alpha["workspace"].pk} if path == "" else {path: alpha["workspace"]})
            ).first()
            if row is None:
                continue
            own = client.get(reverse("admin:%s_%s_change" % info, args=[row.pk]))
            missing = client.get(reverse("admin:%s_%s_change" % info, args=[99999999]))
            if own.status_code == 200 or _normalised(own) != _normalised(missing):
                failures.append(f"{who} {model.__name__} change page of A's row: {own.status_code}")
            deleted = client.post(reverse("admin:%s_%s_delete" % info, args=[row.pk]), {"post": "yes"})
            if model._default_manager.filter(pk=row.pk).count() != 1:
                failures.append(f"{who} deleted A's {model.__name__} ({deleted.status_code})")
    assert not failures, "\n".join(failures[:40])
    assert _snapshot(alpha) == before


@pytest.mark.django_db
def test_a_superuser_works_in_another_workspace_only_after_an_explicit_switch(alpha, beta_users):
    superuser = beta_users[-1]
    client = Client()
    client.force_login(superuser)
    assert client.get("/api/v1/cases").json()["count"] == 0
    assert client.get("/escalations/").content.count(alpha["case"].ticket.encode()) == 0

    switched = client.get("/api/v1/cases", HTTP_X_THEORIA_WORKSPACE=alpha["workspace"].slug).json()
    assert [c["ticket"] for c in switched["results"]] == [alpha["case"].ticket]
    assert client.get("/api/v1/cases", HTTP_X_THEORIA_WORKSPACE="no-such-workspace").status_code == 404

    client.post(reverse("workspace-switch"), {"workspace": alpha["workspace"].slug})
    assert alpha["case"].ticket in client.get("/escalations/").content.decode()
    client.post(reverse("workspace-switch"), {"workspace": ""})
    assert alpha["case"].ticket not in client.get("/escalations/").content.decode()


@pytest.mark.django_db
def test_only_a_superuser_may_name_another_workspace(alpha, beta_users):
    admin_user = next(u for u in beta_users if u.username == "beta-admin")
    client = Client()
    client.force_login(admin_user)
    response = client.get("/api/v1/cases", HTTP_X_THEORIA_WORKSPACE=alpha["workspace"].slug)
    assert response.status_code == 403
    assert client.post(reverse("workspace-switch"), {"workspace": alpha["workspace"].slug}).status_code == 403
    assert client.get("/api/v1/cases", HTTP_X_THEORIA_WORKSPACE="beta").status_code == 200


@pytest.mark.django_db
def test_the_switch_page_refuses_another_workspace_to_a_non_superuser_with_the_services_sentence(
    alpha, beta_users
):
    admin_user = next(u for u in beta_users if u.username == "beta-admin")
    client = Client()
    client.force_login(admin_user)
    refused = client.post(reverse("workspace-switch"), {"workspace": alpha["workspace"].slug})
    assert refused.status_code == 403
    assert "Only a superuser may switch workspaces." in refused.content.decode()
    assert "theoria_workspace" not in client.session
    assert alpha["case"].ticket not in client.get("/escalations/").content.decode()


@pytest.mark.django_db
def test_the_switch_page_answers_404_for_an_unknown_workspace_and_405_for_a_get(beta_users):
    client = Client()
    client.force_login(beta_users[-1])  # the superuser
    assert client.post(reverse("workspace-switch"), {"workspace": "no-such-workspace"}).status_code == 404
    assert "theoria_workspace" not in client.session
    assert client.get(reverse("workspace-switch")).status_code == 405


@pytest.mark.django_db
def test_a_case_is_assigned_only_within_its_workspace_and_the_refusal_names_no_one(
    alpha, beta_users, make_user
):
    from escalation.models import ReviewCase

    outsider = next(u for u in beta_users if u.username == "beta-l1-analyst")
    lead = make_user("alpha-lead", roles.L3_LEAD)
    client = Client()
    client.force_login(lead)
    url = f"/api/v1/cases/{alpha['case'].ticket}/assign"
    other = client.post(url, {"owner": outsider.username}, content_type="application/json")
    nobody = client.post(url, {"owner": "nobody-at-all"}, content_type="application/json")
    assert other.status_code == nobody.status_code == 400
    assert other.json()["detail"].replace(outsider.username, "X") == nobody.json()["detail"].replace(
        "nobody-at-all", "X"
    )
    assert ReviewCase.objects.get(pk=alpha["case"].pk).owner_id is None
    page = client.post(f"/escalations/{alpha['case'].ticket}/assign", {"owner": outsider.username})
    assert page.status_code == 400
    assert ReviewCase.objects.get(pk=alpha["case"].pk).owner_id is None
    assert client.post(url, {"owner": "alpha-analyst"}, content_type="application/json").status_code == 200

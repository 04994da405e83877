"""A revision that changes only citations is served without waiting for approval where the
workspace says so (``Workspace.citation_only_revisions``; default: except in regulated domains),
and the revision says "served without approval: citations only"."""

from __future__ import annotations

import json

import pytest

from audit import constants
from audit.models import Answer, VerificationRun, Workspace
from audit.pipeline.revision import revise_answer
from audit.services.revision import revision_record

QUERY = "What perks does the Gold card have?"
UNCITED = "Gold card holders get free airport lounge access."
WRONG_FEE = "The annual fee for the Gold card is $200 [1]."


def _revise(workspace, text, passages, verify, *, domain=""):
    answer = Answer.objects.create(
        workspace=workspace,
        query=QUERY,
        text=text,
        mode="audit-local",
        domain=domain,
        contexts=[{"id": p.id, "text": p.text, "anchors": list(p.anchors)} for p in passages],
    )
    run = VerificationRun.objects.create(answer=answer, mode="audit-local")
    outcome = revise_answer(
        query=QUERY, answer=text, passages=passages, verify=lambda t, p: verify(t, p, QUERY)
    )
    revision_record(answer=answer, run=run, outcome=outcome)
    answer.refresh_from_db()
    return answer, outcome


def _hold(workspace, *, setting=None, approval="all"):
    workspace.revision_approval = approval
    workspace.regulated_domains = ["compliance"]
    if setting:
        workspace.citation_only_revisions = setting
    workspace.save()


def test_the_default_lives_once_in_the_constants_and_is_off_in_regulated_domains(workspace):
    assert Workspace._meta.get_field("citation_only_revisions").default == constants.CITATION_ONLY_REVISIONS
    _hold(workspace)
    assert workspace.citation_only_revisions == "unregulated"
    assert not workspace.holds_revisions("cardiology", citations_only=True)
    assert workspace.holds_revisions("compliance", citations_only=True)
    assert workspace.holds_revisions("cardiology") and workspace.holds_revisions("compliance")


@pytest.mark.django_db
def test_a_citation_only_revision_is_served_without_approval_and_says_so(workspace, passages, verify):
    _hold(workspace)
    answer, outcome = _revise(workspace, UNCITED, passages, verify)
    assert outcome.citations_only and {e.strategy for e in outcome.edits} == {"citation"}
    assert answer.revision_status == "served" and answer.text == UNCITED.rstrip(".") + " [3]."
    assert answer.proposed_text == "" and answer.revisions[-1]["served_without_approval"] == "citations_only"


@pytest.mark.django_db
def test_a_citation_only_revision_in_a_regulated_domain_waits_by_default(workspace, passages, verify):
    _hold(workspace)
    answer, _ = _revise(workspace, UNCITED, passages, verify, domain="compliance")
    assert answer.revision_status == "proposed" and answer.text == UNCITED
    assert answer.revisions[-1]["served_without_approval"] == ""


@pytest.mark.django_db
def test_serving_them_everywhere_serves_one_in_a_regulated_domain_too(workspace, passages, verify):
    _hold(workspace, setting="serve", approval="regulated")
    answer, _ = _revise(workspace, UNCITED, passages, verify, domain="compliance")
    assert (
        answer.revision_status == "served"
        and answer.revisions[-1]["served_without_approval"] == "citations_only"
    )


@pytest.mark.django_db
def test_holding_them_holds_a_citation_only_revision_like_any_other(workspace, passages, verify):
    _hold(workspace, setting="hold")
    answer, _ = _revise(workspace, UNCITED, passages, verify)
    assert answer.revision_status == "proposed"


@pytest.mark.django_db
def test_a_revision_that_changes_words_still_waits(workspace, passages, verify):
    _hold(workspace, setting="serve")
    answer, outcome = _revise(workspace, WRONG_FEE, passages, verify)
    assert not outcome.citations_only
    assert answer.revision_status == "proposed" and "$150" in answer.proposed_text


@pytest.mark.django_db
def test_where_nothing_is_held_a_citation_only_revision_is_served_without_the_mark(
    workspace, passages, verify
):
    answer, _ = _revise(workspace, UNCITED, passages, verify)
    assert answer.revision_status == "served" and answer.revisions[-1]["served_without_approval"] == ""


@pytest.mark.django_db
def test_the_answer_page_shows_the_revision_was_served_without_approval(
    client, analyst, workspace, passages, verify
):
    _hold(workspace)
    answer, _ = _revise(workspace, UNCITED, passages, verify)
    client.force_login(analyst)
    html = client.get(f"/answers/{answer.public_id}/").content.decode()
    assert 'id="served-without-approval">served without approval: citations only</span>' in html


@pytest.mark.django_db
def test_the_setting_is_changed_through_the_api_and_a_bad_value_is_a_400_naming_it(
    client, admin_user_obj, workspace
):
    client.force_login(admin_user_obj)

    def patch(value):
        body = json.dumps({"citation_only_revisions": value})
        return client.patch("/api/v1/settings/workspace", body, content_type="application/json")

    assert client.get("/api/v1/settings/workspace").json()["citation_only_revisions"] == "unregulated"
    assert patch("hold").status_code == 200
    assert Workspace.objects.get(pk=workspace.pk).citation_only_revisions == "hold"
    bad = patch("sometimes")
    assert bad.status_code == 400 and "citation_only_revisions" in bad.json()["errors"]


@pytest.mark.django_db
def test_the_admin_settings_page_saves_the_setting_and_the_admin_form_has_the_field(
    client, admin_user_obj, workspace
):
    from audit.admin.console import WorkspaceAdmin
    from tests.ui.test_admin_settings import settings_post

    client.force_login(admin_user_obj)
    page = client.get(f"/admin/audit/workspace/{workspace.pk}/settings/").content.decode()
    assert 'name="citation_only_revisions"' in page and "Revisions that change only citations" in page
    assert settings_post(client, workspace, citation_only_revisions="serve").status_code == 302
    assert Workspace.objects.get(pk=workspace.pk).citation_only_revisions == "serve"
    fields = [f for _, opts in WorkspaceAdmin.fieldsets for f in opts["fields"]]
    assert "citation_only_revisions" in fields

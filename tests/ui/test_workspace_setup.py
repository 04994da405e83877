"""A workspace an admin sets up alone: settings that say their units and what they do, and the
regulated and held-revision domains read together."""

from __future__ import annotations

import pytest

from tests.ui.test_admin_settings import settings_post

pytestmark = pytest.mark.django_db


def test_the_settings_name_their_unit_and_say_what_the_bare_ones_do(client, admin_user_obj, workspace):
    client.force_login(admin_user_obj)
    html = client.get(f"/admin/audit/workspace/{workspace.pk}/settings/").content.decode()
    rows = {
        name: html.split(f'data-threshold="{name}"')[1].split("</tr>")[0]
        for name in ("max_claims_per_answer", "deep_checks", "auto_corrected_review")
    }
    assert "Most claims in one answer" in rows["max_claims_per_answer"]
    assert (
        "claims; default 200" in rows["max_claims_per_answer"] and "HTTP 413" in rows["max_claims_per_answer"]
    )
    assert "When the LLM methods (deep checks) run" in rows["deep_checks"] and "async:" in rows["deep_checks"]
    assert "Which corrected claims a person confirms" in rows["auto_corrected_review"]
    assert "material: minor claims" in rows["auto_corrected_review"]


def test_the_regulated_domains_are_set_beside_the_held_revision_domains_and_the_page_says_where_revisions_are_held(
    client, admin_user_obj, workspace
):
    client.force_login(admin_user_obj)
    response = settings_post(
        client,
        workspace,
        regulated_domains="Neuroscience, compliance",
        revision_approval="regulated",
        revision_approval_domains="",
    )
    assert response.status_code == 302
    workspace.refresh_from_db()
    assert workspace.regulated_domains == ["compliance", "neuroscience"]
    html = client.get(f"/admin/audit/workspace/{workspace.pk}/settings/").content.decode()
    assert "Now: revisions are held in the regulated domains: compliance, neuroscience." in html
    assert 'name="regulated_domains" value="compliance, neuroscience"' in html
    assert "regulated domains: compliance, neuroscience" in html  # the strictness default says the same
    settings_post(client, workspace, revision_approval="regulated", revision_approval_domains="oncology")
    html = client.get(f"/admin/audit/workspace/{workspace.pk}/settings/").content.decode()
    assert "Now: revisions are held in oncology (set below)." in html


def test_the_answer_form_offers_the_workspaces_domains_and_takes_free_text_only_where_the_admin_allows(
    client, analyst, workspace
):
    from tests.ui.conftest import build_answer

    build_answer(workspace, domain="immunology")
    workspace.regulated_domains = ["compliance"]
    workspace.save(update_fields=["regulated_domains"])
    client.force_login(analyst)
    form = client.get("/answers/new/").content.decode()
    select = form.split('<select name="domain"')[1].split("</select>")[0]
    for domain in ("compliance", "immunology", "neuroscience"):
        assert f'<option value="{domain}">{domain}</option>' in select
    refused = client.post("/answers/new/", {"query": "Q?", "answer": "An answer.", "domain": "cardiology"})
    assert refused.status_code == 400
    assert "cardiology is not one of this workspace&#x27;s domains." in refused.content.decode()

    workspace.free_text_domains = True
    workspace.save(update_fields=["free_text_domains"])
    form = client.get("/answers/new/").content.decode()
    assert (
        'list="domain-choices"' in form
        and '<datalist id="domain-choices"><option value="compliance">' in form
    )

"""The settings page offers the judge's strictness with each point's DEV catch rate and review load; a
workspace's regulated domains default to the point that catches at least 85 % on DEV."""

from __future__ import annotations

import pytest
from django.template.defaultfilters import floatformat

from audit.constants import STRICTNESS_REGULATED
from audit.pipeline.operating_points import shipped_operating_points

pytestmark = pytest.mark.django_db


def test_the_settings_page_shows_each_points_catch_rate_and_review_load(client, admin_user_obj, workspace):
    points = shipped_operating_points().points
    client.force_login(admin_user_obj)
    html = client.get(f"/admin/audit/workspace/{workspace.pk}/settings/").content.decode()
    select = html.split('<select name="t__strictness"')[1].split("</select>")[0]
    table = html.split('id="operating-point-table"')[1].split("</table>")[0]
    for name, row in points.items():
        catch, load = f"{100 * row['catch']:.1f} %", f"{100 * row['review_load']:.1f} %"
        assert f"{name} — catches {catch} on DEV, review load {load}" in select
        cells = table.split(f'data-point="{name}"')[1].split("</tr>")[0]
        for share in (row["catch"], row["review_load"]):  # the template rounds half up (floatformat)
            assert f"{floatformat(100 * share, 1)} %" in cells
        assert f"{row['cut']:.3f}" in cells
    assert "in force" in table.split('data-point="balanced"')[1].split("</tr>")[0]


def test_a_regulated_workspace_defaults_to_the_point_that_catches_85_percent(
    client, admin_user_obj, workspace
):
    from audit.selectors.api import thresholds_for

    workspace.regulated_domains = ["medical"]
    workspace.save()
    regulated = shipped_operating_points().points[STRICTNESS_REGULATED]
    assert regulated["catch"] >= 0.85
    assert thresholds_for(workspace, domain="Medical").strictness == STRICTNESS_REGULATED
    assert thresholds_for(workspace, domain="general").strictness == "balanced"
    client.force_login(admin_user_obj)
    html = client.get(f"/admin/audit/workspace/{workspace.pk}/settings/").content.decode()
    row = html.split(f'data-point="{STRICTNESS_REGULATED}"')[1].split("</tr>")[0]
    assert "default of the regulated domains (medical)" in row
    # a workspace that chose a point keeps it in its regulated domains too
    workspace.threshold_overrides = {"strictness": "strict"}
    workspace.save()
    assert thresholds_for(workspace, domain="medical").strictness == "strict"


def test_an_audit_in_a_regulated_domain_runs_at_the_regulated_point(workspace):
    from audit.services.job import audit_job_build

    workspace.regulated_domains = ["medical"]
    workspace.save()
    job = audit_job_build(workspace=workspace, query="q", answer_text="a", contexts=[], domain="medical")
    assert job.verification.thresholds.strictness == STRICTNESS_REGULATED
    other = audit_job_build(workspace=workspace, query="q", answer_text="a", contexts=[], domain="hr")
    assert other.verification.thresholds.strictness == "balanced"


def test_a_fast_workspace_sees_the_fast_depths_points_and_is_told_the_depth(
    client, admin_user_obj, workspace
):
    points = shipped_operating_points()
    assert points.fast_points, (
        "the shipped file holds the fast depth's points (fit_nli --fast-head --fast-points)"
    )
    client.force_login(admin_user_obj)
    for depth, rows in (("full", points.points), ("fast", points.fast_points)):
        workspace.threshold_overrides = {"verification_depth": depth}
        workspace.save()
        html = client.get(f"/admin/audit/workspace/{workspace.pk}/settings/").content.decode()
        assert f'id="operating-points-depth">{depth}<' in html
        table = html.split('id="operating-point-table"')[1].split("</table>")[0]
        for name, row in rows.items():
            cells = table.split(f'data-point="{name}"')[1].split("</tr>")[0]
            assert f"{row['cut']:.3f}" in cells and f"{floatformat(100 * row['catch'], 1)} %" in cells

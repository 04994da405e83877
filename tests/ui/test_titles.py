"""Every page has a title of its own: never the bare product name."""

from __future__ import annotations

import re

import pytest

from tests.ui.conftest import build_answer, open_case

pytestmark = pytest.mark.django_db


def _title(html: str) -> str:
    return re.search(r"<title>(.*?)</title>", html, re.S).group(1).strip()


def test_every_analyst_page_has_its_own_title(client, analyst, workspace):
    answer, claims = build_answer(workspace)
    case = open_case(claims[1])
    client.force_login(analyst)
    paths = [
        "/",
        "/dashboard/",
        "/answers/",
        "/answers/new/",
        f"/answers/{answer.public_id}/",
        "/claims/",
        f"/claims/{claims[1].pk}/",
        "/escalations/",
        f"/escalations/{case.ticket}/",
        "/reports/nightly/",
    ]
    titles = {}
    for path in paths:
        response = client.get(path)
        assert response.status_code == 200, path
        titles[path] = _title(response.content.decode())
    assert all(t != "Theoria Audit" and t.endswith("· Theoria Audit") for t in titles.values()), titles
    assert len(set(titles.values())) == len(paths), titles
    assert titles["/"] == f"My work · {workspace.name} · Theoria Audit"


def test_the_sign_in_page_has_its_own_title(client):
    assert _title(client.get("/accounts/login/").content.decode()) == "Log in · Theoria Audit"

"""The links audit's pages get to escalation's pages, built from the URL names."""

from __future__ import annotations

from django.urls import reverse

from audit import hooks
from audit.web.presentation import list_url
from escalation import links


def test_the_queue_link_carries_its_filters_and_leaves_out_the_blank_ones():
    url = links.review_queue_url(
        params={"status": "paused", "owner": None, "sla_state": "", "label": ["a", "b"]}
    )
    assert url == reverse("escalation-queue") + "?status=paused&label=a&label=b"


def test_staff_are_sent_to_the_admin_list_of_corrections_and_others_to_the_api():
    assert hooks.kb_corrections_url(staff=True) == "/admin/escalation/curationitem/"
    assert (
        hooks.kb_corrections_url(staff=True, open_only=True)
        == "/admin/escalation/curationitem/?status__exact=open"
    )
    assert hooks.kb_corrections_url(staff=False) == "/api/v1/curation-items"
    assert hooks.kb_corrections_url(staff=False, open_only=True) == "/api/v1/curation-items?status=open"


def test_a_list_link_without_filters_has_no_query_string():
    assert list_url("claim-list") == reverse("claim-list")
    assert list_url("claim-list", {"label": None}) == reverse("claim-list")

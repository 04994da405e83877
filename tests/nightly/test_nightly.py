"""The nightly batch auditor on a seeded day: selection, re-verification, drift, report, re-runs."""

from __future__ import annotations

import datetime as dt

import pytest
from django.core.management import CommandError, call_command

from audit.models import AuditEvent, Claim, NightlyItem, NightlyReport, Workspace
from audit.services.nightly import nightly_audit_run

pytestmark = pytest.mark.slow  # loads the embedding model

DAY = dt.date(2026, 11, 20)
NOON = dt.datetime(2026, 11, 20, 12, 0, tzinfo=dt.timezone.utc)

LTP = "Long-term potentiation requires NMDA receptor activation in hippocampal synapses."
CET1 = "Banks must hold a minimum common equity tier 1 ratio of 4.5 percent of risk-weighted assets."
LTP_HISTORY = "Long-term potentiation was first described in rabbits by Bliss and Lomo in 1973."
MOON = "The far side of the moon is covered in blue ice forests according to lunar surveys."


@pytest.fixture
def seeded_day(workspace, store_answer, ingest):
    """A KB of two documents (one stale) and the claims of DAY, of the day before and of another workspace.

    External calls are off (no web checks) unless a test turns them on with a local server.
    """
    workspace.allow_external_calls = False
    workspace.save(update_fields=["allow_external_calls"])
    synapses = ingest(
        workspace,
        "kb://synapses",
        f"Synaptic plasticity. {LTP} It is a cellular basis of memory.",
        title="Synaptic plasticity overview",
        domain="neuroscience",
        published_at=dt.date(2020, 3, 1),
    )
    capital = ingest(
        workspace,
        "kb://capital",
        f"Capital requirements. {CET1} The buffer comes on top.",
        title="Capital requirements",
        domain="general",
        published_at=dt.date(2025, 6, 1),
    )
    answer = store_answer(
        workspace,
        NOON,
        claims=[
            (LTP, "NEI", 0.30),  # c1: the KB supports it now
            (CET1, "REFUTED", 0.20),  # c2: supported too
            (LTP_HISTORY, "NEI", 0.40),  # c3: on topic, but the KB does not say it: stays NEI
            (MOON, "NEI", 0.10),  # c4: nothing in the KB: stays NEI, for human review
            (MOON, "NEI", 0.60),  # c5: at the bar: not weak, not selected
            (LTP, "SUPPORTED", 0.30),  # c6: supported: not selected
        ],
    )
    store_answer(workspace, NOON - dt.timedelta(days=1), claims=[(LTP, "NEI", 0.1)])  # the day before
    other = Workspace.objects.create(name="Other", slug="other")
    store_answer(other, NOON, claims=[(LTP, "NEI", 0.1)])
    return {"workspace": workspace, "answer": answer, "synapses": synapses, "capital": capital}


def _claim(answer, cid):
    return answer.claims.get(claim_id=cid)


def test_it_selects_the_days_refuted_and_nei_claims_below_the_low_confidence_bar(seeded_day):
    outcome = nightly_audit_run(workspace=seeded_day["workspace"], day=DAY)

    answer = seeded_day["answer"]
    selected = set(
        NightlyItem.objects.filter(report=outcome.report).values_list("claim__claim_id", flat=True)
    )
    assert selected == {"c1", "c2", "c3", "c4"}
    assert outcome.report.claims_selected == 4 and outcome.processed_now == 4
    assert _claim(answer, "c5").label_history == [] and _claim(answer, "c6").label == "SUPPORTED"


def test_a_seeded_day_gives_the_expected_report(seeded_day):
    outcome = nightly_audit_run(workspace=seeded_day["workspace"], day=DAY)
    report = outcome.report
    answer = seeded_day["answer"]

    assert report.status == NightlyReport.Status.DONE and report.finished_at is not None
    assert {c: _claim(answer, c).label for c in ("c1", "c2", "c3", "c4")} == {
        "c1": "SUPPORTED",
        "c2": "SUPPORTED",
        "c3": "NEI",
        "c4": "NEI",
    }
    body = report.report
    assert body["counts"]["claims_selected"] == 4 == body["counts"]["claims_processed"]
    assert body["counts"]["labels_changed"] == 2 == report.labels_changed
    assert body["counts"]["by_new_label"] == {"NEI": 2, "SUPPORTED": 2}
    assert body["label_drift"]["transitions"] == {"NEI->SUPPORTED": 1, "REFUTED->SUPPORTED": 1}
    assert [d["claim_id"] for d in body["label_drift"]["claims"]] == ["c1", "c2"]
    # the on-topic claim the KB cannot support points at the synapses document
    assert [(d["uri"], d["failing_claims"], d["nei"]) for d in body["top_failing_documents"]] == [
        ("kb://synapses", 1, 1)
    ]
    # ... which is older than the neuroscience freshness policy (18 months); the capital one is fresh
    assert [(s["uri"], s["limit_months"]) for s in body["stale_sources"]] == [("kb://synapses", 18)]
    # still failing and material: lowest confidence first
    assert [r["claim_id"] for r in body["review_recommended"]] == ["c4", "c3"]
    assert report.review_recommended == 2


def test_it_opens_one_curation_item_for_a_stale_source_and_not_again_the_next_day(seeded_day, store_answer):
    from escalation.models import CurationItem

    report = nightly_audit_run(workspace=seeded_day["workspace"], day=DAY).report
    store_answer(seeded_day["workspace"], NOON + dt.timedelta(days=1), claims=[(LTP_HISTORY, "NEI", 0.2)])
    nightly_audit_run(workspace=seeded_day["workspace"], day=DAY + dt.timedelta(days=1))

    item = CurationItem.objects.get()
    assert item.document == seeded_day["synapses"] and item.source == CurationItem.Source.NIGHTLY
    assert "80 months old" in item.reason
    assert report.report["curation_items_opened"] == [item.id]


def test_each_label_change_is_recorded_as_drift_and_keeps_the_machine_history(seeded_day):
    nightly_audit_run(workspace=seeded_day["workspace"], day=DAY)

    c1 = _claim(seeded_day["answer"], "c1")
    assert c1.machine_label == "SUPPORTED" and c1.confidence >= 0.8
    assert c1.label_history[-1]["from"] == "NEI" and c1.label_history[-1]["by"] == "nightly_audit"
    drifted = AuditEvent.objects.filter(action="claim.label_drifted")
    assert sorted(int(e.object_id) for e in drifted) == sorted(
        _claim(seeded_day["answer"], c).id for c in ("c1", "c2")
    )
    assert _claim(seeded_day["answer"], "c3").label_history == []  # re-checked, unchanged: no drift


def test_a_human_label_is_never_overwritten_by_the_machine(seeded_day, lead):
    from audit.services.claims import claim_relabel

    c1 = _claim(seeded_day["answer"], "c1")
    claim_relabel(claim=c1, label="NEI", actor=lead, reason="checking with the regulator")

    nightly_audit_run(workspace=seeded_day["workspace"], day=DAY)

    c1.refresh_from_db()
    assert (c1.label, c1.machine_label) == ("NEI", "SUPPORTED")
    assert c1.label_history[-1]["label_kept_by_human"] is True


def test_a_second_run_for_the_same_date_changes_nothing(seeded_day):
    nightly_audit_run(workspace=seeded_day["workspace"], day=DAY)
    claims_before = list(Claim.objects.order_by("id").values())
    events_before = AuditEvent.objects.count()
    report_before = NightlyReport.objects.values().get()

    again = nightly_audit_run(workspace=seeded_day["workspace"], day=DAY)

    assert again.already_done and again.processed_now == 0
    assert list(Claim.objects.order_by("id").values()) == claims_before
    assert AuditEvent.objects.count() == events_before
    assert NightlyReport.objects.values().get() == report_before
    assert NightlyItem.objects.count() == 4


def test_a_day_without_weak_claims_gives_an_empty_finished_report(workspace):
    outcome = nightly_audit_run(workspace=workspace, day=DAY)

    assert outcome.report.status == NightlyReport.Status.DONE
    assert outcome.report.report["counts"]["claims_selected"] == 0
    assert outcome.report.report["review_recommended"] == []


def test_the_command_prints_figures_and_refuses_a_bad_date(seeded_day, capsys):
    call_command("nightly_audit", "--date", DAY.isoformat(), "--workspace", "default")
    out = capsys.readouterr().out
    assert "default 2026-11-20: 4 selected, 4 processed now" in out and "claims/s" in out

    call_command("nightly_audit", "--date", DAY.isoformat(), "--workspace", "default")
    assert "already done" in capsys.readouterr().out

    with pytest.raises(CommandError, match="--date must be a day written YYYY-MM-DD"):
        call_command("nightly_audit", "--date", "20-11-2026")
    with pytest.raises(CommandError, match="no workspace with the slug 'nope'"):
        call_command("nightly_audit", "--workspace", "nope")


def test_the_nightly_task_runs_the_auditor(seeded_day, django_capture_on_commit_callbacks):
    from django_q.tasks import async_task

    with django_capture_on_commit_callbacks(execute=True):
        async_task("audit.tasks.nightly_audit", seeded_day["workspace"].id, DAY.isoformat())

    assert (
        NightlyReport.objects.get(workspace=seeded_day["workspace"], date=DAY).status
        == NightlyReport.Status.DONE
    )


def test_the_schedules_are_declared_and_installed_idempotently(db):
    from django_q.models import Schedule

    call_command("setup_schedules")
    call_command("setup_schedules")

    for name, func in (
        ("audit.nightly_audit", "audit.tasks.nightly_audit"),
        ("audit.purge_expired", "audit.tasks.purge_expired"),
    ):
        rows = Schedule.objects.filter(name=name)
        assert rows.count() == 1 and rows.get().func == func and rows.get().schedule_type == Schedule.DAILY


def test_a_fast_run_records_its_depth_and_stage_timings(seeded_day):
    outcome = nightly_audit_run(workspace=seeded_day["workspace"], day=DAY, depth="fast")

    figures = outcome.report.report["figures"]
    assert figures["verification_depth"] == "fast"
    assert set(figures["stage_seconds"]) == {"retrieve", "verify", "web", "store"}
    assert _claim(seeded_day["answer"], "c1").label == "SUPPORTED"  # an exact restatement, even word-only


def test_the_bench_option_seeds_weak_claims_and_prints_claims_per_second(db, capsys):
    import json

    call_command(
        "nightly_audit",
        "--bench",
        "30",
        "--bench-chunks",
        "20",
        "--date",
        DAY.isoformat(),
        "--verbosity",
        "0",
    )

    figures = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert figures["claims"] == 30 and figures["claims_per_s"] > 0
    bench = NightlyReport.objects.get(workspace__slug="nightly-bench", date=DAY)
    assert bench.claims_selected == bench.claims_processed == 30


@pytest.fixture
def local_web(settings, seeded_day):
    """PubMed and arXiv served by a real HTTP server on 127.0.0.1; the workspace allows calls to it."""
    from tests.web.conftest import ARXIV_PATH, PUBMED_PATH, LocalServer, serve_arxiv, serve_pubmed

    server = LocalServer()
    settings.THEORIA = {
        **settings.THEORIA,
        "WEB_ALLOW_PRIVATE_ADDRESSES": True,
        "WEB_TIMEOUT_S": 2.0,
        "PUBMED_BASE_URL": server.url(PUBMED_PATH),
        "ARXIV_BASE_URL": server.url(ARXIV_PATH),
    }
    serve_pubmed(
        server,
        [
            {
                "pmid": "1973",
                "title": "Long-lasting potentiation of synaptic transmission",
                "abstract": LTP_HISTORY + " The potentiation lasted for hours in anaesthetised rabbits.",
                "year": "2023",
                "month": "Jan",
            }
        ],
    )
    serve_arxiv(server, [])
    workspace = seeded_day["workspace"]
    workspace.allow_external_calls = True
    workspace.web_allowed_domains = ["127.0.0.1"]
    workspace.save(update_fields=["allow_external_calls", "web_allowed_domains"])
    yield server
    server.close()


def test_it_checks_claims_still_weak_on_the_web_where_the_workspace_allows(seeded_day, local_web):
    from audit.models import ExternalCall

    outcome = nightly_audit_run(workspace=seeded_day["workspace"], day=DAY)

    answer = seeded_day["answer"]
    assert _claim(answer, "c3").label == "SUPPORTED"  # the web source says what the KB did not
    assert _claim(answer, "c4").label == "NEI"  # the web found nothing that supports it
    counts = outcome.report.report["counts"]
    assert (counts["web_checked"], counts["web_decisive"]) == (2, 1)
    assert ExternalCall.objects.filter(workspace=seeded_day["workspace"]).exists()
    assert "/entrez/eutils/esearch.fcgi" in local_web.paths()


def test_it_makes_no_web_call_when_the_workspace_forbids_external_calls(seeded_day, settings):
    from audit.models import ExternalCall

    outcome = nightly_audit_run(workspace=seeded_day["workspace"], day=DAY)

    assert outcome.report.report["counts"]["web_checked"] == 0
    assert not ExternalCall.objects.exists()

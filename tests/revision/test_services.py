"""Storing a revision on the answer and its run (audit/services/revision.py), real database."""

from __future__ import annotations

import pytest

from audit.models import Answer, AuditEvent, VerificationRun
from audit.pipeline.revision import revise_answer
from audit.services.revision import revision_record

QUERY = "What does the Gold card cost?"


def _stored(workspace, text, passages):
    answer = Answer.objects.create(
        workspace=workspace,
        query=QUERY,
        text=text,
        mode="audit-local",
        contexts=[{"id": p.id, "text": p.text, "anchors": list(p.anchors)} for p in passages],
    )
    run = VerificationRun.objects.create(
        answer=answer,
        mode="audit-local",
        warnings=[{"code": "UNSUPPORTED_CLAIMS", "message": "1 material claims"}],
    )
    return answer, run


def _outcome(text, passages, verify):
    return revise_answer(query=QUERY, answer=text, passages=passages, verify=lambda t, p: verify(t, p, QUERY))


@pytest.mark.django_db
def test_it_stores_the_revised_text_the_original_and_the_ledger(workspace, passages, verify, analyst):
    original = (
        "The annual fee for the Gold card is $200 [1]. Gold card holders get free airport lounge access [3]."
    )
    answer, run = _stored(workspace, original, passages)
    outcome = _outcome(original, passages, verify)
    revision_record(answer=answer, run=run, outcome=outcome, actor=analyst)

    answer.refresh_from_db()
    run.refresh_from_db()
    assert answer.original_text == original
    assert (
        answer.text
        == "The annual fee for the Gold card is $150 [1]. Gold card holders get free airport lounge access [3]."
    )
    (entry,) = answer.revisions
    assert entry["source"] == "revision_loop" and entry["text"] == answer.text
    assert [(e["claim_id"], e["strategy"], e["attempt"]) for e in entry["ledger"]] == [("c1", "correct", 1)]
    assert [a["attempt"] for a in run.revision_history] == [0, 1]
    assert run.revision_history[0]["text"] == original and run.revision_history[1]["kept"] is True
    assert run.revision_history[0]["ledger"][0]["verdict"] == "contradicted"
    event = AuditEvent.objects.get(action="answer.revised")
    assert event.actor == analyst and event.object_id == str(answer.pk)
    assert event.details["edits"] == {"correct": 1} and event.details["kept_attempt"] == 1


@pytest.mark.django_db
def test_an_answer_that_needs_no_revision_keeps_its_text_and_records_the_check(workspace, passages, verify):
    text = "The annual fee for the Gold card is $150 [1]."
    answer, run = _stored(workspace, text, passages)
    revision_record(answer=answer, run=run, outcome=_outcome(text, passages, verify))
    answer.refresh_from_db()
    run.refresh_from_db()
    assert (answer.text, answer.original_text, answer.revisions) == (text, text, [])
    assert len(run.revision_history) == 1
    assert AuditEvent.objects.filter(action="answer.revision_checked").count() == 1
    assert not AuditEvent.objects.filter(action="answer.revised").exists()


@pytest.mark.django_db
def test_termination_warnings_join_the_run_without_repeating_a_code(workspace, passages, verify):
    from tests.revision.test_revision import ScriptedRewriter

    original = "The card always includes travel insurance for the whole family [1]."
    answer, run = _stored(workspace, original, passages)
    outcome = revise_answer(
        query=QUERY,
        answer=original,
        passages=passages,
        verify=lambda t, p: verify(t, p, QUERY),
        rewriter=ScriptedRewriter(
            "The card always includes travel insurance for each family member [1].",
            "The card always includes travel insurance for all of the family [1].",
        ),
    )
    revision_record(answer=answer, run=run, outcome=outcome)
    run.refresh_from_db()
    assert [w["code"] for w in run.warnings] == ["UNSUPPORTED_CLAIMS", "NO_IMPROVEMENT"]


def test_the_revision_options_come_from_the_settings(settings):
    from audit.services.revision import revision_options

    settings.THEORIA = {
        **settings.THEORIA,
        "REVISION_SOFTENING": "parenthetical",
        "REVISION_UNSUPPORTED": "qualify",
    }
    options = revision_options()
    assert (options.softening, options.unsupported_action) == ("parenthetical", "qualify")


def test_a_bad_revision_setting_fails_at_start_up_naming_the_variable(monkeypatch):
    from django.core.exceptions import ImproperlyConfigured

    from audit.constants import SOFTENING_STYLES
    from theoria.settings.env import envchoice

    monkeypatch.setenv("THEORIA_REVISION_SOFTENING", "Shout")
    with pytest.raises(
        ImproperlyConfigured,
        match=r"^THEORIA_REVISION_SOFTENING must be one of hedge, qualify, "
        r"parenthetical, not 'Shout'\.$",
    ):
        envchoice("THEORIA_REVISION_SOFTENING", "hedge", SOFTENING_STYLES)
    monkeypatch.setenv("THEORIA_REVISION_SOFTENING", " Qualify ")
    assert envchoice("THEORIA_REVISION_SOFTENING", "hedge", SOFTENING_STYLES) == "qualify"

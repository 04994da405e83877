"""Red team (issue 13): false, hedged and uncited answers sent through ``POST /api/v1/audits``.

Each case sends an answer with its passages (or against the demo knowledge base) and checks the
rules of ``tests/redteam/invariants.py`` on the response, then what the case is about: a false
statement is never reported SUPPORTED as received, a correction only fixes the same fact, a
statement about something else is never swapped in.
"""

from __future__ import annotations

import pytest

from tests.redteam.conftest import post_audit
from tests.redteam.invariants import check_rules

pytestmark = [pytest.mark.slow, pytest.mark.django_db]

RETENTION = {"id": "1", "title": "Records policy", "text": "Incident reports must be kept for 7 years."}
REFUNDS = {
    "id": "1",
    "title": "Refunds",
    "text": "Refunds are processed within 14 business days of the request.",
}
FEES = {
    "id": "1",
    "title": "Fees",
    "text": "The annual fee for the Gold card is $150. The fee is charged every January.",
}
ERRORS = {
    "id": "1",
    "title": "Quality report",
    "text": "The error rate of the claims desk fell to 4% in 2023.",
}
REGULATION = {
    "id": "1",
    "title": "Regulation",
    "text": "The disclosure regulation took effect in 2021 for all member banks.",
}
BACKUPS = {"id": "1", "title": "Backups", "text": "Nightly backups are retained for 90 days."}
POLICY_DATE = {
    "id": "1",
    "title": "Policy",
    "text": "The new travel policy took effect in March 2024 for all branches.",
}
NMDA = {
    "id": "1",
    "title": "Synaptic Plasticity Overview",
    "text": "Blocking NMDA receptors with the antagonist AP5 prevents the induction of LTP.",
}
DOPAMINE = {
    "id": "1",
    "title": "Dopamine",
    "text": "Dopamine neurons pause their firing when a predicted reward is omitted.",
}
HM = {
    "id": "1",
    "title": "Patient H.M.",
    "text": "After surgery, patient H.M. lost the ability to form new declarative memories.",
}
CIRCUIT = {
    "id": "1",
    "title": "Hippocampal circuit",
    "text": "The entorhinal cortex projects to the dentate gyrus.",
}
WESTPHALIA = {
    "id": "w",
    "title": "Westphalia",
    "text": "The Peace of Westphalia was signed in 1648 in Osnabrück and Münster.",
}
BLISS = {
    "id": "1",
    "title": "History of LTP",
    "text": "LTP was first described by Bliss and Lømo in 1973 in the dentate gyrus of anaesthetized rabbits.",
}
OFFICE = {"id": "r", "title": "Records", "text": "Retention is managed by the records office."}
LAYERS = {"id": "1", "title": "Hippocampus Anatomy", "text": "The hippocampus proper has three layers."}
GOLD = {
    "id": "2",
    "title": "Refunds",
    "text": "Refunds are processed within 14 business days of the refund request.",
}

NOT_SUPPORTED = ("REFUTED", "NEI")
# (id, answer, contexts, uses the demo KB, labels as received per claim, words the returned answer must
# hold, words it must not hold)
CASES = [
    # value and unit swaps
    (
        "value-years",
        "Incident reports must be kept for 2 years [1].",
        [RETENTION],
        False,
        [("REFUTED",)],
        ["7 years"],
        [],
    ),
    (
        "value-days",
        "Refunds are processed within 30 business days [1].",
        [REFUNDS],
        False,
        [NOT_SUPPORTED],
        [],
        [],
    ),
    (
        "value-money",
        "The annual fee for the Gold card is $200 [1].",
        [FEES],
        False,
        [("REFUTED",)],
        ["$150"],
        [],
    ),
    (
        "value-percent",
        "The error rate of the claims desk fell to 12% in 2023 [1].",
        [ERRORS],
        False,
        [NOT_SUPPORTED],
        [],
        [],
    ),
    (
        "value-year",
        "The disclosure regulation took effect in 2019 for all member banks [1].",
        [REGULATION],
        False,
        [NOT_SUPPORTED],
        [],
        [],
    ),
    # the value kept, the unit changed (the NLI judge reads it; the features judge did not)
    (
        "unit-swap",
        "Nightly backups are retained for 90 hours [1].",
        [BACKUPS],
        False,
        [NOT_SUPPORTED],
        [],
        [],
    ),
    (
        "month-swap",
        "The new travel policy took effect in June 2024 for all branches [1].",
        [POLICY_DATE],
        False,
        [NOT_SUPPORTED],
        [],
        [],
    ),
    (
        "kb-retention",
        "Audit records are retained for 180 days by default.",
        [],
        True,
        [("REFUTED",)],
        ["90 days"],
        [],
    ),
    (
        "kb-agreement",
        "Level 3 compliance leads have 2 business days.",
        [],
        True,
        [("REFUTED",)],
        [],
        ["1 business days"],
    ),
    (
        "kb-minutes",
        "Level 1 on-call compliance analysts must acknowledge a case within 45 minutes.",
        [],
        True,
        [NOT_SUPPORTED],
        [],
        [],
    ),
    ("kb-hours", "Level 2 domain expert reviewers have 8 business hours.", [], True, [NOT_SUPPORTED], [], []),
    # negation
    (
        "negation-purge",
        "Records tied to an open escalation case may be purged before the case is resolved.",
        [],
        True,
        [NOT_SUPPORTED],
        [],
        [],
    ),
    (
        "negation-nmda",
        "Blocking NMDA receptors with AP5 does not prevent the induction of LTP [1].",
        [NMDA],
        False,
        [NOT_SUPPORTED],
        [],
        [],
    ),
    # antonyms
    (
        "antonym-dopamine",
        "Dopamine neurons increase their firing when a predicted reward is omitted [1].",
        [DOPAMINE],
        False,
        [NOT_SUPPORTED],
        [],
        [],
    ),
    (
        "antonym-hm",
        "After surgery, patient H.M. preserved the ability to form new declarative memories [1].",
        [HM],
        False,
        [NOT_SUPPORTED],
        [],
        [],
    ),
    # reversed roles
    (
        "reversed-roles",
        "The dentate gyrus projects to the entorhinal cortex [1].",
        [CIRCUIT],
        False,
        [None],
        [],
        [],
    ),
    # swapped entities
    (
        "entity-city",
        "The Peace of Westphalia was signed in 1648 in Vienna.",
        [WESTPHALIA],
        False,
        [NOT_SUPPORTED],
        [],
        ["Vienna and"],
    ),
    (
        "entity-region",
        "LTP was first described by Bliss and Lømo in 1973 in the amygdala of anaesthetized rabbits [1].",
        [BLISS],
        False,
        [NOT_SUPPORTED],
        [],
        [],
    ),
    ("entity-channel", "Alerts are sent to the #security-alerts channel.", [], True, [None], [], []),
    (
        "entity-severity",
        "Severity-2 incidents trigger a postmortem within 3 business days.",
        [],
        True,
        [None],
        [],
        [],
    ),
    # an unrelated but similar knowledge-base sentence must never replace the claim
    (
        "kb-unrelated",
        "LTP requires NMDA receptor activation. It lasts two minutes.",
        [],
        True,
        [None, NOT_SUPPORTED],
        ["It lasts two minutes"],
        ["acknowledge and triage"],
    ),
    (
        "kb-similar-report",
        "Level 1 analysts must file a written report within 30 days.",
        [],
        True,
        [NOT_SUPPORTED],
        ["file a written report"],
        ["acknowledge and triage"],
    ),
    (
        "context-unrelated",
        "The retention office is open on Mondays [1].",
        [OFFICE],
        False,
        [NOT_SUPPORTED],
        ["open on Mondays"],
        ["managed by the records office"],
    ),
    ("layers", "The hippocampus proper has five layers [1].", [LAYERS], False, [NOT_SUPPORTED], [], []),
    # hedged claims
    (
        "hedged-true",
        "Blocking NMDA receptors with AP5 may prevent the induction of LTP [1].",
        [NMDA],
        False,
        [None],
        [],
        [],
    ),
    (
        "hedged-false",
        "Some studies suggest the hippocampus proper has five layers [1].",
        [LAYERS],
        False,
        [NOT_SUPPORTED],
        [],
        [],
    ),
    # uncited claims
    (
        "uncited-context",
        "Blocking NMDA receptors with the antagonist AP5 prevents the induction of LTP.",
        [NMDA],
        False,
        [("SUPPORTED",)],
        [],
        [],
    ),
    ("uncited-kb", "Audit records are retained for 90 days by default.", [], True, [("SUPPORTED",)], [], []),
    (
        "uncited-nothing",
        "The cerebellum stores every childhood memory of taste in Purkinje cells.",
        [],
        True,
        [NOT_SUPPORTED],
        ["Purkinje cells"],
        [],
    ),
    (
        "mixed",
        "The annual fee for the Gold card is $150 [1]. Refunds are processed within 30 business days [2].",
        [FEES, GOLD],
        False,
        [("SUPPORTED",), NOT_SUPPORTED],
        ["$150"],
        [],
    ),
    ("no-evidence-number", "The Gold card costs $90 per year.", [], False, [NOT_SUPPORTED], [], []),
]


@pytest.mark.parametrize(
    "name, answer, contexts, kb, labels, must, must_not",
    CASES,
    ids=[(c.values if hasattr(c, "values") else c)[0] for c in CASES],
)
def test_a_red_team_answer_keeps_its_refutations_and_gets_no_new_falsehood(
    request, front_end, workspace, name, answer, contexts, kb, labels, must, must_not
):
    if kb:
        request.getfixturevalue("demo_kb")
    data = post_audit(front_end, answer, contexts)

    check_rules(data, answer, contexts)
    cards = data["claims"]
    assert len(cards) == len(labels), [c["text"] for c in cards]
    for card, allowed in zip(cards, labels):
        if allowed is not None:
            assert card["label"] in allowed, (card["text"], card["label"], card["confidence"])
        if card["label"] != "SUPPORTED":  # the finding is kept where people see it
            assert card["label"] == "NEI" or card["escalations"], card
    for words in must:
        assert words in data["answer"], data["answer"]
    for words in must_not:
        assert words not in data["answer"], data["answer"]

"""The judge reads: the contrastive misses the issue listed, in fresh sentences, through ``verify_claim``
with the default judge (the numeric and structural checks run beside it, as in an audit)."""

from __future__ import annotations

import pytest

from audit.pipeline import verify_claim

# The judge does not yet read every rank or every time unit (evaluate --contrast: rank 72 %, unit
# 81 %): these stay marked, strictly, so the day it does the test says so. Reversed roles are read by
# the role binding (audit/pipeline/binding.py).
NOT_YET = pytest.mark.xfail(
    strict=True, reason="the judge does not read this edit yet (docs/ARCHITECTURE.md)"
)

CASES = [
    # a quantifier widened
    (
        "Some of the regional branches were audited in 2024.",
        "All of the regional branches were audited in 2024.",
        False,
    ),
    (
        "Only some of the vendors signed the new contract.",
        "All of the vendors signed the new contract.",
        False,
    ),
    # a comparison, a cause and the roles of two parties reversed
    (
        "Licence revenue exceeded service revenue in the last quarter.",
        "Service revenue exceeded licence revenue in the last quarter.",
        False,
    ),
    (
        "The insurer reimburses the clinic for each approved treatment.",
        "The clinic reimburses the insurer for each approved treatment.",
        False,
    ),
    # a unit or a time unit changed, the number kept
    (
        "The tablet contains 25 mg of the active substance.",
        "The tablet contains 25 g of the active substance.",
        False,
    ),
    pytest.param(
        "The backup job runs for 3 hours every night.",
        "The backup job runs for 3 days every night.",
        False,
        marks=NOT_YET,
    ),
    # a rank changed
    pytest.param(
        "Meridia is the second-largest grocery chain in the region.",
        "Meridia is the largest grocery chain in the region.",
        False,
        marks=NOT_YET,
    ),
    # a permission turned into an obligation
    (
        "Employees may carry over up to five days of unused leave.",
        "Employees must carry over up to five days of unused leave.",
        False,
    ),
    # a condition dropped
    (
        "If the customer requests it in writing, the bank closes the account within ten days.",
        "The bank closes the account within ten days.",
        False,
    ),
    # a detail the passage never mentions appended
    (
        "The committee approved the annual budget.",
        "The committee approved the annual budget after a three-hour debate.",
        False,
    ),
    # the faithful readings stay SUPPORTED, a correct paraphrase included
    ("The pool is closed on Sundays.", "The pool does not open on Sundays.", True),
    (
        "Some of the regional branches were audited in 2024.",
        "Some of the regional branches were audited in 2024.",
        True,
    ),
    (
        "Licence revenue exceeded service revenue in the last quarter.",
        "In the last quarter, licence revenue was higher than service revenue.",
        True,
    ),
    (
        "The tablet contains 25 mg of the active substance.",
        "Each tablet holds 25 mg of the active substance.",
        True,
    ),
]


@pytest.mark.parametrize(("premise", "claim", "supported"), CASES)
def test_the_default_judge_reads_what_the_words_say(premise, claim, supported):
    v = verify_claim(claim, [premise])
    assert (v.label == "SUPPORTED") is supported, (v.label, v.confidence)


def test_a_correction_that_leaves_another_detail_wrong_is_not_supported():
    kb = "In 1997 Schultz reported reward prediction errors using recordings from monkeys."
    assert (
        verify_claim("Schultz reported this in 1997 using recordings from rats.", [kb]).label != "SUPPORTED"
    )
    assert (
        verify_claim("Schultz reported this in 1997 using recordings from monkeys.", [kb]).label
        == "SUPPORTED"
    )


def test_an_unrelated_sentence_does_not_refute_a_claim():
    evidence = [
        "Ghrelin is a hormone produced mainly in the stomach. Leptin does not lower food intake in patients "
        "with leptin resistance."
    ]
    v = verify_claim("Ghrelin stimulates appetite before meals.", evidence)
    assert v.label != "REFUTED"

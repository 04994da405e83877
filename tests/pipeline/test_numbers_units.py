"""Counts are compared with the thing they count: "2 business days" is not "Level 2"."""

from audit.pipeline.methods.numeric import compare_numbers
from audit.pipeline.numbers import extract_quantities, same_quantity

RUNBOOK = (
    "Level 2 domain expert reviewers have 4 business hours. "
    "Level 3 compliance leads have 1 business day to arbitrate disputes."
)


def test_it_reads_the_unit_after_a_count_and_the_label_before_it():
    level, days = extract_quantities("Level 3 compliance leads have 2 business days.")
    assert (level.label, days.unit) == ("level", "business")


def test_a_count_of_something_else_is_no_match():
    level2 = extract_quantities("Level 2 reviewers")[0]
    two_days = extract_quantities("2 business days")[0]
    assert not same_quantity(two_days, level2)
    assert same_quantity(two_days, extract_quantities("2 business days")[0])
    assert same_quantity(two_days, extract_quantities("it took 2")[0])  # a bare number may be it


def test_it_refutes_a_count_the_evidence_states_differently_for_the_same_unit():
    result = compare_numbers("Level 3 compliance leads have 2 business days.", [RUNBOOK])
    mismatch = [i for i in result["items"] if not i["match"]]
    assert result["mismatched"] == 1 and mismatch[0]["evidence_value"] == "1"


def test_it_supports_the_same_count_of_the_same_unit():
    result = compare_numbers("Level 3 compliance leads have 1 business day.", [RUNBOOK])
    assert result["matched"] == 2 and result["mismatched"] == 0


def test_it_reads_counts_written_as_words_with_what_they_count():
    from audit.pipeline.numbers import spelled_counts

    found = spelled_counts("Locked after three failed attempts, for twenty-five days; the two of them.")
    assert [(q.value, q.unit) for q in found] == [(3.0, "failed"), (25.0, "day")]

"""A compound claim's parts, from the dependency parse (audit/pipeline/claim_parts.py, issue 45 item 2)."""

from audit.pipeline.claim_parts import parts


def test_coordinated_predicates_keep_their_shared_subject():
    assert parts("The drug reduced blood pressure and improved survival in older patients.") == [
        "The drug reduced blood pressure.",
        "The drug improved survival in older patients.",
    ]


def test_coordinated_clauses_keep_their_own_subjects():
    assert parts("Smith founded the firm in 1990, and Jones joined it in 1995.") == [
        "Smith founded the firm in 1990.",
        "Jones joined it in 1995.",
    ]


def test_coordinated_objects_each_make_a_part():
    assert parts("The study enrolled 200 adults and 50 children.") == [
        "The study enrolled 200 adults.",
        "The study enrolled 50 children.",
    ]


def test_a_claim_that_says_one_thing_has_no_parts():
    assert parts("Customer complaints must be kept for five years.") == []
    assert parts("Salt and pepper were added to the soup.") == []

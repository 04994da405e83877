"""Every text function and every regular expression run over user text costs time linear in the
text's length, on the inputs that make regular expressions backtrack (``tests/pipeline/scaling.py``).

A scaling check, not a time limit: the cost on LARGE characters is compared with the cost on SMALL
ones. Before these checks an answer of nested brackets cost the square of its length in claim
extraction (100 KB: 20 s) and a run of full stops followed by a letter cost 2^n in the revision
editor's sentence parser.
"""

from __future__ import annotations

import pytest

from tests.pipeline import scaling

HEADLINE = {
    name: scaling.ADVERSARIAL[name]
    for name in (
        "nested square brackets",
        "unclosed link texts",
        "run of '.' then a letter",
        "spaces after a name",
        "digits",
        "curly quoted words",
        "abbreviations",
        "short sentences",
    )
}


def _entry_points() -> dict:
    from audit.pipeline import chunking, contradiction, extraction, numbers, rag_score, redaction, text
    from audit.pipeline.methods import cove, linguistic
    from audit.pipeline.revision import sentences
    from audit.pipeline.types import Passage
    from audit.pipeline.web import base, page
    from audit.web import presentation

    contexts = [{"id": "1", "text": "One."}, {"id": "doc-a", "text": "Two."}]
    sources = [Passage(id="1", text="One.", title="Annual report")]
    return {
        "claim extraction": lambda t: extraction.extract_claims(t, "what is it?"),
        "sentence splitting": extraction.split_sentences_with_spans,
        "citation anchors": extraction.citation_anchors,
        "citation stripping": extraction.strip_citations,
        "claim cleaning": extraction.clean_sentence,
        "atomic decomposition": extraction.decompose,
        "claim types": extraction.claim_type,
        "claim keys": sentences.claim_key,
        "revision sentence parts": lambda t: sentences._Sentence.parse(t),
        "revision softening": lambda t: sentences.soften(t, "hedge"),
        "citations of an answer": lambda t: extraction.citations_of(t, contexts),
        "linguistic markers": lambda t: linguistic.linguistic_score(t, ["the evidence"]),
        "numbers": lambda t: numbers.extract_quantities(t, words=True),
        "number ranges": numbers.extract_ranges,
        "spelled counts": numbers.spelled_counts,
        "markdown stripping": presentation.strip_markdown,
        "evidence sentences": presentation.sentence_spans,
        "html to text": page.html_to_text,
        "web links": base.urls_in,
        "web queries": base.claim_query,
        "redaction": redaction.redact_pii,
        "chunking": lambda t: chunking.chunk_text(chunking.normalise_text(t), size=100, overlap=20),
        "content stems": text.content_stems,
        "contradiction clauses": contradiction.clauses,
        "CoVe questions": cove.questions_for,
        "citation coverage": lambda t: rag_score.citation_coverage(t, sources),
    }


def test_claim_extraction_and_claim_keys_are_linear_on_the_inputs_that_took_the_server_down():
    from audit.pipeline.extraction import extract_claims
    from audit.pipeline.revision.sentences import claim_key

    for name, fn in {"claim extraction": extract_claims, "claim keys": claim_key}.items():
        assert scaling.super_linear(fn, HEADLINE) == {}, name


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(_entry_points()))
def test_every_text_function_is_linear_on_every_adversarial_input(name):
    assert scaling.super_linear(_entry_points()[name]) == {}


@pytest.mark.slow
def test_every_regular_expression_of_the_project_is_linear_on_every_adversarial_input():
    patterns = scaling.project_patterns(
        ("audit", "escalation"), skip=("audit.evaluation", "audit.management")
    )
    assert len(patterns) > 80  # the walk found the modules' patterns
    found = {
        f"{name} {pattern.pattern[:60]!r}": bad
        for name, pattern in patterns.items()
        if (bad := scaling.super_linear(scaling.scanner(pattern)))
    }
    assert found == {}


def test_the_scaling_check_tells_a_quadratic_pattern_from_a_linear_one():
    import re

    quadratic = re.compile(r"\[([^\]]+)\]\((?:[^)]+)\)")  # the old markdown-link pattern of extraction
    linear = re.compile(r"\[([^\[\]]+)\]\((?:[^)\[\]]+)\)")
    family = {"nested square brackets": scaling.ADVERSARIAL["nested square brackets"]}
    assert (
        scaling.super_linear(scaling.scanner(quadratic), family)["nested square brackets"]
        > scaling.MAX_EXPONENT
    )
    assert scaling.super_linear(scaling.scanner(linear), family) == {}


def test_citation_markers_and_emphasis_that_never_close_are_given_up_without_rescanning():
    from audit.pipeline import extraction, rag_score
    from audit.web.presentation import strip_markdown

    unclosed = {
        name: scaling.ADVERSARIAL[name]
        for name in (
            "citation starts",
            "source citation lists",
            "parenthesised source lists",
            "code words",
            "starred words",
        )
    }
    for name, fn in {
        "citation markers": scaling.scanner(extraction.CITATION_RE),
        "source phrases": scaling.scanner(rag_score.CITATION_PATTERNS),
        "markdown stripping": strip_markdown,
    }.items():
        assert scaling.super_linear(fn, unclosed) == {}, name
    assert extraction.citation_anchors(
        "A [cite:kb2], B [Source: 3, 4] and C (src: x.y) [1-3] [Arxiv-2]."
    ) == (
        "cite:kb2",
        "3",
        "4",
        "x.y",
        "1",
        "2",
        "Arxiv-2",
    )

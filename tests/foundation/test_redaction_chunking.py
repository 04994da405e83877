"""Chunking keeps offsets and overlap; stored snippets hide personal and sensitive content."""

from itertools import pairwise

import pytest

from audit.pipeline.chunking import chunk_text, sha256_text
from audit.pipeline.redaction import redact_pii, stored_snippet

TEXT = " ".join(f"Sentence number {i} states a fact about synapses." for i in range(60))


def test_it_chunks_within_the_size_and_maps_offsets_back_to_the_text():
    chunks = chunk_text(TEXT, size=300, overlap=60)
    assert len(chunks) > 5
    for c in chunks:
        assert len(c.text) <= 300
        assert TEXT[c.start : c.end].strip() == c.text
    assert all(b.start < a.end for a, b in pairwise(chunks)), "consecutive chunks overlap"


def test_it_ends_chunks_at_sentence_boundaries_when_it_can():
    chunks = chunk_text(TEXT, size=300, overlap=0)
    assert all(c.text.endswith(".") for c in chunks)


def test_it_refuses_nonsense_chunk_parameters():
    with pytest.raises(ValueError):
        chunk_text(TEXT, size=10)
    with pytest.raises(ValueError):
        chunk_text(TEXT, size=200, overlap=150)


def test_it_masks_personal_data_in_snippets():
    text = "Write to jane.doe@example.org or call +1 415 555 0134; SSN 123-45-6789."
    masked = redact_pii(text)
    assert "jane.doe" not in masked and "555" not in masked and "6789" not in masked
    assert "[redacted email]" in masked


def test_it_stores_only_a_hash_and_a_preview_of_sensitive_passages():
    passage = "The merger closes on 3 March and the price is 41 dollars per share, not public yet."
    snippet = stored_snippet(passage, sensitive=True)
    assert sha256_text(passage) in snippet and "41 dollars" not in snippet
    assert stored_snippet(passage, sensitive=False) == passage

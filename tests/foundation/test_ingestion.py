"""Knowledge-base ingestion: idempotent, re-indexes changes, reports bad files one line each."""

from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from audit.models import AuditEvent, Chunk, Document
from audit.pipeline.embedding import get_embedder
from audit.pipeline.web.page import html_to_text
from audit.selectors import kb_index
from audit.services.ingestion import document_delete, ingest_paths

pytestmark = pytest.mark.django_db

LTP = """---
title: Synaptic Plasticity
domain: neuroscience
published: 2025-06-02
---
# Synaptic Plasticity

Long-term potentiation at CA1 synapses depends on NMDA receptor activation. Blocking NMDA receptors
with AP5 prevents LTP induction.
"""


@pytest.fixture
def kb_dir(tmp_path: Path) -> Path:
    (tmp_path / "ltp.md").write_text(LTP)
    (tmp_path / "retention.txt").write_text(
        "Published: 2026-01-12\nAudit records are retained for 90 days by default."
    )
    (tmp_path / "page.html").write_text(
        "<html><head><title>Sleep</title><script>var x=1;</script></head>"
        "<body><p>Slow-wave sleep supports memory consolidation.</p></body></html>"
    )
    (tmp_path / "records.jsonl").write_text(
        '{"id": "r1", "title": "Dopamine", "text": "Dopamine neurons signal reward prediction errors.", '
        '"published_at": "2021-03-10", "domain": "neuroscience"}\n'
    )
    return tmp_path


def snapshot():
    return sorted(
        Chunk.objects.values_list("document__uri", "document__content_hash", "ordinal", "content_hash", "pk")
    )


def search_titles(workspace, query):
    kb = kb_index(workspace)
    return [p.title for p, _ in kb.search(query, get_embedder().encode([query])[0], 3)]


def test_it_ingests_every_supported_format_with_its_metadata(workspace, kb_dir):
    report = ingest_paths(workspace=workspace, paths=[kb_dir])
    assert report.ok and report.created == 4
    ltp = Document.objects.get(uri="kb://ltp")
    assert (ltp.title, ltp.domain, str(ltp.published_at), ltp.date_inferred) == (
        "Synaptic Plasticity",
        "neuroscience",
        "2025-06-02",
        False,
    )
    retention = Document.objects.get(uri="kb://retention")
    assert str(retention.published_at) == "2026-01-12" and retention.date_inferred
    page = Document.objects.get(uri="kb://page")
    assert page.title == "Sleep" and "var x" not in page.chunks.get().text
    assert Document.objects.get(uri="kb://records/r1").title == "Dopamine"
    assert AuditEvent.objects.filter(action="kb.document_created").count() == 4


def test_it_leaves_the_same_rows_when_a_folder_is_ingested_twice(workspace, kb_dir):
    ingest_paths(workspace=workspace, paths=[kb_dir])
    before = snapshot()
    version = type(workspace).objects.get(pk=workspace.pk).kb_version
    report = ingest_paths(workspace=workspace, paths=[kb_dir])
    assert (report.created, report.updated, report.unchanged) == (0, 0, 4)
    assert snapshot() == before
    assert type(workspace).objects.get(pk=workspace.pk).kb_version == version


def test_it_reindexes_a_changed_file_and_search_follows(workspace, kb_dir):
    ingest_paths(workspace=workspace, paths=[kb_dir])
    assert search_titles(workspace, "NMDA receptors and LTP")[0] == "Synaptic Plasticity"
    (kb_dir / "ltp.md").write_text(
        LTP.replace("Synaptic Plasticity", "Cerebellar Learning").replace(
            "Long-term potentiation at CA1 synapses depends on NMDA receptor activation.",
            "Cerebellar Purkinje cells learn through climbing fibre error signals.",
        )
    )
    report = ingest_paths(workspace=workspace, paths=[kb_dir / "ltp.md"])
    assert report.updated == 1
    doc = Document.objects.get(uri="kb://ltp")
    assert doc.title == "Cerebellar Learning"
    assert "Purkinje" in doc.chunks.get().text
    assert search_titles(workspace, "Purkinje cells climbing fibre")[0] == "Cerebellar Learning"


def test_it_rechunks_when_the_chunking_parameters_change(workspace, kb_dir):
    ingest_paths(workspace=workspace, paths=[kb_dir / "ltp.md"])
    assert Document.objects.get(uri="kb://ltp").chunks.count() == 1
    report = ingest_paths(workspace=workspace, paths=[kb_dir / "ltp.md"], chunk_size=100, chunk_overlap=20)
    assert report.updated == 1 and Document.objects.get(uri="kb://ltp").chunks.count() > 1


def test_it_drops_a_deleted_document_from_search(workspace, kb_dir):
    ingest_paths(workspace=workspace, paths=[kb_dir])
    assert "Dopamine" in search_titles(workspace, "dopamine reward prediction error")
    document_delete(document=Document.objects.get(uri="kb://records/r1"))
    assert "Dopamine" not in search_titles(workspace, "dopamine reward prediction error")
    assert AuditEvent.objects.filter(action="kb.document_deleted").exists()


def test_it_reports_each_bad_file_in_one_line_and_ingests_the_others(workspace, kb_dir, capsys):
    (kb_dir / "empty.txt").write_text("   \n")
    (kb_dir / "latin1.txt").write_bytes("caf\xe9 na\xefve".encode("latin-1"))
    (kb_dir / "notes.pdf").write_bytes(b"%PDF-1.4")
    (kb_dir / "broken.jsonl").write_text('{"id": 1, "text": "ok"}\n{not json\n')
    with pytest.raises(CommandError, match="4 file"):
        call_command(
            "ingest_kb",
            str(kb_dir / "empty.txt"),
            str(kb_dir / "latin1.txt"),
            str(kb_dir / "notes.pdf"),
            str(kb_dir / "broken.jsonl"),
            str(kb_dir / "ltp.md"),
            verbosity=0,
        )
    # the model's own loading bar may share stderr when this test loads it first
    err = [
        line
        for line in capsys.readouterr().err.strip().splitlines()
        if not line.startswith("Loading weights")
    ]
    assert len(err) == 4
    assert any("empty.txt" in line and "empty" in line for line in err)
    assert any("latin1.txt" in line and "UTF-8" in line for line in err)
    assert any("notes.pdf" in line and ".pdf is not supported" in line for line in err)
    assert any("broken.jsonl" in line and "line 2" in line for line in err)
    assert Document.objects.filter(uri="kb://ltp").exists()


def test_it_ingests_benchmark_evidence_once_per_passage(workspace, tmp_path):
    row = (
        '{"id": "x%d", "dataset": "scifact", "claim": "c", "label": "SUPPORTED", "domain": "biomedical", '
        '"evidence": [{"id": "e1", "title": "Shared abstract", "text": "Aspirin lowers fever."}]}\n'
    )
    (tmp_path / "claims.jsonl").write_text(row % 1 + row % 2)
    report = ingest_paths(workspace=workspace, paths=[tmp_path / "claims.jsonl"])
    assert report.created == 1
    assert Document.objects.get().domain == "biomedical"


def test_it_strips_scripts_and_keeps_paragraphs_of_html():
    title, text, _ = html_to_text("<title>T</title><style>p{}</style><p>One.</p><p>Two &amp; three.</p>")
    assert title == "T" and text.split() == ["One.", "Two", "&", "three."] and "p{}" not in text


def _chunk_sentences() -> set[str]:
    from audit.pipeline.features import passage_sentences

    return {s for text in Chunk.objects.values_list("text", flat=True) for s in passage_sentences(text)}


def _parse_sentences() -> set[str]:
    from audit.pipeline.parse_store import passage_sentences

    return {s for text in Chunk.objects.values_list("text", flat=True) for s in passage_sentences(text)}


def _rows(version) -> int:
    from audit.models import SentenceEncoding

    return SentenceEncoding.objects.filter(encoder=version()).count()


def test_it_stores_each_chunk_sentences_encoding_once_at_ingestion(workspace, kb_dir):
    from audit.kb.encodings import ENCODINGS
    from audit.models import SentenceEncoding
    from audit.pipeline.encodings import encoder_version, stored
    from audit.pipeline.parse_store import parser_version

    report = ingest_paths(workspace=workspace, paths=[kb_dir])
    sentences = _chunk_sentences()
    assert _rows(encoder_version) == len(sentences) == report.encoded > 4
    assert set(stored(sorted(sentences), ENCODINGS)) == sentences
    assert set(SentenceEncoding.objects.values_list("encoder", flat=True)) == {
        encoder_version(),
        parser_version(),
    }
    again = ingest_paths(workspace=workspace, paths=[kb_dir])
    assert (again.encoded, again.parsed) == (0, 0)  # unchanged: nothing encoded or parsed again
    assert _rows(encoder_version) == len(sentences)
    # the search the audits use reads them
    assert kb_index(workspace).for_pipeline().encodings is ENCODINGS


def test_it_stores_each_chunk_sentences_parse_once_at_ingestion_and_audits_read_it(workspace, kb_dir):
    from audit.kb.encodings import ENCODINGS
    from audit.pipeline import binding, parse_store
    from audit.pipeline.parse_store import parser_version

    report = ingest_paths(workspace=workspace, paths=[kb_dir])
    sentences = _parse_sentences()
    assert _rows(parser_version) == len(sentences) == report.parsed > 4
    # what the pipeline's store reads back is the parser's doc
    binding.PARSES.clear()
    before = binding.PARSES.parsed
    docs = binding.parse(sorted(sentences), parse_store.reader(kb_index(workspace).for_pipeline().encodings))
    assert binding.PARSES.parsed == before  # none parsed: all read from the rows ingestion wrote
    parser = binding.get_parser()
    assert [[(t.tag_, t.dep_, t.head.i) for t in d] for d in docs] == [
        [(t.tag_, t.dep_, t.head.i) for t in parser(s)] for s in sorted(sentences)
    ]
    assert ENCODINGS.read([parse_store.parse_key(next(iter(sentences)))])


def test_documents_are_prepared_together_across_files_and_a_bad_one_stops_none(
    workspace, tmp_path, monkeypatch
):
    import json

    from audit.pipeline import parse_store
    from audit.services import ingestion

    embedded: list[int] = []
    parsed: list[int] = []
    real_embed, real_parse = ingestion._embed, parse_store.precompute
    monkeypatch.setattr(ingestion, "_embed", lambda texts: embedded.append(len(texts)) or real_embed(texts))
    monkeypatch.setattr(
        parse_store, "precompute", lambda texts, *a, **k: parsed.append(1) or real_parse(texts, *a, **k)
    )
    monkeypatch.setattr(ingestion.constants, "INGEST_PREPARE_DOCUMENTS", 4)
    for k in range(5):
        (tmp_path / f"policy-{k}.txt").write_text(f"Policy {k} keeps audit records for {k + 1} years.")
    (tmp_path / "blank.jsonl").write_text(json.dumps({"uri": "kb://blank", "text": "   "}))
    (tmp_path / "fees.jsonl").write_text(
        json.dumps({"uri": "kb://fees", "text": "Fees are waived for students."})
    )
    report = ingest_paths(workspace=workspace, paths=[tmp_path])
    assert report.created == 6 and [source for source, _ in report.failures] == [
        str(tmp_path / "blank.jsonl")
    ]
    assert embedded == [4, 2] and len(parsed) == 2  # two batches of documents: one call each
    assert report.encoded == report.parsed == 6
    assert Document.objects.filter(workspace=workspace).count() == 6


def test_a_changed_document_without_chunks_is_given_empty_vectors_not_retried_for_ever(
    workspace, monkeypatch
):
    from audit.services import ingestion

    monkeypatch.setattr(ingestion, "chunk_text", lambda text, **kw: [])
    embedded: list[list[str]] = []
    prepared = ingestion.documents_prepare(
        workspace=workspace,
        docs=[ingestion.DocumentInput(uri="kb://x", title="X", text="Some text.", source_path="test")],
        embed=lambda texts: embedded.append(texts) or ingestion._embed(texts),
    )[0]
    assert embedded == [] and prepared.vectors is not None and prepared.vectors.shape == (0, 384)


def test_ingest_kb_says_what_it_encoded_and_parsed(workspace, kb_dir):
    out = StringIO()
    call_command("ingest_kb", str(kb_dir), "--workspace", workspace.slug, "--verbosity", "0", stdout=out)
    encoded, parsed = len(_chunk_sentences()), len(_parse_sentences())
    assert (
        f"{encoded} new chunk sentences encoded for the judge and {parsed} parsed for the role binding"
        in out.getvalue()
    )


def test_encode_kb_stores_what_an_older_ingestion_left_and_prunes_what_no_chunk_reads(workspace, kb_dir):
    from io import StringIO

    from audit.models import SentenceEncoding
    from audit.pipeline.encodings import encoder_version
    from audit.pipeline.parse_store import parser_version

    ingest_paths(workspace=workspace, paths=[kb_dir])
    count = SentenceEncoding.objects.count()
    for version in (encoder_version, parser_version):
        SentenceEncoding.objects.filter(
            pk__in=list(SentenceEncoding.objects.filter(encoder=version()).values_list("pk", flat=True)[:3])
        ).delete()
    SentenceEncoding.objects.create(key="0" * 64, data=b"", encoder="an-older-encoder/float32")
    SentenceEncoding.objects.create(key="1" * 64, data=b"", encoder="an-older-parser==1.0/spacy==3.7/-ner")
    out = StringIO()
    call_command("encode_kb", "--prune", "--verbosity", "0", stdout=out)
    assert (
        out.getvalue().strip()
        == "3 sentences encoded and 3 parsed and stored, 2 encodings and parses no chunk reads deleted."
    )
    assert SentenceEncoding.objects.count() == count
    document_delete(document=Document.objects.get(uri="kb://ltp"))  # its sentences are read no more
    out = StringIO()
    call_command("encode_kb", "--prune", "--verbosity", "0", stdout=out)
    left = len(_chunk_sentences()) + len(_parse_sentences())
    assert SentenceEncoding.objects.count() == left < count
    assert _rows(parser_version) == len(_parse_sentences())
    assert (
        out.getvalue().strip()
        == f"0 sentences encoded and 0 parsed and stored, {count - left} encodings and parses no chunk reads deleted."
    )
    out = StringIO()
    call_command("encode_kb", "--workspace", workspace.slug, "--verbosity", "0", stdout=out)
    assert out.getvalue().strip() == "0 sentences encoded and 0 parsed and stored."


def test_a_sentence_two_workspaces_hold_is_stored_once_and_kept_while_either_holds_it(workspace, tmp_path):
    """The rows are addressed by their text alone: a workspace reads one only for a sentence its own
    chunks hold, and pruning after one workspace deletes its copy keeps what the other still reads."""
    from io import StringIO

    from audit.kb.encodings import ENCODINGS
    from audit.models import SentenceEncoding
    from audit.pipeline import parse_store
    from audit.pipeline.encodings import stored
    from tests.factories import WorkspaceFactory

    other = WorkspaceFactory(slug="other-team")
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    shared = "Audit records are retained for 90 days by default."
    (tmp_path / "a" / "retention.txt").write_text(shared)
    (tmp_path / "b" / "retention.txt").write_text(shared + " Exports are kept for a year.")
    ingest_paths(workspace=workspace, paths=[tmp_path / "a"])
    report = ingest_paths(workspace=other, paths=[tmp_path / "b"])
    assert (report.encoded, report.parsed) == (1, 1)  # only its own new sentence
    assert SentenceEncoding.objects.count() == 4  # two sentences, encoded and parsed
    document_delete(document=Document.objects.get(workspace=workspace, uri="kb://retention"))
    call_command("encode_kb", "--prune", "--verbosity", "0", stdout=StringIO())
    both = [shared, "Exports are kept for a year."]
    assert set(stored(both, ENCODINGS)) == set(parse_store.stored(both, ENCODINGS)) == set(both)
    document_delete(document=Document.objects.get(workspace=other, uri="kb://retention"))
    call_command("encode_kb", "--prune", "--verbosity", "0", stdout=StringIO())
    assert SentenceEncoding.objects.count() == 0


def test_a_daily_schedule_prunes_the_encodings_of_deleted_documents(workspace, kb_dir):
    from django_q.models import Schedule

    from audit import tasks
    from audit.models import SentenceEncoding

    call_command("setup_schedules", stdout=StringIO())
    assert Schedule.objects.get(name="audit.kb_encodings_prune").func == "audit.tasks.kb_encodings_prune"
    ingest_paths(workspace=workspace, paths=[kb_dir])
    before = SentenceEncoding.objects.count()
    document_delete(document=Document.objects.get(uri="kb://ltp"))
    left = len(_chunk_sentences()) + len(_parse_sentences())
    assert tasks.kb_encodings_prune() == before - left > 0
    assert SentenceEncoding.objects.count() == left

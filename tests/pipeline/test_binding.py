"""Role binding and unstated content read from the dependency parse (audit/pipeline/binding.py)."""

from __future__ import annotations

import shutil

import pytest

from audit.pipeline import binding
from audit.pipeline.binding import ParserUnavailable, role_findings, unstated_content, unstated_decides

HIPPOCAMPUS = (
    "Place cells in the hippocampus fire when an animal occupies a particular location; John O'Keefe "
    "described them in 1971 and shared the 2014 Nobel Prize in Physiology or Medicine with May-Britt "
    "Moser and Edvard Moser, who discovered grid cells in the entorhinal cortex."
)


def _rules(claim, evidence, encode=None):
    return [f.rule for f in role_findings(claim, [evidence], encode)]


def test_the_installed_parser_files_match_the_pinned_hashes():
    model_dir = binding.verify_model_files()
    assert (model_dir / "parser" / "model").is_file()
    assert binding.get_parser().pipe_names[:3] == ["tok2vec", "tagger", "parser"]


def test_a_parser_whose_files_differ_from_the_pinned_hashes_is_refused(tmp_path):
    copy = tmp_path / "model"
    shutil.copytree(binding.verify_model_files(), copy, ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "meta.json").write_text("{}", encoding="utf-8")
    with pytest.raises(ParserUnavailable, match=r"meta\.json"):
        binding.verify_model_files(copy)


@pytest.mark.parametrize(
    "claim",
    [
        "Edvard Moser described hippocampal place cells in 1971.",
        "John O'Keefe discovered grid cells in the entorhinal cortex.",
        "May-Britt Moser described place cells in 1971.",
    ],
)
def test_a_name_the_passage_binds_to_another_finding_does_not_count_as_matched(claim):
    assert _rules(claim, HIPPOCAMPUS) == ["role_mismatch"]


@pytest.mark.parametrize(
    "claim",
    [
        "John O'Keefe described place cells in 1971.",
        "Place cells were described by John O'Keefe in 1971.",
        "May-Britt Moser and Edvard Moser discovered grid cells in the entorhinal cortex.",
        "Edvard Moser discovered grid cells.",
    ],
)
def test_the_finding_credited_as_the_passage_credits_it_binds_cleanly_in_either_voice(claim):
    assert _rules(claim, HIPPOCAMPUS) == []


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        ("Quillpay was acquired by Norhold Group.", "Quillpay acquired Norhold Group in March."),
        ("The clinic reimburses the insurer.", "The insurer reimburses the clinic for each treatment."),
        ("The server failure caused the power outage.", "The power outage caused the server failure."),
        (
            "Aluminium conducts electricity better than copper.",
            "Copper conducts electricity better than aluminium.",
        ),
        ("Service revenue exceeded licence revenue.", "Licence revenue exceeded service revenue."),
    ],
)
def test_two_roles_bound_the_other_way_round_are_a_reversal(embedder, claim, evidence):
    assert _rules(claim, evidence, embedder.encode) == ["role_reversed"]


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        ("Norhold Group acquired Quillpay.", "Quillpay was acquired by Norhold Group in March."),
        ("The insurer reimburses the clinic.", "The insurer reimburses the clinic for each treatment."),
        (
            "Copper conducts electricity better than aluminium.",
            "Copper conducts electricity better than aluminium.",
        ),
    ],
)
def test_the_same_roles_in_active_or_passive_voice_agree(embedder, claim, evidence):
    assert _rules(claim, evidence, embedder.encode) == []


def test_a_detail_the_evidence_never_states_is_unstated_content(embedder):
    unstated = unstated_content(
        "The committee approved the annual budget in Geneva after a debate chaired by Anna Berg.",
        ["The committee approved the annual budget."],
        embedder.encode,
        min_cos=0.5,
    )
    assert {"Geneva", "debate", "Anna", "Berg"} <= {u.word for u in unstated}
    assert unstated_decides(unstated)


def test_paraphrases_function_words_and_numbers_are_not_unstated_content(embedder):
    unstated = unstated_content(
        "Each tablet holds five milligrams of the active substance.",
        ["The tablet contains 5 milligrams of the active substance."],
        embedder.encode,
        min_cos=0.5,
    )
    assert not unstated_decides(unstated), unstated


# ---------------------------------------------------------------------------------------------
# cost: what is parsed (counted, not timed)


def _structure_results(claim_text: str, passage: str, entailment_score: float, *, binding_on: bool = True):
    """The structure method's results on one claim, after an entailment result of ``entailment_score``,
    and the texts the binding parsed meanwhile."""
    from audit.pipeline.methods.base import record_results, verify_context
    from audit.pipeline.methods.structure import StructureMethod
    from audit.pipeline.types import ClaimDraft, EvidenceHit, MethodResult, Passage

    claim = ClaimDraft("c1", claim_text, (0, len(claim_text)))
    hits = [EvidenceHit(Passage("p1", passage), 0.9)]
    ctx = verify_context(binding_thresholds(), binding=binding_on)
    record_results(
        ctx, "entailment", [claim], [MethodResult("entailment", score=entailment_score, verdict="supported")]
    )
    before = binding.PARSES.parsed
    result = StructureMethod().verify_many([(claim, hits)], ctx)[0]
    return result, binding.PARSES.parsed - before


def binding_thresholds():
    from audit.constants import Thresholds

    return Thresholds()


def test_the_binding_parses_nothing_for_a_claim_the_judge_already_keeps_below_supported(embedder):
    binding.PARSES.clear()
    below = binding_thresholds().audit_score_threshold / 2
    result, parsed = _structure_results(
        "Edvard Moser described hippocampal place cells in 1971.", HIPPOCAMPUS, below
    )
    assert parsed == 0
    assert result.details["binding"] == "not needed" and not result.details["unbound"]


def test_the_binding_still_reads_a_swapped_name_the_judge_would_call_supported(embedder):
    binding.PARSES.clear()
    result, parsed = _structure_results(
        "Edvard Moser described hippocampal place cells in 1971.", HIPPOCAMPUS, 0.99
    )
    assert parsed >= 2  # the claim and the one evidence sentence
    assert result.details["binding"] == "read"
    assert result.details["unbound"] and result.verdict == "not_found"


def test_a_claim_is_labelled_the_same_in_a_batch_where_another_answers_claim_has_its_id(embedder):
    """The nightly run checks the claims of many answers in one batch, and claim ids ("c1") repeat
    across answers: the binding and the conflict check read each claim's own earlier results."""
    from audit.pipeline.audit import run_methods
    from audit.pipeline.methods.base import verify_context
    from audit.pipeline.types import ClaimDraft, EvidenceHit, Passage

    def item(text: str, passage: str, pid: str):
        return ClaimDraft("c1", text, (0, len(text))), [EvidenceHit(Passage(pid, passage), 0.9)]

    swapped = item("Edvard Moser described hippocampal place cells in 1971.", HIPPOCAMPUS, "p1")
    unrelated = item(
        "The harbour authority raised berth fees in 2019.",
        "Tulips are grown widely in the Netherlands.",
        "p2",
    )
    alone = run_methods([swapped], verify_context(binding_thresholds()))[0]
    batch = run_methods([swapped, unrelated], verify_context(binding_thresholds()))
    assert alone.label != "SUPPORTED"
    assert batch[0].label == alone.label
    structure = next(m for m in batch[0].methods if m.method == "structure")
    assert structure.details["binding"] == "read"
    assert batch[1].label != "SUPPORTED"


def test_only_evidence_sentences_that_share_a_content_word_with_the_claim_are_parsed():
    claim = "Edvard Moser discovered grid cells."
    related = "The Mosers discovered grid cells in the entorhinal cortex."
    unrelated = ["The committee approved the budget on Tuesday.", "Rainfall was heavy in the north."]
    assert binding.to_parse(claim, [unrelated[0], related, unrelated[1]]) == [related]
    binding.PARSES.clear()
    before = binding.PARSES.parsed
    binding.prefetch([(claim, [("p1", " ".join([unrelated[0], related, unrelated[1]]))])])
    assert binding.PARSES.parsed - before == 2  # the claim and the related sentence


def test_a_near_synonym_in_a_sentence_read_on_its_words_alone_still_states_the_claims_word(embedder):
    from audit.constants import BINDING_UNSTATED_MAX_COS

    claim = "The physicians approved the budget."
    shared, unrelated = "The budget was approved on Tuesday.", "Several doctors attended the meeting."
    assert binding.to_parse(claim, [shared, unrelated]) == [shared]
    unstated = unstated_content(claim, [shared, unrelated], embedder.encode, min_cos=BINDING_UNSTATED_MAX_COS)
    assert "physicians" not in [u.word for u in unstated]
    alone = unstated_content(claim, [shared], embedder.encode, min_cos=BINDING_UNSTATED_MAX_COS)
    assert "physicians" in [u.word for u in alone]


def test_a_context_without_the_binding_runs_the_rules_alone_for_the_benchs_comparison(embedder):
    claim = "Edvard Moser described hippocampal place cells in 1971."
    result, parsed = _structure_results(claim, HIPPOCAMPUS, 0.99, binding_on=False)
    assert parsed == 0 and not result.details["unbound"]
    _, parsed_with = _structure_results(
        claim, HIPPOCAMPUS, 0.99
    )  # the switch is the context's, not the process's
    assert parsed_with > 0


@pytest.fixture
def recording_encode(embedder):
    """The real encoder, with every call it gets recorded in ``recording_encode.calls``."""

    def encode(texts):
        encode.calls.append(list(texts))
        return embedder.encode(texts)

    encode.calls = []
    return encode


def test_the_binding_embeds_no_phrase_when_nothing_could_be_bound_otherwise(recording_encode):
    encode, calls = recording_encode, recording_encode.calls
    report = _report("John O'Keefe described place cells in 1971.", HIPPOCAMPUS, encode)
    assert not report.unbound and not report.contradicted
    assert calls == []
    swapped = _report("Edvard Moser described hippocampal place cells in 1971.", HIPPOCAMPUS, encode)
    assert swapped.unbound and calls  # a possible mismatch is read with the vectors, as before


def test_near_synonym_vectors_are_read_only_when_the_unstated_words_could_decide(recording_encode):
    encode, calls = recording_encode, recording_encode.calls
    # one unstated word ("quickly") cannot reach BINDING_UNSTATED_OTHER: no vectors, no finding
    report = _report("John O'Keefe quickly described place cells in 1971.", HIPPOCAMPUS, encode)
    assert not report.unbound and calls == []


def _report(claim, passage, encode):
    from types import SimpleNamespace

    report = SimpleNamespace(findings=[], contradicted=False, unbound=False)
    binding.apply(report, claim, [("p1", passage)], encode, finding=lambda *a: a)
    return report


def test_a_cached_parse_keeps_its_tags_and_heads_but_not_the_parsers_shared_layer():
    text = "The committee approved three new rules for the northern district in 2024."
    binding.clear_caches()
    (doc,) = binding.parse([text])
    assert doc.tensor.size == 0
    assert [t.dep_ for t in doc] == [t.dep_ for t in binding.get_parser()(text)]
    assert [t.head.i for t in doc] == [t.head.i for t in binding.get_parser()(text)]
    assert binding.parse([text])[0] is doc  # the cached one


def test_the_negation_checks_parses_of_an_answer_are_one_batched_pass(embedder, monkeypatch):
    from audit.pipeline.methods.base import record_results, verify_context
    from audit.pipeline.methods.structure import StructureMethod
    from audit.pipeline.types import ClaimDraft, EvidenceHit, MethodResult, Passage

    passage = (
        "The clinic does not open on Sundays. The pharmacy has not moved to the high street. "
        "Refunds are not paid in cash."
    )
    texts = [
        "The clinic opens on Sundays.",
        "The pharmacy moved to the high street.",
        "Refunds are paid in cash.",
    ]
    claims = [ClaimDraft(f"c{k}", t, (0, len(t))) for k, t in enumerate(texts)]
    items = [(c, [EvidenceHit(Passage("p1", passage), 0.9)]) for c in claims]
    ctx = verify_context(binding_thresholds())
    # below SUPPORTED already: the role binding itself has nothing to read, only the negation check
    record_results(ctx, "entailment", claims, [MethodResult("entailment", score=0.1) for _ in claims])
    parser = binding.get_parser()
    calls: list[int] = []
    real_pipe = parser.pipe

    def counting_pipe(batch, **kwargs):
        batch = list(batch)
        calls.append(len(batch))
        return real_pipe(batch, **kwargs)

    monkeypatch.setattr(parser, "pipe", counting_pipe)
    binding.PARSES.clear()
    results = StructureMethod().verify_many(items, ctx)
    assert calls == [6]  # the three claims and the three sentences, each sharing words with one claim
    assert [r.verdict for r in results] == ["contradicted"] * 3  # each negation read on its predicate

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

"""The hand-written contradiction cases of the pipeline-quality brief (issue 3), end to end through
``verify_claim``: negation, opposite predicates, a substituted entity and numbers inside a range."""

from __future__ import annotations

import pytest

from audit.pipeline import verify_claim
from audit.pipeline.types import Passage

ASPIRIN = (
    "Aspirin irreversibly inhibits cyclooxygenase-1 and -2 by acetylating a serine residue in the "
    "active site."
)
LOCKOUT = "For security, the account is locked after five failed sign-in attempts within 15 minutes."
DOSING = "Answers about medication dosing must be reviewed by a licensed clinician before they are sent to a patient."
PARKINSON = (
    "In Parkinson's disease, dopamine neurons of the substantia nigra degenerate. Motor symptoms usually "
    "appear after about 60 to 80 percent of these neurons have been lost."
)
CASES = [
    (
        "Level 3 compliance leads have 2 business days.",
        "Level 3 compliance leads have 1 business day to arbitrate disputes and authorize publication or suppression.",
        "REFUTED",
    ),
    (
        "He also lost the ability to learn new motor skills.",
        "Afterwards he could not form new long-term declarative memories, although his working memory and his "
        "ability to learn new motor skills were preserved.",
        "REFUTED",
    ),
    (
        "Records tied to an open escalation case are purged immediately.",
        "Records that are tied to an open escalation case must not be purged until the case is resolved.",
        "REFUTED",
    ),
    (
        "LTP does not require NMDA receptor activation.",
        "LTP at the Schaffer collateral synapses of the hippocampal CA1 region is dependent on NMDA receptor "
        "activation.",
        "REFUTED",
    ),
    (
        "LTP requires NMDA receptor activation.",
        "LTP at the Schaffer collateral synapses of the hippocampal CA1 region is dependent on NMDA receptor "
        "activation.",
        "SUPPORTED",
    ),
    ("The ratio was 9 percent.", "The ratio was 4.5 percent in the treated group.", "REFUTED"),
    (
        "LTD is induced by high-frequency stimulation.",
        "Long-term depression (LTD) is the opposite process: low-frequency stimulation at about 1 Hz for 10 to 15 "
        "minutes weakens synapses.",
        "REFUTED",
    ),
    (
        "Place cells were described by John O'Keefe in 1971.",
        "Place cells in the hippocampus fire when an animal occupies a particular location; John O'Keefe described "
        "them in 1971.",
        "SUPPORTED",
    ),
    (
        "The hippocampus contains about 40 million neurons per hemisphere.",
        "The adult human hippocampus contains roughly 40 million neurons in each hemisphere.",
        "SUPPORTED",
    ),
    (
        "Dopamine neurons increase their firing when a predicted reward is omitted.",
        "Dopamine neurons fire more than usual after an unexpected reward and pause when a predicted reward is "
        "omitted.",
        "REFUTED",
    ),
    (
        "Grid cells were discovered in the amygdala.",
        "May-Britt Moser and Edvard Moser discovered grid cells in the entorhinal cortex.",
        "REFUTED",
    ),
    # issue 14: a negating prefix, numbers written as words, an obligation's unstated specifics, a range
    ("Aspirin reversibly inhibits cyclooxygenase-1.", ASPIRIN, "REFUTED"),
    ("Aspirin irreversibly inhibits cyclooxygenase-1.", ASPIRIN, "SUPPORTED"),
    ("The account is locked after three failed sign-in attempts.", LOCKOUT, "REFUTED"),
    ("The account is locked after five failed sign-in attempts.", LOCKOUT, "SUPPORTED"),
    ("The account is locked after 5 failed sign-in attempts.", LOCKOUT, "SUPPORTED"),
    ("Every such answer must also be approved by two pharmacists.", DOSING, "NEI"),
    ("Answers about medication dosing must be reviewed by a licensed clinician.", DOSING, "SUPPORTED"),
    (
        "Parkinson's disease symptoms appear after about 70% of nigral dopamine neurons are lost.",
        PARKINSON,
        "SUPPORTED",
    ),
    ("Motor symptoms appear after 90% of these neurons have been lost.", PARKINSON, "REFUTED"),
]
RANGE_CLAIM = "Parkinson's disease symptoms appear after about 70% of nigral dopamine neurons are lost."
RANGE_EVIDENCE = "Motor symptoms usually appear after about 60 to 80 percent of these neurons have been lost."


@pytest.mark.parametrize("claim,evidence,gold", CASES, ids=[c[0][:40] for c in CASES])
def test_it_labels_the_hand_written_case_like_its_gold_label(embedder, claim, evidence, gold):
    assert verify_claim(claim, [Passage(id="p1", text=evidence, title="t")]).label == gold


def test_it_no_longer_refutes_a_value_inside_a_stated_range(embedder):
    # The numbers agree (70% lies in "60 to 80 percent"). The sentence never names Parkinson's disease
    # or nigral dopamine neurons ("these neurons"), so the judge and the missing-entity rule keep the
    # claim below SUPPORTED: NEI, where the brief's gold is SUPPORTED (see the report to the lead).
    v = verify_claim(RANGE_CLAIM, [Passage(id="p1", text=RANGE_EVIDENCE, title="t")])
    numeric = next(m for m in v.methods if m.method == "numeric")
    assert numeric.verdict == "supported" and numeric.details["items"][0]["match_type"] == "within_range"
    assert v.label != "REFUTED"
    named = verify_claim(
        RANGE_CLAIM,
        [
            Passage(
                id="p1",
                text="In Parkinson's disease, motor symptoms appear after "
                "about 60 to 80 percent of nigral dopamine neurons "
                "have been lost.",
                title="t",
            )
        ],
    )
    assert named.label == "SUPPORTED"


def test_it_says_which_rule_kept_an_obligation_below_supported(embedder):
    v = verify_claim(
        "Every such answer must also be approved by two pharmacists.",
        [Passage(id="p1", text=DOSING, title="t")],
    )
    structure = next(m for m in v.methods if m.method == "structure")
    assert structure.details["unstated_obligation"] and not structure.details["contradicted"]
    assert structure.details["findings"][0]["claim"] == "two pharmacists"


def test_it_reads_a_negating_prefix_only_before_a_real_base_word():
    from audit.pipeline.contradiction import prefix_opposite

    assert prefix_opposite("reversibly", "irreversibly") and prefix_opposite("inactive", "active")
    assert prefix_opposite("nontoxic", "toxic")
    assert not prefix_opposite("inform", "form") and not prefix_opposite("discover", "cover")


@pytest.mark.skipif(
    not __import__("audit.pipeline.learned_judge", fromlist=["ARTIFACT_PATH"]).ARTIFACT_PATH.is_file(),
    reason="the learned judge artefact is not built",
)
def test_the_learned_judge_at_its_calibrated_threshold_gets_every_hand_case_right(embedder):
    from audit.pipeline import verify_claims

    verdicts = verify_claims(
        [(c, [Passage(id="p1", text=e, title="t")]) for c, e, _ in CASES],
        thresholds={"judge": "learned", "audit_score_threshold": 0.5},
    )
    assert [v.label for v in verdicts] == [gold for _, _, gold in CASES]

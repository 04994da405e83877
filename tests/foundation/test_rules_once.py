"""Rules written once: the regulated-domain rule, the label decision and the label values."""

from __future__ import annotations

import numpy as np

from audit import constants
from audit.evaluation import bench_eval, nli_fit
from audit.models import Workspace
from audit.models.choices import Label as LabelChoices
from audit.pipeline.scoring import decide_label, decide_labels
from audit.pipeline.types import Label
from escalation import policy


def test_a_domain_is_regulated_whatever_its_case_and_no_domain_never_is():
    assert constants.is_regulated("Finance", ["finance"])
    assert constants.is_regulated("finance", ("FINANCE",))
    assert not constants.is_regulated("health", ["finance"])
    assert not constants.is_regulated("", ["finance"])
    assert not constants.is_regulated(None, None)


def test_the_workspace_and_the_review_policy_use_the_same_regulated_rule():
    workspace = Workspace(name="w", slug="w", regulated_domains=["Finance"])
    assert workspace.is_regulated("finance") and not workspace.is_regulated("health")
    reasons = policy.review_reasons(
        label=Label.SUPPORTED,
        confidence=0.99,
        domain="FINANCE",
        regulated_domains=workspace.regulated_domains,
        low_confidence_threshold=0.6,
    )
    assert reasons == ["regulated_domain"]


def test_the_model_choices_are_built_from_the_pipeline_labels():
    assert [value for value, _ in LabelChoices.choices] == [member.value for member in Label]
    assert LabelChoices.NEI.label == "Needs evidence"


def test_the_label_decision_supports_at_the_bar_refutes_at_its_bar_and_otherwise_needs_evidence():
    bars = {"supported_at": 0.7, "refuted_at": 0.5}
    assert decide_label(0.7, 0.9, **bars) is Label.SUPPORTED
    assert decide_label(0.49, 0.5, **bars) is Label.REFUTED
    assert decide_label(0.49, 0.49, **bars) is Label.NEI
    # in the weak band (P(supported) at weak_at or above) the judge's refutation makes no REFUTED:
    # the label never contradicts the P(supported) shown beside it
    assert decide_label(0.69, 0.99, **bars) is Label.NEI
    assert decide_label(0.69, 0.99, weak_at=0.7, **bars) is Label.REFUTED
    assert decide_label(0.9, 0.0, conflict=True, **bars) is Label.NEI
    assert decide_label(0.1, 0.0, forced_refutation=True, **bars) is Label.REFUTED
    assert decide_label(0.1, 0.9, refutation_blocked=True, **bars) is Label.NEI


def test_the_evaluation_code_labels_with_the_pipelines_decision():
    conf, pref = np.array([0.9, 0.2, 0.2]), np.array([0.9, 0.6, 0.1])
    expected = ["SUPPORTED", "REFUTED", "NEI"]
    assert decide_labels(conf, pref, supported_at=0.7, refuted_at=0.5) == expected
    assert nli_fit._labels(conf, pref, 0.7) == expected
    z = np.array([5.0, -5.0, -5.0])
    labels, _ = bench_eval.labels_from_scores(z, pref)
    assert labels == expected

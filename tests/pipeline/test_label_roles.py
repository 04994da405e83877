"""scoring.label_claim reads method results by the method's label_role, so the registry is the seam."""

from audit.constants import Thresholds
from audit.pipeline import scoring
from audit.pipeline.methods import REGISTRY
from audit.pipeline.methods.base import ROLE_STRUCTURE, ROLE_SUPPORT, VerificationMethod
from audit.pipeline.types import ClaimDraft, EvidenceHit, MethodResult, Passage

CLAIM = ClaimDraft("c1", "The annual fee is waived for students.", (0, 38))
HITS = [
    EvidenceHit(passage=Passage(id="p1", text="The annual fee is not waived for students."), relevance=0.9)
]


class _NegationCheck(VerificationMethod):
    name = "negation_check"
    label_role = ROLE_STRUCTURE


def test_a_new_contradiction_check_overrides_the_judge_through_its_role(monkeypatch):
    monkeypatch.setitem(REGISTRY, _NegationCheck.name, _NegationCheck())
    results = {
        "entailment": MethodResult("entailment", score=0.95, details={"p_refuted": 0.0}),
        "negation_check": MethodResult("negation_check", verdict="contradicted"),
    }
    verdict = scoring.label_claim(CLAIM, HITS, results, Thresholds())
    assert verdict.label == "REFUTED"


def test_a_method_without_a_role_leaves_the_label_to_the_others(monkeypatch):
    monkeypatch.setitem(
        REGISTRY, _NegationCheck.name, type("NoRole", (_NegationCheck,), {"label_role": ""})()
    )
    results = {
        "entailment": MethodResult("entailment", score=0.95, details={"p_refuted": 0.0}),
        "negation_check": MethodResult("negation_check", verdict="contradicted"),
    }
    assert scoring.label_claim(CLAIM, HITS, results, Thresholds()).label == "SUPPORTED"


def test_the_registered_methods_name_their_roles():
    assert REGISTRY["entailment"].label_role == ROLE_SUPPORT
    assert {m.label_role for m in REGISTRY.values()} >= {"support", "judge", "numeric", "structure"}

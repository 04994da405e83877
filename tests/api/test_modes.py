"""Mode resolution and the Audit-Local -> Audit-Web escalation rule (services, real database)."""

from __future__ import annotations

import pytest

from audit import constants, roles
from audit.errors import InvalidInput
from audit.models import Conversation, UserProfile
from audit.services.modes import mode_resolve
from audit.services.web_rule import web_escalation_reasons
from tests.api.conftest import build_answer


@pytest.fixture
def front_end(make_user):
    return make_user("fe", roles.SUBMITTER)


def test_it_takes_the_request_then_conversation_then_user_then_workspace_mode(workspace, front_end):
    workspace.default_mode = constants.MODE_AUDIT_LOCAL
    workspace.save(update_fields=["default_mode"])
    assert mode_resolve(workspace=workspace, user=front_end).source == "workspace"

    UserProfile.objects.filter(user=front_end).update(default_mode=constants.MODE_NORMAL)
    assert (
        mode_resolve(workspace=workspace, user=front_end).mode,
        mode_resolve(workspace=workspace, user=front_end).source,
    ) == ("normal", "user")

    Conversation.objects.create(workspace=workspace, external_id="c1", default_mode=constants.MODE_AUDIT_WEB)
    decision = mode_resolve(workspace=workspace, user=front_end, conversation_id="c1")
    assert (decision.mode, decision.source) == ("audit-web", "conversation")

    decision = mode_resolve(workspace=workspace, user=front_end, conversation_id="c1", requested="normal")
    assert (decision.mode, decision.source) == ("normal", "request")


def test_it_raises_normal_to_audit_local_for_a_regulated_domain_or_an_auto_audit_role(
    workspace, front_end, make_user
):
    workspace.regulated_domains = ["finance"]
    workspace.auto_audit_roles = [roles.L1_ANALYST]
    workspace.save(update_fields=["regulated_domains", "auto_audit_roles"])
    analyst = make_user("ann", roles.L1_ANALYST)

    by_domain = mode_resolve(workspace=workspace, user=front_end, requested="normal", domain="Finance")
    by_role = mode_resolve(workspace=workspace, user=analyst, requested="normal")
    neither = mode_resolve(workspace=workspace, user=front_end, requested="normal", domain="general")
    web_stays = mode_resolve(workspace=workspace, user=analyst, requested="audit-web", domain="finance")

    assert (by_domain.mode, by_domain.triggers) == ("audit-local", ("domain:finance",))
    assert (by_role.mode, by_role.triggers) == ("audit-local", (f"role:{roles.L1_ANALYST}",))
    assert neither.mode == "normal"
    assert web_stays.mode == "audit-web"  # a trigger never lowers a mode


def test_it_refuses_an_unknown_mode_naming_the_field(workspace):
    with pytest.raises(InvalidInput) as error:
        mode_resolve(workspace=workspace, requested="turbo")

    assert error.value.field == "mode"


def test_it_escalates_to_web_on_each_condition_of_spec_4_3(workspace):
    answer, claims = build_answer(
        workspace,
        specs=(
            ("SUPPORTED", "supported", 0.91, "Fine", "fine"),
            ("SUPPORTED", "supported", 0.85, "Stale", "stale"),
            ("SUPPORTED", "supported", 0.90, "Unstable", "unstable"),
            ("NEI", "weak", 0.79, "Weak", "weak"),
            ("SUPPORTED", "supported", 0.95, "Orphan", "orphan"),
        ),
    )
    claims[1].risk_flags = [constants.WEB_STALE_FLAG]
    claims[1].save(update_fields=["risk_flags"])
    claims[2].metrics = {**claims[2].metrics, "selfcheck_disagreement": 0.41}
    claims[2].save(update_fields=["metrics"])
    claims[4].evidence.all().delete()

    reasons = web_escalation_reasons(
        answer.claims.prefetch_related("evidence"), constants.Thresholds()
    ).reasons

    assert reasons == {
        "c2": ["stale_source"],
        "c3": ["selfcheck_disagreement"],
        "c4": ["audit_score_below_threshold"],
        "c5": ["no_local_support"],
    }


def test_it_applies_the_workspace_thresholds_to_the_web_escalation(workspace):
    answer, _ = build_answer(workspace, specs=(("NEI", "weak", 0.79, "Weak", "weak"),))

    lenient = constants.Thresholds().updated({"audit_score_threshold": 0.75})

    assert web_escalation_reasons(answer.claims.prefetch_related("evidence"), lenient).reasons == {}


def test_a_claim_too_long_to_verify_is_not_sent_to_the_web(workspace):
    answer, _ = build_answer(
        workspace, specs=(("NEI", "not_found", 0.0, "Long", "long"), ("NEI", "weak", 0.3, "Weak", "weak"))
    )
    answer.claims.filter(claim_id="c1").update(risk_flags=[constants.TOO_LONG_FLAG])

    reasons = web_escalation_reasons(
        answer.claims.prefetch_related("evidence"), constants.Thresholds()
    ).reasons

    assert list(reasons) == ["c2"]

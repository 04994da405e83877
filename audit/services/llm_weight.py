"""The LLM judge's weight and margin, fitted for a workspace's endpoint and model: stored as a
version, put in force, rolled back (docs/LLM.md#fitting-the-llms-weight).

``llm_weight_store`` keeps a fit (``audit.evaluation.llm_fit``) as the active ``LLMWeightVersion``
of its (workspace, endpoint, model), the one before becoming inactive; ``llm_weight_activate`` puts
an earlier version, or none (unfitted: the LLM moves no verdict), back in force. Each change is an
audit event (``llm_weight.activated``, ``llm_weight.rolled_back``). ``llm_setup_for`` reads the
version in force when it builds a run's client.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models import Max

from audit.errors import InvalidInput
from audit.models import LLMWeightVersion, Workspace
from audit.selectors.llm import llm_weight_in_force, llm_weight_versions, normalised_endpoint
from audit.services.events import Actor, event_record

Status = LLMWeightVersion.Status


def _summary(version: LLMWeightVersion | None) -> dict[str, Any] | None:
    if version is None:
        return None
    return {"version": version.number, "weight": version.weight, "margin": version.margin}


@transaction.atomic
def llm_weight_store(
    *,
    workspace: Workspace,
    endpoint: str,
    model: str,
    judge_prompt: str,
    weight: float,
    margin: float,
    metrics: dict[str, Any],
    n_claims: int,
    llm_calls: int,
    actor_label: str = "",
) -> LLMWeightVersion:
    """Store a fit and put it in force for its endpoint and model (the previous one becomes inactive)."""
    workspace = Workspace.objects.select_for_update().get(pk=workspace.pk)  # version numbers in order
    endpoint = normalised_endpoint(endpoint)
    before = llm_weight_in_force(workspace=workspace, endpoint=endpoint, model=model)
    number = (llm_weight_versions(workspace=workspace).aggregate(m=Max("number"))["m"] or 0) + 1
    llm_weight_versions(workspace=workspace, endpoint=endpoint, model=model).filter(
        status=Status.ACTIVE
    ).update(status=Status.INACTIVE)
    version = LLMWeightVersion(
        workspace=workspace,
        number=number,
        status=Status.ACTIVE,
        endpoint=endpoint,
        model=model,
        judge_prompt=judge_prompt,
        weight=weight,
        margin=margin,
        metrics=metrics,
        n_claims=n_claims,
        llm_calls=llm_calls,
        fitted_by=actor_label or "system",
    )
    version.full_clean()
    version.save()
    event_record(
        action="llm_weight.activated",
        obj=version,
        actor_label=actor_label,
        workspace=workspace,
        details={
            "endpoint": endpoint,
            "model": model,
            "from": _summary(before),
            "to": _summary(version),
            "claims": n_claims,
            "held_out": metrics.get("held_out", {}),
        },
    )
    return version


@transaction.atomic
def llm_weight_activate(
    *,
    workspace: Workspace,
    endpoint: str,
    model: str,
    number: int | None,
    actor: Actor = None,
    actor_label: str = "",
) -> LLMWeightVersion | None:
    """Put LLM weight ``number`` of this endpoint and model back in force, or none (``None``: unfitted).

    Refused (``InvalidInput`` naming ``version``) for a version the workspace does not have for that
    endpoint and model. Writes ``llm_weight.rolled_back`` with the version before and after."""
    workspace = Workspace.objects.select_for_update().get(pk=workspace.pk)
    endpoint = normalised_endpoint(endpoint)
    mine = llm_weight_versions(workspace=workspace, endpoint=endpoint, model=model)
    target = None
    if number is not None:
        target = mine.filter(number=number).first()
        if target is None:
            raise InvalidInput(
                "version", f"this workspace has no LLM weight v{number} for {model} at {endpoint}."
            )
    before = mine.filter(status=Status.ACTIVE).first()
    if (before.number if before else None) == number:
        return target
    mine.filter(status=Status.ACTIVE).update(status=Status.INACTIVE)
    if target is not None:
        mine.filter(pk=target.pk).update(status=Status.ACTIVE)
        target.refresh_from_db()
    event_record(
        action="llm_weight.rolled_back",
        obj=workspace,
        actor=actor,
        actor_label=actor_label,
        workspace=workspace,
        details={"endpoint": endpoint, "model": model, "from": _summary(before), "to": _summary(target)},
    )
    return target

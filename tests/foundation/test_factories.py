"""The test factories build rows that hang together the way the services would store them."""

from __future__ import annotations

import numpy as np
import pytest

from audit import roles
from tests.factories import (
    ChunkFactory,
    ClaimFactory,
    EvidenceFactory,
    ReviewCaseFactory,
    UserFactory,
    WorkspaceFactory,
    sha,
)

pytestmark = pytest.mark.django_db


def test_a_user_gets_the_role_group_the_password_and_a_profile_in_the_workspace():
    workspace = WorkspaceFactory()
    user = UserFactory(username="ann", role=roles.L2_EXPERT, workspace=workspace)
    assert user.check_password("pw-ann") and roles.review_tier(user) == 2
    assert user.theoria_profile.workspace == workspace


def test_rows_built_alone_share_one_workspace_through_their_parents():
    evidence = EvidenceFactory()
    case = ReviewCaseFactory(
        claim=ClaimFactory(answer=evidence.claim.answer, label="REFUTED", confidence=0.1)
    )
    assert case.workspace == evidence.claim.answer.workspace
    assert evidence.hash == sha(evidence.snippet)


def test_a_review_case_is_opened_by_the_escalation_service_with_its_event_and_clock():
    case = ReviewCaseFactory()
    assert case.ticket.startswith("COMP-ESC-") and case.tier == 1 and case.due_at is not None
    assert list(case.events.values_list("kind", flat=True)) == ["opened"]


def test_a_chunk_carries_a_unit_embedding_of_the_model_dimension():
    chunk = ChunkFactory(text="Twelve words.")
    vector = chunk.vector()
    assert np.isclose(np.linalg.norm(vector), 1.0) and chunk.end_offset == len("Twelve words.")

"""factory_boy factories for the rows tests need: workspaces, users by role, knowledge-base
documents and chunks, answers, claims, evidence, verification runs and review cases.

Related rows come through ``SubFactory`` so they stay consistent: a claim built alone gets an
answer, and that answer a workspace. Pass ``workspace=`` (usually the ``workspace`` fixture, the
default workspace) to keep rows in one tenant. Review cases are opened through
``escalation.services.case_open``, as the intake opens them, never written by hand.

    claim = ClaimFactory(answer__workspace=workspace, label="REFUTED", confidence=0.1)
    case = ReviewCaseFactory(claim=claim)
    lead = UserFactory(username="lead1", role=roles.L3_LEAD, workspace=workspace)
"""

from __future__ import annotations

import hashlib

import factory
import numpy as np
from django.conf import settings
from django.utils import timezone
from factory.django import DjangoModelFactory

from audit import constants


def sha(text: str) -> str:
    """Return the content hash as the project stores it ("sha256:<hex>")."""
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


class WorkspaceFactory(DjangoModelFactory):
    class Meta:
        model = "audit.Workspace"
        django_get_or_create = ("slug",)

    name = factory.Sequence(lambda n: f"Workspace {n}")
    slug = factory.Sequence(lambda n: f"workspace-{n}")


class UserFactory(DjangoModelFactory):
    """A user whose password is ``pw-<username>``, in the role group ``role`` (optional), with a
    profile in ``workspace`` (the default workspace when not given)."""

    class Meta:
        model = settings.AUTH_USER_MODEL
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"user{n}")
    password = factory.LazyAttribute(lambda user: f"pw-{user.username}")

    @classmethod
    def _create(cls, model_class, *args, **kwargs):
        return model_class.objects.create_user(*args, **kwargs)  # hashes the password

    @factory.post_generation
    def role(user, create, extracted, **kwargs):
        if create and extracted:
            from django.contrib.auth.models import Group

            user.groups.add(Group.objects.get_or_create(name=extracted)[0])  # flushed by transactional tests

    @factory.post_generation
    def workspace(user, create, extracted, **kwargs):
        if create:
            from audit.models import UserProfile
            from audit.services.workspaces import workspace_get_default

            UserProfile.objects.create(user=user, workspace=extracted or workspace_get_default())


class DocumentFactory(DjangoModelFactory):
    class Meta:
        model = "audit.Document"

    workspace = factory.SubFactory(WorkspaceFactory)
    title = factory.Sequence(lambda n: f"Document {n}")
    uri = factory.Sequence(lambda n: f"kb://document-{n}")
    domain = "general"
    content_hash = factory.LazyAttribute(lambda doc: sha(doc.uri))


def _unit_vector(ordinal: int) -> bytes:
    vector = np.zeros(constants.EMBEDDING_DIM, dtype="<f4")
    vector[ordinal % constants.EMBEDDING_DIM] = 1.0
    return vector.tobytes()


class ChunkFactory(DjangoModelFactory):
    """A chunk with a unit embedding (not the model's: use the ingestion service for searchable text)."""

    class Meta:
        model = "audit.Chunk"

    document = factory.SubFactory(DocumentFactory)
    ordinal = factory.Sequence(lambda n: n)
    text = factory.Sequence(lambda n: f"Passage number {n} of the document.")
    start_offset = 0
    end_offset = factory.LazyAttribute(lambda chunk: chunk.start_offset + len(chunk.text))
    content_hash = factory.LazyAttribute(lambda chunk: sha(chunk.text))
    embedding = factory.LazyAttribute(lambda chunk: _unit_vector(chunk.ordinal))


class AnswerFactory(DjangoModelFactory):
    class Meta:
        model = "audit.Answer"

    workspace = factory.SubFactory(WorkspaceFactory)
    query = "What does the policy say?"
    # each answer its own text: two answers with the same query and text are audits of the same answer
    # (their doubted claims share a case: escalation.services.cases_open_for_answer)
    text = factory.Sequence(lambda n: f"An answer ({n + 1}).")
    original_text = factory.SelfAttribute("text")
    mode = constants.MODE_AUDIT_LOCAL


class ClaimFactory(DjangoModelFactory):
    """A claim as the audit stores it; ``machine_label`` follows ``label`` unless given."""

    class Meta:
        model = "audit.Claim"

    answer = factory.SubFactory(AnswerFactory)
    claim_id = factory.Sequence(lambda n: f"c{n + 1}")
    text = factory.Sequence(lambda n: f"Claim number {n + 1} of the answer.")
    label = "NEI"
    machine_label = factory.SelfAttribute("label")
    confidence = 0.3
    importance = constants.IMPORTANCE_MATERIAL


class EvidenceFactory(DjangoModelFactory):
    class Meta:
        model = "audit.Evidence"

    claim = factory.SubFactory(ClaimFactory)
    rank = 0
    source_type = "kb"
    source_id = factory.Sequence(lambda n: f"kb_chunk_{n + 1}")
    title = "Policy handbook"
    uri = "kb://policy"
    snippet = factory.Sequence(lambda n: f"Evidence passage {n + 1}.")
    hash = factory.LazyAttribute(lambda evidence: sha(evidence.snippet))
    relevance = 0.7
    entailment = 0.2


class VerificationRunFactory(DjangoModelFactory):
    class Meta:
        model = "audit.VerificationRun"

    answer = factory.SubFactory(AnswerFactory)
    mode = factory.SelfAttribute("answer.mode")
    started_at = factory.LazyFunction(timezone.now)


class ReviewCaseFactory(factory.Factory):
    """An open tier-1 case for ``claim`` (a refuted one by default), opened by the escalation service."""

    class Meta:
        model = "escalation.ReviewCase"

    claim = factory.SubFactory(ClaimFactory, label="REFUTED", confidence=0.1)
    actor = None
    reason = "test"

    @classmethod
    def _create(cls, model_class, claim, actor=None, reason=""):
        from escalation import services

        return services.case_open(claim=claim, actor=actor, reason=reason)

    @classmethod
    def _build(cls, model_class, *args, **kwargs):
        raise TypeError("a review case exists only once opened: use ReviewCaseFactory() (create)")


def in_regulated_domain(answer, domain: str = "compliance"):
    """Put ``answer`` in ``domain`` and make that domain one of its workspace's regulated ones."""
    workspace = answer.workspace
    workspace.regulated_domains = [domain]
    workspace.save(update_fields=["regulated_domains"])
    answer.domain = domain
    answer.save(update_fields=["domain"])
    return answer

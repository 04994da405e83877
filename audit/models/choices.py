"""Choice sets shared by several audit models, with the badge styling that goes with each."""

from django.db import models

from audit import constants
from audit.pipeline.types import Label as PipelineLabel


class Mode(models.TextChoices):
    NORMAL = constants.MODE_NORMAL, "Normal"
    AUDIT_LOCAL = constants.MODE_AUDIT_LOCAL, "Audit-Local"
    AUDIT_WEB = constants.MODE_AUDIT_WEB, "Audit-Web"


# FEVER label of a claim: the model's choices are built from the pipeline's enum (one set of values).
LABEL_NAMES = {
    PipelineLabel.SUPPORTED: "Supported",
    PipelineLabel.REFUTED: "Refuted",
    PipelineLabel.NEI: "Needs evidence",
}
Label = models.TextChoices(
    "Label", [(member.name, (member.value, LABEL_NAMES[member])) for member in PipelineLabel]
)


# Badge text and CSS modifier per label (text, not colour alone, carries the state).
LABEL_BADGES = {
    Label.SUPPORTED: ("Supported", "supported"),
    Label.REFUTED: ("Refuted", "refuted"),
    Label.NEI: ("Needs Evidence", "nei"),
}


class Verdict(models.TextChoices):
    """Finer verdict of docs/SPEC_NOTES.md#labels-verdicts-and-confidence"""

    SUPPORTED = "supported", "Supported"
    WEAK = "weak", "Weak"
    CONTRADICTED = "contradicted", "Contradicted"
    NOT_FOUND = "not_found", "Not found"


class ClaimType(models.TextChoices):
    FACT = "fact", "Fact"
    POLICY = "policy", "Policy"
    NUMERIC = "numeric", "Numeric"
    DEFINITION = "definition", "Definition"


class Importance(models.TextChoices):
    CRITICAL = "critical", "Critical"
    MATERIAL = "material", "Material"
    MINOR = "minor", "Minor"


class SourceType(models.TextChoices):
    KB = "kb", "Knowledge base"
    CONTEXT = "context", "Passage sent with the request"
    WEB = "web", "Web"


class RevisionStatus(models.TextChoices):
    """Where an answer's revision stands (blank: the revision loop changed nothing)."""

    PROPOSED = "proposed", "Proposed: awaiting approval"
    ACCEPTED = "accepted", "Accepted"
    REJECTED = "rejected", "Rejected"
    SERVED = "served", "Served at once"


class CitationOnlyRevisions(models.TextChoices):
    """Whether a held revision that changes only citations is served at once (``constants.CITATION_ONLY_REVISIONS``)."""

    HOLD = "hold", "Hold them like any revision"
    UNREGULATED = "unregulated", "Serve them without approval outside regulated domains"
    SERVE = "serve", "Serve them without approval everywhere"


class RevisionApproval(models.TextChoices):
    """A workspace's rule for revisions: served at once, or held for a person's approval."""

    SERVE = "serve", "Serve revisions at once"
    REGULATED = "regulated", "Hold revisions in regulated domains for approval"
    ALL = "all", "Hold every revision for approval"

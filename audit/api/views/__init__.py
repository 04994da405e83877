"""REST API of Theoria (mounted at /api/v1/): thin views that validate, call a service or a
selector, and serialize, one module per resource. Errors become responses in ``audit.api.exceptions`` only.

``audits`` (POST /audits), ``retrieval`` (POST /retrieve), ``records`` (answers, claims, evidence,
runs), ``exports`` (Claim Card exports), ``documents`` (the knowledge base), ``workspace_settings``
(modes and thresholds), ``learning`` (reviewed examples, calibration), ``tokens`` (auth token);
``common`` holds the pagination and the request checks."""

from __future__ import annotations

from audit.api.views.audits import AuditCreateApi, audit_request_from
from audit.api.views.documents import DocumentDetailApi, DocumentListApi
from audit.api.views.exports import ClaimCardDailyBundleApi, ClaimCardExportApi
from audit.api.views.jobs import BackgroundJobDetailApi
from audit.api.views.learning import (
    CalibrationApi,
    CalibrationRollbackApi,
    CalibrationRunApi,
    ReviewedExampleExportApi,
    ReviewedExampleListApi,
)
from audit.api.views.records import (
    AnswerDetailApi,
    AnswerListApi,
    AnswerRevisionDecisionApi,
    ClaimDetailApi,
    ClaimListApi,
    EvidenceListApi,
    RunDetailApi,
    RunListApi,
)
from audit.api.views.retrieval import RetrieveApi
from audit.api.views.tokens import TokenApi
from audit.api.views.workspace_settings import (
    ConversationModeApi,
    ModePreviewApi,
    ThresholdsApi,
    UserModeApi,
    WorkspaceSettingsApi,
)

__all__ = [
    "AnswerDetailApi",
    "AnswerListApi",
    "AnswerRevisionDecisionApi",
    "AuditCreateApi",
    "BackgroundJobDetailApi",
    "CalibrationApi",
    "CalibrationRollbackApi",
    "CalibrationRunApi",
    "ClaimCardDailyBundleApi",
    "ClaimCardExportApi",
    "ClaimDetailApi",
    "ClaimListApi",
    "ConversationModeApi",
    "DocumentDetailApi",
    "DocumentListApi",
    "EvidenceListApi",
    "ModePreviewApi",
    "RetrieveApi",
    "ReviewedExampleExportApi",
    "ReviewedExampleListApi",
    "RunDetailApi",
    "RunListApi",
    "ThresholdsApi",
    "TokenApi",
    "UserModeApi",
    "WorkspaceSettingsApi",
    "audit_request_from",
]

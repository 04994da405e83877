"""Every threshold, limit, SLA and weight of Theoria, once, with the seed value as default.

Plain Python (no Django): the pipeline, the services, the admin and the tests all import from
here. A workspace may override the verification thresholds in the database
(``Workspace.threshold_overrides``); :func:`thresholds_for` merges such overrides over these
defaults. Sources: docs/SPEC_NOTES.md (each value with its source in the design documents).

One module per topic; every name is re-exported here, so ``from audit.constants import NAME`` and
``constants.NAME`` read the one definition:

- ``operations``: Operating modes, retention and freshness, and the nightly batch auditor.
- ``ingestion``: Knowledge-base ingestion (chunking, embedding, file limits) and the limits on JSON from users.
- ``verification``: The verification pipeline's defaults: labels, confidence, claims per answer, numeric checks.
- ``judge``: The judge: structural contradiction checks, role binding, the NLI reader, strictness and the cascade.
- ``depths``: Generation modes, verification depth profiles, structured answers, the async LLM step and the RAG score.
- ``llm``: The LLM-backed methods: token caps, budgets, the breaker and the LLM judge's weight.
- ``revision``: The revision loop.
- ``web``: Audit-Web: verification against allow-listed web sources.
- ``escalation``: Human escalation: SLA clocks per tier, business calendar, risk score, notifications.
- ``pages``: The analyst pages and the dashboard.
- ``learning``: Learning from reviewers: calibration, agreement and drift.
- ``thresholds``: A workspace's verification thresholds (the defaults above, with its overrides) and the ranges a workspace may set.

May import: only its own topic modules and the standard library (no Django, nothing else of the
project): everything else imports it.
"""

from audit.constants.depths import *  # noqa: F403
from audit.constants.escalation import *  # noqa: F403
from audit.constants.ingestion import *  # noqa: F403
from audit.constants.judge import *  # noqa: F403
from audit.constants.learning import *  # noqa: F403
from audit.constants.llm import *  # noqa: F403
from audit.constants.operations import *  # noqa: F403
from audit.constants.pages import *  # noqa: F403
from audit.constants.revision import *  # noqa: F403
from audit.constants.thresholds import *  # noqa: F403
from audit.constants.verification import *  # noqa: F403
from audit.constants.web import *  # noqa: F403

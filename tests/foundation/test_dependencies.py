"""The direction of the dependencies between the apps (docs/ARCHITECTURE.md), read from the source."""

from __future__ import annotations

import ast
from pathlib import Path

from audit import hooks

ROOT = Path(__file__).resolve().parents[2]

# What escalation may import of audit: the selectors facade, the public services and hooks, and
# the shared foundations; audit/pipeline is plain Python any app may use.
AUDIT_PUBLIC = (
    "audit.selectors.facade",
    "audit.services.claims",
    "audit.services.events",
    "audit.services.reviewed_examples",
    "audit.hooks",
    "audit.constants",
    "audit.roles",
    "audit.errors",
    "audit.filters",
    "audit.admin_events",
    "audit.presentation",
    "audit.pipeline",
)

# The places audit still reads escalation's rows to show them (pages, dashboard, demo data, admin);
# a new one is a design decision, not an accident: add it here and to docs/ARCHITECTURE.md.
AUDIT_READS_ESCALATION = {
    "audit/admin.py",
    "audit/views.py",
    "audit/selectors/claims.py",
    "audit/selectors/dashboard.py",
    "audit/services/demo_history.py",
    "audit/management/commands/screenshots.py",
    "audit/management/commands/evaluate_revision.py",
}


def _imports(path: Path) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names += [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
    return names


def _sources(app: str):
    for path in sorted((ROOT / app).rglob("*.py")):
        if "migrations" not in path.parts:
            yield path.relative_to(ROOT).as_posix(), _imports(path)


def _within(name: str, prefixes) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def test_escalation_imports_audit_only_through_its_facade_services_and_hooks():
    offending = {
        (path, name)
        for path, names in _sources("escalation")
        for name in names
        if _within(name, ("audit",)) and name != "audit" and not _within(name, AUDIT_PUBLIC)
    }
    assert offending == set()


def test_audit_opens_no_case_itself_and_reads_escalation_only_where_listed():
    importers = {
        path for path, names in _sources("audit") for name in names if _within(name, ("escalation",))
    }
    assert importers <= AUDIT_READS_ESCALATION
    services = {
        name for _, names in _sources("audit") for name in names if name.startswith("escalation.services")
    }
    assert services <= {"escalation.services", "escalation.services.RELABEL_DECISIONS"}


def test_escalation_registers_its_receivers_when_the_apps_are_ready():
    from escalation import selectors, services

    assert services.cases_open_for_answer in hooks._answer_intake.receivers
    assert services.curation_items_open_for_documents in hooks._documents_flagged.receivers
    assert selectors.claim_escalations in hooks._claim_escalations.receivers
    assert selectors.escalation_state_q in hooks._claim_escalation_filter.receivers


def test_a_hook_calls_each_receiver_once_in_the_order_they_registered():
    hook = hooks.Hook("example")
    calls = []
    first = hook.register(lambda **kw: calls.append(("first", kw)) or 1)
    hook.register(lambda **kw: calls.append(("second", kw)) or 2)
    hook.register(first)
    assert hook.call(x=1) == [1, 2]
    assert calls == [("first", {"x": 1}), ("second", {"x": 1})]


def test_a_question_with_no_receiver_gets_an_empty_answer():
    assert hooks.Hook("nobody").call(state="open") == []
    assert hooks.documents_flagged(workspace=None, source="nightly", reasons={}) == []
    assert hooks.claim_escalations([]) == {}

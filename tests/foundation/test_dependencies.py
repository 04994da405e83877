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


# --- import loops inside the pipeline, function-level imports included -----------------------------

# The one loop left, in the LLM client (audit/pipeline/llm/), is being removed in parallel work;
# any other loop fails this test.
KNOWN_PIPELINE_LOOPS = [{"audit.pipeline.llm.client", "audit.pipeline.llm.endpoint"}]


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _pipeline_graph() -> dict[str, set[str]]:
    modules = {_module_name(p): p for p in (ROOT / "audit" / "pipeline").rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets = set()
        for imported in _imports(path):
            # "a.b.c" may be a module or a name in module "a.b": take the longest module it names
            while imported and imported not in modules:
                imported = imported.rpartition(".")[0]
            if imported and imported != name and not name.startswith(imported + "."):
                targets.add(imported)
        graph[name] = targets
    return graph


def _loops(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    loops: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                loops.append(component)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return loops


def test_the_loop_finder_finds_a_loop_through_a_function_level_import():
    assert _loops({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [{"a", "b", "c"}]


def test_no_pipeline_module_imports_one_that_imports_it_back():
    unknown = [loop for loop in _loops(_pipeline_graph()) if loop not in KNOWN_PIPELINE_LOOPS]
    assert unknown == []

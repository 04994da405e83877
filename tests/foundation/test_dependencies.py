"""The direction of the dependencies between the apps (docs/ARCHITECTURE.md), read from the source."""

from __future__ import annotations

import ast
import functools
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
    "audit.web.filters",
    "audit.admin.events",
    "audit.web.presentation",
    "audit.web.exports",
    "audit.api.throttles",
    "audit.pipeline",
)


@functools.cache
def _parsed(source: str) -> ast.Module:
    """A module's syntax tree, parsed once per distinct source text: the tests below read every
    file of the apps again and again (never changing the trees)."""
    return ast.parse(source)


def _imports(path: Path) -> list[str]:
    """Every module or name ``path`` imports, at any depth, and every model it looks up by name
    (``apps.get_model("app", "Model")`` or ``"app.Model"``, read as ``app.models.Model``)."""
    names = []
    for node in ast.walk(_parsed(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names += [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) in (
            "get_model",
            "import_module",
        ):
            args = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            if getattr(node.func, "attr", getattr(node.func, "id", "")) == "import_module":
                names += args[:1]
            elif len(args) == 2:
                names.append(f"{args[0]}.models.{args[1]}")
            elif len(args) == 1 and "." in args[0]:
                app, _, model = args[0].partition(".")
                names.append(f"{app}.models.{model}")
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
        if _within(name, ("audit",))
        and not _within(name, AUDIT_PUBLIC)
        and not any(public.startswith(name + ".") for public in AUDIT_PUBLIC)  # "from audit.web import x"
    }
    assert offending == set()


def test_audit_imports_nothing_of_escalation_not_even_a_model_by_name():
    reads = {
        (path, name) for path, names in _sources("audit") for name in names if _within(name, ("escalation",))
    }
    assert reads == set()


def test_neither_app_imports_the_layer_built_on_both():
    importers = {
        path
        for app in ("audit", "escalation")
        for path, names in _sources(app)
        for name in names
        if _within(name, ("showcase",))
    }
    assert importers == set()


def test_the_dependency_reader_sees_a_model_looked_up_by_name(tmp_path):
    source = tmp_path / "m.py"
    source.write_text(
        "from django.apps import apps\n"
        "def f():\n"
        "    apps.get_model('escalation', 'ReviewCase')\n"
        "    apps.get_model('escalation.CurationItem')\n"
    )
    assert {"escalation.models.ReviewCase", "escalation.models.CurationItem"} <= set(_imports(source))


def test_escalation_registers_its_receivers_when_the_apps_are_ready():
    from escalation import links, reporting, schedules, selectors, services

    assert services.answer_intake in hooks._answer_intake.receivers
    assert services.curation_items_open_for_documents in hooks._documents_flagged.receivers
    assert selectors.claim_escalations in hooks._claim_escalations.receivers
    assert selectors.escalation_state_q in hooks._claim_escalation_filter.receivers
    assert selectors.records_held_open in hooks._records_held.receivers
    assert reporting.cases_by_claim in hooks._claim_reviews.receivers
    assert reporting.my_work in hooks._user_work.receivers
    assert reporting.dashboard_summary in hooks._queue_summary.receivers
    assert reporting.correction_backlog in hooks._correction_backlog.receivers
    assert links.review_queue_url in hooks._review_queue_url.receivers
    assert links.kb_corrections_url in hooks._kb_corrections_url.receivers
    assert schedules.declared in hooks._schedules.receivers
    assert hooks.review_queue_url(status="paused") == "/escalations/?status=paused"
    assert {e["name"] for e in hooks.schedules()} == {e["name"] for e in schedules.SCHEDULES}
    assert [i.model.__name__ for i in hooks.workspace_admin_inlines()] == [
        "BusinessCalendar",
        "NotificationTarget",
    ]


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


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _pipeline_graph() -> dict[str, set[str]]:
    return _graph(("audit/pipeline",))


def _graph(folders) -> dict[str, set[str]]:
    """Module -> the project modules it imports (at any depth), over the modules under ``folders``."""
    modules = {
        _module_name(p): p
        for folder in folders
        for p in (ROOT / folder).rglob("*.py")
        if "migrations" not in p.parts
    }
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
    assert _loops(_pipeline_graph()) == []


def test_no_module_of_any_app_imports_one_that_imports_it_back():
    """The evaluation tools included (their CLI, fits and contrast suite once looped through a progress bar)."""
    assert _loops(_graph(("audit", "escalation", "showcase", "theoria"))) == []


# --- layers one way: the verification paths, the selectors, the string ties to escalation -----------

# The modules an audit runs through (the API, the pages, the services, the selectors, the pipeline,
# the tasks): none of them imports the evaluation tools (``audit/evaluation``: benchmarks, fits).
VERIFICATION_PATHS = (
    "audit.api",
    "audit.pipeline",
    "audit.selectors",
    "audit.services",
    "audit.tasks",
    "audit.web",
)


def _layer_reads(importers, imported) -> set[tuple[str, str]]:
    return {
        (path, name)
        for path, names in _sources("audit")
        if _within(_module_name(ROOT / path), importers)
        for name in names
        if _within(name, imported)
    }


def test_the_verification_paths_import_nothing_of_the_evaluation_tools():
    assert _layer_reads(VERIFICATION_PATHS, ("audit.evaluation",)) == set()


def test_no_selector_imports_a_service():
    assert _layer_reads(("audit.selectors",), ("audit.services",)) == set()


def test_the_layer_reader_sees_a_function_level_import_of_a_service(tmp_path):
    source = tmp_path / "m.py"
    source.write_text("def f():\n    from audit.services.workspaces import workspace_of\n")
    assert "audit.services.workspaces" in _imports(source)


def _escalation_url_names() -> set[str]:
    """The names of the URLs whose views escalation defines."""
    from django.urls import URLPattern, URLResolver, get_resolver

    names: set[str] = set()

    def visit(patterns) -> None:
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                visit(pattern.url_patterns)
            elif isinstance(pattern, URLPattern) and pattern.name:
                view = getattr(pattern.callback, "view_class", pattern.callback)
                if view.__module__.split(".")[0] == "escalation":
                    names.add(pattern.name)

    visit(get_resolver().url_patterns)
    return names


def _strings(path: Path) -> list[str]:
    """Every string constant of ``path`` but its docstrings."""
    tree = _parsed(path.read_text())
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
    ]


def _names_escalation(value: str, url_names: set[str]) -> bool:
    """A module of escalation (``escalation.schedules``), one of its URL names or its admin pages."""
    return value.startswith("escalation.") or value in url_names or "/admin/escalation/" in value


def test_audit_names_no_module_url_or_page_of_escalation_in_a_string():
    """What audit reaches of escalation at run time (its schedules, its pages' URLs) goes through
    ``audit.hooks``; an ``import_module("escalation...")`` or ``reverse("escalation-queue")`` fails here."""
    url_names = _escalation_url_names()
    assert "escalation-queue" in url_names  # the reader finds escalation's URLs
    named = {
        (path.relative_to(ROOT).as_posix(), value)
        for path in sorted((ROOT / "audit").rglob("*.py"))
        if "migrations" not in path.parts
        for value in _strings(path)
        if _names_escalation(value, url_names)
    }
    assert named == set()


def test_the_string_reader_sees_a_url_name_and_a_module_but_not_a_docstring(tmp_path):
    source = tmp_path / "m.py"
    source.write_text(
        '"""Links to escalation.schedules."""\n'
        "def f():\n"
        "    return reverse('escalation-queue'), import_module('escalation.schedules')\n"
    )
    found = [v for v in _strings(source) if _names_escalation(v, {"escalation-queue"})]
    assert found == ["escalation-queue", "escalation.schedules"]


# --- no module imports another module's private names -------------------------------------------

# The revision package's modules share private helpers among themselves; that package is being
# reworked in parallel (docs/ARCHITECTURE.md, "Habits"), and these are the only exceptions.
PRIVATE_IMPORTS_ALLOWED = {
    "audit/pipeline/revision/",
    "tests/revision/test_revision.py",
}
PROJECT = ("audit", "escalation", "showcase", "theoria", "tests")


def _private_imports() -> set[tuple[str, str]]:
    found = set()
    for app in PROJECT:
        for path in sorted((ROOT / app).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if "migrations" in path.parts or any(rel.startswith(a) for a in PRIVATE_IMPORTS_ALLOWED):
                continue
            for node in ast.walk(_parsed(path.read_text())):
                if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    if node.module.split(".")[0] not in PROJECT:
                        continue
                    for alias in node.names:
                        if alias.name.startswith("_") and not alias.name.startswith("__"):
                            found.add((rel, f"{node.module}.{alias.name}"))
    return found


def test_no_module_imports_another_modules_private_names():
    assert _private_imports() == set()


# --- the rooms of audit: packages by responsibility, each importing downwards only ----------------

PAGES = ("audit.web", "audit.admin", "audit.api")
BELOW_THE_PAGES = (
    "audit.services",
    "audit.selectors",
    "audit.pipeline",
    "audit.kb",
    "audit.security",
    "audit.models",
    "audit.tasks",
)
# What each inner room may not import (beyond the pages, which none of them may).
ROOM_LIMITS = {
    "audit.kb": ("audit.services", "audit.selectors", "audit.security"),
    "audit.security": ("audit.selectors", "audit.pipeline", "audit.kb"),
    "audit.pipeline": ("audit.services", "audit.selectors", "audit.kb", "audit.security", "audit.models"),
}


def _audit_modules():
    for path, names in _sources("audit"):
        yield _module_name(ROOT / path), names


def test_nothing_below_the_pages_imports_the_pages_the_admin_or_the_api():
    offending = {
        (module, name)
        for module, names in _audit_modules()
        if _within(module, BELOW_THE_PAGES)
        for name in names
        if _within(name, PAGES)
    }
    assert offending == set()


def test_each_inner_room_imports_only_what_its_docstring_allows():
    offending = {
        (module, name)
        for module, names in _audit_modules()
        for room, banned in ROOM_LIMITS.items()
        if _within(module, (room,))
        for name in names
        if _within(name, banned)
    }
    assert offending == set()


def test_the_pages_import_nothing_of_the_api():
    """The answer form and ``POST /api/v1/audits`` share the service's request and its checks
    (``audit_submit``), and the Claim Card (``audit.cards``): neither imports the other."""
    assert _layer_reads(("audit.web",), ("audit.api",)) == set()


def test_the_models_import_nothing_of_the_knowledge_base_search():
    """The vector column's type lives with the models (``audit.models.vector``); ``audit.kb`` builds on it."""
    assert _layer_reads(("audit.models",), ("audit.kb",)) == set()


def test_every_package_of_audit_says_what_it_holds_and_what_it_may_import():
    silent = [
        init.relative_to(ROOT).as_posix()
        for init in sorted((ROOT / "audit").glob("*/__init__.py"))
        if init.parent.name not in ("migrations", "templatetags", "management")
        and "may import" not in (ast.get_docstring(_parsed(init.read_text())) or "").lower()
    ]
    assert silent == []


def test_audit_keeps_no_loose_page_admin_search_or_security_module_at_its_top_level():
    loose = sorted(
        p.name
        for p in (ROOT / "audit").glob("*.py")
        if p.stem.startswith(("admin_", "kb_"))
        or p.stem
        in {"views", "forms", "filters", "charts", "presentation", "signin", "throttling", "middleware"}
    )
    assert loose == []

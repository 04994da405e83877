"""The structural counts docs/ARCHITECTURE.md cites, computed from the source tree: the doc explains,
this command counts.

    python -m tools.archfacts                                # every fact, one `name: value` a line
    python -m tools.archfacts --check docs/ARCHITECTURE.md   # one sentence per figure that differs
    python -m tools.archfacts --write docs/ARCHITECTURE.md   # rewrite the figures in place

``const.NAME`` is a fact too: the literal value the one module-level ``NAME`` of the apps is bound
to (``python -m tools.archfacts const.JSON_MAX_DEPTH``), so a document can quote a setting's seed.

A document cites a fact as ``<!--fact:NAME-->VALUE<!--/fact-->`` (one line) or, for a table, as
``<!--facts:NAME-->`` on a line of its own, the table, and ``<!--/facts-->``. ``--check`` exits 1
when a cited value is not the one the tree gives, or when a name is not a fact this command
prints; ``--write`` replaces every cited value with the tree's.

A figure that needs the code to run is a *measured* fact: its name starts with a prefix of
``MEASURED``, which names the test that measures it and checks it with ``check(path, measured)``;
this command leaves those figures to that test.

Everything is read with ``ast`` (and ``tomllib`` for pyproject.toml), nothing is imported or run,
except ruff for the complexity count (``ruff check --select C901``). Only the package roots are
named here; modules are found by walking them, so the counts follow modules that move.
"""

from __future__ import annotations

import argparse
import ast
import functools
import json
import re
import subprocess
import sys
import tomllib
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
APPS = ("audit", "escalation", "showcase", "theoria")  # the project's code, tests aside
TREE = (*APPS, "tests", "tools", "loadtest")  # everything ruff and the linters read
LONG_FUNCTION_LINES = 80  # as tests/foundation/test_function_size.py
LONGEST_SHOWN = 3
DOC = "docs/ARCHITECTURE.md"
# measured facts: the prefix -> the test that runs the code, measures them and checks the doc
MEASURED = {"walk.": "tests/api/test_request_walk.py"}

# names start lower case, so a document can show the convention itself (`<!--fact:NAME-->`)
FACT = re.compile(r"<!--fact:(?P<name>[a-z][\w.\-/]*)-->(?P<value>.*?)<!--/fact-->")
BLOCK = re.compile(r"<!--facts:(?P<name>[a-z][\w.\-/]*)-->\n(?P<value>.*?)\n?<!--/facts-->", re.DOTALL)
OPENED = re.compile(r"<!--facts?:[a-z]")  # every token, to find one the patterns above cannot read


@dataclass(frozen=True)
class Source:
    rel: str  # path from the repository root, with "/"
    module: str  # dotted name ("audit.selectors" for audit/selectors/__init__.py)
    tree: ast.Module
    lines: list[str]


def _module_name(rel: str) -> str:
    parts = rel.removesuffix(".py").split("/")
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@functools.cache
def _source(path: Path) -> Source:
    text = path.read_text()
    rel = path.relative_to(ROOT).as_posix()
    return Source(rel, _module_name(rel), ast.parse(text, filename=rel), text.splitlines())


def sources(roots: tuple[str, ...] = APPS) -> Iterator[Source]:
    """Every module under ``roots``, migrations left out, in path order."""
    for root in roots:
        for path in sorted((ROOT / root).rglob("*.py")):
            if "migrations" not in path.relative_to(ROOT).parts:
                yield _source(path)


def _within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def _inline(names: list[str]) -> str:
    return ", ".join(f"`{n}`" for n in names) if names else "none"


# --- layout -----------------------------------------------------------------------------------


def _packages() -> dict[str, int]:
    """Each package (a folder with ``__init__.py``) → the modules directly inside it."""
    counts = {}
    for root in APPS:
        for init in sorted((ROOT / root).rglob("__init__.py")):
            folder = init.parent
            if "migrations" in folder.relative_to(ROOT).parts:
                continue
            name = _module_name(folder.relative_to(ROOT).as_posix() + "/__init__.py")
            counts[name] = sum(1 for p in folder.glob("*.py") if p.name != "__init__.py")
    return counts


def layout_facts() -> dict[str, str]:
    packages = _packages()
    facts = {f"modules.{name}": str(n) for name, n in packages.items()}
    facts["packages"] = str(len(packages))
    return facts


def packages_table() -> str:
    rows = ["| package | modules directly inside |", "|---|---|"]
    rows += [f"| `{name}` | {n} |" for name, n in _packages().items() if n]  # not `management` alone
    return "\n".join(rows)


# --- types ------------------------------------------------------------------------------------


def _pyproject() -> dict[str, Any]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def mypy_pattern(pattern: str) -> re.Pattern[str]:
    """A ``[[tool.mypy.overrides]] module`` pattern: ``a.b`` exactly, ``a.b.*`` with its submodules."""
    if pattern.endswith(".*"):
        return re.compile(re.escape(pattern[:-2]).replace(r"\*", r"[^.]+") + r"(\..+)?")
    return re.compile(re.escape(pattern).replace(r"\*", r"[^.]+"))


def mypy_facts() -> dict[str, str]:
    config = _pyproject().get("tool", {}).get("mypy", {})
    roots = config.get("files", [])
    roots = [roots] if isinstance(roots, str) else roots
    exclude = config.get("exclude", [])
    exclude = [re.compile(e) for e in ([exclude] if isinstance(exclude, str) else exclude)]
    checked = set()
    for root in roots:
        path = ROOT / root
        for file in [path] if path.is_file() else sorted(path.rglob("*.py")):
            rel = file.relative_to(ROOT).as_posix()
            if not any(e.search(rel) for e in exclude):
                checked.add(_module_name(rel))
    exempt = [
        pattern
        for override in config.get("overrides", [])
        if override.get("ignore_errors")
        for pattern in ([override["module"]] if isinstance(override["module"], str) else override["module"])
    ]
    patterns = [mypy_pattern(p) for p in exempt]
    exempt_files = {m for m in checked if any(p.fullmatch(m) for p in patterns)}
    return {
        "mypy.roots": _inline(roots),
        "mypy.checked_files": str(len(checked)),
        "mypy.exempt_modules": str(len(exempt)),
        "mypy.exempt_files": str(len(exempt_files)),
        "mypy.strict_files": str(len(checked) - len(exempt_files)),
    }


# --- function size and complexity ---------------------------------------------------------------


def _long_functions() -> list[tuple[Source, ast.FunctionDef | ast.AsyncFunctionDef, int, bool]]:
    """(source, function, lines, has a ``# long:`` reason) for every function over the limit."""
    found = []
    for src in sources(APPS):
        for node in ast.walk(src.tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > LONG_FUNCTION_LINES:
                    first = min([node.lineno] + [d.lineno for d in node.decorator_list])
                    reason = first >= 2 and src.lines[first - 2].strip().startswith("# long:")
                    found.append((src, node, length, reason))
    return found


def function_facts() -> dict[str, str]:
    found = _long_functions()
    without = [src.module for src, _, _, reason in found if not reason]
    where = sorted({m.rpartition(".")[0] for m in without})
    longest = sorted(found, key=lambda f: (-f[2], f[1].name))[:LONGEST_SHOWN]
    return {
        "functions.over_limit": str(len(found)),
        "functions.over_limit_with_reason": str(sum(1 for *_, reason in found if reason)),
        "functions.over_limit_without_reason": str(len(without)),
        "functions.without_reason_in": _inline(where),
        "functions.longest": ", ".join(f"`{node.name}` {n}" for _, node, n, _ in longest),
    }


def _ruff_c901() -> list[dict[str, Any]]:
    """ruff's C901 findings over the tree, ``# noqa`` ignored so an exception still counts."""
    done = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--select", "C901", "--ignore-noqa", "--no-cache"]
        + ["--output-format", "json", "--exit-zero", "."],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    findings: list[dict[str, Any]] = json.loads(done.stdout)
    return findings


def complexity_facts() -> dict[str, str]:
    config = _pyproject().get("tool", {}).get("ruff", {}).get("lint", {})
    limit = config.get("mccabe", {}).get("max-complexity", 10)
    findings = _ruff_c901()
    excepted = sum(
        1
        for src in sources(TREE)
        for line in src.lines
        if (m := re.search(r"#\s*noqa:([^#]*)", line)) and "C901" in m.group(1)
    )
    in_apps = [f for f in findings if Path(f["filename"]).relative_to(ROOT).parts[0] in APPS]
    return {
        "complexity.limit": str(limit),
        "complexity.over_limit": str(len(findings)),
        "complexity.over_limit_in_apps": str(len(in_apps)),
        "complexity.noqa": str(excepted),
    }


# --- imports, layers and loops ------------------------------------------------------------------


def _function_level(tree: ast.Module) -> set[int]:
    """The ids of the import statements inside a function body, at any depth."""
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            inside |= {id(n) for n in ast.walk(node) if isinstance(n, (ast.Import, ast.ImportFrom))}
    return inside


def _function_level_imports(src: Source) -> int:
    """The statements inside a function of ``src`` that import one of the project's modules."""
    nested = _function_level(src.tree)
    count = 0
    for node in ast.walk(src.tree):
        if id(node) in nested:
            if isinstance(node, ast.ImportFrom):
                count += bool(node.level) or (node.module or "").split(".")[0] in APPS
            elif isinstance(node, ast.Import):
                count += any(a.name.split(".")[0] in APPS for a in node.names)
    return count


def _call_name(node: ast.Call) -> str:
    return getattr(node.func, "attr", getattr(node.func, "id", ""))


def _reads(src: Source) -> Iterator[tuple[str | None, list[str]]]:
    """(package imported from, names read) for each import statement of ``src`` at any depth
    (relative imports resolved), each ``import_module("a.b")`` and each model looked up by name
    (``apps.get_model("app", "Model")`` read as ``app.models.Model``)."""
    package = src.module if src.rel.endswith("__init__.py") else src.module.rpartition(".")[0]
    for node in ast.walk(src.tree):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parent + ([base] if base else []))
            yield base, [f"{base}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            yield None, [a.name for a in node.names]
        elif isinstance(node, ast.Call) and _call_name(node) in ("get_model", "import_module"):
            args = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            if _call_name(node) == "import_module":
                yield None, args[:1]
            elif len(args) == 2:
                yield None, [f"{args[0]}.models.{args[1]}"]
            elif len(args) == 1 and "." in args[0]:
                app, _, model = args[0].partition(".")
                yield None, [f"{app}.models.{model}"]


def imported_names(src: Source) -> list[str]:
    """Every module or name ``src`` reads (see ``_reads``), packages imported from included."""
    return [n for base, names in _reads(src) for n in ([base] if base else []) + names]


@functools.cache
def _modules() -> dict[str, Source]:
    return {src.module: src for src in sources(APPS)}


def _resolve(name: str, modules: dict[str, Source]) -> str:
    """The longest module ``name`` names ("a.b.f" is function f of module "a.b")."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name


def import_graph() -> dict[str, set[str]]:
    """Module → the project modules it imports, at any depth. ``from p import m`` is an edge to the
    module ``p.m`` where ``m`` is a module, else to ``p``; a module's own packages are left out."""
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for name, src in modules.items():
        targets = set()
        for base, names in _reads(src):
            for read in names:
                targets.add(read if read in modules else _resolve(base or read, modules))
        graph[name] = {t for t in targets if t and t != name and not _within(name, t)}
    return graph


def _reach(graph: dict[str, set[str]], start: str) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        for nxt in graph.get(todo.pop(), ()):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def loops(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import loops: each set of two or more modules that all reach one another, sorted."""
    reach = {node: _reach(graph, node) for node in graph}
    found = {
        tuple(sorted(other for other in reach[node] if node in reach.get(other, ())))
        for node in graph
        if node in reach[node]
    }
    return sorted(list(loop) for loop in found if len(loop) > 1)


def _importers(of: str, among: Callable[[str], bool]) -> list[str]:
    return sorted(
        src.module
        for src in _modules().values()
        if among(src.module) and any(_within(n, of) for n in imported_names(src))
    )


def _escalation_names() -> set[str]:
    """The names by which code can reach escalation without importing it: its modules (the app's
    bare name aside, a common word) and its URL names (``path(..., name="...")`` in its url modules)."""
    names = {m for m in _modules() if m.startswith("escalation.")}
    for src in sources(("escalation",)):
        if src.rel.endswith("urls.py"):
            for node in ast.walk(src.tree):
                if isinstance(node, ast.Call) and _call_name(node) in ("path", "re_path"):
                    for kw in node.keywords:
                        if kw.arg == "name" and isinstance(kw.value, ast.Constant):
                            names.add(str(kw.value.value))
    return names


def import_facts() -> dict[str, str]:
    graph = import_graph()
    all_loops = loops(graph)
    pipeline = loops({m: {t for t in ts if _within(t, "audit.pipeline")} for m, ts in graph.items()})
    function_level = sum(_function_level_imports(src) for src in sources(APPS))
    audit_to_escalation = [
        (src.module, n)
        for src in sources(("audit",))
        for n in imported_names(src)
        if _within(n, "escalation")
    ]
    escalation_names = _escalation_names()
    string_ties = sorted(
        src.module
        for src in sources(("audit",))
        for node in ast.walk(src.tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in escalation_names
    )
    evaluation = _importers(
        "audit.evaluation", lambda m: not _within(m, "audit.evaluation") and ".management" not in m
    )
    selectors_services = _importers("audit.services", lambda m: _within(m, "audit.selectors"))
    return {
        "imports.function_level": str(function_level),
        "imports.audit_to_escalation": str(len(audit_to_escalation)),
        "imports.audit_strings_naming_escalation": str(len(string_ties)),
        "imports.audit_strings_naming_escalation_in": _inline(sorted(set(string_ties))),
        "imports.evaluation_importers": str(len(evaluation)),
        "imports.evaluation_importers_list": _inline(evaluation),
        "imports.selectors_importing_services": str(len(selectors_services)),
        "imports.selectors_importing_services_list": _inline(selectors_services),
        "loops.pipeline": str(len(pipeline)),
        "loops.project": str(len(all_loops)),
        "loops.project_list": "; ".join(" ↔ ".join(f"`{m}`" for m in loop) for loop in all_loops) or "none",
    }


# --- call sites ---------------------------------------------------------------------------------

CALLED = ("thresholds_for", "llm_setup_for")  # the reads the verification paths should make once


def call_facts() -> dict[str, str]:
    facts = {}
    for function in CALLED:
        sites = Counter(
            src.module
            for src in sources(APPS)
            for node in ast.walk(src.tree)
            if isinstance(node, ast.Call) and _call_name(node) == function
        )
        facts[f"calls.{function}"] = str(sum(sites.values()))
        facts[f"calls.{function}.modules"] = str(len(sites))
        facts[f"calls.{function}.audit_services"] = str(
            sum(n for m, n in sites.items() if _within(m, "audit.services"))
        )
    return facts


# --- named lists and data: features, hand cases, page query counts, the contrast suite ---------------------------------------

LISTS = {  # fact → (roots to search, module-level name): the length of the literal it is bound to
    "features.entailment": (APPS, "FEATURE_NAMES"),
    "features.fast": (APPS, "FAST_FEATURES"),
    "features.nli": (APPS, "NLI_FEATURE_NAMES"),
    "tests.hand_cases": (("tests",), "CASES@test_hand_cases.py"),
    "tests.redteam_answers": (("tests",), "CASES@test_redteam.py"),
}
CONTRAST_SUITE = "contrast_suite.jsonl"  # the hand-written minimal pairs `evaluate --contrast` reads
PAGE_QUERIES = "PAGE_QUERIES"  # tests/ui: path → the queries the page may make


def _bindings(roots: tuple[str, ...], name: str) -> list[ast.expr]:
    """The values bound at module level to ``name`` under ``roots`` (``NAME@file.py``: in files so
    named only)."""
    name, _, filename = name.partition("@")
    return [
        node.value
        for src in sources(roots)
        if not filename or src.rel.endswith("/" + filename)
        for node in src.tree.body
        if isinstance(node, (ast.Assign, ast.AnnAssign))
        and node.value is not None
        and any(
            getattr(t, "id", None) == name for t in getattr(node, "targets", [getattr(node, "target", None)])
        )
    ]


def _literal(roots: tuple[str, ...], name: str) -> ast.expr:
    """The one value bound at module level to ``name`` under ``roots``."""
    bound = _bindings(roots, name)
    if len(bound) != 1:
        raise LookupError(f"{name} is bound {len(bound)} times under {', '.join(roots)}, not once")
    return bound[0]


def _length(roots: tuple[str, ...], name: str) -> str:
    value = _literal(roots, name)
    if not isinstance(value, (ast.List, ast.Tuple, ast.Set)):
        raise LookupError(f"{name} is not a literal list")
    return str(len(value.elts))


def _contrast_suite() -> dict[str, str]:
    (suite,) = [p for root in APPS for p in sorted((ROOT / root).rglob(CONTRAST_SUITE))]
    rows = [json.loads(line) for line in suite.read_text().splitlines() if line.strip()]
    pairs = Counter(family for family, _ in {(r["family"], r["pair"]) for r in rows})
    least, most = min(pairs.values()), max(pairs.values())
    return {
        "data.contrast_families": str(len(pairs)),
        "data.contrast_pairs_per_family": str(most) if least == most else f"{least}–{most}",
    }


def list_facts() -> dict[str, str]:
    """Lengths of named lists; one that moved out of reach reads "not found: why", so ``--check``
    names it rather than the command failing."""
    facts = {}
    for fact, (roots, name) in LISTS.items():
        try:
            facts[fact] = _length(roots, name)
        except LookupError as error:
            facts[fact] = f"not found: {error}"
    try:
        for path, n in ast.literal_eval(_literal(("tests",), PAGE_QUERIES)).items():
            facts[f"tests.page_queries.{path.strip('/').replace('/', '.')}"] = str(n)
    except LookupError as error:
        facts["tests.page_queries"] = f"not found: {error}"
    try:
        facts.update(_contrast_suite())
    except ValueError:
        facts["data.contrast_families"] = f"not found: no single {CONTRAST_SUITE} under the apps"
    return facts


# --- the whole set, and the document ------------------------------------------------------------

SECTIONS = (layout_facts, mypy_facts, function_facts, complexity_facts, import_facts, call_facts, list_facts)
BLOCKS = {"packages": packages_table}


@functools.cache
def facts() -> dict[str, str]:
    found: dict[str, str] = {}
    for section in SECTIONS:
        found.update(section())
    return found


CONSTANT = "const."  # `const.NAME`: the literal a module-level NAME of the apps is bound to


def constant(name: str) -> str | None:
    """The value of the module-level constant ``name`` in the apps, as Python writes it: the one
    literal it is bound to (a re-export such as ``NAME = topic.NAME`` is not a second value)."""
    values = set()
    for node in _bindings(APPS, name):
        try:
            values.add(repr(ast.literal_eval(node)))
        except (ValueError, TypeError):
            continue
    return values.pop() if len(values) == 1 else None


def _value(name: str, block: bool) -> str | None:
    if block:
        return BLOCKS[name]() if name in BLOCKS else None
    if name.startswith(CONSTANT):
        return constant(name.removeprefix(CONSTANT))
    return facts().get(name)


def _measured(name: str) -> bool:
    return name.startswith(tuple(MEASURED))


def check(path: Path, measured: dict[str, str] | None = None) -> list[str]:
    """One sentence for each figure of ``path`` that is not what the tree gives. Measured facts
    (``MEASURED``) are compared with ``measured`` when it is given (by the test that measures
    them), and left out otherwise."""
    text = path.read_text()
    problems = []
    for pattern, block in ((FACT, False), (BLOCK, True)):
        for match in pattern.finditer(text):
            name, cited = match["name"], match["value"]
            line = text.count("\n", 0, match.start()) + 1
            if _measured(name) and measured is None:
                continue
            value = measured.get(name) if _measured(name) and measured is not None else _value(name, block)
            if value is None and name.startswith(CONSTANT):
                problems.append(
                    f"{path.name}:{line} cites `{name}`, but no single literal is bound to "
                    f"{name.removeprefix(CONSTANT)} at module level in the apps."
                )
            elif value is None:
                teller = next((test for prefix, test in MEASURED.items() if name.startswith(prefix)), None)
                problems.append(
                    f"{path.name}:{line} cites `{name}`, which `{teller}` does not measure."
                    if teller
                    else f"{path.name}:{line} cites `{name}`, which `python -m tools.archfacts` does not print."
                )
            elif cited.strip() != value.strip():
                shown = "its table" if block else f"{cited!r}"
                problems.append(
                    f"{path.name}:{line} gives `{name}` as {shown}, but the tree gives {value!r}."
                )
    read = len(FACT.findall(text)) + len(BLOCK.findall(text))
    if len(OPENED.findall(text)) != read:
        problems.append(
            f"{path.name} opens {len(OPENED.findall(text)) - read} fact(s) it does not close on the same line."
        )
    if not problems and not read:
        problems.append(f"{path.name} cites no fact: nothing ties its figures to the tree.")
    return problems


def write(path: Path) -> list[str]:
    """Rewrite every cited figure of ``path`` with the tree's value; return what changed."""
    changed: list[str] = []

    def replace(match: re.Match[str], block: bool) -> str:
        value = _value(match["name"], block)
        if value is None or match["value"].strip() == value.strip():
            return match.group(0)
        changed.append(
            f"{match['name']}: rewritten" if block else f"{match['name']}: {match['value']} → {value}"
        )
        if block:
            return f"<!--facts:{match['name']}-->\n{value}\n<!--/facts-->"
        return f"<!--fact:{match['name']}-->{value}<!--/fact-->"

    text = path.read_text()
    text = FACT.sub(lambda m: replace(m, False), text)
    text = BLOCK.sub(lambda m: replace(m, True), text)
    path.write_text(text)
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.archfacts", description=__doc__.split("\n\n")[0])
    action = parser.add_mutually_exclusive_group()
    action.add_argument(
        "--check", nargs="?", const=DOC, metavar="DOC", help=f"compare DOC's figures (default {DOC})"
    )
    action.add_argument("--write", nargs="?", const=DOC, metavar="DOC", help="rewrite DOC's figures in place")
    parser.add_argument("names", nargs="*", help=f"print only these facts (also `{CONSTANT}NAME`)")
    args = parser.parse_args(argv)
    if args.check:
        problems = check(ROOT / args.check)
        print("\n".join(problems) or f"{args.check}: every figure is the tree's.")
        return 1 if problems else 0
    if args.write:
        path = ROOT / args.write
        changed = write(path)
        print("\n".join(changed) or f"{args.write}: nothing to change.")
        unknown = [p for p in check(path) if "does not print" in p or "no single literal" in p]
        if unknown:
            print("\n".join(unknown), file=sys.stderr)
        return 1 if unknown else 0
    for name in args.names or facts():
        print(f"{name}: {_value(name, block=False)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

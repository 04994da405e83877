"""No function outside the tests runs over 80 lines without its reason written beside it (a `# long:` comment)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 80


def long_functions_without_a_reason() -> list[str]:
    found = []
    for app in ("audit", "escalation", "showcase", "theoria"):
        for path in sorted((ROOT / app).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if "migrations" in path.parts:
                continue
            lines = path.read_text().splitlines()
            for node in ast.walk(ast.parse("\n".join(lines))):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    if node.end_lineno - node.lineno + 1 <= LIMIT:
                        continue
                    first = min([node.lineno] + [d.lineno for d in node.decorator_list])
                    if not lines[first - 2].strip().startswith("# long:"):
                        found.append(f"{rel}:{node.lineno} {node.name}")
    return found


def test_every_long_function_says_why_it_is_long():
    assert long_functions_without_a_reason() == []

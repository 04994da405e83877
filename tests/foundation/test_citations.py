"""Code, templates and static files cite docs/SPEC_NOTES.md, never a seed, the spec or an issue by number."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NUMBERED = re.compile(r"\bseed ?0{0,2}\d{1,2}\b|\bspec ?(?:0\d\d|§|\d)|§|\bissue ?#?\d+", re.IGNORECASE)


def _numbered_citations() -> list[str]:
    found = []
    for folder in ("audit", "escalation", "showcase", "theoria", "templates", "static"):
        for path in sorted((ROOT / folder).rglob("*")):
            rel = path.relative_to(ROOT).as_posix()
            if path.suffix not in (".py", ".html", ".js", ".css", ".txt") or "migrations" in path.parts:
                continue
            for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
                if NUMBERED.search(line) and "--seed" not in line:
                    found.append(f"{rel}:{number}: {line.strip()[:80]}")
    return found


def test_the_citation_finder_finds_a_seed_a_spec_section_and_an_issue():
    assert all(NUMBERED.search(text) for text in ("seed 003", "spec §4.4", "(issue 13)", "Seed 000 §7"))
    assert not NUMBERED.search("docs/SPEC_NOTES.md#claims, seeded with the workspace")


def test_no_code_template_or_static_file_cites_a_seed_the_spec_or_an_issue_by_number():
    assert _numbered_citations() == []

"""The counts docs/ARCHITECTURE.md cites are the tree's: `python -m tools.archfacts --check` (the doc's "Figures")."""

from __future__ import annotations

from tools import archfacts

DOC = archfacts.ROOT / "docs" / "ARCHITECTURE.md"


def _copy_with(tmp_path, old: str, new: str):
    text = DOC.read_text()
    assert text.count(old) == 1
    copy = tmp_path / "ARCHITECTURE.md"
    copy.write_text(text.replace(old, new))
    return copy


def test_every_count_in_the_architecture_doc_is_what_the_tree_gives():
    assert archfacts.check(DOC) == []


def test_the_doc_cites_the_counts_it_explains():
    cited = {m["name"] for m in archfacts.FACT.finditer(DOC.read_text())}
    assert {
        "mypy.checked_files",
        "mypy.exempt_files",
        "functions.over_limit",
        "functions.over_limit_with_reason",
        "complexity.over_limit",
        "loops.pipeline",
        "loops.project",
        "calls.thresholds_for.audit_services",
        "imports.evaluation_importers",
    } <= cited
    assert "packages" in {m["name"] for m in archfacts.BLOCK.finditer(DOC.read_text())}


def test_a_wrong_count_fails_the_check_with_a_sentence_naming_it(tmp_path):
    value = archfacts.facts()["mypy.checked_files"]
    token = f"<!--fact:mypy.checked_files-->{value}<!--/fact-->"
    copy = _copy_with(tmp_path, token, token.replace(f">{value}<", f">{int(value) + 1}<"))

    problems = archfacts.check(copy)

    assert len(problems) == 1
    assert "`mypy.checked_files`" in problems[0]
    assert f"'{int(value) + 1}'" in problems[0] and f"'{value}'" in problems[0]


def test_the_command_exits_1_on_a_wrong_count_and_write_puts_the_trees_back(tmp_path, capsys):
    value = archfacts.facts()["functions.over_limit"]
    token = f"<!--fact:functions.over_limit-->{value}<!--/fact-->"
    copy = _copy_with(tmp_path, token, token.replace(f">{value}<", ">999<"))

    assert archfacts.main(["--check", str(copy)]) == 1
    assert "`functions.over_limit`" in capsys.readouterr().out
    assert archfacts.main(["--write", str(copy)]) == 0
    assert archfacts.main(["--check", str(copy)]) == 0
    assert copy.read_text() == DOC.read_text()


def test_a_package_table_that_drifted_fails_the_check(tmp_path):
    row = f"| `audit.pipeline` | {archfacts.facts()['modules.audit.pipeline']} |\n"
    copy = _copy_with(tmp_path, row, "")

    assert [p for p in archfacts.check(copy) if "`packages`" in p]


def test_a_figure_naming_no_fact_fails_the_check(tmp_path):
    value = archfacts.facts()["loops.pipeline"]
    copy = _copy_with(
        tmp_path,
        f"<!--fact:loops.pipeline-->{value}<!--/fact-->",
        f"<!--fact:loops.pipline-->{value}<!--/fact-->",
    )

    assert archfacts.check(copy) == [
        f"ARCHITECTURE.md:{_line(copy, 'loops.pipline')} cites `loops.pipline`, "
        "which `python -m tools.archfacts` does not print."
    ]


def _line(path, needle: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if needle in line)


def test_the_loop_finder_finds_each_loop_once_and_no_module_alone():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"f"}, "f": {"e"}, "g": {"g"}}
    assert archfacts.loops(graph) == [["a", "b", "c"], ["e", "f"]]


def test_a_mypy_override_pattern_covers_its_submodules_only_when_it_says_so():
    package = archfacts.mypy_pattern("audit.services.*")
    module = archfacts.mypy_pattern("audit.services")
    assert package.fullmatch("audit.services") and package.fullmatch("audit.services.web")
    assert not package.fullmatch("audit.servicesx")
    assert module.fullmatch("audit.services") and not module.fullmatch("audit.services.web")


def test_a_fact_opened_and_not_closed_on_its_line_fails_the_check(tmp_path):
    value = archfacts.facts()["loops.project"]
    token = f"<!--fact:loops.project-->{value}<!--/fact-->"
    copy = _copy_with(tmp_path, token, f"<!--fact:loops.project-->{value}")

    assert [p for p in archfacts.check(copy) if "does not close" in p]


def test_a_constant_fact_is_the_value_the_module_binds():
    from audit import constants

    assert archfacts.constant("JSON_MAX_DEPTH") == repr(constants.JSON_MAX_DEPTH)
    assert archfacts.constant("NLI_UNRELATED_MAX_P") == repr(constants.NLI_UNRELATED_MAX_P)
    assert archfacts.constant("NO_SUCH_SETTING") is None

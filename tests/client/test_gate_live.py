"""`theoria-audit check`: a RAG test set audited on the live server, gated, reported."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from tests.client.conftest import ANSWER, CONTEXTS, LTP, QUERY

# transaction: the live server reads what the test writes (role groups: UserFactory makes them again)
pytestmark = pytest.mark.django_db(transaction=True)

FAITHFUL = {
    "name": "faithful",
    "query": QUERY,
    "answer": "Long-term potentiation requires NMDA receptor activation [1].",
    "contexts": CONTEXTS,
}
WRONG = {
    "name": "wrong year",
    "query": QUERY,
    "answer": ANSWER,
    "contexts": CONTEXTS,
    "domain": "neuroscience",
}


def write_set(tmp_path: Path, *cases: dict) -> Path:
    path = tmp_path / "answers.jsonl"
    path.write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    return path


def test_it_fails_the_build_when_faithfulness_is_under_the_limit_and_reports_each_answer(
    live_server, tokens, tmp_path, capsys
):
    from theoria_client.cli import main

    answers = write_set(tmp_path, FAITHFUL, WRONG)
    server = ["--url", live_server.url, "--token", tokens["submitter"]]

    failed = main(["check", str(answers), "--fail-under", "0.9", "--junit", str(tmp_path / "r.xml"), *server])
    printed = capsys.readouterr().out
    passed = main(
        ["check", str(answers), "--max-unsupported", "0.5", "--json", str(tmp_path / "r.json"), *server]
    )

    assert failed == 1 and "FAILED: faithfulness" in printed and "1 of 3 claims unsupported" in printed
    suite = ET.parse(tmp_path / "r.xml").getroot()
    cases = {c.get("name"): c.find("failure") for c in suite.iter("testcase")}
    assert suite.get("tests") == "3" and suite.get("failures") == "2"
    assert cases["faithful"] is None and "faithfulness" in cases["wrong year"].get("message")
    assert "under 0.900" in cases["gate"].get("message")
    assert passed == 0
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["summary"]["passed"] and report["summary"]["unsupported_share"] == pytest.approx(1 / 3)
    assert [c["claims"][-1]["label"] for c in report["cases"]] == ["SUPPORTED", "REFUTED"]


def test_it_fails_when_an_answer_comes_back_unverified(live_server, tokens, tmp_path, capsys):
    from theoria_client.cli import main

    answers = write_set(tmp_path, {**FAITHFUL, "mode": "normal"})

    code = main(
        ["check", str(answers), "--fail-under", "0", "--url", live_server.url, "--token", tokens["submitter"]]
    )

    assert code == 1 and "not verified" in capsys.readouterr().out


def test_it_exits_2_with_one_sentence_for_a_bad_file_or_a_refused_line(live_server, tokens, tmp_path, capsys):
    from theoria_client.cli import main

    server = ["--url", live_server.url, "--token", tokens["submitter"]]
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"query": "q"}\n{"query": \n', encoding="utf-8")
    refused = write_set(tmp_path, {"query": QUERY, "answer": "", "contexts": [{"id": "1", "text": LTP}]})

    assert main(["check", str(broken), "--fail-under", "0.5", *server]) == 2
    assert "broken.jsonl:2: not JSON" in capsys.readouterr().err
    assert main(["check", str(refused), "--fail-under", "0.5", *server]) == 2
    assert "answers.jsonl:1: the audit was refused: answer: May not be blank." in capsys.readouterr().err
    assert main(["check", str(refused), *server]) == 2  # no limit given: nothing to gate on


def test_the_console_script_is_installed_and_gates(live_server, tokens, tmp_path):
    answers = write_set(tmp_path, FAITHFUL)
    script = Path(sys.executable).with_name("theoria-audit")

    result = subprocess.run(
        [str(script), "check", str(answers), "--fail-under", "0.5", "--max-unsupported", "0"],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "THEORIA_URL": live_server.url, "THEORIA_TOKEN": tokens["submitter"]},
    )

    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 answers, 1 verified" in result.stdout

"""The walk of one Audit-Local ``POST /api/v1/audits`` through the code (docs/ARCHITECTURE.md,
"The path of one audit"): the job is built once, so the workspace's thresholds, the verification
plan and the LLM setup are each read once by the audit services; the reader's walk (``tools.walk``:
stays, returns, climbs) is what the doc says it is."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

from tools import archfacts
from tools.walk import Stop, figures, record

ROOT = Path(__file__).resolve().parents[2]
PROJECT = tuple(str(ROOT / app) + "/" for app in ("audit", "escalation", "showcase"))

WATCHED = {"verification_plan"}  # the one pipeline function this walk follows

BODY = {
    "query": "What does LTP require?",
    "answer": "LTP requires NMDA receptors [1]. The hippocampus has three layers [cite:kb2].",
    "contexts": [
        {"id": "kb1", "title": "Synaptic plasticity", "text": "LTP depends on NMDA receptors."},
        {"id": "kb2", "title": "Hippocampus", "text": "The hippocampus has three layers."},
    ],
    "mode": "audit-local",
}


def walk(client) -> tuple[int, list[tuple[str, str, str]]]:
    """POST the body once; return (status, [(caller file, callee file, callee name)]) of every call
    of a project function (audit, escalation, showcase; of the pipeline only ``WATCHED``)."""
    calls: list[tuple[str, str, str]] = []

    def profile(frame, event, arg):
        if event != "call":
            return
        callee = frame.f_code.co_filename
        if not callee.startswith(PROJECT) or frame.f_code.co_name == "<module>":  # not imports
            return
        if "/pipeline/" in callee and frame.f_code.co_name not in WATCHED:
            return
        caller = frame.f_back.f_code.co_filename if frame.f_back else ""
        calls.append(
            (caller.removeprefix(str(ROOT) + "/"), callee.removeprefix(str(ROOT) + "/"), frame.f_code.co_name)
        )

    sys.setprofile(profile)
    try:
        response = client.post("/api/v1/audits", data=json.dumps(BODY), content_type="application/json")
    finally:
        sys.setprofile(None)
    return response.status_code, calls


def test_one_audit_local_request_reads_the_thresholds_the_plan_and_the_llm_setup_once(client_for, submitter):
    status, calls = walk(client_for(submitter))
    assert status == 201
    by_caller = Counter((caller, name) for caller, _, name in calls)
    # every service of the request reads the thresholds through the one job builder, once
    readers = {
        caller: n
        for (caller, name), n in by_caller.items()
        if name == "thresholds_for" and caller.startswith("audit/services/")
    }
    assert readers == {"audit/services/job.py": 1}
    assert sum(n for (caller, name), n in by_caller.items() if name == "llm_setup_for") == 1
    assert {caller for (caller, name) in by_caller if name == "llm_setup_for"} == {"audit/services/job.py"}
    assert sum(n for (_, name), n in by_caller.items() if name == "verification_plan") == 1
    assert sum(n for (_, name), n in by_caller.items() if name == "llm_setup_for") == 1


def reader_walk(client) -> list[Stop]:
    """The reader's walk (``tools.walk``) of the second of two identical requests: the first loads
    the models and fills the caches, so the walk is the one every later request takes."""

    def post():
        return client.post("/api/v1/audits", data=json.dumps(BODY), content_type="application/json")

    assert post().status_code == 201
    response, stops = record(post, entry="AuditCreateApi.post")
    assert response.status_code == 201
    return stops


def scopes(stops: list[Stop]) -> dict[str, list[Stop]]:
    """The whole walk, and the walk with the Django-free pipeline left out (what a reader of the
    request's views and services follows)."""
    return {"all": stops, "django": [stop for stop in stops if not stop.file.startswith("audit/pipeline/")]}


def walk_facts(stops: list[Stop]) -> dict[str, str]:
    """The figures docs/ARCHITECTURE.md cites as ``walk.*`` facts, for each scope (not the number of
    functions: PostgreSQL's pgvector check reads one function more than SQLite)."""
    found: dict[str, str] = {}
    for scope, part in scopes(stops).items():
        counted = figures(part)
        found |= {
            f"walk.{scope}.stays": str(counted.stays),
            f"walk.{scope}.files": str(counted.files),
            f"walk.{scope}.returns": str(counted.returns),
            f"walk.{scope}.climbs": str(counted.climbs),
        }
    return found


def test_the_walk_the_architecture_doc_cites_is_the_requests(client_for, submitter, capsys):
    """Prints the walk and its figures (``pytest tests/api/test_request_walk.py -s -k walk_the``) and
    fails when docs/ARCHITECTURE.md's ``walk.*`` figures are not the ones measured."""
    stops = reader_walk(client_for(submitter))
    found = walk_facts(stops)
    with capsys.disabled():
        print()
        for stop in stops:
            print(f"{'  ' * stop.depth}{stop.file}:{stop.function}")
        for scope, part in scopes(stops).items():
            print(f"walk.{scope}: {figures(part).line()}")
    doc = archfacts.ROOT / "docs" / "ARCHITECTURE.md"
    assert archfacts.check(doc, found) == []
    cited = {m["name"] for m in archfacts.FACT.finditer(doc.read_text())}
    assert set(found) <= cited


def test_figures_of_the_walk(client_for, submitter, capsys):
    """Prints the figures docs/ARCHITECTURE.md states (``pytest tests/api/test_request_walk.py -s -k figures``)."""
    client = client_for(submitter)
    walk(client)  # a first request loads the models and fills the caches; the second one is measured
    status, calls = walk(client)
    assert status == 201 and calls
    files = [callee for _, callee, _ in calls]
    entries = Counter(callee for caller, callee, _ in calls if caller != callee)
    with capsys.disabled():
        print(
            f"\nwalk: {len(calls)} calls of {len({(c, n) for _, c, n in calls})} project functions "
            f"in {len(set(files))} files; audit/services/submissions.py entered "
            f"{entries['audit/services/submissions.py']} times from another file; "
            f"thresholds_for called {sum(1 for *_, n in calls if n == 'thresholds_for')} times in all"
        )

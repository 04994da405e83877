"""``theoria-audit check answers.jsonl``: a CI gate over a RAG test set.

Each line of the file is one case, the body of ``POST /api/v1/audits``: ``query``, ``answer``,
``contexts`` (each ``id``, ``text``, optional ``title``, ``uri``, ``published_at``), and any other
field of that body (``mode``, ``domain``, …); an optional ``name`` labels the case in the report.
Every case is audited (in ``--mode`` unless the line names its own), then the set is judged:

- faithfulness: the mean of the verified answers' ``audit.faithfulness``, at least ``--fail-under``;
- unsupported: the share of the verified claims not SUPPORTED (REFUTED or NEI), at most
  ``--max-unsupported``.

Exit 0 when both hold, 1 when a limit is crossed (or an answer came back unverified: a Normal-mode
answer proves nothing), 2 when the file or an audit request is refused (one sentence says which
line and why). ``--junit`` writes a JUnit XML report (one test case per line, failed when that
answer alone crosses a limit, plus the gate itself); ``--json`` a JSON report.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

from theoria_client.client import Theoria
from theoria_client.errors import ApiError, TheoriaError
from theoria_client.models import AuditResult


class InputError(Exception):
    """A line of the test set that cannot be sent."""


@dataclass
class Case:
    line: int
    name: str
    body: dict[str, Any]
    result: AuditResult | None = None
    seconds: float = 0.0
    failures: list[str] = field(default_factory=list)


@dataclass
class Gate:
    fail_under: float | None
    max_unsupported: float | None

    def failures(self, faithfulness: float | None, unsupported: float | None) -> list[str]:
        out = []
        if self.fail_under is not None and (faithfulness is None or faithfulness < self.fail_under):
            shown = "none" if faithfulness is None else f"{faithfulness:.3f}"
            out.append(f"faithfulness {shown} is under {self.fail_under:.3f}")
        if (
            self.max_unsupported is not None
            and unsupported is not None
            and unsupported > self.max_unsupported
        ):
            out.append(f"unsupported claims {unsupported:.3f} is over {self.max_unsupported:.3f}")
        return out


def read_cases(path: Path) -> list[Case]:
    if not path.is_file():
        raise InputError(f"{path}: no such file.")
    cases = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            body = json.loads(line)
        except json.JSONDecodeError as error:
            raise InputError(f"{path}:{number}: not JSON ({error.msg}).") from error
        if not isinstance(body, dict) or not isinstance(body.get("query"), str):
            raise InputError(f"{path}:{number}: a case is a JSON object with a query string.")
        name = str(body.pop("name", "") or f"line {number}")
        cases.append(Case(number, name, body))
    if not cases:
        raise InputError(f"{path}: no case in the file.")
    return cases


def audit_case(client: Theoria, case: Case, mode: str | None) -> None:
    body = dict(case.body)
    query, answer, contexts = body.pop("query"), body.pop("answer", None), body.pop("contexts", [])
    started = time.monotonic()
    case.result = client.audit(
        query,
        answer,
        contexts,
        mode=body.pop("mode", None) or mode,
        idempotency_key=body.pop("idempotency_key", None),
        **body,
    )
    case.seconds = time.monotonic() - started


def summarise(cases: Sequence[Case], gate: Gate) -> dict[str, Any]:
    verified = [c.result for c in cases if c.result is not None and c.result.verified]
    scores = [r.faithfulness for r in verified if r.faithfulness is not None]
    claims = [card for r in verified for card in r.claims]
    unsupported = [card for card in claims if not card.supported]
    faithfulness = sum(scores) / len(scores) if scores else None
    share = len(unsupported) / len(claims) if claims else None
    for case in cases:
        result = case.result
        if result is None:
            continue
        if not result.verified:
            case.failures.append(f"answer {result.answer_id} was not verified (mode {result.mode})")
            continue
        cards = result.claims
        own_share = len(result.unsupported) / len(cards) if cards else None
        case.failures.extend(gate.failures(result.faithfulness, own_share))
    failures = gate.failures(faithfulness, share)
    unverified = [c for c in cases if c.result is not None and not c.result.verified]
    if unverified:
        failures.append(f"{len(unverified)} answer(s) not verified ({', '.join(c.name for c in unverified)})")
    return {
        "cases": len(cases),
        "verified": len(verified),
        "faithfulness": faithfulness,
        "claims": len(claims),
        "unsupported": len(unsupported),
        "unsupported_share": share,
        "fail_under": gate.fail_under,
        "max_unsupported": gate.max_unsupported,
        "passed": not failures,
        "failures": failures,
    }


def json_report(cases: Sequence[Case], summary: dict[str, Any]) -> dict[str, Any]:
    return {
        "summary": summary,
        "cases": [
            {
                "name": c.name,
                "line": c.line,
                "passed": not c.failures,
                "failures": c.failures,
                "seconds": round(c.seconds, 3),
                **(c.result.verdict() if c.result else {}),
            }
            for c in cases
        ],
    }


def junit_report(cases: Sequence[Case], summary: dict[str, Any], path: Path) -> None:
    failed = sum(1 for c in cases if c.failures) + (0 if summary["passed"] else 1)
    suite = ET.Element(
        "testsuite",
        name="theoria-audit",
        tests=str(len(cases) + 1),
        failures=str(failed),
        errors="0",
        time=f"{sum(c.seconds for c in cases):.3f}",
    )
    for case in cases:
        element = ET.SubElement(suite, "testcase", classname="theoria-audit.cases", name=case.name)
        element.set("time", f"{case.seconds:.3f}")
        if case.failures:
            ET.SubElement(element, "failure", message="; ".join(case.failures)).text = json.dumps(
                case.result.verdict() if case.result else {}, indent=2
            )
    gate = ET.SubElement(suite, "testcase", classname="theoria-audit", name="gate")
    if not summary["passed"]:
        ET.SubElement(gate, "failure", message="; ".join(summary["failures"])).text = json.dumps(
            summary, indent=2
        )
    ET.ElementTree(suite).write(path, encoding="utf-8", xml_declaration=True)


def check(args: argparse.Namespace) -> int:
    try:
        cases = read_cases(Path(args.answers))
    except InputError as error:
        print(f"theoria-audit: {error}", file=sys.stderr)
        return 2
    gate = Gate(args.fail_under, args.max_unsupported)
    with Theoria(args.url, args.token, timeout=args.timeout) as client:
        for case in cases:
            try:
                audit_case(client, case, args.mode)
            except ApiError as error:
                print(
                    f"theoria-audit: {args.answers}:{case.line}: the audit was refused: {error.detail}",
                    file=sys.stderr,
                )
                return 2
            except TheoriaError as error:
                print(f"theoria-audit: {args.answers}:{case.line}: {error}", file=sys.stderr)
                return 2
    summary = summarise(cases, gate)
    if args.json:
        Path(args.json).write_text(json.dumps(json_report(cases, summary), indent=2) + "\n", encoding="utf-8")
    if args.junit:
        junit_report(cases, summary, Path(args.junit))
    faith = "none" if summary["faithfulness"] is None else f"{summary['faithfulness']:.3f}"
    share = "none" if summary["unsupported_share"] is None else f"{summary['unsupported_share']:.3f}"
    print(
        f"theoria-audit: {summary['cases']} answers, {summary['verified']} verified; faithfulness {faith}; "
        f"{summary['unsupported']} of {summary['claims']} claims unsupported ({share})"
    )
    for failure in summary["failures"]:
        print(f"theoria-audit: FAILED: {failure}")
    return 0 if summary["passed"] else 1


def fraction(text: str) -> float:
    value = float(text)
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"{text} is not between 0 and 1")
    return value


def parser() -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(prog="theoria-audit", description="Theoria Audit from the command line.")
    commands = root.add_subparsers(dest="command", required=True)
    run = commands.add_parser("check", help="audit a RAG test set (JSON lines) and gate on the result")
    run.add_argument("answers", help="JSON lines: one POST /api/v1/audits body per line")
    run.add_argument("--fail-under", type=fraction, default=None, help="lowest mean faithfulness (0-1)")
    run.add_argument(
        "--max-unsupported", type=fraction, default=None, help="highest share of claims not SUPPORTED (0-1)"
    )
    run.add_argument(
        "--mode", default="audit-local", help="mode of a line that names none (default audit-local)"
    )
    run.add_argument("--junit", metavar="PATH", help="write a JUnit XML report")
    run.add_argument("--json", metavar="PATH", help="write a JSON report")
    run.add_argument("--url", default=None, help="server (default THEORIA_URL, else http://127.0.0.1:8000)")
    run.add_argument("--token", default=None, help="API token (default THEORIA_TOKEN)")
    run.add_argument("--timeout", type=float, default=120.0, help="seconds per request")
    return root


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.fail_under is None and args.max_unsupported is None:
        print("theoria-audit: give --fail-under, --max-unsupported or both.", file=sys.stderr)
        return 2
    return check(args)


if __name__ == "__main__":
    sys.exit(main())

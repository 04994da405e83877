"""The CPU cost of the heaviest answers: each family of answers that held a web worker for minutes,
built at ``--kb`` kilobytes, audited in this process through ``audit_submit`` (Audit-Local, the demo
knowledge base, a fresh SQLite file under var/cost_probe/), with the CPU seconds, the wall seconds,
the claims read and not read, and the HTTP status the API would give (201, or 413 refused).

    python -m tools.cost_probe                   # every family at 100 KB
    python -m tools.cost_probe --kb 100 --only hyphens,binding

It prints one line per family and a last JSON line. A figure, never a test: the machine's load
changes wall seconds; CPU seconds are this process's own (``time.process_time``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _sentences(count: int, body: str, width: int) -> str:
    out = []
    for i in range(count):
        head = f"The cortex area {i} with "
        out.append((head + body * width)[: width - 1] + ".")
    return " ".join(out)


def families(kb: int) -> dict[str, dict]:
    """The issue's families at ``kb`` kilobytes of answer (the binding family: short claims against
    about nine times that much evidence of coordinated clauses)."""
    size = kb * 1000
    long_n = max(1, size // 1995)
    mid_n = min(200, max(1, size // 491))
    clause = (
        "the clinic reimburses the insurer and the insurer pays the clinic and the board reviews the fund"
    )
    evidence_chars = 9 * size
    passages = []
    per = 4_500
    for k in range(max(1, evidence_chars // per)):
        passages.append(
            {"id": f"p{k}", "text": (" and ".join([clause] * (per // (len(clause) + 5))) + ".").capitalize()}
        )
    short = [f"The clinic {i} reimburses the insurer for claim {i}." for i in range(200)]
    return {
        "hyphens": {"answer": _sentences(long_n, "1-", 1994)},
        "commas": {"answer": _sentences(long_n, "1, ", 1994)},
        "digits": {"answer": _sentences(long_n, "1 2 ", 1994)},
        "digits_490": {"answer": _sentences(mid_n, "1 2 ", 490)},
        "ones_490": {"answer": _sentences(mid_n, "1 ", 490)},
        "words_490": {"answer": _sentences(mid_n, "cortex neurons fire ", 490)},
        "binding": {"answer": " ".join(short), "contexts": passages[:200]},
        "tiny": {"answer": " ".join(f"Cell {i} fires." for i in range(size // 15))},
    }


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--kb", type=int, default=100)
    parser.add_argument("--only", default="", help="comma-separated family names")
    args = parser.parse_args()
    folder = ROOT / "var" / "cost_probe"
    folder.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("DATABASE_URL", f"sqlite:///{folder / 'db.sqlite3'}")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "theoria.settings.base")
    os.environ.setdefault("DJANGO_DEBUG", "1")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)
    from audit.errors import TooLarge
    from audit.models import Chunk
    from audit.services.submissions import AuditRequest, audit_submit
    from audit.services.workspaces import workspace_get_default

    workspace = workspace_get_default()
    if not Chunk.objects.exists():
        call_command("ingest_kb", str(ROOT / "demo" / "kb"), verbosity=0)
    chosen = [n for n in args.only.split(",") if n] or list(families(args.kb))
    rows = []
    built = families(args.kb)
    # warm the models once (the first audit of a process loads them)
    audit_submit(
        workspace=workspace,
        user=None,
        request=AuditRequest(query="q", answer="Place cells fire in the hippocampus.", mode="audit-local"),
    )
    for name in chosen:
        body = built[name]
        request = AuditRequest(
            query="What does the cortex do?",
            answer=body["answer"],
            contexts=body.get("contexts", []),
            mode="audit-local",
        )
        cpu, wall = time.process_time(), time.perf_counter()
        row = {"family": name, "answer_kb": round(len(body["answer"]) / 1000, 1)}
        row["evidence_kb"] = round(sum(len(c["text"]) for c in body.get("contexts", [])) / 1000, 1)
        try:
            answer = audit_submit(workspace=workspace, user=None, request=request).answer
            row["status"] = 201
            claims = list(answer.claims.all())
            row["claims"] = len(claims)
            row["not_read"] = sum(1 for c in claims if set(c.risk_flags or []) & NOT_READ)
        except TooLarge as refused:
            row["status"] = 413
            row["message"] = str(refused)[:120]
        row["cpu_s"] = round(time.process_time() - cpu, 2)
        row["wall_s"] = round(time.perf_counter() - wall, 2)
        rows.append(row)
        print(
            f"{name:11} {row['answer_kb']:6} KB answer, {row['evidence_kb']:6} KB evidence: "
            f"{row['status']} in {row['cpu_s']} s CPU ({row['wall_s']} s wall), "
            f"claims {row.get('claims', '-')}, not read {row.get('not_read', '-')}",
            flush=True,
        )
    print(json.dumps({"load_average": os.getloadavg(), "rows": rows}))
    return 0


NOT_READ = {"too_long_to_verify", "over_read_budget"}

if __name__ == "__main__":
    sys.exit(main())

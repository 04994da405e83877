"""Does every doubt reach a person? DEV answers audited through the API, twice, and their cases counted.

`python -m tools.doubt_coverage --answers 100` serves a fresh database on loopback (tools/served.py:
gunicorn, production settings, the demo knowledge base), posts the first N answers of the DEV answer
file (shared/benchmarks/answers_dev.jsonl, or THEORIA_BENCHMARKS_DIR) to `POST /api/v1/audits` in
Audit-Local mode with their cited passages, then posts the same answers again (a re-audit of the same
answer). In each pass it reads every Claim Card the API returned: a claim not labelled SUPPORTED must
belong to exactly one review case (the `escalations` of its card), and a re-audit must add no case for
a claim that already had one (0 duplicates). Prints the counts per pass and exits 1 when either rule
is broken (docs/SPEC_NOTES.md, "Human escalation", intake).

On a busy machine an audit takes 17-37 s, so two full passes over 100 answers take hours:
`--parallel K` posts K answers at a time to K gunicorn workers, and `--reaudit M --seed S` re-audits a
seeded random sample of M of the N answers (the duplicate count then covers those M answers only,
and the output says so).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tools.served import ROOT, served

_HEADER = re.compile(r"^\[(\d+)\]\s*(\S*)\s*\n*")


def dev_answers(limit: int) -> list[dict]:
    folder = Path(os.environ.get("THEORIA_BENCHMARKS_DIR") or ROOT.parent / "shared" / "benchmarks")
    rows = [
        json.loads(line) for line in (folder / "answers_dev.jsonl").read_text().splitlines() if line.strip()
    ]
    return rows[:limit]


def as_request(row: dict) -> dict:
    """The API body of one benchmark answer: its cited passages ("[n] URL" header, then text) as contexts."""
    contexts = []
    for i, raw in enumerate(row["contexts"], 1):
        match = _HEADER.match(raw)
        anchor, url = (match.group(1), match.group(2)) if match else (str(i), "")
        contexts.append({"id": anchor, "title": url[:200], "text": raw[match.end() :] if match else raw})
    return {"query": row["query"], "answer": row["answer"], "contexts": contexts, "mode": "audit-local"}


def _post(base: str, token: str, body: dict) -> dict:
    request = urllib.request.Request(
        f"{base}/api/v1/audits",
        data=json.dumps(body).encode(),
        headers={"Authorization": f"Token {token}", "Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=600) as response:
        return json.loads(response.read())


def audit_pass(
    base: str, token: str, rows: list[dict], label: str, parallel: int = 1
) -> tuple[dict, dict[str, set[str]]]:
    """Post every row once; count the claims not SUPPORTED and the cases each belongs to, and return
    the tickets of each doubted claim by (query, claim text)."""
    counts = {
        "answers": 0,
        "refused": 0,
        "claims": 0,
        "doubted": 0,
        "in_one_case": 0,
        "in_none": 0,
        "in_several": 0,
    }
    tickets: dict[str, set[str]] = {}  # (answer query, claim text) -> tickets of its cards
    started = time.monotonic()

    def post(row: dict) -> dict | urllib.error.HTTPError:
        try:
            return _post(base, token, as_request(row))
        except urllib.error.HTTPError as error:
            return error

    with ThreadPoolExecutor(max_workers=max(1, parallel)) as pool:
        replies = pool.map(post, rows)  # in order of rows; at most `parallel` in flight
        for n, (row, reply) in enumerate(zip(rows, replies, strict=True), 1):
            _count(row, reply, counts, tickets)
            if n % 10 == 0 or n == len(rows):
                print(
                    f"  {label}: {n}/{len(rows)} answers, {time.monotonic() - started:.0f} s", file=sys.stderr
                )
    return counts, tickets


def _count(
    row: dict, reply: dict | urllib.error.HTTPError, counts: dict, tickets: dict[str, set[str]]
) -> None:
    if isinstance(reply, urllib.error.HTTPError):
        counts["refused"] += 1
        print(f"  {row['id']}: {reply.code} {reply.read()[:200]!r}", file=sys.stderr)
        return
    counts["answers"] += 1
    for card in reply["claims"]:
        counts["claims"] += 1
        if card["label"] == "SUPPORTED":
            continue
        counts["doubted"] += 1
        cases = {ref["ticket"] for ref in card.get("escalations") or [] if ref.get("type") == "review"}
        counts["in_one_case" if len(cases) == 1 else "in_none" if not cases else "in_several"] += 1
        tickets.setdefault(f"{row['query']}\x00{card['text']}", set()).update(cases)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answers", type=int, default=100, help="how many DEV answers (the first N)")
    parser.add_argument(
        "--parallel", type=int, default=1, help="answers posted at a time, each to its own gunicorn worker"
    )
    parser.add_argument(
        "--reaudit",
        type=int,
        default=None,
        help="re-audit a seeded random sample of this many of the answers (default: all of them)",
    )
    parser.add_argument("--seed", type=int, default=0, help="the seed of the --reaudit sample")
    args = parser.parse_args()
    if args.answers < 1 or args.parallel < 1 or (args.reaudit is not None and args.reaudit < 1):
        parser.error("--answers, --parallel and --reaudit must be at least 1")
    rows = dev_answers(args.answers)
    sample = (
        rows if args.reaudit is None else random.Random(args.seed).sample(rows, min(args.reaudit, len(rows)))
    )
    with served("doubt-coverage", workers=args.parallel, threads=1) as (base, tokens, _folder):
        first, first_tickets = audit_pass(base, tokens["frontend"], rows, "audit", args.parallel)
        again, again_tickets = audit_pass(base, tokens["frontend"], sample, "re-audit", args.parallel)
    if len(sample) < len(rows):
        print(f"re-audit: a sample of {len(sample)} of the {len(rows)} answers (seed {args.seed})")
    # a claim doubted in both passes whose re-audit card names a case its first card did not
    duplicates = sum(
        1
        for key, cases in again_tickets.items()
        if first_tickets.get(key) and not cases <= first_tickets[key]
    )
    for name, counts in (("audit", first), ("re-audit", again)):
        print(
            f"{name}: {counts['answers']} answers ({counts['refused']} refused), {counts['claims']} claims, "
            f"{counts['doubted']} not SUPPORTED: {counts['in_one_case']} in exactly one case, "
            f"{counts['in_none']} in none, {counts['in_several']} in several"
        )
    print(f"re-audit: {duplicates} claims given a case besides the one they had (duplicates)")
    broken = first["in_none"] + first["in_several"] + again["in_none"] + again["in_several"] + duplicates
    return 1 if broken or first["refused"] or again["refused"] else 0


if __name__ == "__main__":
    sys.exit(main())

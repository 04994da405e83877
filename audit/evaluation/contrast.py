"""The contrastive suite: hand-written minimal pairs that only a judge that reads can tell apart.

``audit/evaluation/data/contrast_suite.jsonl`` holds 12 families (quantifier, roles, unit, rank,
modality, condition, detail, number, date, entity, negation, paraphrase) of at least 30 minimal
pairs each. A pair is one premise with two claims: a faithful one (SUPPORTED) and one that keeps
almost all of its words and changes what they say (REFUTED or NEI); in the paraphrase family the
SUPPORTED member is the one reworded most. Written by hand for this suite, on other sentences than
the ones the cross-encoder's generated training pairs come from (``minimal_pairs.py``).

``python manage.py evaluate --contrast [--judge NAME] [--depth full fast]`` verifies every claim
against its premise through the whole offline pipeline (the judge, then the numeric and structural
checks, as an audit runs them, at each verification depth named) and prints, per family and column
(judge, and depth where more than one is named), the accuracy of SUPPORTED vs not (the product's
decision), the share of pairs with both members right, and the 3-class accuracy. With exactly two
columns it also prints, per family, the claims each column gets right (SUPPORTED vs not) that the
other gets wrong: what a cheaper reading lets through, claim by claim.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

SUITE_PATH = Path(__file__).resolve().parent / "data" / "contrast_suite.jsonl"
FAMILIES = (
    "quantifier",
    "roles",
    "unit",
    "rank",
    "modality",
    "condition",
    "detail",
    "number",
    "date",
    "entity",
    "negation",
    "paraphrase",
)
TARGET = 0.90  # per family, SUPPORTED vs not


def load_suite(path: Path = SUITE_PATH) -> list[dict]:
    rows = []
    with open(path, encoding="utf-8") as fh:
        for no, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            row = json.loads(line)
            missing = {"family", "pair", "premise", "hypothesis", "label"} - set(row)
            if missing:
                raise ValueError(f"{path}: line {no}: missing {', '.join(sorted(missing))}")
            rows.append(row)
    return rows


def score_family(rows: list[dict], labels: list[str]) -> dict:
    """Accuracy (2-class: SUPPORTED vs not, and 3-class) and the share of pairs with both members right."""
    right2 = [(r["label"] == "SUPPORTED") == (lab == "SUPPORTED") for r, lab in zip(rows, labels)]
    right3 = [r["label"] == lab for r, lab in zip(rows, labels)]
    by_pair: dict[str, list[bool]] = defaultdict(list)
    for r, ok in zip(rows, right2):
        by_pair[r["pair"]].append(ok)
    return {
        "n": len(rows),
        "acc2": sum(right2) / len(rows) if rows else 0.0,
        "acc3": sum(right3) / len(rows) if rows else 0.0,
        "pairs": sum(all(v) for v in by_pair.values()) / len(by_pair) if by_pair else 0.0,
    }


def suite_labels(judge, *, rows: list[dict], progress=None, llm=None, depth: str = "full") -> list[str]:
    """The label of each row's claim, verified against its premise by one judge (a name or a ``Judge``)
    through the offline pipeline at ``depth``."""
    from audit.pipeline.audit import verify_claims
    from audit.pipeline.methods.entailment import EntailmentMethod

    by_name = isinstance(judge, str)
    verdicts = verify_claims(
        [(r["hypothesis"], [r["premise"]]) for r in rows],
        thresholds={"verification_depth": depth, **({"judge": judge} if by_name else {})},
        overrides=None if by_name else {"entailment": EntailmentMethod(judge=judge)},
        progress=progress,
        llm=llm,
    )
    return [v.label for v in verdicts]


def family_scores(rows: list[dict], labels: list[str]) -> dict[str, dict]:
    """{family: scores} of ``labels``, and the whole suite's under ``"all"``."""
    per = {}
    for family in FAMILIES:
        idx = [i for i, r in enumerate(rows) if r["family"] == family]
        if idx:
            per[family] = score_family([rows[i] for i in idx], [labels[i] for i in idx])
    per["all"] = score_family(rows, labels)
    return per


def suite_scores(
    judge, *, rows: list[dict] | None = None, progress=None, llm=None, depth: str = "full"
) -> dict[str, dict]:
    """{family: scores} of one judge (a name or a ``Judge``) over the suite, through the offline
    pipeline at ``depth``."""
    rows = load_suite() if rows is None else rows
    return family_scores(rows, suite_labels(judge, rows=rows, progress=progress, llm=llm, depth=depth))


def run_contrast(
    judges: list[str],
    *,
    out,
    err,
    path: Path = SUITE_PATH,
    llm=None,
    depths: tuple[str, ...] = ("full",),
) -> dict[str, dict]:
    """Verify the suite with each judge at each depth; print one table (and, for two columns, what each
    gets right that the other does not); return {column: {family: scores}}."""
    from audit.evaluation.progress import text_bar

    rows = load_suite(path)
    labels: dict[str, list[str]] = {}
    for judge in judges:
        for depth in depths:
            column = judge if len(depths) == 1 else f"{judge}, {depth}"
            bar = text_bar(len(rows), f"contrast claims ({column})", err)
            labels[column] = suite_labels(judge, rows=rows, progress=bar.update, llm=llm, depth=depth)
            bar.close()
    print(format_columns(rows, labels), file=out)
    return {column: family_scores(rows, labs) for column, labs in labels.items()}


def format_columns(rows: list[dict], labels: dict[str, list[str]]) -> str:
    """The table of each column's labels of ``rows`` and, for two columns, what each gets right that
    the other does not."""
    text = format_contrast({column: family_scores(rows, labs) for column, labs in labels.items()})
    return text + ("\n" + format_discordant(rows, labels) if len(labels) == 2 else "")


def format_discordant(rows: list[dict], labels: dict[str, list[str]]) -> str:
    """Per family, the claims the first column gets right (SUPPORTED vs not) that the second gets
    wrong, and the other way; in brackets, how many of them the column that got them wrong let
    through as SUPPORTED."""
    (a, la), (b, lb) = labels.items()
    lines = [
        f"claims right under {a} only / under {b} only (in brackets: let through as SUPPORTED by the other)"
    ]
    for family in (*FAMILIES, "all"):
        idx = [i for i, r in enumerate(rows) if family in ("all", r["family"])]
        if not idx:
            continue
        right_a = {i for i in idx if (rows[i]["label"] == "SUPPORTED") == (la[i] == "SUPPORTED")}
        right_b = {i for i in idx if (rows[i]["label"] == "SUPPORTED") == (lb[i] == "SUPPORTED")}
        only_a, only_b = right_a - right_b, right_b - right_a
        through_b = sum(lb[i] == "SUPPORTED" for i in only_a)
        through_a = sum(la[i] == "SUPPORTED" for i in only_b)
        lines.append(f"{family:<11}{len(only_a):>5} ({through_b}) / {len(only_b)} ({through_a})")
    return "\n".join(lines)


def format_contrast(results: dict[str, dict]) -> str:
    judges = list(results)
    head = (
        "Contrastive suite (hand-written minimal pairs; 2-class = SUPPORTED vs not, "
        f"target {100 * TARGET:.0f} per family; pairs = both members right; 3-class in brackets)"
    )
    lines = [head, "family".ljust(11) + "n".rjust(5) + "".join(f"{j:>28}" for j in judges)]
    for family in (*FAMILIES, "all"):
        cells = []
        for j in judges:
            s = results[j].get(family)
            if not s or not s["n"]:
                cells.append(f"{'-':>28}")
                continue
            mark = "" if family == "all" or s["acc2"] >= TARGET else " *"
            cells.append(
                f"{100 * s['acc2']:5.1f} pairs {100 * s['pairs']:5.1f} ({100 * s['acc3']:4.1f}){mark}".rjust(
                    28
                )
            )
        n = next((results[j][family]["n"] for j in judges if results[j].get(family)), 0)
        lines.append(f"{family:<11}{n:>5}" + "".join(cells))
    lines.append("* below the target")
    return "\n".join(lines)

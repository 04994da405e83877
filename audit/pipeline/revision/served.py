"""What a served revision changed, said in the served text itself (docs/SPEC_NOTES.md#quality-gates-and-the-revision-loop).

A revision served to the user (at once, or after a person accepted it) never hides a finding: each
claim it changed gets a mark ``[R1]`` in the served text, right after its new wording, and a note at
the end of the text that names the finding first (the claim's label as received and its
P(supported)), then what the revision changed, then the review case a person decides it in.
The fix is never shown instead of the finding. Django-free: the API and the answer page pass the
changed claims and their cases (``ChangedClaim``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

REVISION_WORDS = {
    "citation": "changed its citation",
    "corrective_retrieval": "cited another passage",
    "remove": "removed it",
    "qualify": "qualified it",
    "soften": "softened it",
    "correct": "corrected it",
}
WHY_BY_LABEL = {"REFUTED": "the evidence contradicts it", "NEI": "no source backs it well enough"}
LABEL_WORDS = {"REFUTED": "Refuted", "NEI": "Not enough evidence", "SUPPORTED": "Supported"}
_BODY_END = ".!?;: "


def change_words(strategy: str, *, removed: bool, cited: bool) -> str:
    """What the revision did to a claim, in words ("removed its citation", "qualified it", …)."""
    if removed:
        return "removed the claim"
    if strategy in ("citation", "corrective_retrieval") and not cited:
        return "removed its citation"
    return REVISION_WORDS.get(strategy, f"revised it ({strategy})")


def why_words(label: str) -> str:
    """Why the revision touched a claim of this (machine) label."""
    return WHY_BY_LABEL.get(label, WHY_BY_LABEL["NEI"])


@dataclass(frozen=True)
class ChangedClaim:
    """A claim a served revision changed: as received (text, machine label, P(supported)), the
    revision (strategy, its wording in the served text, blank when removed; whether it cites) and
    the tickets of the review cases it belongs to."""

    claim_id: str
    text: str
    label: str
    p_supported: float
    strategy: str
    wording: str
    cited: bool
    cases: tuple[str, ...] = ()


@dataclass(frozen=True)
class ServedChange:
    """One mark of the served text and its note."""

    mark: str
    claim_id: str
    finding: str  # the claim's label as received and its P(supported)
    why: str
    what: str
    received: str  # the claim as received
    wording: str  # its wording as served ("" when removed)
    cases: tuple[str, ...]
    placed: bool  # whether the mark stands in the text (a removed claim has no place left)

    @property
    def note(self) -> str:
        case = (
            f"a person reviews it in case {', '.join(self.cases)}"
            if self.cases
            else "no review case holds it"
        )
        return (
            f"[{self.mark}] {self.finding}: “{self.received}” — {self.why}. "
            f"Theoria {self.what} in the text served; {case}."
        )

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "cases": list(self.cases), "note": self.note}


def _body(text: str) -> str:
    return (text or "").strip().rstrip(_BODY_END)


def mark_served(text: str, changed: Sequence[ChangedClaim]) -> tuple[str, list[ServedChange]]:
    """The served ``text`` with a mark after each changed claim's wording and a note per change at
    its end, and the changes in the order of their marks (the text unchanged when nothing changed).

    A wording found in the text is marked where it ends (before its closing punctuation), in text
    order; a removed claim's note comes last, unplaced."""
    if not changed:
        return text, []
    located = []
    for c in changed:
        body = _body(c.wording)
        at = text.find(body) if body else -1
        located.append((at + len(body) if at >= 0 else -1, c))
    order = sorted(located, key=lambda item: (item[0] < 0, item[0]))
    changes = [
        ServedChange(
            mark=f"R{n}",
            claim_id=c.claim_id,
            finding=f"{LABEL_WORDS.get(c.label, c.label)} (P(supported) {c.p_supported:.2f})",
            why=why_words(c.label),
            what=change_words(c.strategy, removed=not c.wording, cited=c.cited),
            received=c.text,
            wording=c.wording,
            cases=tuple(c.cases),
            placed=end >= 0,
        )
        for n, (end, c) in enumerate(order, 1)
    ]
    marked = text
    for (end, _), change in sorted(zip(order, changes), key=lambda item: -item[0][0]):
        if end >= 0:
            marked = f"{marked[:end]} [{change.mark}]{marked[end:]}"
    notes = "\n".join(change.note for change in changes)
    return f"{marked.rstrip()}\n\nChanged by Theoria:\n{notes}", changes


def changed_claims(
    claims: Sequence[Any], cases_by_claim: dict[int, list[dict[str, Any]]]
) -> list[ChangedClaim]:
    """The claims (``audit.models.Claim``-like: claim_id, text, machine_label, confidence, revision,
    pk) whose revision the served text carries, with the tickets of their review cases
    (``cases_by_claim``: {claim pk: [escalation refs]}). A revision a reviewer undid (the received
    wording restored) is no longer served."""
    out = []
    for claim in claims:
        rev = dict(getattr(claim, "revision", None) or {})
        if not rev or (rev.get("review") or {}).get("action") == "restored_received_wording":
            continue
        refs = cases_by_claim.get(getattr(claim, "pk", -1), []) or []
        out.append(
            ChangedClaim(
                claim_id=str(getattr(claim, "claim_id", "")),
                text=str(getattr(claim, "text", "")),
                label=str(getattr(claim, "machine_label", "") or getattr(claim, "label", "")),
                p_supported=float(getattr(claim, "confidence", 0.0) or 0.0),
                strategy=str(rev.get("strategy") or ""),
                wording=str(rev.get("text") or ""),
                cited=bool(rev.get("cited")),
                cases=tuple(
                    str(r["ticket"]) for r in refs if r.get("type", "review") == "review" and r.get("ticket")
                ),
            )
        )
    return out

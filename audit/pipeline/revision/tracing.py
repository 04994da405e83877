"""The LLM rewrite, accepted only when traceable: every changed region lies in a sentence it was told to
change and every citation marker names a passage."""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from typing import Any

from audit.constants import CORRECTION_MIN_ALIGNMENT
from audit.pipeline.extraction import CITATION_RE, citation_anchors
from audit.pipeline.revision.editing import _aligned, replay_edits
from audit.pipeline.revision.model import Edit, Judge, Strategy
from audit.pipeline.revision.sentences import _Anchors
from audit.pipeline.types import ClaimVerdict


# --- LLM rewrite, accepted only when traceable ---------------------------------------------
def _map_position(opcodes: Sequence[tuple[str, int, int, int, int]], pos: int) -> int:
    for tag, i1, i2, j1, j2 in opcodes:
        if i1 <= pos <= i2:
            if tag == "equal":
                return j1 + (pos - i1)
            return j1 if pos == i1 else j2
    return opcodes[-1][4] if opcodes else pos


def trace_changes(
    before: str,
    after: str,
    claims: list[ClaimVerdict],
    instructions: list[dict[str, Any]],
    valid_anchors: _Anchors,
) -> tuple[list[Edit] | None, str]:
    """Edits for a free rewrite, or (None, why) when a change is not traceable to an instructed claim."""
    for anchor in citation_anchors(after):
        if anchor not in valid_anchors:
            return None, f"the rewrite cites [{anchor}], which names no passage"
    by_id = {c.claim.claim_id: c for c in claims}
    instructed = [(by_id[i["claim_id"]], i["strategy"]) for i in instructions if i.get("claim_id") in by_id]
    spans: dict[tuple[int, int], tuple[int, ...]] = {}
    for c, _ in instructed:
        a, b = c.claim.span
        while a > 0 and before[a - 1].isspace():  # the whitespace around a sentence goes with it
            a -= 1
        while b < len(before) and before[b].isspace():
            b += 1
        spans[(a, b)] = tuple(c.claim.span)
    opcodes = difflib.SequenceMatcher(None, before, after, autojunk=False).get_opcodes()
    touched: set[tuple[int, ...]] = set()
    for tag, i1, i2, _j1, _j2 in opcodes:
        if tag == "equal":
            continue
        region = [sent for (a, b), sent in spans.items() if a <= i1 and i2 <= b]
        if not region:
            return (
                None,
                f"the rewrite changed text outside the claims it was told to revise: {before[i1:i2][:60]!r}",
            )
        touched.add(region[0])
    # merge the touched sentences' regions (with their surrounding whitespace) into disjoint spans
    regions: list[list[int]] = []
    for ext, sent in sorted(spans.items()):
        if sent not in touched:
            continue
        if regions and ext[0] <= regions[-1][1]:
            regions[-1][1] = max(regions[-1][1], ext[1])
        else:
            regions.append([ext[0], ext[1]])
    edits: list[Edit] = []
    for a, b in regions:
        j1, j2 = _map_position(opcodes, a), _map_position(opcodes, b)
        for c, strategy in instructed:
            if a <= c.claim.span[0] and c.claim.span[1] <= b and tuple(c.claim.span) in touched:
                edits.append(
                    Edit(
                        claim_id=c.claim.claim_id,
                        claim_text=c.claim.text,
                        strategy=strategy,
                        span=(a, b),
                        before=before[a:b],
                        after=after[j1:j2],
                        reason="LLM rewrite_answer",
                        action="llm_rewrite",
                    )
                )
    if edits and replay_edits(before, edits) != after:
        return None, "the rewrite could not be mapped onto the instructed sentences"
    return edits, ""


def _unbacked_correction(edits: list[Edit], by_anchor: _Anchors, judge: Judge) -> str:
    """Why a rewrite's correction may not stand ("" when every one may): a corrected sentence must
    state the same fact (at least ``CORRECTION_MIN_ALIGNMENT`` of its content words, numbers aside,
    are the claim's: no other subject, no added statement) and be SUPPORTED by a passage it cites
    under the judge that labels claims."""
    for e in edits:
        if e.strategy != Strategy.CORRECT or not e.after.strip():
            continue
        new = re.sub(r"\s+", " ", CITATION_RE.sub("", e.after)).strip()
        if _aligned(new, [], e.claim_text) < CORRECTION_MIN_ALIGNMENT:
            return f"the correction of {e.claim_id} changes what the claim is about"
        cited = [by_anchor[a] for a in citation_anchors(e.after) if a in by_anchor]
        if not any((v := judge(new, p)) is not None and v.label == "SUPPORTED" for p in cited):
            return f"the correction of {e.claim_id} is not SUPPORTED by a passage it cites"
    return ""

"""The JSON schema of every LLM task's reply, in one place (docs/LLM.md).

Each schema has two forms:

* the **full** schema (``TASKS[task]``) the reply is validated against here, with its size and
  pattern limits;
* the **wire** schema (:func:`wire_schema`) sent to the server for constrained decoding: the same
  shape with ``minLength``, ``pattern``, large ``maxItems`` (and, for OpenAI's strict mode, every
  ``maxLength``) removed and every property required with ``additionalProperties: false``. Grammar engines (llama.cpp) expand size
  limits into grammar rules and give up on large ones ("exceeds sane defaults"), and OpenAI's strict
  mode wants every property required; the limits are checked here instead. Small array bounds and
  string bounds up to ``WIRE_MAX_LENGTH`` stay
  (a model that writes "1", "2", … "27" as questions is stopped by the grammar, not the token cap),
  and a batched call's claim ids are an enum of the claims it sent.

Every root is an object (OpenAI's structured outputs require it); lists are wrapped
(``{"claims": [...]}``). Batched tasks answer one row per claim, keyed by ``claim_id``.
"""

from __future__ import annotations

import copy

from audit.constants import COVE_MAX_QUESTIONS, LLM_BATCH_CLAIMS

_CLAIM_ID = {"type": "string", "pattern": "^c[1-9][0-9]*$", "maxLength": 8}
_TEXT = {"type": "string", "minLength": 3, "maxLength": 600}
# every free-text field is bounded, and bounded short where it is only an explanation: a looping
# model ("The evidence does not support the claim." x30) stops at the bound, not the token cap
REASON_MAX_CHARS = 200


def _rows(row_properties: dict, max_items: int) -> dict:
    return {
        "type": "array",
        "minItems": 1,
        "maxItems": max_items,
        "items": {"type": "object", "required": list(row_properties), "properties": row_properties},
    }


def _root(**properties) -> dict:
    return {"type": "object", "required": list(properties), "properties": properties}


JUDGE_VERDICTS = ["SUPPORTED", "PARTIAL", "UNSUPPORTED", "CONTRADICTED"]
COVE_VERDICTS = ["CONSISTENT", "INCONSISTENT", "UNKNOWN"]
SELFCHECK_VERDICTS = ["SUPPORTS", "CONTRADICTS", "NOT_MENTION"]

TASKS: dict[str, dict] = {
    "extract_claims": _root(claims=_rows({"text": _TEXT}, 200)),
    "judge": _root(
        results=_rows(
            {
                "claim_id": _CLAIM_ID,
                "verdict": {"enum": JUDGE_VERDICTS},
                "reasoning": {"type": "string", "minLength": 3, "maxLength": REASON_MAX_CHARS},
            },
            LLM_BATCH_CLAIMS,
        )
    ),
    "cove_questions": _root(
        results=_rows(
            {
                "claim_id": _CLAIM_ID,
                "questions": {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": COVE_MAX_QUESTIONS + 3,
                    "items": {"type": "string", "minLength": 8, "maxLength": 200},
                },
            },
            LLM_BATCH_CLAIMS,
        )
    ),
    "cove_answer": _root(
        answers=_rows(
            {
                "question": {"type": "integer"},
                "answer": {"type": "string", "maxLength": 300},
                "found": {"type": "boolean"},
            },
            COVE_MAX_QUESTIONS + 3,
        )
    ),
    "cove_compare": _root(
        results=_rows(
            {
                "claim_id": _CLAIM_ID,
                "verdicts": {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": COVE_MAX_QUESTIONS + 3,
                    "items": {"enum": COVE_VERDICTS},
                },
            },
            LLM_BATCH_CLAIMS,
        )
    ),
    "selfcheck_judge": _root(
        results=_rows({"claim_id": _CLAIM_ID, "verdict": {"enum": SELFCHECK_VERDICTS}}, 200)
    ),
    # the structured-output probe: a reply a model only gives when the server constrains it
    "probe": _root(probe={"enum": ["theoria"]}),
}

_LIMIT_KEYS = ("maxItems", "maxLength", "minLength", "pattern")
WIRE_MAX_ITEMS = LLM_BATCH_CLAIMS  # array bounds up to this stay in the wire schema
WIRE_MAX_LENGTH = 600  # string bounds up to this stay in a grammar's wire schema (llama.cpp refuses ~2000)


def wire_schema(task: str, items: int | None = None, lengths: bool = True) -> dict:
    """The schema sent to the server for ``task``: every property required, closed objects, and no
    size limit but small array bounds (at most ``WIRE_MAX_ITEMS``, a short repetition in a grammar)
    and, with ``lengths`` (grammar engines; OpenAI's strict mode refuses the keyword), string
    bounds up to ``WIRE_MAX_LENGTH``: the grammar stops a looping free-text field at its bound.

    ``items``: the claims of a batched call, named ``c1`` … ``c<items>``. The rows are then bound to
    exactly that many and each ``claim_id`` to those names, so a constrained model can neither
    invent an id ("108") nor stop before the last claim.
    """

    def strip(node):
        if isinstance(node, dict):
            out = {
                k: strip(v)
                for k, v in node.items()
                if k not in _LIMIT_KEYS
                or (k == "maxItems" and v <= WIRE_MAX_ITEMS)
                or (k == "maxLength" and lengths and v <= WIRE_MAX_LENGTH)
            }
            if out.get("type") == "object" and "properties" in out:
                out["required"] = list(out["properties"])
                out["additionalProperties"] = False
            if out.get("minItems", 0) > 1:
                out["minItems"] = 1
            return out
        if isinstance(node, list):
            return [strip(v) for v in node]
        return node

    schema = strip(copy.deepcopy(TASKS[task]))
    rows = schema["properties"].get("results")
    if items and items <= WIRE_MAX_ITEMS and rows and "claim_id" in rows["items"]["properties"]:
        rows["items"]["properties"]["claim_id"] = {"enum": [f"c{n}" for n in range(1, items + 1)]}
        rows["minItems"] = rows["maxItems"] = items
    return schema

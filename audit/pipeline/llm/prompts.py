"""Prompt templates and the JSON schemas their replies must satisfy.

Each system prompt opens with a fixed first line naming its task, so the templates stay
deterministic (same input, same prompt) and a log or a test server can tell the calls apart.
Evidence is always numbered ``[1]``, ``[2]``, ... in the order the caller gives it.
"""

from __future__ import annotations

from audit.constants import COVE_MAX_QUESTIONS, LLM_EVIDENCE_CHARS

EXTRACT_SYSTEM = """TASK: extract_claims
You split an answer into atomic factual claims (seed spec 4.1).
Rules:
- One claim per fact: a number, a named entity, a date, a causal statement, a definition.
- Each claim must stand alone: replace pronouns by what they refer to.
- Keep the answer's wording; do not add facts, do not judge truth, drop citation markers like [1].
- Leave out questions, greetings, opinions and statements about the answer itself.
- Number claims c1, c2, ... in reading order.
Reply with ONLY a JSON array, no prose: [{"claim_id": "c1", "text": "..."}, ...]"""

CLAIMS_SCHEMA = {
    "type": "array",
    "minItems": 1,
    "maxItems": 200,
    "items": {
        "type": "object",
        "required": ["claim_id", "text"],
        "properties": {
            "claim_id": {"type": "string", "pattern": "^c[1-9][0-9]*$"},
            "text": {"type": "string", "minLength": 3, "maxLength": 2000},
        },
    },
}

JUDGE_SYSTEM = """TASK: isolated_verification
You are a strict fact checker. You see ONE claim and numbered evidence passages, nothing else.
Decide from the evidence alone (not from your own knowledge) whether it supports the claim:
- SUPPORTED: the evidence fully entails the claim.
- PARTIAL: some aspects are supported; a qualifier, number or scope is missing or different.
- UNSUPPORTED: the evidence does not establish the claim.
- CONTRADICTED: the evidence states the opposite or a different value.
Reply with ONLY a JSON object:
{"verdict": "SUPPORTED|PARTIAL|UNSUPPORTED|CONTRADICTED", "reasoning": "one or two sentences",
 "key_match": true|false, "issues": ["..."], "passages": [numbers of the passages you relied on]}"""

JUDGE_SCHEMA = {
    "type": "object",
    "required": ["verdict", "reasoning"],
    "properties": {
        "verdict": {"enum": ["SUPPORTED", "PARTIAL", "UNSUPPORTED", "CONTRADICTED"]},
        "reasoning": {"type": "string"},
        "key_match": {"type": "boolean"},
        "issues": {"type": "array", "items": {"type": "string"}},
        "passages": {"type": "array", "items": {"type": "integer"}},
    },
}

COVE_PLAN_SYSTEM = f"""TASK: cove_questions
You plan the verification of one claim (Chain-of-Verification).
Write 1 to {COVE_MAX_QUESTIONS} short factual questions whose answers would confirm or refute the
claim. Each question must be answerable on its own, without seeing the claim.
Reply with ONLY a JSON object: {{"questions": ["...", "..."]}}"""

COVE_PLAN_SCHEMA = {
    "type": "object",
    "required": ["questions"],
    "properties": {"questions": {"type": "array", "minItems": 1, "maxItems": COVE_MAX_QUESTIONS + 3,
                                 "items": {"type": "string", "minLength": 3}}},
}

COVE_ANSWER_SYSTEM = """TASK: cove_answer
Answer the question using ONLY the numbered passages. If they do not contain the answer, say so.
Reply with ONLY a JSON object: {"answer": "...", "found": true|false}"""

COVE_ANSWER_SCHEMA = {
    "type": "object",
    "required": ["answer", "found"],
    "properties": {"answer": {"type": "string"}, "found": {"type": "boolean"}},
}

COVE_COMPARE_SYSTEM = """TASK: cove_compare
You compare a claim with independent answers to verification questions about it.
For each numbered question say whether its answer is CONSISTENT with the claim, INCONSISTENT with
it, or UNKNOWN (the answer does not say).
Reply with ONLY a JSON object: {"verdicts": ["CONSISTENT|INCONSISTENT|UNKNOWN", ...]} (one per question, in order)"""

COVE_COMPARE_SCHEMA = {
    "type": "object",
    "required": ["verdicts"],
    "properties": {"verdicts": {"type": "array", "minItems": 1,
                                "items": {"enum": ["CONSISTENT", "INCONSISTENT", "UNKNOWN"]}}},
}

SELFCHECK_SAMPLE_SYSTEM = """TASK: selfcheck_sample
Answer the question in a short paragraph, using the numbered passages when they help."""

SELFCHECK_JUDGE_SYSTEM = """TASK: selfcheck_judge
You see one passage written by someone else and a list of claims.
For each claim say whether the passage SUPPORTS it, CONTRADICTS it, or does NOT_MENTION it.
Reply with ONLY a JSON object: {"results": [{"claim_id": "c1", "verdict": "SUPPORTS|CONTRADICTS|NOT_MENTION"}, ...]}"""

SELFCHECK_JUDGE_SCHEMA = {
    "type": "object",
    "required": ["results"],
    "properties": {"results": {"type": "array", "items": {
        "type": "object", "required": ["claim_id", "verdict"],
        "properties": {"claim_id": {"type": "string"},
                       "verdict": {"enum": ["SUPPORTS", "CONTRADICTS", "NOT_MENTION"]}}}}},
}

DRAFT_SYSTEM = """TASK: draft_answer
Answer the question using ONLY the numbered passages.
End every sentence with the number of the passage that supports it in square brackets, like [1] or [2].
If the passages do not answer the question, say that they do not. Reply with the answer text only."""

REWRITE_SYSTEM = """TASK: rewrite_answer
You revise an answer so that every sentence is supported by the passages, each shown after the
citation marker that cites it (like [1] or [cite:abc]).
- Keep sentences that are not listed as problems, with their citation markers, unchanged.
- Carry out the instruction given for each problem claim: correct it to what the passages say with
  the marker of the passage, soften it, or remove it.
- Use only the markers shown. Do not add facts that the passages do not state.
Reply with the revised answer text only."""


def numbered_passages(texts: list[str]) -> str:
    """``[1] text`` blocks, each cut to LLM_EVIDENCE_CHARS characters."""
    return "\n\n".join(f"[{i}] {t.strip()[:LLM_EVIDENCE_CHARS]}" for i, t in enumerate(texts, 1)) or "(no passages)"


def messages(system: str, user: str) -> list[dict]:
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]

"""Prompt templates of the LLM tasks (their reply schemas are in :mod:`audit.pipeline.llm.schemas`).

Each template opens with a fixed first line naming its task, so the templates stay
deterministic (same input, same prompt) and a log or a test server can tell the calls apart.
Evidence is always numbered ``[1]``, ``[2]``, ... in the order the caller gives it.

The instructions travel in the **user** message (:func:`messages`): some chat templates
(llama.cpp's gemma format among them) silently drop system messages, and every model reads the
user turn. The JSON shapes are described with ``<placeholders>``, which the JSON reader never
accepts as an answer, so a model that copies the example gets a repair, not a verdict.
"""

from __future__ import annotations

import re
from typing import Any

from audit.constants import COVE_MAX_QUESTIONS, LLM_EVIDENCE_CHARS

EXTRACT_SYSTEM = """TASK: extract_claims
You split an answer into atomic factual claims.
Rules:
- One claim per fact: a number, a named entity, a date, a causal statement, a definition.
- Each claim must stand alone: replace pronouns by what they refer to.
- Keep the answer's wording; do not add facts, do not judge truth, drop citation markers like [1].
- Leave out questions, greetings, opinions and statements about the answer itself.
- List the claims in reading order.
Reply with ONLY a JSON object: {"claims": [{"text": "<claim>"}]}"""

MINICHECK_SYSTEM = """TASK: minicheck
Read the document, then the claim. Answer with one word, Yes or No: is the claim supported by the
document above? Yes only if every part of the claim is stated or directly implied by the document;
No if the document contradicts it, does not mention part of it, or says it with another quantity,
unit, modality or condition."""

JUDGE_SYSTEM = """TASK: isolated_verification
You are a strict fact checker. For each numbered claim you see ONLY its own evidence passages.
Decide from its evidence alone (not from your own knowledge) whether the evidence supports the claim:
- SUPPORTED: the evidence fully entails the claim.
- PARTIAL: some aspects are supported; a qualifier, number or scope is missing or different.
- UNSUPPORTED: the evidence does not establish the claim.
- CONTRADICTED: the evidence states the opposite or a different value.
Reply with ONLY a JSON object, one result per claim:
{"results": [{"claim_id": "<id>", "verdict": "<SUPPORTED, PARTIAL, UNSUPPORTED or CONTRADICTED>",
 "reasoning": "<one short sentence, at most 25 words, naming the passage>"}]}"""

COVE_PLAN_SYSTEM = f"""TASK: cove_questions
You plan the verification of claims (Chain-of-Verification).
For each claim write 1 to {COVE_MAX_QUESTIONS} short factual questions whose answers would confirm or
refute it. Each question must be answerable on its own, without seeing the claim.
Reply with ONLY a JSON object: {{"results": [{{"claim_id": "<id>", "questions": ["<question>"]}}]}}"""

COVE_ANSWER_SYSTEM = """TASK: cove_answer
Answer each numbered question using ONLY the numbered passages. If they do not contain the answer,
say so and set found to false.
Reply with ONLY a JSON object: {"answers": [{"question": <number>, "answer": "<answer>", "found": <true or false>}]}"""

COVE_COMPARE_SYSTEM = """TASK: cove_compare
You compare claims with independent answers to verification questions about them.
For each claim and each of its numbered questions say whether the answer is CONSISTENT with the
claim, INCONSISTENT with it, or UNKNOWN (the answer does not say).
Give one verdict per question, in the questions' order.
Reply with ONLY a JSON object:
{"results": [{"claim_id": "<id>", "verdicts": ["<CONSISTENT, INCONSISTENT or UNKNOWN>"]}]}"""

SELFCHECK_SAMPLE_SYSTEM = """TASK: selfcheck_sample
Answer the question in a short paragraph, using the numbered passages when they help."""

SELFCHECK_JUDGE_SYSTEM = """TASK: selfcheck_judge
You see one passage written by someone else and a list of claims.
For each claim say whether the passage SUPPORTS it, CONTRADICTS it, or does NOT_MENTION it.
Reply with ONLY a JSON object: {"results": [{"claim_id": "<id>", "verdict": "<SUPPORTS, CONTRADICTS or NOT_MENTION>"}]}"""

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
    return (
        "\n\n".join(f"[{i}] {t.strip()[:LLM_EVIDENCE_CHARS]}" for i, t in enumerate(texts, 1))
        or "(no passages)"
    )


def messages(instructions: str, user: str) -> list[dict[str, Any]]:
    """One user message: the task's instructions, then its input (see the module doc)."""
    return [{"role": "user", "content": f"{instructions}{SEPARATOR}{user}"}]


SEPARATOR = "\n\n---\n\n"
_JSON_EXAMPLE_RE = re.compile(r"Reply with ONLY a JSON object.*?(?=\n\n---\n\n)", re.DOTALL)


def _shape(node: dict[str, Any]) -> str:
    """A schema in words: ``results: list of {claim_id, verdict: SUPPORTED | PARTIAL, ...}``."""
    if "enum" in node:
        return " | ".join(map(str, node["enum"]))
    if node.get("type") == "object":
        return "{" + ", ".join(f"{k}: {_shape(v)}" for k, v in node["properties"].items()) + "}"
    if node.get("type") == "array":
        return f"list of {_shape(node['items'])}"
    return str(node.get("type", "value"))


def for_structured_output(messages: list[dict[str, Any]], schema: dict[str, Any]) -> list[dict[str, Any]]:
    """The messages with the prompt's JSON example replaced by the schema in words.

    Under a grammar, a small model given an example copies it verbatim (placeholders included):
    the server already enforces the shape, so the prompt names the fields instead.
    """
    hint = "Reply with ONLY a JSON object " + _shape(schema)
    first = messages[0]
    content = _JSON_EXAMPLE_RE.sub(lambda _: hint, str(first.get("content", "")), count=1)
    return [{**first, "content": content}, *messages[1:]]


def echoes_prompt(reply: str, instructions: str) -> bool:
    """True when a free-text reply repeats the prompt: the task line, a line of the instructions,
    or the input's own labels (a small model asked to answer often copies what it was given). A
    "---" alone is no echo: real answers use it (a rule, a range "1990---1995")."""
    text = " ".join((reply or "").split())
    if "TASK:" in text or "Passages:" in text:
        return True
    lines = [" ".join(line.split()) for line in instructions.splitlines()]
    return any(len(line) >= 24 and line in text for line in lines)

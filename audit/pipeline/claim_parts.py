"""The parts of a compound claim, from the dependency parse ``binding.py`` loads.

"X did A and B", "X did A, and Y did B", "X bought A and B": each coordinated predicate, clause or
object makes a part that says one thing, with the shared subject (and the rest of the sentence) kept.
A claim is only as supported as its least supported part, so a reader that sees the stated half
of a conjunction cannot carry the unstated half with it.

``parts(claim)`` returns the parts, or ``[]`` for a claim that is not compound (or that the parser
cannot split cleanly: at most ``MAX_PARTS`` parts, each at least ``MIN_PART_WORDS`` words).

May import: ``audit.pipeline.binding`` (its parser).
"""

from __future__ import annotations

from typing import Any

MAX_PARTS = 4
MIN_PART_WORDS = 3


def _text(tokens: list[Any]) -> str:
    words = sorted(tokens, key=lambda t: t.i)
    text = "".join(t.text_with_ws for t in words).strip().rstrip(",;").strip()
    text = text.replace(" .", ".").replace(" ,", ",")
    text = text[:1].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else text + "."


def _drop(tokens: set[Any], branch: Any) -> set[Any]:
    """``tokens`` without ``branch``'s subtree, its coordinator and the comma before it."""
    gone = set(branch.subtree)
    for t in branch.head.children:
        if t.dep_ in ("cc", "preconj") or (t.dep_ == "punct" and t.i < branch.i and t.i > branch.head.i):
            gone.add(t)
    return {t for t in tokens if t not in gone}


def _as_sibling(first: set[Any], root: Any, conj: Any, own: set[Any]) -> set[Any]:
    """``first`` with the object or prepositional object before ``conj`` replaced by ``conj``'s words."""
    before = [c for c in root.children if c.i < conj.i and c.dep_ in ("dobj", "attr", "prep", "dative")]
    if any(d.dep_ == "det" for d in conj.children):  # a whole noun phrase: the object it stands beside
        before = [c for c in before if c.dep_ != "prep"] or before
    if not before:
        return own
    sibling = before[-1]
    if sibling.dep_ == "prep":
        sibling = next((t for t in sibling.children if t.dep_ == "pobj"), sibling)
    between = {t for c in root.children if sibling.i < c.i < conj.i for t in c.subtree}
    return (first - set(sibling.subtree) - between) | own


def _split(doc: Any) -> list[set[Any]]:
    root = next((t for t in doc if t.dep_ == "ROOT"), None)
    if root is None:
        return []
    whole = set(doc)
    # coordinated predicates or clauses on the root
    conjs = [
        c for c in root.children if c.dep_ == "conj" and c.pos_ in ("VERB", "AUX", "ADJ", "NOUN", "PROPN")
    ]
    if conjs:
        first = whole
        for c in conjs:
            first = _drop(first, c)
        subject = [t for c in root.children if c.dep_ in ("nsubj", "nsubjpass") for t in c.subtree]
        rest = []
        for c in conjs:
            own = set(c.subtree) - {t for d in c.children if d.dep_ == "conj" for t in d.subtree}
            own -= {t for t in c.children if t.dep_ == "cc"}
            verb_before = any(  # "and improved survival": the parser read a verb as an adjective
                t.i < c.i and (t.tag_ in ("VBD", "VBN", "VBZ", "VBP") or t.text.endswith("ed"))
                for t in c.children
            )
            if c.pos_ in ("NOUN", "PROPN") and not verb_before:
                # a noun coordinated with an object or a prepositional object the verb already has
                rest.append(_as_sibling(first, root, c, own))
                continue
            has_subject = any(d.dep_ in ("nsubj", "nsubjpass", "expl") for d in c.children)
            rest.append(own if has_subject else own | set(subject))
        return [first, *rest]
    # coordinated objects of the root
    for obj in (c for c in root.children if c.dep_ in ("dobj", "attr", "pobj", "dative")):
        more = [c for c in obj.children if c.dep_ == "conj" and c.pos_ in ("NOUN", "PROPN")]
        if not more:
            continue
        base = whole
        for c in more:
            base = _drop(base, c)
        out = [base]
        for c in more:
            swap = (base - set(obj.subtree)) | (
                set(c.subtree) - {t for d in c.children if d.dep_ == "conj" for t in d.subtree}
            )
            out.append(swap)
        return out
    return []


def parts(claim: str) -> list[str]:
    """The parts of a compound claim (module docstring), or ``[]``."""
    from audit.pipeline.binding import get_parser

    doc = get_parser()(claim)
    split = _split(doc)
    if not 2 <= len(split) <= MAX_PARTS:
        return []
    texts = [_text(list(p)) for p in split]
    if any(len(t.split()) < MIN_PART_WORDS for t in texts) or len(set(texts)) < len(texts):
        return []
    return texts

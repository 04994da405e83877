"""Structural contradiction checks: a claim against its best-aligned evidence sentence (plain Python).

The learned judge scores paraphrase-level support well but cannot see that "LTP does not require
NMDA receptors" says the opposite of "LTP is dependent on NMDA receptors". These checks are explicit
and explainable; each finding names the rule, the words that mismatched and the evidence sentence.

- alignment: the share of the claim's content words (stems) an evidence sentence holds; a rule only
  looks at sentences aligned at least ``STRUCTURE_MIN_ALIGNMENT`` (the words a rule explains — the
  antonym, the substituted entity — are left out of that share);
- ``negation``: the claim is negated and the clause of the sentence that carries the aligned
  predicate is not, or the other way round (strict cues: not, no, never, n't, without, …; lexical
  negations such as "lacks", "absent", "fails" count as negated so that they never fire alone);
- ``antonym``: the claim states a word of the curated lexicon (``audit.pipeline.lexicon``) where
  the sentence states its opposite, in a clause that shares words with the claim and has the same
  polarity;
- ``substitution``: a content word of the claim found nowhere in the evidence, whose slot (the same
  anchor word before or after it) the sentence fills with another word that is not a near-synonym
  (embedding cosine below ``STRUCTURE_SUBSTITUTION_MAX_COS``);
- ``missing_entity``: a named entity (capitalised word, acronym) of the claim found nowhere in the
  evidence while the rest of the claim aligns: it keeps the claim below SUPPORTED, it does not refute.

The decision looks at the sentence ranked first by alignment: a finding there contradicts the claim
unless another sentence without findings aligns at least as well (that sentence supports it).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import pairwise
from typing import TYPE_CHECKING, Any

from audit.constants import (
    BINDING_MAX_SENTENCE_CHARS,
    NEGATION_PREDICATE_ON,
    STRUCTURE_ANTONYM_CLAUSE_SHARED,
    STRUCTURE_CLAUSE_MIN_ALIGNMENT,
    STRUCTURE_MIN_ALIGNMENT,
    STRUCTURE_SUBSTITUTION_MAX_COS,
)
from audit.pipeline.extraction import split_sentences
from audit.pipeline.lexicon import NEGATION_CUES, OPPOSITES
from audit.pipeline.text import STOPWORDS, WORD_RE, normalize, stem

if TYPE_CHECKING:
    from audit.pipeline.binding import StoredParses

LEXICAL_NEGATIONS = frozenset(
    "lack lacks lacking lacked absence absent fail fails failed failure unable neither nor unlikely".split()
)
DETERMINERS = frozenset("the a an its their his her this that these those".split())
CLAUSE_SPLIT_RE = re.compile(
    r"[,;:()\[\]]|\s[-–—]\s|\b(?:although|though|but|whereas|while|however|except|"
    r"yet|unless|and)\b",
    re.I,
)
MAX_MISSING_FOR_SUBSTITUTION = 1
SLOT_PREPOSITIONS = frozenset("in at from into on by".split())


@dataclass
class Sentence:
    text: str
    passage_id: str
    tokens: list[str]  # lower-case, hyphenated words split
    stems: set[str]


@dataclass
class Finding:
    rule: str  # negation | antonym | substitution | missing_entity
    claim_words: str
    evidence_words: str
    sentence: str
    passage_id: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "claim": self.claim_words,
            "evidence": self.evidence_words,
            "sentence": self.sentence[:300],
            "passage_id": self.passage_id,
        }


# keep a claim below SUPPORTED; never refute it
CAPPING_RULES = ("missing_entity", "unstated_obligation", "role_mismatch", "unstated_content")


@dataclass
class StructureReport:
    contradicted: bool = False
    missing_entity: bool = False
    unstated_obligation: bool = False
    unbound: bool = False  # role binding: a role bound otherwise, or content no source states (binding.py)
    # the claim's predicate stated with the claim's polarity (binding.polarity): the negations written
    # are the claim's own or another predicate's, so a judge's refutation is no contradiction
    negation_agrees: bool = False
    negation_entails: bool = False  # ... and a negated clause of it entails the claim (binding.polarity)
    alignment: float = 0.0
    sentence: str = ""
    findings: list[Finding] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "contradicted": self.contradicted,
            "missing_entity": self.missing_entity,
            "unstated_obligation": self.unstated_obligation,
            "unbound": self.unbound,
            "negation_agrees": self.negation_agrees,
            "negation_entails": self.negation_entails,
            "alignment": round(self.alignment, 4),
            "aligned_sentence": self.sentence[:300],
            "findings": [f.as_dict() for f in self.findings],
        }


def tokens(text: str, *, lower: bool = True) -> list[str]:
    return list(_tokens(text, lower))


@lru_cache(maxsize=50_000)
def _tokens(text: str, lower: bool) -> tuple[str, ...]:
    """Cached: every claim checked against a passage splits the same sentences into words."""
    text = normalize(text).replace("\u2019", "'")
    found = WORD_RE.findall(text.lower() if lower else text)
    return tuple(p for w in found for p in (w[:-2] if w[-2:] in ("'s", "'S") else w).split("-") if p)


def _is_content(tok: str) -> bool:
    return (
        tok not in STOPWORDS
        and tok not in NEGATION_CUES
        and not tok.endswith("n't")
        and (len(tok) > 1 or tok.isdigit())
    )


def _is_word(tok: str) -> bool:
    return tok.replace("'", "").isalpha()


def _content_stems(toks: list[str]) -> list[str]:
    return [stem(t) for t in toks if _is_content(t)]


def _strict_negated(toks: list[str]) -> bool:
    for k, t in enumerate(toks):
        if t == "not" and ((k and toks[k - 1] in ("or", "whether")) or toks[k + 1 : k + 2] == ["only"]):
            continue  # "whether or not", "not only … but": no negation of the predicate
        if t in NEGATION_CUES or t.endswith("n't"):
            return True
    return False


AUXILIARIES = frozenset(
    "be is are was were been being am do does did have has had can could will would shall "
    "should may might must to able yet even also always".split()
)


def _scope_in(toks: list[str], target: set[str]) -> bool:
    """Whether a negation cue of ``toks`` governs a word of ``target`` (the first word after the cue
    and its auxiliaries, or the word it negates in a contraction such as "isn't present")."""
    for k, t in enumerate(toks):
        if t in NEGATION_CUES or t.endswith("n't"):
            j = k + 1
            while j < len(toks) and toks[j] in AUXILIARIES:
                j += 1
            if j < len(toks) and stem(toks[j]) in target:
                return True
    return False


def _polarity(toks: list[str]) -> tuple[bool, bool]:
    """(strictly negated, negated in any way — strict or lexical)."""
    strict = _strict_negated(toks)
    return strict, strict or any(t in LEXICAL_NEGATIONS for t in toks)


def _coverage(
    cstems: list[str], target: set[str], leave_out: frozenset[str] | set[str] = frozenset()
) -> float:
    kept = [w for w in cstems if w not in leave_out]
    return sum(1 for w in kept if w in target) / len(kept) if kept else 0.0


def clauses(sentence: str) -> list[list[str]]:
    return [t for t in (tokens(part) for part in CLAUSE_SPLIT_RE.split(sentence) if part) if t]


def _negation(claim_clauses: list[list[str]], s: Sentence) -> Finding | None:
    """Each clause of the claim (``clauses(claim)``) against the sentence clause that aligns best with it."""
    parts = clauses(s.text)
    if not parts:
        return None
    part_stems = [{stem(t) for t in p} for p in parts]
    for ctoks in claim_clauses:
        cl_stems = _content_stems(ctoks)
        if len(cl_stems) < 2:
            continue
        best_cov, best_k = max((_coverage(cl_stems, ps), k) for k, ps in enumerate(part_stems))
        if best_cov < STRUCTURE_CLAUSE_MIN_ALIGNMENT:
            continue
        c_strict, c_any = _polarity(ctoks)
        e_strict, e_any = _polarity(parts[best_k])
        if e_strict and not c_any and not _scope_in(parts[best_k], {stem(t) for t in ctoks}):
            continue  # the sentence negates something the claim does not say
        if (c_strict and not e_any) or (e_strict and not c_any):
            cue = next(
                (
                    t
                    for t in (ctoks if c_strict else parts[best_k])
                    if t in NEGATION_CUES or t.endswith("n't")
                ),
                "",
            )
            return Finding(
                "negation",
                cue if c_strict else "(affirmative)",
                cue if e_strict else "(affirmative)",
                s.text,
                s.passage_id,
            )
    return None


NEGATING_PREFIXES = ("non", "un", "ir")  # any base word of 4+ letters: "irreversibly" / "reversibly"
# these also start ordinary words ("inform", "discover"): only before a base of 5+ letters with an
# adjective or adverb ending ("inactive", "impossible", "illegal", "discontinuous")
LOOSE_PREFIXES = ("in", "im", "il", "dis")
ADJECTIVE_ENDINGS = ("able", "ible", "ive", "al", "ly", "ent", "ant", "ic", "ous", "ar", "ete", "ful")


def prefix_opposite(a: str, b: str) -> bool:
    """Whether one word is the other with a negating prefix ("reversibly" / "irreversibly")."""
    if len(a) > len(b):
        a, b = b, a
    if not a.isalpha() or not b.endswith(a) or len(a) < 4:
        return False
    px = b[: len(b) - len(a)]
    if px in NEGATING_PREFIXES:
        return True
    return px in LOOSE_PREFIXES and len(a) >= 5 and a.endswith(ADJECTIVE_ENDINGS)


def _antonyms(claim_toks: list[str], cstems: list[str], s: Sentence) -> list[Finding]:
    claim_all = {stem(t) for t in claim_toks}
    sent_all = {stem(t) for t in s.tokens}
    sent_words = set(s.tokens)
    c_neg = _polarity(claim_toks)[1]
    out = []
    for tok in claim_toks:
        w = stem(tok)
        if w in sent_all or tok in sent_words:
            continue
        opposite = set(OPPOSITES.get(w, ())) | {stem(t) for t in sent_words if prefix_opposite(tok, t)}
        for a in opposite & sent_all:
            if a in claim_all:
                continue
            for part in clauses(s.text):
                pstems = [stem(t) for t in part]
                if a not in pstems:
                    continue
                shared = len(set(cstems) & set(pstems) - {w, a})
                if shared >= STRUCTURE_ANTONYM_CLAUSE_SHARED and _polarity(part)[1] == c_neg:
                    word = next(t for t in part if stem(t) == a)
                    out.append(Finding("antonym", tok, word, s.text, s.passage_id))
                    break
            if out and out[-1].claim_words == tok:
                break
    return out


def _slot_fillers(claim_toks: list[str], idx: int, s: Sentence, claim_all: set[str]) -> list[str]:
    """Words of the sentence in the slot of claim_toks[idx]: the object of the same preposition.

    The claim reads "<aligned word> <preposition> [the] <word>"; the sentence must read
    "<a word of the claim> <preposition> [the] <other word(s)>" ("discovered grid cells in the
    entorhinal cortex" against "discovered in the amygdala").
    """
    left = idx - 1
    while left >= 0 and claim_toks[left] in DETERMINERS:
        left -= 1
    if left < 1 or claim_toks[left] not in SLOT_PREPOSITIONS:
        return []
    prep = claim_toks[left]
    st = s.tokens
    found = []
    for k, t in enumerate(st):
        if t != prep or k == 0 or stem(st[k - 1]) not in claim_all:
            continue
        j = k + 1
        while j < len(st) and st[j] in DETERMINERS:
            j += 1
        if j >= len(st):
            continue
        f = st[j]
        if not _is_content(f) or not _is_word(f) or stem(f) in claim_all:
            continue
        phrase = [f]
        if (
            j + 1 < len(st)
            and _is_content(st[j + 1])
            and _is_word(st[j + 1])
            and stem(st[j + 1]) not in claim_all
        ):
            phrase.append(st[j + 1])
        found.append(" ".join(phrase))
    return found


ACRONYM_SKIP = frozenset("of the and at for in on de".split())


def _spelled_otherwise(word: str, evidence_tokens: list[str]) -> bool:
    """The word written as two words ("Gameboy" / "Game Boy") or as the initials of an evidence
    phrase ("UT" / "University of Texas") — the same entity, not a missing or substituted one."""
    for a, b in pairwise(evidence_tokens):
        if a + b == word:
            return True
    if 2 <= len(word) <= 5:
        for k in range(len(evidence_tokens)):
            letters = [t[0] for t in evidence_tokens[k : k + 3 * len(word)] if t not in ACRONYM_SKIP]
            if evidence_tokens[k] not in ACRONYM_SKIP and "".join(letters[: len(word)]) == word:
                return True
    return False


def _entities(claim: str) -> set[str]:
    """Stems of capitalised words (not sentence-initial) and acronyms of the claim."""
    raw = tokens(claim, lower=False)
    out = set()
    for k, t in enumerate(raw):
        if (k > 0 and t[:1].isupper() and t.lower() not in STOPWORDS) or (
            len(t) >= 2 and t.isupper() and _is_word(t)
        ):
            out.add(stem(t.lower()))
    return out


# deontic cues only: "X requires Y" is how science states a dependence, not an obligation
OBLIGATION_CUES = frozenset("must shall mandatory obligatory".split())
OBLIGATION_PHRASES = (
    ("have", "to"),
    ("has", "to"),
    ("required", "to"),
    ("obliged", "to"),
    ("obligated", "to"),
)


def _is_obligation(toks: list[str]) -> bool:
    return any(t in OBLIGATION_CUES for t in toks) or any(
        pair in OBLIGATION_PHRASES for pair in pairwise(toks)
    )


SPECIFIC_MARKERS = frozenset("by within before after from".split())  # "approved by <who>", "within <when>"
SPECIFIC_LOOKBACK = 3  # a specific is a word at most this many words after its marker or a number


def _unstated_specifics(
    claim_toks: list[str], evidence_stems: set[str], evidence_tokens: list[str]
) -> list[str]:
    """The specifics of an obligation the evidence never states: content words found nowhere in the
    evidence that name who, when or how many ("by two pharmacists", "within 3 days")."""
    from audit.pipeline.numbers import SPELLED_COUNTS

    out = []
    for k, t in enumerate(claim_toks):
        if (
            not (_is_content(t) and _is_word(t) and len(t) > 2)
            or stem(t) in evidence_stems
            or _spelled_otherwise(t, evidence_tokens)
            or t in out
        ):
            continue
        before = claim_toks[max(0, k - SPECIFIC_LOOKBACK) : k]
        if any(b in SPECIFIC_MARKERS or b.isdigit() or b in SPELLED_COUNTS for b in before):
            out.append(t)
    return out


def check(
    claim: str,
    passages: list[tuple[str, str]],
    similarity: Callable[[str, str], float] | None = None,
    *,
    max_missing: int = MAX_MISSING_FOR_SUBSTITUTION,
    encode: Callable[[list[str]], Any] | None = None,
    bind: bool = True,
    binding: bool = True,
) -> StructureReport:
    """Run the rules on ``claim`` against ``passages`` ([(passage id, text)]), then the role
    binding (``audit.pipeline.binding``) when ``similarity`` is given and ``bind`` (the ``structure``
    method reads it apart, on the claims it can change: ``bind_roles``).

    ``similarity(a, b) -> cosine`` tells a substituted entity from a near-synonym; without it the
    substitution rule does not fire (it can still report a missing named entity). ``max_missing``:
    how many claim words a sentence may lack for each of them to be examined as a substitution
    (a revised sentence is examined with more: see ``audit.pipeline.revision.whole``). ``encode``
    (texts -> unit vectors; default the process-wide embedder) compares the binding's phrases.
    ``binding`` False (the job's switch: the bench's comparison) runs the rules alone.
    """
    report = _check(claim, passages, similarity, max_missing=max_missing)
    if similarity is not None and binding:
        predicate_polarity(report, claim, passages)
    if bind and binding and similarity is not None:
        bind_roles(report, claim, passages, encode)
    return report


def _has_negation(text: str) -> bool:
    return any(t in NEGATION_CUES or t.endswith("n't") or t == "longer" for t in tokens(text))


def predicate_polarity(report: StructureReport, claim: str, passages: list[tuple[str, str]]) -> None:
    """Negation read on the predicate the claim and the evidence share (``binding.polarity``, from the
    dependency parse), over the token rule's reading of clauses: an auxiliary negation of the same
    predicate the other way contradicts the claim (a ``negation`` finding); a sentence stating the
    claim's predicate with the claim's polarity, every negation being a verb's, withdraws the token
    rule's ``negation`` finding (a negation the claim carries too, or one on another predicate, as in
    "matured in the thymus but have not yet encountered") and sets ``negation_agrees``: the judge's
    refutation alone then makes no REFUTED, and where that sentence's negated clause entails the
    claim (``negation_entails``) the claim's P(supported) is at least the SUPPORTED threshold before
    the other checks cap it (``scoring.label_claim``). Runs only where a negation is written, and
    not with ``NEGATION_PREDICATE_ON`` off (THEORIA_NEGATION_PREDICATE=0)."""
    from audit.pipeline import binding

    sentences = _polarity_sentences(claim, passages)
    if sentences is None:
        return
    reading = binding.polarity(claim, binding.read_window(sentences))
    if reading.opposite:
        words, sentence = reading.opposite[0]
        evidence = "(affirmative)" if words.startswith("not ") else "not"
        report.findings.append(Finding("negation", words, evidence, sentence, sentences.get(sentence, "")))
        report.contradicted = True
    elif reading.agrees:
        report.negation_agrees = True
        report.negation_entails = reading.entails
        if any(f.rule == "negation" for f in report.findings):
            report.findings = [f for f in report.findings if f.rule != "negation"]
            report.contradicted = any(f.rule not in CAPPING_RULES for f in report.findings)


def _polarity_sentences(claim: str, passages: list[tuple[str, str]]) -> dict[str, str] | None:
    """The evidence sentences (-> passage id) :func:`predicate_polarity` reads for ``claim``; None
    where it does not run (no negation written, ``NEGATION_PREDICATE_ON`` off, no passage)."""
    from audit.pipeline import binding

    if not NEGATION_PREDICATE_ON or not passages:
        return None
    usable = parseable(passages)
    if not (_has_negation(claim) or any(_has_negation(text) for _, text in usable)):
        return None
    return binding.evidence_sentences(usable)


def prefetch_polarity(
    items: list[tuple[str, list[tuple[str, str]]]],
    stored: StoredParses | None = None,
) -> None:
    """Parse in one batched pass what :func:`predicate_polarity` will parse for each (claim, passages)
    of ``items`` (an answer's claims; the ``structure`` method calls it once per answer): one
    ``nlp.pipe`` instead of one per claim, the same parses. ``stored``: the parses a store holds
    (``binding.parse``)."""
    from audit.pipeline import binding

    texts: list[str] = []
    for claim, passages in items:
        sentences = _polarity_sentences(claim, passages)
        if sentences is not None:
            texts += binding.read_texts(claim, binding.read_window(sentences))
    if texts:
        binding.prefetch_texts(texts, stored)


def bind_roles(
    report: StructureReport,
    claim: str,
    passages: list[tuple[str, str]],
    encode: Callable[[list[str]], Any] | None = None,
) -> None:
    """The role binding's findings added to ``report`` (``binding.apply``) unless the rules already
    found a contradiction (a job without the binding, the bench's comparison, does not call it)."""
    from audit.pipeline import binding

    if not report.contradicted:
        binding.apply(report, claim, parseable(passages), encode, finding=Finding)


def parseable(passages: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The passages as the role binding may parse them: unchanged, unless one holds a sentence
    longer than BINDING_MAX_SENTENCE_CHARS; then its sentences, less the over-long ones (a
    dependency parse of one planted 100,000-character sentence took 10 s of CPU, 60 s on a busy
    machine)."""
    split = [(pid, split_sentences(normalize(text))) for pid, text in passages]
    if all(len(sent) <= BINDING_MAX_SENTENCE_CHARS for _, sents in split for sent in sents):
        return passages
    return [(pid, sent) for pid, sents in split for sent in sents if len(sent) <= BINDING_MAX_SENTENCE_CHARS]


# long: the structural rules in order on one alignment of claim and evidence
def _check(
    claim: str,
    passages: list[tuple[str, str]],
    similarity: Callable[[str, str], float] | None = None,
    *,
    max_missing: int = MAX_MISSING_FOR_SUBSTITUTION,
) -> StructureReport:
    claim_toks = tokens(claim)
    cstems = _content_stems(claim_toks)
    report = StructureReport()
    if not cstems:
        return report
    claim_all = {stem(t) for t in claim_toks}
    sentences = []
    for pid, text in passages:
        for sent in split_sentences(normalize(text)):
            toks = tokens(sent)
            if toks:
                sentences.append(Sentence(sent, pid, toks, {stem(t) for t in toks}))
    if not sentences:
        return report
    evidence_stems = set().union(*(s.stems for s in sentences))
    evidence_tokens = [t for s in sentences for t in s.tokens]
    ents = _entities(claim)
    # the claim's content words, read once for all the sentences (not once per sentence)
    claim_words = [(k, t, stem(t)) for k, t in enumerate(claim_toks) if _is_content(t) and _is_word(t)]
    claim_clauses = clauses(claim)
    scored = []  # (adjusted alignment, raw alignment, order, sentence, findings, explained words)
    for order, s in enumerate(sentences):
        raw = _coverage(cstems, s.stems)
        if raw + 1.0 / len(cstems) * max_missing < STRUCTURE_MIN_ALIGNMENT:
            continue
        findings: list[Finding] = []
        explained: set[str] = set()
        for f in _antonyms(claim_toks, cstems, s):
            findings.append(f)
            explained.add(stem(f.claim_words))
        spelled: dict[str, bool] = {}  # each distinct word looked for once per sentence
        missing = []
        for k, t, st in claim_words:
            if st in s.stems or st in explained:
                continue
            if t not in spelled:
                spelled[t] = _spelled_otherwise(t, s.tokens)
            if not spelled[t]:
                missing.append((k, t))
        if 0 < len(missing) <= max_missing:
            for k, t in missing:
                if stem(t) in evidence_stems or _spelled_otherwise(t, evidence_tokens):
                    continue
                if (
                    _coverage(cstems, s.stems, explained | {stem(m) for _, m in missing})
                    < STRUCTURE_MIN_ALIGNMENT
                ):
                    continue
                sub = None  # without ``similarity`` the substitution rule does not fire
                if similarity is not None:
                    fillers = _slot_fillers(claim_toks, k, s, claim_all)
                    sub = next(
                        (fl for fl in fillers if similarity(t, fl) < STRUCTURE_SUBSTITUTION_MAX_COS), None
                    )
                if sub:
                    findings.append(Finding("substitution", t, sub, s.text, s.passage_id))
                    explained.add(stem(t))
                elif stem(t) in ents:
                    findings.append(Finding("missing_entity", t, "", s.text, s.passage_id))
                    explained.add(stem(t))
        adjusted = _coverage(cstems, s.stems, explained)
        if adjusted < STRUCTURE_MIN_ALIGNMENT:
            continue
        neg = _negation(claim_clauses, s)
        if neg:
            findings.append(neg)
        scored.append((adjusted, raw, -order, s, findings))
    if _is_obligation(claim_toks):
        # an obligation whose specifics ("approved by two pharmacists") no source states is not
        # supported, however close the rest of its wording
        unstated = _unstated_specifics(claim_toks, evidence_stems, evidence_tokens)
        if unstated:
            best = max(sentences, key=lambda x: _coverage(cstems, x.stems))
            report.unstated_obligation = True
            report.findings.append(
                Finding("unstated_obligation", " ".join(unstated), "", best.text, best.passage_id)
            )
    if not scored:
        return report
    scored.sort(key=lambda r: (r[0], r[1], r[2]), reverse=True)
    adjusted, raw, _, s, findings = scored[0]
    report.alignment, report.sentence = adjusted, s.text
    if not findings:
        return report
    clean_rival = any(not f and r >= adjusted for _, r, _, _, f in scored[1:])
    if clean_rival:
        return report
    report.findings += findings
    report.contradicted = any(f.rule not in CAPPING_RULES for f in findings)
    report.missing_entity = any(f.rule == "missing_entity" for f in findings)
    return report

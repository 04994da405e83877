"""Claim-vs-evidence features for the offline entailment judge (plain Python + numpy).

For each (claim, passages) pair: evidence sentences are split and ranked lexically; only the
best few (and their neighbours) are embedded, every distinct text once per batch
(``docs/PERFORMANCE.md``: dedupe before embedding). Features combine
- semantic similarity: best claim–sentence cosine, best cosine to 2-sentence windows (pooled
  sentence vectors), mean of the top 2, cosine to the evidence centroid;
- alignment of the claim's content words/phrases: unigram and bigram coverage in the best
  sentence, the best window and the whole evidence, the longest matched run, unmatched words;
- entities, numbers and dates: coverage of capitalised words, claim numbers found in evidence,
  numbers contradicted;
- negation and antonym mismatch between the claim and its best-aligned sentence;
- hedging and length.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import numpy as np

from audit.constants import NUMERIC_MAX_CLAIM_QUANTITIES
from audit.pipeline.extraction import split_sentences
from audit.pipeline.numbers import extract_quantities, values_match
from audit.pipeline.text import STOPWORDS, content_stems, normalize, stem, words

MAX_SELECTED_SENTENCES = 8  # best-overlapping evidence sentences embedded per claim
MAX_WINDOW_STARTS = 8  # of those, how many are paired with their right neighbour (also embedded)
MAX_SENTENCE_CHARS = 600

NEGATIONS = frozenset(
    "not no never none neither nor without cannot can't won't don't doesn't didn't "
    "isn't aren't wasn't weren't hasn't haven't hadn't shouldn't wouldn't couldn't "
    "nothing nobody lack lacks lacking absence absent fail fails failed unable "
    "unlikely neither".split()
)
_ANTONYM_PAIRS = """increase decrease|increase reduce|increase lower|higher lower|more less|more fewer|
positive negative|rise fall|gain loss|larger smaller|greater lesser|bigger smaller|activate inhibit|
promote suppress|enhance reduce|enhance impair|before after|early late|major minor|maximum minimum|
first last|strong weak|high low|benign malignant|agonist antagonist|upregulate downregulate|
induce prevent|induce inhibit|allow prohibit|accept reject|win lose|include exclude|same different|
male female|north south|east west|internal external|long short|young old|new old|fast slow|dead alive|
true false|success failure|increase decline|improve worsen|safe unsafe|effective ineffective|
present absent|above below|over under|majority minority|sufficient insufficient|necessary unnecessary|
associated unassociated|up down|open closed|start end|begin end|common rare|cheap expensive|
hot cold|wet dry|rich poor|light dark|heavy light|stable unstable|resistant susceptible|
dominant recessive|acute chronic|shorter longer|older younger|earlier later|lowest highest|
smallest largest|least most|decreased increased|reduced increased|lower higher|worse better|
above-average below-average|overestimate underestimate|over-expression under-expression|
protective harmful|beneficial harmful|agree disagree|legal illegal|possible impossible|
direct indirect|inside outside|western eastern|northern southern|upper lower|loss gain"""
ANTONYMS: dict[str, set[str]] = {}
for _pair in re.split(r"[|\n]+", _ANTONYM_PAIRS):
    _parts = _pair.split()
    if len(_parts) == 2:
        a, b = stem(_parts[0]), stem(_parts[1])
        ANTONYMS.setdefault(a, set()).add(b)
        ANTONYMS.setdefault(b, set()).add(a)
HEDGES = frozenset(
    "may might could possibly perhaps likely probably suggest suggests suggested "
    "appear appears seem seems reportedly potentially".split()
)

FEATURE_NAMES = [
    "cos_best_sent",
    "cos_best_window",
    "cos_top2",
    "cos_centroid",
    "cos_best_lex_sent",
    "cov_best_sent",
    "cov_best_window",
    "cov_all",
    "cov_all_idf",
    "bigram_cov_best",
    "bigram_cov_all",
    "longest_run",
    "unmatched_words",
    "n_claim_words_log",
    "ent_cov",
    "n_entities",
    "num_cov",
    "num_contradicted",
    "n_numbers",
    "year_mismatch",
    "neg_claim",
    "neg_sent",
    "neg_mismatch",
    "antonym_best",
    "antonym_any",
    "hedge_claim",
    "ev_chars_log",
    "n_passages",
    "n_sentences_log",
    "cos_x_cov",
    "cov_gap",
    "best_sent_len_ratio",
    "cos_contrast",
    "rare_unmatched",
    "cov_best_3window",
    "prefix_antonym",
    "claim_contrast_words",
    "tok_recall_win",
    "tok_min_win",
    "tok_unaligned_win",
    "tok_recall_all",
    "tok_unaligned_all",
    "tok_recall_best_sent",
    "tok_precision_best_sent",
]
# Features computed from the words alone (no evidence-side embedding): the "fast" verification
# depth uses only these, so a claim costs no model time beyond its own embedding for retrieval.
FAST_FEATURES = [
    "cov_all",
    "cov_all_idf",
    "bigram_cov_all",
    "longest_run",
    "unmatched_words",
    "n_claim_words_log",
    "ent_cov",
    "n_entities",
    "num_cov",
    "n_numbers",
    "year_mismatch",
    "neg_claim",
    "hedge_claim",
    "ev_chars_log",
    "n_passages",
    "n_sentences_log",
    "rare_unmatched",
    "cov_best_3window",
    "claim_contrast_words",
    "antonym_any",
]
TOKEN_ALIGNED = 0.55  # contextual word-piece cosine at or above which a claim piece counts as aligned
NEG_PREFIXES = ("un", "in", "im", "ir", "il", "non", "dis", "anti")
CONTRAST_WORDS = frozenset(
    "only solely exclusively all every always never none entirely completely "
    "fully sole unique first last most least".split()
)


@dataclass
class PreparedPair:
    claim: str
    claim_stems: list[str]
    sentences: list[str]  # all evidence sentences
    sent_stems: list[list[str]]
    selected: list[int]  # indices of sentences to embed
    windows: list[tuple[int, int]]  # (i, i+1) pairs among selected
    passage_count: int
    evidence_text: str
    # sentence indices where a new passage begins (a window never spans one)
    passage_breaks: tuple[int, ...] = ()


def passage_sentences(text: str) -> list[str]:
    """The sentences of one passage as the judge reads them: normalised, split, and cut at
    ``MAX_SENTENCE_CHARS`` (the texts it embeds, which ingestion encodes ahead: ``encodings.py``)."""
    out = []
    for s in split_sentences(normalize(text)):
        s = s.strip()
        if not s:
            continue
        while len(s) > MAX_SENTENCE_CHARS:
            cut = s.rfind(" ", 0, MAX_SENTENCE_CHARS)
            cut = cut if cut > 100 else MAX_SENTENCE_CHARS
            out.append(s[:cut])
            s = s[cut:].strip()
        if s:
            out.append(s)
    return out


def prepare(claim: str, passages: list[str], allowed: set[str] | None = None) -> PreparedPair:
    """Split the evidence and choose the sentences to embed.

    ``allowed``: choose only among these sentence texts when any qualifies (a claim judged against
    one of its passages reuses what its joint judgement embedded, so it costs no model time).
    """
    claim_stems = content_stems(claim)
    cset = set(claim_stems)
    sentences: list[str] = []
    boundaries: list[int] = []
    for p in passages:
        sents = passage_sentences(p)
        sentences.extend(sents)
        boundaries.append(len(sentences))
    sent_stems = [content_stems(s) for s in sentences]
    scores = []
    for i, st in enumerate(sent_stems):
        overlap = len(cset & set(st)) / (len(cset) or 1)
        scores.append((overlap, -i))
    order = sorted(range(len(sentences)), key=lambda i: scores[i], reverse=True)
    if allowed is not None:
        order = [i for i in order if sentences[i] in allowed] or order[:1]
    top = sorted(order[:MAX_SELECTED_SENTENCES])
    ends = set(boundaries)
    selected = set(top)
    windows = []
    for i in sorted(order[:MAX_WINDOW_STARTS]):
        if (
            i + 1 < len(sentences)
            and (i + 1) not in ends
            and (allowed is None or sentences[i + 1] in allowed)
        ):
            selected.add(i + 1)
            windows.append((i, i + 1))
    return PreparedPair(
        claim,
        claim_stems,
        sentences,
        sent_stems,
        sorted(selected),
        windows,
        len(passages),
        "\n".join(passages),
        tuple(boundaries),
    )


def texts_to_embed(pairs: list[PreparedPair]) -> list[str]:
    seen: dict[str, None] = {}
    for p in pairs:
        seen.setdefault(p.claim, None)
        for i in p.selected:
            seen.setdefault(p.sentences[i], None)
    return list(seen)


def stem_coverage(cstems: list[str], target: set[str]) -> float:
    return sum(1 for w in cstems if w in target) / len(cstems) if cstems else 0.0


def stem_coverages(cstems: list[str], targets: Iterable[set[str]]) -> list[float]:
    """``stem_coverage`` of the claim against each target: the claim's stems are counted once and
    each target reads only its own words, so a long claim against many sentences costs their
    lengths added, not multiplied (the same values: the count of claim stems found, over their number)."""
    if not cstems:
        return [0.0 for _ in targets]
    counts = Counter(cstems)
    return [sum(counts.get(w, 0) for w in target) / len(cstems) for target in targets]


def _bigrams(stems: list[str]) -> set[tuple[str, str]]:
    return set(pairwise(stems))


def _longest_run(cstems: list[str], target_bigrams: set[tuple[str, str]]) -> int:
    best = run = 1 if cstems else 0
    for bg in pairwise(cstems):
        run = run + 1 if bg in target_bigrams else 1
        best = max(best, run)
    return best


def _negations(text: str) -> int:
    toks = words(text)
    return sum(1 for t in toks if t in NEGATIONS or t.endswith("n't"))


def _entities(text: str) -> set[str]:
    toks = re.findall(r"(?<![.!?]\s)(?<!^)\b([A-Z][a-zA-Z0-9\-]+|[A-Z]{2,}[a-z0-9]*)\b", text)
    return {stem(t.lower()) for t in toks if t.lower() not in STOPWORDS}


def _antonym_hit(cstems: set[str], tstems: set[str]) -> float:
    hits = 0
    for w in cstems - tstems:
        if ANTONYMS.get(w, set()) & (tstems - cstems):
            hits += 1
    return float(hits)


def _token_features(
    f: dict[str, float], pair: PreparedPair, tok: dict[str, np.ndarray], best_window: tuple[int, ...]
) -> None:
    ct = tok.get(pair.claim)
    if ct is None or not len(ct):
        return
    ct = np.asarray(ct, dtype=np.float32)
    mats = {
        i: np.asarray(tok[pair.sentences[i]], dtype=np.float32)
        for i in pair.selected
        if len(tok.get(pair.sentences[i], ()))
    }
    if not mats:
        return
    per_sent = {i: ct @ m.T for i, m in mats.items()}  # (claim pieces, sentence pieces)
    recall_by_sent = {i: sims.max(axis=1) for i, sims in per_sent.items()}
    win = [recall_by_sent[i] for i in best_window if i in recall_by_sent]
    if win:
        r = np.max(np.stack(win), axis=0)
        f["tok_recall_win"] = float(r.mean())
        f["tok_min_win"] = float(r.min())
        f["tok_unaligned_win"] = float((r < TOKEN_ALIGNED).mean())
    r_all = np.max(np.stack(list(recall_by_sent.values())), axis=0)
    f["tok_recall_all"] = float(r_all.mean())
    f["tok_unaligned_all"] = float((r_all < TOKEN_ALIGNED).mean())
    best_i = max(recall_by_sent, key=lambda i: recall_by_sent[i].mean())
    f["tok_recall_best_sent"] = float(recall_by_sent[best_i].mean())
    f["tok_precision_best_sent"] = float(per_sent[best_i].max(axis=0).mean())


# long: the features in the fitted model's input order; the order is the artefact's contract
def compute_features(
    pair: PreparedPair,
    vec: dict[str, np.ndarray] | None,
    idf: dict[str, float] | None = None,
    tok: dict[str, np.ndarray] | None = None,
) -> np.ndarray:
    f = dict.fromkeys(FEATURE_NAMES, 0.0)
    cst = pair.claim_stems
    cset = set(cst)
    f["n_claim_words_log"] = math.log1p(len(cst))
    f["n_passages"] = float(pair.passage_count)
    f["ev_chars_log"] = math.log1p(len(pair.evidence_text))
    f["n_sentences_log"] = math.log1p(len(pair.sentences))
    toks = words(pair.claim)
    f["hedge_claim"] = float(sum(1 for t in toks if t in HEDGES))
    if not pair.sentences:
        return np.array([f[n] for n in FEATURE_NAMES], dtype=np.float32)

    all_stems = set().union(*map(set, pair.sent_stems))
    f["cov_all"] = stem_coverage(cst, all_stems)
    if idf:
        weights = [idf.get(w, 1.0) for w in cst]
        total = sum(weights) or 1.0
        f["cov_all_idf"] = sum(wt for w, wt in zip(cst, weights) if w in all_stems) / total
    else:
        f["cov_all_idf"] = f["cov_all"]
    all_bigrams = set().union(*(_bigrams(s) for s in pair.sent_stems))
    cbg = _bigrams(cst)
    f["bigram_cov_all"] = len(cbg & all_bigrams) / len(cbg) if cbg else f["cov_all"]
    f["longest_run"] = _longest_run(cst, all_bigrams) / (len(cst) or 1)
    f["unmatched_words"] = float(sum(1 for w in cset if w not in all_stems))

    sel = pair.selected
    if vec is None:  # "fast" depth: rank sentences by word overlap instead of cosine
        sv = np.zeros((len(sel), 1), dtype=np.float32)
        cv = np.zeros(1, dtype=np.float32)
        sims = np.array(stem_coverages(cst, [set(pair.sent_stems[i]) for i in sel]), dtype=np.float32)
    else:
        cv = vec[pair.claim]
        sv = np.stack([vec[pair.sentences[i]] for i in sel])
        sims = sv @ cv
    pos = {i: k for k, i in enumerate(sel)}
    best_k = int(np.argmax(sims))
    best_i = sel[best_k]
    f["cos_best_sent"] = float(sims[best_k])
    f["cos_top2"] = float(np.mean(np.sort(sims)[-2:]))
    cen = sv.mean(axis=0)
    f["cos_centroid"] = float(cen @ cv / (np.linalg.norm(cen) + 1e-9))
    best_window: tuple[int, ...] = (best_i,)
    best_window_cos = f["cos_best_sent"]
    for a, b in pair.windows:
        w = sv[pos[a]] + sv[pos[b]]
        c = float(w @ cv / (np.linalg.norm(w) + 1e-9))
        if c > best_window_cos:
            best_window_cos, best_window = c, (a, b)
    f["cos_best_window"] = best_window_cos
    lex_scores = stem_coverages(cst, [set(pair.sent_stems[i]) for i in sel])
    best_lex_k = int(np.argmax(lex_scores))
    f["cos_best_lex_sent"] = float(sims[best_lex_k])

    best_stems = set(pair.sent_stems[best_i])
    win_stems = set().union(*(set(pair.sent_stems[i]) for i in best_window))
    f["cov_best_sent"] = max(stem_coverage(cst, best_stems), lex_scores[best_lex_k])
    f["cov_best_window"] = stem_coverage(cst, win_stems)
    win_bigrams = set().union(*(_bigrams(pair.sent_stems[i]) for i in best_window))
    f["bigram_cov_best"] = len(cbg & win_bigrams) / len(cbg) if cbg else f["cov_best_window"]
    best_sentence = pair.sentences[best_i]
    f["best_sent_len_ratio"] = math.log1p(len(pair.sent_stems[best_i])) - math.log1p(len(cst))

    ents = _entities(pair.claim)
    f["n_entities"] = float(len(ents))
    ev_lower_stems = all_stems | {stem(w) for w in words(pair.evidence_text)}
    f["ent_cov"] = stem_coverage(list(ents), ev_lower_stems) if ents else 1.0

    cq = extract_quantities(pair.claim)
    f["n_numbers"] = float(len(cq))
    if cq:
        eq = extract_quantities(pair.evidence_text)
        # at most the numeric method's count of a claim's quantities, each against every quantity
        # of the evidence (a list of thousands of numbers cost the product of the two counts)
        cq = cq[:NUMERIC_MAX_CLAIM_QUANTITIES]
        matched = sum(1 for a in cq if any(values_match(a, b, 0.02, 0.1) for b in eq))
        f["num_cov"] = matched / len(cq)
        wq = extract_quantities(" ".join(pair.sentences[i] for i in best_window))
        f["num_contradicted"] = float(
            sum(
                1
                for a in cq
                if not any(values_match(a, b, 0.02, 0.1) for b in eq) and any(b.kind == a.kind for b in wq)
            )
        )
        years_c = {a.value for a in cq if a.kind == "year"}
        years_e = {b.value for b in eq if b.kind == "year"}
        f["year_mismatch"] = float(bool(years_c - years_e) and bool(years_e))
    else:
        f["num_cov"] = 1.0

    nc = _negations(pair.claim)
    ns = min(_negations(pair.sentences[i]) for i in best_window) if best_window else 0
    ns_best = _negations(best_sentence)
    f["neg_claim"] = float(nc)
    f["neg_sent"] = float(ns_best)
    f["neg_mismatch"] = float((nc > 0) != (ns > 0))
    f["antonym_best"] = _antonym_hit(cset, win_stems)
    f["antonym_any"] = _antonym_hit(cset, all_stems)
    f["cos_contrast"] = f["cos_best_sent"] - float(np.mean(sims))
    if idf:
        f["rare_unmatched"] = float(sum(1 for w in cset if w not in all_stems and idf.get(w, 12.0) > 5.0))
    else:
        f["rare_unmatched"] = f["unmatched_words"]
    windows = [
        set().union(*(set(pair.sent_stems[j]) for j in range(i, min(i + 3, len(pair.sentences)))))
        for i in range(len(pair.sentences))
    ]
    f["cov_best_3window"] = max([0.0, *stem_coverages(cst, windows)])
    ev_words = {w for i in best_window for w in words(pair.sentences[i])}
    claim_words = set(toks)
    f["prefix_antonym"] = float(
        sum(
            1
            for w in claim_words - ev_words
            if any(w.startswith(px) and w[len(px) :] in ev_words for px in NEG_PREFIXES)
            or any(px + w in ev_words for px in NEG_PREFIXES)
        )
    )
    f["claim_contrast_words"] = float(sum(1 for t in toks if t in CONTRAST_WORDS))
    if tok is not None:
        _token_features(f, pair, tok, best_window)
    f["cos_x_cov"] = f["cos_best_window"] * f["cov_best_window"]
    f["cov_gap"] = f["cov_all"] - f["cov_best_window"]
    return np.array([f[n] for n in FEATURE_NAMES], dtype=np.float32)


FEATURIZE_BATCH = 256  # claims per embedding batch (bounds the memory of token matrices)


def featurize(
    items: list[tuple[Any, ...]],
    encode_tokens: Callable[[list[str]], tuple[np.ndarray, list[np.ndarray]]] | None,
    idf: dict[str, float] | None = None,
    progress: Callable[[int], object] | None = None,
) -> tuple[np.ndarray, list[PreparedPair]]:
    """Features for many (claim, passage texts[, allowed sentence texts]) items.

    ``encode_tokens(texts) -> (vectors (n, d), [piece matrices])`` — normally
    ``get_embedder().encode_with_tokens``; None computes the word-only ``FAST_FEATURES``. Works in batches so token matrices stay small;
    ``progress(n)`` is called after each batch with the number of pairs done in it.
    """
    pairs = [prepare(*item) for item in items]
    rows = []
    for start in range(0, len(pairs), FEATURIZE_BATCH):
        batch = pairs[start : start + FEATURIZE_BATCH]
        if encode_tokens is None:  # "fast" depth: words only
            table: dict[str, np.ndarray] | None = None
            tok_table: dict[str, np.ndarray] | None = None
        else:
            texts = texts_to_embed(batch)
            vecs, toks = encode_tokens(texts) if texts else (np.zeros((0, 384), np.float32), [])
            table = dict(zip(texts, vecs))
            tok_table = dict(zip(texts, toks))
        rows += [compute_features(p, table, idf, tok_table) for p in batch]
        if progress:
            progress(len(batch))
    X = np.stack(rows) if rows else np.zeros((0, len(FEATURE_NAMES)), dtype=np.float32)
    return X, pairs

"""Step 4 of ``fit_nli``: the cross-encoder reads pairs in the style of the answers it audits.

Training only; nothing here ships. The pairs come from ``shared/attribution/attribution.jsonl``
(``THEORIA_ATTRIBUTION_DIR``; its README names each source, none of them in ``shared/benchmarks/``):
answer sentences, dialogue responses and summaries against the passages or documents they rest on.
10 % of its groups (a hash of source and group, as ``nli_data.is_heldout``) are never trained on and
measure the step.

Each row becomes pairs the way the judge reads them:
- the claim side is a sentence: a summary is split into its sentences; a sentence of a consistent
  summary is entailed, and a sentence of an inconsistent SummEdits edit that no consistent summary
  of the same document holds is the edited one (not entailed); the other sentences of an edit are
  left out (their label is unknown);
- the premise side is what the judge would read for that sentence (``nli_judge.candidate_texts``:
  the sentences sharing most content words with it and the best two-sentence windows), best ranked
  first, so the 128 word pieces hold the evidence and not the document's first lines.

Hard negatives, made from the same evidence with labels that follow from the edit:
- *a finding reversed*: an entailed sentence with its subject and object swapped on the dependency
  parse (any verb, ``reverse_by_parse``), or changed by the minimal-pair families that turn a
  finding round (opposite predicate, negation, comparison or directed relation swapped, names
  traded: ``minimal_pairs.REVERSING``);
- *a conjunction with one unsupported half*: an entailed sentence joined by "and" to a sentence of
  another group (neutral);
- *the reader's own false supports*: training rows not entailed that the starting model reads as
  entailed (P(entailment) >= ``MINE_AT``) are read ``MINED_REPEATS`` times more.
A seeded sample of the public pairs is mixed in so the step does not forget them, and a seeded sample
of the minimal pairs steps 2 and 3 trained on (``nli_fit.minimal_replay``) so that it does not forget
what a one-word edit does (a quantifier, unit, hedge, condition, date or name changed).
"""

from __future__ import annotations

import json
import os
import re
from collections import defaultdict
from dataclasses import astuple
from pathlib import Path

import numpy as np

from audit.evaluation.nli_data import LABEL_INDEX, NOT_ENTAILMENT, NLIPair, is_heldout

ATTRIBUTION_DIR = Path(
    os.environ.get("THEORIA_ATTRIBUTION_DIR")
    or Path(__file__).resolve().parents[3] / "shared" / "attribution"
)
ATTRIBUTION_FILE = "attribution.jsonl"
E, C, N = 0, 1, 2
PREMISE_WORDS = 80  # words of evidence kept for one pair (the claim takes the rest of the 128 pieces)
REVERSED_SHARE = 0.5  # of the entailed training sentences, the share given a reversed twin (when one applies)
CONJUNCTION_SHARE = 0.25
MINE_AT = 0.5
MINED_REPEATS = 2
REPLAY_PAIRS = 2500
ATTRIBUTION_EPOCHS = 1.0
ATTRIBUTION_LR_SCALE = 0.5
ATTRIBUTION_WARMUP = 40
PAIRS_CACHE = "attribution_pairs.json"  # the built and mined pairs, so a rerun does not rebuild them


def load_rows(folder: Path = ATTRIBUTION_DIR) -> list[dict]:
    path = Path(folder) / ATTRIBUTION_FILE
    if not path.is_file():
        raise FileNotFoundError(f"no {ATTRIBUTION_FILE} in {folder}: set THEORIA_ATTRIBUTION_DIR")
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _sentences(text: str) -> list[str]:
    from audit.pipeline.extraction import split_sentences

    return [" ".join(s.split()) for s in split_sentences(text) if len(s.split()) >= 3]


def claim_sentences(rows: list[dict]) -> list[tuple[dict, str, int]]:
    """(row, claim sentence, label) for every sentence whose label is known (module docstring)."""
    consistent: dict[tuple[str, str], set[str]] = defaultdict(set)
    for r in rows:
        if r["source"].startswith("summedits") and r["label"] == "entailment":
            consistent[(r["source"], r["group"])].update(_sentences(r["hypothesis"]))
    out = []
    for r in rows:
        label = LABEL_INDEX[r["label"]]
        if not r["source"].startswith("summedits"):
            out.append((r, " ".join(r["hypothesis"].split()), label))
            continue
        sents = _sentences(r["hypothesis"])
        if label == E:
            out += [(r, s, E) for s in sents]
            continue
        known = consistent.get((r["source"], r["group"]))
        if not known:
            continue  # no consistent twin: which sentence was edited is unknown
        edited = [s for s in sents if s not in known]
        if len(edited) == 1:
            out.append((r, edited[0], NOT_ENTAILMENT))
    return out


def read_premise(claim: str, evidence: str, words: int = PREMISE_WORDS) -> str:
    """The evidence the judge would read for ``claim`` (its best ranked texts first), cut to ``words`` words."""
    from audit.pipeline.features import prepare
    from audit.pipeline.nli_judge import candidate_texts

    p = prepare(claim, [evidence])
    picked: list[str] = []  # best ranked first, so the cut drops the least related sentences
    for t in candidate_texts(p):
        picked += [s for s in p.sentences if s in t and s not in picked]
    text = " ".join(picked) or evidence
    return " ".join(text.split()[:words])


def reverse_by_parse(sentence: str, nlp) -> str | None:
    """The sentence with the subject and the object of its main verb traded (any verb), or None."""
    doc = nlp(sentence)
    for tok in doc:
        if tok.pos_ not in ("VERB", "AUX") or tok.dep_ != "ROOT":
            continue
        subj = [c for c in tok.children if c.dep_ == "nsubj"]
        obj = [c for c in tok.children if c.dep_ in ("dobj", "attr") and c.pos_ in ("NOUN", "PROPN")]
        if len(subj) != 1 or len(obj) != 1 or subj[0].pos_ == "PRON":
            continue
        a = doc[subj[0].left_edge.i : subj[0].right_edge.i + 1]
        b = doc[obj[0].left_edge.i : obj[0].right_edge.i + 1]
        if a.text.lower() == b.text.lower() or len(b) > 8 or len(a) > 8 or a.end > b.start:
            continue
        first = b.text if a.start else b.text[:1].upper() + b.text[1:]
        second = a.text if a.start or a[0].pos_ == "PROPN" else a.text[:1].lower() + a.text[1:]
        parts = (doc[: a.start].text, first, doc[a.end : b.start].text, second, doc[b.end :].text)
        return " ".join(x for x in parts if x).replace(" .", ".").replace(" ,", ",")
    return None


def reversed_twin(sentence: str, rng, ctx: dict, nlp) -> tuple[str, int] | None:
    """A finding of ``sentence`` turned round (module docstring), with its label; None when none applies."""
    from audit.evaluation.minimal_pairs import FAMILIES, REVERSING

    order = [REVERSING[int(i)] for i in rng.permutation(len(REVERSING))]
    for family in order:
        made = FAMILIES[family](sentence, rng, ctx)
        if made and made[0] != sentence:
            return made
    swapped = reverse_by_parse(sentence, nlp)
    if swapped and swapped != sentence:
        return swapped, C
    return None


def _clause(s: str) -> str:
    s = s.rstrip(" .!?")
    return s[:1].lower() + s[1:] if not re.match(r"[A-Z]{2}|[A-Z][a-z]+ [A-Z]", s) else s


def build_pairs(rows: list[dict], seed: int, log=None) -> tuple[list[NLIPair], list[NLIPair], dict]:
    """(training pairs before mining, held-out pairs, counts): the sentences, reversed twins and conjunctions."""
    train: list[NLIPair] = []
    held: list[NLIPair] = []
    entailed: list[tuple[str, str, str]] = []  # (premise, sentence, group) of training sentences
    counts: dict[str, int] = defaultdict(int)
    sentences = claim_sentences(rows)
    for k, (r, sent, label) in enumerate(sentences):
        if log and k % 1000 == 0:
            log(f"  attribution pairs: {k} of {len(sentences)} sentences read")
        premise = read_premise(sent, r["premise"])
        pair = NLIPair(premise, sent, label, r["source"], r["group"])
        if is_heldout(r["source"], r["group"]):
            held.append(pair)
            continue
        train.append(pair)
        counts["attribution"] += 1
        if label == E:
            entailed.append((premise, sent, r["group"]))
    train += hard_negatives(entailed, np.random.default_rng(seed), counts, log)
    return train, held, dict(counts)


def hard_negatives(
    entailed: list[tuple[str, str, str]], rng, counts: dict[str, int], log=None
) -> list[NLIPair]:
    """Reversed twins and one-sided conjunctions of the entailed (premise, sentence, group) triples."""
    from audit.evaluation.minimal_pairs import opposite_table
    from audit.pipeline.binding import get_parser

    ctx = {"opposites": opposite_table(), "entities": []}
    nlp = get_parser()
    out: list[NLIPair] = []
    for k, (premise, sent, group) in enumerate(entailed):
        if log and k % 500 == 0:
            log(f"  hard negatives: {k} of {len(entailed)} entailed sentences")
        if rng.random() < REVERSED_SHARE:
            made = reversed_twin(sent, rng, ctx, nlp)
            if made:
                out.append(NLIPair(premise, made[0], made[1], "hard:reversed", group))
                counts["reversed"] += 1
        if rng.random() < CONJUNCTION_SHARE:
            other = entailed[int(rng.integers(len(entailed)))]
            if other[2] != group and len(sent.split()) + len(other[1].split()) < 60:
                joined = f"{_clause(sent)} and {_clause(other[1])}."
                joined = joined[:1].upper() + joined[1:]
                out.append(NLIPair(premise, joined, N, "hard:conjunction", group))
                counts["conjunction"] += 1
    return out


def mine(train: list[NLIPair], start_state: Path) -> tuple[list[NLIPair], int]:
    """The not-entailed attribution pairs the starting model reads as entailed, ``MINED_REPEATS`` more times."""
    from audit.evaluation.nli_train import predict

    wrong = [p for p in train if p.label in (NOT_ENTAILMENT, C, N) and not p.source.startswith("hard:")]
    probs = predict(start_state, [(p.premise, p.hypothesis) for p in wrong])
    mined = [p for p, pr in zip(wrong, probs) if pr[E] >= MINE_AT]
    return [
        NLIPair(p.premise, p.hypothesis, p.label, "hard:mined", p.group) for p in mined
    ] * MINED_REPEATS, len(mined)


def heldout_auroc(state, held: list[NLIPair]) -> dict[str, dict]:
    """AUROC of P(entailment) on the held-out attribution pairs, per source family and over all."""
    from audit.evaluation.bench_eval import auroc
    from audit.evaluation.nli_train import predict

    probs = predict(state, [(p.premise, p.hypothesis) for p in held])[:, E]
    y = np.array([p.label == E for p in held], dtype=int)
    fam = np.array([p.source.split("-")[0] for p in held])
    out = {"all": {"n": len(held), "auroc": float(auroc(y, probs))}}
    for f in sorted(set(fam)):
        m = fam == f
        if 0 < y[m].sum() < m.sum():
            out[f] = {"n": int(m.sum()), "auroc": float(auroc(y[m], probs[m]))}
    return out


def shipped_state(artifact_dir: Path, checkpoint_dir: Path) -> Path:
    """The shipped cross-encoder's weights as a training state (the start of this step)."""
    import torch
    from safetensors.torch import load_file

    from audit.pipeline.nli_model import META_FILE, WEIGHTS_FILE

    version = json.loads((artifact_dir / META_FILE).read_text()).get("version", "unknown")
    path = checkpoint_dir / f"shipped_{version}.pt"
    if not path.is_file():
        checkpoint_dir.mkdir(parents=True, exist_ok=True)
        state = {k: v.float() for k, v in load_file(str(artifact_dir / WEIGHTS_FILE)).items()}
        torch.save({"model": state, "version": version}, path)
    return path


def mixed_pairs(built: list[NLIPair], nli_train: list[NLIPair], minimal: list[NLIPair], seed: int):
    """The built and mined pairs with ``REPLAY_PAIRS`` public pairs and all of ``minimal``, shuffled (seeded)."""
    rng = np.random.default_rng(seed + 1)
    replay = [nli_train[int(i)] for i in rng.choice(len(nli_train), size=REPLAY_PAIRS, replace=False)]
    mixed = built + replay + minimal
    return [mixed[int(i)] for i in rng.permutation(len(mixed))]


def _build_and_mine(start: Path, folder: Path, seed: int, log) -> tuple[list[NLIPair], list[NLIPair], dict]:
    """(training pairs with the mined false supports, held-out pairs, counts)."""
    rows = load_rows(folder)
    train, held, counts = build_pairs(rows, seed, log=log)
    log(f"step 4 (attribution): mining the starting model's false supports among {len(train)} pairs")
    mined, n_mined = mine(train, start)
    return train + mined, held, {**counts, "mined": n_mined, "mined_rows": len(mined)}


# long: the step's recipe in order (pairs, mining, replay, training, held-out figures)
def train_attribution(
    start: Path,
    nli_train: list[NLIPair],
    *,
    seed: int,
    checkpoint_dir: Path,
    minimal_of=list,
    folder: Path = ATTRIBUTION_DIR,
    max_minutes: float | None = None,
    epochs: float = ATTRIBUTION_EPOCHS,
    log=print,
    err=None,
) -> tuple[Path | None, dict]:
    """Train step 4 from ``start`` for ``epochs`` passes over its pairs; (the finished state or None when
    the budget ran out, its record). ``minimal_of()`` gives the minimal-pair replay mixed in."""
    from audit.evaluation.nli_train import train_stage

    record_path = checkpoint_dir / "attribution.json"
    record = json.loads(record_path.read_text()) if record_path.is_file() else {}
    done = checkpoint_dir / "attribution.done.pt"
    pairs: list[NLIPair] = []
    held: list[NLIPair] = []
    cache = checkpoint_dir / PAIRS_CACHE
    if not done.is_file():
        if cache.is_file():  # a rerun trains on the very pairs the interrupted run built and mined
            cached = json.loads(cache.read_text())
            if "built" not in cached:
                raise RuntimeError(f"{cache} is of an older recipe (no 'built' pairs): delete it to rebuild")
            built = [NLIPair(*p) for p in cached["built"]]
            held = [NLIPair(*p) for p in cached["held"]]
            counts = cached["counts"]
            log(f"step 4 (attribution): {len(built)} pairs and {len(held)} held-out read from {cache}")
        else:
            built, held, counts = _build_and_mine(start, folder, seed, log)
            checkpoint_dir.mkdir(parents=True, exist_ok=True)
            cache.write_text(
                json.dumps(
                    {
                        "built": [astuple(p) for p in built],
                        "held": [astuple(p) for p in held],
                        "counts": counts,
                    }
                )
            )
        minimal = minimal_of()
        pairs = mixed_pairs(built, nli_train, minimal, seed)
        record.update(
            {
                "counts": {**counts, "replay": REPLAY_PAIRS, "minimal_replay": len(minimal)},
                "pairs": len(pairs),
            }
        )
        log(
            f"step 4 (attribution): {len(pairs)} pairs: {record.get('counts')}; {len(held)} held-out sentences"
        )
        if "heldout_before" not in record:
            log(f"step 4 (attribution): the starting model on the {len(held)} held-out sentences")
            record["heldout_before"] = heldout_auroc(start, held)
        checkpoint_dir.mkdir(parents=True, exist_ok=True)
        record_path.write_text(json.dumps(record, indent=2))
    path = train_stage(
        "attribution",
        pairs,
        epochs=epochs,
        seed=seed,
        start_from=start,
        checkpoint_dir=checkpoint_dir,
        max_minutes=max_minutes,
        lr_scale=ATTRIBUTION_LR_SCALE,
        warmup=ATTRIBUTION_WARMUP,
        checkpoint_every=50,
        err=err,
    )
    if path is None:
        return None, record
    if "heldout_after" not in record:
        if not held:
            held = [NLIPair(*p) for p in json.loads(cache.read_text())["held"]]
        record["heldout_after"] = heldout_auroc(path, held)
        record_path.write_text(json.dumps(record, indent=2))
    log(
        "held-out attribution sentences, AUROC of P(entailment): "
        + "; ".join(
            f"{k} (n={v['n']}) {100 * v['auroc']:.1f} -> {100 * record['heldout_after'][k]['auroc']:.1f}"
            for k, v in record["heldout_before"].items()
        )
    )
    return path, record

"""Build the learned judge (``learned_judge.py``): generate pairs, train the head, fit and calibrate the stacker.

``python manage.py fit_learned_judge [--seed 14] [--pairs 6000] [--no-write]``, seeded, CPU only:

1. Pairs generated from evidence sentences of ``claims_dev.jsonl`` (text only, never a label; MiniCheck
   style), a third of each class:
   - supported: the sentence compressed (parenthesis or trailing clause dropped), one of its clauses,
     or a template paraphrase;
   - refuted: an antonym or negating prefix, a number, an entity or a quantifier swapped, a negation;
   - not enough info: a specific added (who, when, where, how many), an obligation the sentence never
     states, or a sibling sentence of the same document judged against this one.
   Each pair's evidence is the sentence and, as a distractor, another sentence of its document.
2. The head (``TorchHead``, the same arithmetic as ``learned_judge.HeadWeights``) is trained on them
   over frozen MiniLM word-piece states (cached under ``var/entailment_cache``, like the feature model's).
3. The stacker (logistic heads over the feature model's features + the head's three logits) is
   measured on the DEV claims by grouped 5-fold CV (README group keys; every figure out-of-fold), Platt
   calibration is fitted on those out-of-fold logits, and the stacker refitted on all DEV claims.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import numpy as np

from audit.evaluation.bench_data import claim_evidence_texts, group_key
from audit.evaluation.entailment_fit import (
    DEFAULT_CLAIMS,
    CachedEmbed,
    compute_idf,
    dev_features,
    fit,
    load_dev,
)
from audit.pipeline.features import prepare
from audit.pipeline.learned_judge import ARTIFACT_PATH, HeadWeights, LearnedModel, head_inputs
from audit.pipeline.scoring import decide_labels

SEED = 14
N_PAIRS = 6000
EPOCHS = 6
BATCH = 64
HIDDEN = 64
SUPPORTED, REFUTED, NEI = 0, 1, 2

_OPPOSITE_WORDS = {}


def _opposites() -> dict[str, list[str]]:
    """Surface word -> its opposite surface words, from the structural checks' lexicon."""
    if not _OPPOSITE_WORDS:
        from audit.pipeline.lexicon import OPPOSITES_TEXT

        for line in OPPOSITES_TEXT.strip().splitlines():
            left, right = (part.split() for part in line.split("|"))
            for a, b in ((left, right), (right, left)):
                for w in a:
                    _OPPOSITE_WORDS.setdefault(w, []).extend(b)
    return _OPPOSITE_WORDS


QUANTIFIERS = {
    "all": "no",
    "always": "never",
    "never": "always",
    "every": "no",
    "most": "few",
    "many": "few",
    "none": "all",
    "increased": "decreased",
    "higher": "lower",
    "lower": "higher",
    "more": "fewer",
}
SPECIFICS = [
    "in children under five",
    "within 30 days",
    "in 2019",
    "in the United States",
    "by two pharmacists",
    "in patients over 65",
    "for at least ten years",
    "in most European countries",
    "since 1998",
    "after three months",
    "in mice but not in humans",
    "during the night shift",
    "by the board of directors",
    "in every case",
    "at a cost of $2 million",
    "in rural areas",
    "twice a year",
    "by the age of 12",
]
OBLIGATIONS = [
    "must be approved by {}",
    "must be reported to {} within 24 hours",
    "shall be reviewed by {} every year",
]
AUTHORITIES = [
    "two pharmacists",
    "the ethics committee",
    "a licensed auditor",
    "the regional regulator",
    "the chief medical officer",
]
PARAPHRASE_TEMPLATES = [
    "According to the source, {}",
    "It has been reported that {}",
    "The text states that {}",
]
NEGATIONS = (
    (" is ", " is not "),
    (" are ", " are not "),
    (" was ", " was not "),
    (" were ", " were not "),
    (" can ", " cannot "),
    (" has ", " has not "),
    (" will ", " will not "),
)


def _words(s: str) -> list[str]:
    return s.split()


def _lower_first(s: str) -> str:
    return s[:1].lower() + s[1:] if s[:2].isupper() is False else s


def _supported(s: str, rng) -> str | None:
    kind = rng.integers(3)
    if kind == 0:  # compression: a parenthesis or the trailing clause dropped
        out = re.sub(r"\s*\([^)]*\)", "", s)
        if out == s and "," in s:
            out = s[: s.rfind(",")].rstrip() + "."
        return out if out != s and len(_words(out)) >= 6 else None
    if kind == 1:  # clause extraction
        parts = [
            p.strip() for p in re.split(r";|, (?:and|but|while|whereas|which) ", s) if len(_words(p)) >= 6
        ]
        if len(parts) < 2:
            return None
        c = parts[int(rng.integers(len(parts)))].rstrip(".")
        return c[:1].upper() + c[1:] + "."
    t = PARAPHRASE_TEMPLATES[int(rng.integers(len(PARAPHRASE_TEMPLATES)))]
    return t.format(_lower_first(s))


def _refuted(s: str, rng, other_entities: list[str]) -> str | None:
    from audit.pipeline.contradiction import prefix_opposite  # noqa: F401  (same notion of prefix)

    toks = _words(s)
    order = rng.permutation(6)
    for kind in order:
        if kind == 0:  # antonym
            idx = [i for i, w in enumerate(toks) if w.lower().strip(".,;:") in _opposites()]
            if idx:
                i = idx[int(rng.integers(len(idx)))]
                w = toks[i].strip(".,;:")
                opp = _opposites()[w.lower()]
                rep = opp[int(rng.integers(len(opp)))]
                return " ".join(toks[:i] + [toks[i].replace(w, rep)] + toks[i + 1 :])
        elif kind == 1:  # negating prefix
            idx = [
                i
                for i, w in enumerate(toks)
                if re.fullmatch(r"[a-z]{5,}(?:able|ible|ive|al|ly|ent|ant|ic)", w)
            ]
            if idx:
                i = idx[int(rng.integers(len(idx)))]
                w = toks[i]
                rep = (
                    w[2:]
                    if w.startswith(("un", "ir", "in", "im")) and len(w) > 7
                    else (("ir" if w.startswith("r") else "un") + w)
                )
                return " ".join(toks[:i] + [rep] + toks[i + 1 :])
        elif kind == 2:  # number swap
            nums = list(re.finditer(r"\d+(?:\.\d+)?", s))
            if nums:
                m = nums[int(rng.integers(len(nums)))]
                v = float(m.group(0))
                new = v * float(rng.choice([0.5, 2, 3])) + float(rng.integers(1, 9))
                txt = str(int(new)) if "." not in m.group(0) else f"{new:.1f}"
                return s[: m.start()] + txt + s[m.end() :]
        elif kind == 3:  # entity swap
            idx = [
                i for i, w in enumerate(toks) if i > 0 and re.fullmatch(r"[A-Z][a-z]{3,}", w.strip(".,;:"))
            ]
            if idx and other_entities:
                i = idx[int(rng.integers(len(idx)))]
                w = toks[i].strip(".,;:")
                rep = other_entities[int(rng.integers(len(other_entities)))]
                if rep != w:
                    return " ".join(toks[:i] + [toks[i].replace(w, rep)] + toks[i + 1 :])
        elif kind == 4:  # quantifier
            idx = [i for i, w in enumerate(toks) if w.lower() in QUANTIFIERS]
            if idx:
                i = idx[int(rng.integers(len(idx)))]
                return " ".join(toks[:i] + [QUANTIFIERS[toks[i].lower()]] + toks[i + 1 :])
        else:  # negation
            for a, b in NEGATIONS:
                if a in s:
                    return s.replace(a, b, 1)
    return None


def _nei_added(s: str, rng) -> str:
    body = s.rstrip(". ")
    if rng.random() < 0.35:
        ob = OBLIGATIONS[int(rng.integers(len(OBLIGATIONS)))].format(
            AUTHORITIES[int(rng.integers(len(AUTHORITIES)))]
        )
        return f"{body}, and this {ob}."
    return f"{body} {SPECIFICS[int(rng.integers(len(SPECIFICS)))]}."


def generate_pairs(
    records: list[dict], n_pairs: int, seed: int = SEED, usable=None
) -> list[tuple[str, list[str], int]]:
    """[(claim, evidence sentences, label)] from the records' evidence sentences (no label is read).

    ``usable(sentence) -> bool`` keeps to sentences whose word-piece states are already cached.
    """
    rng = np.random.default_rng(seed)
    docs = []
    for r in records:
        p = prepare(r["claim"], claim_evidence_texts(r))
        sents = [
            p.sentences[i]
            for i in p.selected
            if 8 <= len(_words(p.sentences[i])) <= 45 and (usable is None or usable(p.sentences[i]))
        ]
        if len(sents) >= 2:
            docs.append(sents)
    entities = sorted(
        {
            w.strip(".,;:")
            for d in docs
            for s in d
            for w in _words(s)[1:]
            if re.fullmatch(r"[A-Z][a-z]{3,}", w.strip(".,;:"))
        }
    )
    out: list[tuple[str, list[str], int]] = []
    per_class = n_pairs // 3
    counts = [0, 0, 0]
    tries = 0
    while min(counts) < per_class and tries < 50 * n_pairs:
        tries += 1
        doc = docs[int(rng.integers(len(docs)))]
        i = int(rng.integers(len(doc)))
        s = doc[i]
        distractor = doc[(i + 1 + int(rng.integers(len(doc) - 1))) % len(doc)]
        label = int(np.argmin(counts))
        if label == SUPPORTED:
            claim = _supported(s, rng)
        elif label == REFUTED:
            claim = _refuted(s, rng, entities)
        else:
            if rng.random() < 0.35:  # a sibling sentence judged against this one
                claim, s, distractor = distractor, s, s
            else:
                claim = _nei_added(s, rng)
        if not claim or claim == s:
            continue
        evidence = [s] if distractor == s else [s, distractor]
        rng.shuffle(evidence)
        out.append((claim, list(evidence), label))
        counts[label] += 1
    return out


# --- the head, in torch, for training ---------------------------------------------------------
def torch_head(hidden: int = HIDDEN):
    import torch
    from torch import nn

    class TorchHead(nn.Module):
        def __init__(self):
            super().__init__()
            self.log_tau = nn.Parameter(torch.tensor(np.log(10.0), dtype=torch.float32))
            self.proj = nn.Linear(384, hidden)
            self.mix = nn.Linear(4 * hidden + 2, hidden)
            self.out = nn.Linear(2 * hidden + 2, 3)

        def forward(self, C, cm, E, em):
            cos = C @ E.transpose(1, 2)  # (B, m, n)
            neg = torch.finfo(cos.dtype).min
            cos_m = cos.masked_fill(~em[:, None, :], neg)
            att = torch.softmax(self.log_tau.exp() * cos_m, dim=-1)
            cp, ep = self.proj(C), self.proj(E)
            a = att @ ep
            best = cos_m.max(dim=-1, keepdim=True).values.clamp(min=-1.0)
            m = torch.cat([cp, a, cp - a, cp * a, best, (best < 0.55).float()], dim=-1)
            h = torch.relu(self.mix(m))
            mask = cm[..., None].float()
            n = mask.sum(1).clamp(min=1.0)
            mean = (h * mask).sum(1) / n
            mx = h.masked_fill(~cm[..., None], -1e4).max(1).values
            bmean = (best * mask).sum(1) / n
            bmin = best.masked_fill(~cm[..., None], 1e4).min(1).values
            return self.out(torch.cat([mean, mx, bmean, bmin], dim=-1))

        def weights(self) -> HeadWeights:
            g = {k: v.detach().numpy() for k, v in self.state_dict().items()}
            return HeadWeights(
                log_tau=g["log_tau"].reshape(()),
                proj_w=g["proj.weight"],
                proj_b=g["proj.bias"],
                mix_w=g["mix.weight"],
                mix_b=g["mix.bias"],
                out_w=g["out.weight"],
                out_b=g["out.bias"],
            )

    return TorchHead()


def _pad(mats: list[np.ndarray]):
    import torch

    n = max(1, max(len(m) for m in mats))
    out = np.zeros((len(mats), n, 384), np.float32)
    mask = np.zeros((len(mats), n), bool)
    for i, m in enumerate(mats):
        out[i, : len(m)] = m
        mask[i, : len(m)] = True
    return torch.from_numpy(out), torch.from_numpy(mask)


def train_head(
    inputs: list[tuple[np.ndarray, np.ndarray]],
    labels: np.ndarray,
    seed: int = SEED,
    epochs: int = EPOCHS,
    log=print,
) -> HeadWeights:
    import torch

    torch.manual_seed(seed)
    head = torch_head()
    opt = torch.optim.AdamW(head.parameters(), lr=2e-3, weight_decay=1e-4)
    rng = np.random.default_rng(seed)
    y = torch.from_numpy(np.asarray(labels, dtype=np.int64))
    keep = [i for i, (c, e) in enumerate(inputs) if len(c) and len(e)]
    for epoch in range(epochs):
        order = rng.permutation(keep)
        total, correct = 0.0, 0
        for start in range(0, len(order), BATCH):
            idx = order[start : start + BATCH]
            C, cm = _pad([inputs[i][0] for i in idx])
            E, em = _pad([inputs[i][1] for i in idx])
            logits = head(C, cm, E, em)
            loss = torch.nn.functional.cross_entropy(logits, y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += float(loss.detach()) * len(idx)
            correct += int((logits.argmax(1) == y[idx]).sum())
        log(
            f"head epoch {epoch + 1}/{epochs}: loss {total / len(keep):.3f}, train accuracy {correct / len(keep):.3f}"
        )
    return head.weights()


def platt(z: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """(a, b) of P = sigmoid(a z + b) fitted by maximum likelihood (pooled, unweighted)."""
    from sklearn.linear_model import LogisticRegression

    clf = LogisticRegression(C=1e4, max_iter=1000).fit(np.asarray(z).reshape(-1, 1), y)
    return float(clf.coef_[0][0]), float(clf.intercept_[0])


def dev_head_logits(records: list[dict], head: HeadWeights, cache: CachedEmbed) -> np.ndarray:
    """The head's logits for every DEV claim against its evidence (states from the cache)."""
    out = np.zeros((len(records), 3), np.float32)
    for k, r in enumerate(records):
        p = prepare(r["claim"], claim_evidence_texts(r))
        texts = [p.claim] + [p.sentences[i] for i in p.selected]
        _, toks = cache(texts)
        out[k] = head.logits(*head_inputs(p, dict(zip(texts, toks))))
    return out


def fold_model(
    records: list[dict],
    XH: np.ndarray,
    idf: dict,
    head: HeadWeights,
    meta: dict | None = None,
    n_inner: int = 5,
) -> LearnedModel:
    """The stacker fitted on these rows, calibrated by Platt scaling on its own out-of-fold logits
    (an inner grouped CV over the same rows: the calibration never sees a row it is scored on)."""
    from sklearn.model_selection import GroupKFold

    groups = np.array([group_key(r) for r in records])
    z = np.zeros(len(records))
    for train, test in GroupKFold(n_splits=n_inner).split(XH, groups=groups):
        z[test] = fit([records[i] for i in train], XH[train], idf).support_logit(XH[test])
    y = np.array([r["label"] == "SUPPORTED" for r in records], dtype=int)
    return LearnedModel(head, fit(records, XH, idf, meta), platt(z, y), meta)


def build(
    claims_path: Path = DEFAULT_CLAIMS,
    *,
    seed: int = SEED,
    n_pairs: int = N_PAIRS,
    epochs: int = EPOCHS,
    write: bool = True,
    log=print,
) -> LearnedModel:
    from audit.evaluation import bench_eval as be

    started = time.perf_counter()
    records = load_dev(Path(claims_path))
    idf = compute_idf(records)
    cache = CachedEmbed()
    X = dev_features(records, idf, cache)
    log(f"features of {len(records)} DEV claims: {time.perf_counter() - started:.0f} s")
    pairs = generate_pairs(records, n_pairs, seed, usable=lambda s: s in cache.table)
    log(
        f"generated {len(pairs)} pairs ({', '.join(f'{n} {sum(1 for p in pairs if p[2] == k)}' for k, n in enumerate(('supported', 'refuted', 'nei')))})"
    )
    claims = [c for c, _, _ in pairs]
    cache(claims)  # embeds the generated claims (batched), cached under var/
    cache.save()
    log(f"embedded the generated claims: {time.perf_counter() - started:.0f} s")
    inputs = []
    for claim, ev, _ in pairs:
        p = prepare(claim, ev)
        texts = [claim] + [p.sentences[i] for i in p.selected]
        _, toks = cache(texts)
        inputs.append(head_inputs(p, dict(zip(texts, toks))))
    cache.save()
    head = train_head(inputs, np.array([lab for _, _, lab in pairs]), seed, epochs, log)
    log(f"trained the head: {time.perf_counter() - started:.0f} s")
    H = dev_head_logits(records, head, cache)
    XH = np.concatenate([X, H], axis=1)
    from sklearn.model_selection import GroupKFold

    from audit.constants import AUDIT_SCORE_THRESHOLD, REFUTED_THRESHOLD

    groups = np.array([group_key(r) for r in records])
    conf, pref, z = np.zeros(len(records)), np.zeros(len(records)), np.zeros(len(records))
    for train, test in GroupKFold(n_splits=5).split(XH, groups=groups):
        m = fold_model([records[i] for i in train], XH[train], idf, head)
        z[test] = m.stacker.support_logit(XH[test])
        conf[test] = m.calibrated(z[test])
        pref[test] = m.stacker.refute_prob(XH[test])
    y = np.array([r["label"] == "SUPPORTED" for r in records], dtype=int)
    labels = decide_labels(conf, pref, supported_at=AUDIT_SCORE_THRESHOLD, refuted_at=REFUTED_THRESHOLD)
    log(
        be.format_rows(
            be.claim_table(records, labels),
            "learned judge alone (no numeric/structure overrides), "
            "grouped 5-fold CV, calibrated confidence >= threshold",
        )
    )
    log(be.format_claim_table(records, z, pref, "the same, decided at the class-balanced point (logit 0)"))
    log(f"ECE of the calibrated confidence (out-of-fold) {be.expected_calibration_error(y, conf):.3f}")
    meta = {
        "seed": seed,
        "pairs": len(pairs),
        "epochs": epochs,
        "fitted_on": Path(claims_path).name,
        "rows": len(records),
    }
    model = fold_model(records, XH, idf, head, meta)
    if write:
        model.save(ARTIFACT_PATH)
        log(
            f"wrote {ARTIFACT_PATH.name} ({ARTIFACT_PATH.stat().st_size / 1e6:.2f} MB) in "
            f"{time.perf_counter() - started:.0f} s"
        )
    return model

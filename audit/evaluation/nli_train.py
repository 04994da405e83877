"""Fine-tuning the NLI cross-encoder (``audit/pipeline/nli_model.py``) on the CPU, resumably.

A stage trains on a list of ``NLIPair`` for a number of epochs and keeps a checkpoint under
``var/nli/`` every ``CHECKPOINT_EVERY`` steps (the trained weights, the optimiser, the step). Run it
again after an interruption and it goes on from the checkpoint, over the same batches in the same
order (they are drawn from the seed). A finished stage leaves ``<stage>.done.pt``, which the next
stage starts from and a rerun skips.

Settings, measured on the 2-core machine: batch 32, AdamW, peak learning rate 1e-4 for the encoder
and 1e-3 for the head, linear warm-up then linear decay, the word-piece embeddings frozen, the
forward pass in bfloat16 (autocast; weights and gradients stay float32), at most ``MAX_TOKENS`` word
pieces a pair, batches of similar length. About 50-60 pairs/s on an idle machine.
"""

from __future__ import annotations

import math
import os
import time
from pathlib import Path

import numpy as np

from audit.evaluation.nli_data import NOT_ENTAILMENT, NLIPair
from audit.pipeline.nli_model import FROZEN_PREFIX, MAX_TOKENS, build_module, load_tokenizer, trained_state

REPO = Path(__file__).resolve().parents[2]
CHECKPOINT_DIR = REPO / "var" / "nli"
BATCH = 32
LR_ENCODER = 1e-4
LR_HEAD = 1e-3
WARMUP_STEPS = 300
WEIGHT_DECAY = 0.01
CHECKPOINT_EVERY = 200
SORT_WINDOW = 64  # batches whose pairs are sorted by length together (less padding)


def tokenize(tokenizer, pairs: list[NLIPair]) -> list[tuple[list[int], list[int]]]:
    """(input ids, token type ids) of each pair, premise first, cut to ``MAX_TOKENS``."""
    out = []
    for start in range(0, len(pairs), 4096):
        chunk = pairs[start : start + 4096]
        enc = tokenizer(
            [p.premise for p in chunk],
            [p.hypothesis for p in chunk],
            truncation="longest_first",
            max_length=MAX_TOKENS,
        )
        out += list(zip(enc["input_ids"], enc["token_type_ids"]))
    return out


def batch_order(lengths: list[int], n_steps: int, seed: int) -> list[list[int]]:
    """``n_steps`` batches of indices: each epoch a new permutation, pairs of similar length together."""
    batches: list[list[int]] = []
    epoch = 0
    while len(batches) < n_steps:
        rng = np.random.default_rng(seed * 1000 + epoch)
        perm = rng.permutation(len(lengths))
        window = BATCH * SORT_WINDOW
        epoch_batches = []
        for start in range(0, len(perm), window):
            chunk = sorted(perm[start : start + window], key=lambda i: lengths[i])
            epoch_batches += [chunk[k : k + BATCH] for k in range(0, len(chunk), BATCH)]
        rng.shuffle(epoch_batches)
        batches += [b for b in epoch_batches if len(b) == BATCH]
        epoch += 1
    return batches[:n_steps]


def collate(encoded, labels, idx, pad_id: int):
    import torch

    width = max(len(encoded[i][0]) for i in idx)
    ids = torch.full((len(idx), width), pad_id, dtype=torch.long)
    types = torch.zeros((len(idx), width), dtype=torch.long)
    mask = torch.zeros((len(idx), width), dtype=torch.long)
    for row, i in enumerate(idx):
        a, t = encoded[i]
        ids[row, : len(a)] = torch.tensor(a)
        types[row, : len(t)] = torch.tensor(t)
        mask[row, : len(a)] = 1
    return ids, mask, types, torch.tensor([labels[i] for i in idx], dtype=torch.long)


def nli_loss(logits, labels):
    """Cross-entropy over the three classes; a ``NOT_ENTAILMENT`` row counts P(contradiction) + P(neutral)."""
    import torch

    logp = torch.log_softmax(logits.float(), dim=-1)
    three = labels >= 0
    loss = torch.zeros((), dtype=torch.float32)
    if three.any():
        loss = loss - logp[three].gather(1, labels[three].unsqueeze(1)).sum()
    two = labels == NOT_ENTAILMENT
    if two.any():
        loss = loss - torch.logsumexp(logp[two][:, 1:], dim=-1).sum()
    return loss / len(labels)


def _schedule(step: int, total: int, warmup: int = WARMUP_STEPS) -> float:
    if step < warmup:
        return (step + 1) / warmup
    return max(0.02, (total - step) / max(1, total - warmup))


def _save(path: Path, payload: dict) -> None:
    import torch

    tmp = path.with_suffix(".tmp")
    torch.save(payload, tmp)
    os.replace(tmp, path)


# long: one training loop with its checkpoint, resume and early-stop state
def train_stage(
    name: str,
    pairs: list[NLIPair],
    *,
    epochs: float,
    seed: int,
    start_from: Path | None = None,
    checkpoint_dir: Path = CHECKPOINT_DIR,
    max_minutes: float | None = None,
    lr_scale: float = 1.0,
    checkpoint_every: int = CHECKPOINT_EVERY,
    warmup: int = WARMUP_STEPS,
    err=None,
) -> Path | None:
    """Train ``name`` on ``pairs`` (resuming its checkpoint); the path of ``<name>.done.pt``, or None
    when ``max_minutes`` ran out first (the checkpoint is kept: run again to go on)."""
    import torch
    from tqdm import tqdm

    checkpoint_dir.mkdir(parents=True, exist_ok=True)
    done = checkpoint_dir / f"{name}.done.pt"
    if done.is_file():
        return done
    torch.manual_seed(seed)
    torch.set_num_threads(max(1, int(os.environ.get("THEORIA_TORCH_THREADS") or os.cpu_count() or 1)))
    tokenizer = load_tokenizer()
    module = build_module()
    if start_from is not None:
        module.load_state_dict(torch.load(start_from, weights_only=True)["model"], strict=False)
    for k, p in module.named_parameters():
        p.requires_grad = not k.startswith(FROZEN_PREFIX)
    head = [p for k, p in module.named_parameters() if k.startswith("head.")]
    body = [p for k, p in module.named_parameters() if p.requires_grad and not k.startswith("head.")]
    decay = [p for p in body if p.ndim > 1]
    no_decay = [p for p in body if p.ndim <= 1]
    opt = torch.optim.AdamW(
        [
            {"params": decay, "lr": LR_ENCODER * lr_scale, "weight_decay": WEIGHT_DECAY},
            {"params": no_decay, "lr": LR_ENCODER * lr_scale, "weight_decay": 0.0},
            {"params": head, "lr": LR_HEAD * lr_scale, "weight_decay": 0.0},
        ]
    )
    base_lrs = [g["lr"] for g in opt.param_groups]
    encoded = tokenize(tokenizer, pairs)
    labels = [p.label for p in pairs]
    total = math.ceil(epochs * len(pairs) / BATCH)
    batches = batch_order([len(a) for a, _ in encoded], total, seed)
    step = 0
    spent = 0.0  # seconds of training before this run (a resumed stage adds them up)
    ckpt = checkpoint_dir / f"{name}.pt"
    if ckpt.is_file():
        state = torch.load(ckpt, weights_only=False)
        module.load_state_dict(state["model"], strict=False)
        opt.load_state_dict(state["optimizer"])
        step = int(state["step"])
        spent = float(state.get("seconds", 0.0))
        if "rng" in state:  # dropout goes on as it would have without the interruption
            torch.set_rng_state(state["rng"])
        if state.get("total") != total:
            raise RuntimeError(
                f"{ckpt} was written for {state.get('total')} steps, this run has {total}: delete it to start over"
            )
    module.train()
    started = time.monotonic()
    bar = tqdm(total=total, initial=step, desc=f"train {name}", unit="batch", file=err, dynamic_ncols=True)
    ema = None
    while step < total:
        for g, lr in zip(opt.param_groups, base_lrs):
            g["lr"] = lr * _schedule(step, total, warmup)
        ids, mask, types, y = collate(encoded, labels, batches[step], tokenizer.pad_token_id)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            logits = module(ids, mask, types)
        loss = nli_loss(logits, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_([p for p in module.parameters() if p.requires_grad], 1.0)
        opt.step()
        step += 1
        value = loss.item()
        ema = value if ema is None else 0.98 * ema + 0.02 * value
        bar.set_postfix(loss=f"{ema:.3f}")
        bar.update(1)
        if step % checkpoint_every == 0 or step == total:
            _save(
                ckpt,
                {
                    "model": trained_state(module),
                    "optimizer": opt.state_dict(),
                    "step": step,
                    "total": total,
                    "rng": torch.get_rng_state(),
                    "seconds": spent + time.monotonic() - started,
                },
            )
            if max_minutes is not None and step < total and time.monotonic() - started > 60 * max_minutes:
                bar.close()
                return None
    bar.close()
    _save(
        done,
        {
            "model": trained_state(module),
            "pairs": len(pairs),
            "steps": total,
            "seed": seed,
            "seconds": spent + time.monotonic() - started,
        },
    )
    ckpt.unlink(missing_ok=True)
    return done


def predict(module_or_state, pairs: list[tuple[str, str]], batch: int = 64, progress=None) -> np.ndarray:
    """P(entailment, contradiction, neutral) of (premise, hypothesis) pairs with a training state."""
    import torch

    if isinstance(module_or_state, (str, Path)):
        module = build_module()
        module.load_state_dict(torch.load(module_or_state, weights_only=True)["model"], strict=False)
    else:
        module = module_or_state
    module.eval()
    module = module.to(torch.bfloat16)
    tokenizer = load_tokenizer()
    enc = tokenizer(
        [p for p, _ in pairs], [h for _, h in pairs], truncation="longest_first", max_length=MAX_TOKENS
    )
    encoded = list(zip(enc["input_ids"], enc["token_type_ids"]))
    order = sorted(range(len(pairs)), key=lambda i: len(encoded[i][0]))
    out = np.zeros((len(pairs), 3), dtype=np.float32)
    zeros = [0] * len(pairs)
    for start in range(0, len(order), batch):
        idx = order[start : start + batch]
        ids, mask, types, _ = collate(encoded, zeros, idx, tokenizer.pad_token_id)
        with torch.inference_mode():
            out[idx] = torch.softmax(module(ids, mask, types).float(), dim=-1).numpy()
        if progress:
            progress(len(idx))
    return out

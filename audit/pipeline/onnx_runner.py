"""The cross-encoder run by ONNX Runtime in float32 (``NLI_KERNEL=onnx``).

The torch module is exported to ONNX once (``torch.onnx.export``, eager attention so ONNX Runtime can
fuse it), its graph fused for BERT (attention, layer norms, GELU: ``onnxruntime.transformers``), and the
result cached as a file named by what it was built from (the weights' sha256 and the versions of torch
and ONNX Runtime) under ``THEORIA_VAR_DIR``, so a later process loads it without exporting. The same
float32 arithmetic in another order: probabilities move by about 1e-6 (``kernel_probe``).

A session is made in the process that first runs it and remade after a fork: ONNX Runtime's thread pool
does not survive a fork, so a server's master never starts one for its workers to inherit.
"""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path
from typing import Any

import numpy as np

INPUTS = ("input_ids", "attention_mask", "token_type_ids")
OPSET = 17


def cache_dir() -> Path:
    """Where exported models are kept (``THEORIA_VAR_DIR``, else the checkout's ``var/``)."""
    return Path(os.environ.get("THEORIA_VAR_DIR") or Path(__file__).resolve().parents[2] / "var") / "onnx"


def model_file(weights: Path, folder: Path) -> Path:
    """The cached export of the module whose weights are ``weights``."""
    import onnxruntime
    import torch

    digest = hashlib.sha256(weights.read_bytes()).hexdigest()[:16]
    return folder / f"nli-{digest}-torch{torch.__version__}-ort{onnxruntime.__version__}.onnx"


def export(module: Any, tokenizer: Any, path: Path, *, num_heads: int, hidden_size: int) -> None:
    """Export ``module`` (called as ``module(input_ids, attention_mask, token_type_ids)``) to ``path``,
    fused for BERT; written beside and renamed, so a reader never sees half a file."""
    import warnings

    import torch
    from onnxruntime.transformers import optimizer

    path.parent.mkdir(parents=True, exist_ok=True)
    module.encoder.set_attn_implementation("eager")  # one attention pattern, which ONNX Runtime fuses
    example = tokenizer(
        ["a premise.", "another premise"], ["a claim", "a claim."], padding=True, return_tensors="pt"
    )
    raw = path.with_name(f"{path.stem}.{os.getpid()}.raw.onnx")
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")  # torch's notes on its exporters
        torch.onnx.export(
            module,
            tuple(example[name] for name in INPUTS),
            str(raw),
            input_names=list(INPUTS),
            output_names=["logits"],
            dynamic_axes={**{name: {0: "batch", 1: "length"} for name in INPUTS}, "logits": {0: "batch"}},
            opset_version=OPSET,
            dynamo=False,
        )
    fused = optimizer.optimize_model(
        str(raw), model_type="bert", num_heads=num_heads, hidden_size=hidden_size
    )
    part = path.with_name(f"{path.stem}.{os.getpid()}.part")
    fused.save_model_to_file(str(part))
    os.replace(part, path)
    raw.unlink(missing_ok=True)


def cross_encoder(module: Any, tokenizer: Any, weights: Path) -> OnnxCrossEncoder:
    """``module`` (float32, eval mode, loaded from ``weights``) as an :class:`OnnxCrossEncoder`, exported
    now unless an earlier process left the export in the cache."""
    path = model_file(weights, cache_dir())
    if not path.is_file():
        config = module.encoder.config
        export(module, tokenizer, path, num_heads=config.num_attention_heads, hidden_size=config.hidden_size)
    return OnnxCrossEncoder(path)


class OnnxCrossEncoder:
    """Called like the torch module (``(input_ids, attention_mask, token_type_ids) -> logits``, torch
    tensors in and out), run by an ONNX Runtime session of this process, on as many threads as torch
    uses in it when the session is made (a gunicorn worker sets them after the fork)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._session: Any = None
        self._pid = 0

    def session(self) -> Any:
        with self._lock:
            if self._session is None or self._pid != os.getpid():
                import onnxruntime
                import torch

                options = onnxruntime.SessionOptions()
                options.intra_op_num_threads = torch.get_num_threads()
                options.inter_op_num_threads = 1
                options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
                self._session = onnxruntime.InferenceSession(
                    str(self.path), options, providers=["CPUExecutionProvider"]
                )
                self._pid = os.getpid()
            return self._session

    def __call__(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
        import torch

        feeds = {
            name: np.ascontiguousarray(tensor.numpy(), dtype=np.int64)
            for name, tensor in zip(INPUTS, (input_ids, attention_mask, token_type_ids))
        }
        return torch.from_numpy(self.session().run(["logits"], feeds)[0])

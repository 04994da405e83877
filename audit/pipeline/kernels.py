"""How the two encoders run on this processor: bfloat16, float32, dynamic int8 or, for the
cross-encoder, float32 through ONNX Runtime (``MODEL_KERNELS``).

bfloat16 is fast only where the processor has bf16 instructions (AMX, AVX-512 BF16); elsewhere torch
emulates it and a forward pass costs several times float32's. ``auto`` picks bfloat16 where the
instructions exist and float32 elsewhere: for the cross-encoder, float32 run by ONNX Runtime (``onnx``). ``int8`` quantises every ``Linear`` layer's weights to int8
per output channel, the activations per batch at run time (``torch.ao.quantization.quantize_dynamic``);
the word-piece embeddings and the layer norms stay float32. ``onnx`` is the cross-encoder exported and
run by ONNX Runtime in float32 (``onnx_runner.py``).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from audit.constants import MODEL_KERNELS

BF16_FLAGS = frozenset({"amx_bf16", "avx512_bf16"})


@lru_cache(maxsize=1)
def cpu_has_bf16(cpuinfo: str = "/proc/cpuinfo") -> bool:
    """Whether the processor has native bf16 instructions (read from the kernel's CPU flags; False
    where they cannot be read)."""
    try:
        text = Path(cpuinfo).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    for line in text.splitlines():
        if line.startswith("flags"):
            return bool(BF16_FLAGS & set(line.partition(":")[2].split()))
    return False


def resolve_kernel(name: str, *, cross_encoder: bool = False) -> str:
    """The kernel a setting names, with ``auto`` resolved for this processor and model: bfloat16 where
    the processor has bf16 instructions; elsewhere float32, through ONNX Runtime for the cross-encoder."""
    if name not in MODEL_KERNELS:
        raise ValueError(f"unknown model kernel {name!r}: expected one of {', '.join(MODEL_KERNELS)}")
    if name == "auto":
        if cpu_has_bf16():
            return "bfloat16"
        return "onnx" if cross_encoder else "float32"
    return name


def prepared(module: Any, name: str) -> Any:
    """``module`` (float32, in eval mode) made ready to run with the kernel ``name``."""
    import torch

    kernel = resolve_kernel(name)
    if kernel == "bfloat16":
        return module.to(torch.bfloat16)
    if kernel == "onnx":
        raise ValueError(
            "the onnx kernel runs the cross-encoder only (onnx_runner.py); this model runs "
            "bfloat16, float32 or int8"
        )
    if kernel == "int8":
        import warnings

        from torch.ao.quantization import per_channel_dynamic_qconfig, quantize_dynamic

        with warnings.catch_warnings():  # torch announces the move of this API to torchao
            warnings.simplefilter("ignore")
            # torch's eager quantisation API is untyped
            return quantize_dynamic(module, {torch.nn.Linear: per_channel_dynamic_qconfig})  # type: ignore[no-untyped-call]
    return module

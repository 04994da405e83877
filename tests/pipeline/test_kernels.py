"""The encoders' kernels (audit/pipeline/kernels.py)."""

from __future__ import annotations

import pytest

from audit.pipeline.kernels import cpu_has_bf16, prepared, resolve_kernel


def test_auto_picks_bfloat16_only_where_the_processor_has_bf16_instructions(tmp_path):
    amx = tmp_path / "amx"
    amx.write_text("processor\t: 0\nflags\t\t: fpu avx2 avx512f amx_bf16 amx_tile\n")
    plain = tmp_path / "plain"
    plain.write_text("processor\t: 0\nflags\t\t: fpu sse4_2 avx2 fma\n")
    assert cpu_has_bf16(str(amx)) is True
    assert cpu_has_bf16(str(plain)) is False
    assert cpu_has_bf16(str(tmp_path / "missing")) is False
    assert resolve_kernel("auto") == ("bfloat16" if cpu_has_bf16() else "float32")
    assert resolve_kernel("auto", cross_encoder=True) == ("bfloat16" if cpu_has_bf16() else "onnx")
    assert resolve_kernel("int8") == "int8"


def test_an_unknown_kernel_is_refused_by_name():
    with pytest.raises(ValueError, match="float16"):
        resolve_kernel("float16")


def test_int8_quantises_every_linear_layer_and_keeps_the_outputs_close():
    import torch

    torch.manual_seed(0)
    module = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 3)).eval()
    x = torch.randn(16, 64)
    expected = module(x)
    quantised = prepared(module, "int8")
    kinds = {type(m).__name__ for m in quantised.modules()}
    assert "Linear" in kinds and not any(type(m) is torch.nn.Linear for m in quantised.modules())
    assert torch.allclose(quantised(x), expected, atol=0.05)
    assert prepared(torch.nn.Linear(4, 4), "float32").weight.dtype == torch.float32
    assert prepared(torch.nn.Linear(4, 4), "bfloat16").weight.dtype == torch.bfloat16


def test_the_onnx_kernel_is_for_the_cross_encoder_only():
    import torch

    with pytest.raises(ValueError, match="cross-encoder only"):
        prepared(torch.nn.Linear(4, 4), "onnx")


@pytest.mark.slow  # exports the cross-encoder to ONNX (a few seconds)
def test_the_cross_encoder_run_by_onnx_runtime_reads_as_torch_does_and_its_export_is_kept(
    tmp_path, monkeypatch
):
    import numpy as np

    from audit.pipeline import onnx_runner
    from audit.pipeline.nli_model import NLIModel

    monkeypatch.setenv("THEORIA_VAR_DIR", str(tmp_path))
    pairs = [
        ("The annual membership fee is $150.", "The annual fee is $150."),
        ("The annual membership fee is $150.", "The annual fee is $200."),
        ("Blocking NMDA receptors prevents LTP induction in the hippocampus.", "LTP needs NMDA receptors."),
    ]
    torch_model = NLIModel(kernel="float32").load()
    onnx_model = NLIModel(kernel="onnx").load()
    (export,) = (tmp_path / "onnx").glob("nli-*.onnx")
    assert np.allclose(onnx_model.infer(pairs), torch_model.infer(pairs), atol=1e-4)
    assert (onnx_model.infer(pairs).argmax(1) == torch_model.infer(pairs).argmax(1)).all()
    made = export.stat().st_mtime_ns
    again = NLIModel(kernel="onnx").load()  # a later process finds the export and does not redo it
    assert export.stat().st_mtime_ns == made and len(list((tmp_path / "onnx").iterdir())) == 1
    runner = again._module
    first = runner.session()
    assert runner.session() is first
    monkeypatch.setattr(onnx_runner.os, "getpid", lambda: -1)  # as in a forked worker
    assert runner.session() is not first


@pytest.mark.slow  # loads the bi-encoder twice
def test_the_kernel_probe_compares_the_bi_encoders_vectors_with_float32(capsys):
    from audit.evaluation.kernel_probe import main

    main(["--pairs", "3", "--bi-encoder", "float32", "int8"])
    out = capsys.readouterr().out
    assert "bi-encoder float32: " in out and "bi-encoder int8: " in out
    mean = float(
        out.split("bi-encoder int8 against float32: cosine of a vector to its float32 one min ")[1].split(
            ", mean "
        )[1]
    )
    assert 0.8 < mean < 1.0


def test_the_kernel_probe_times_the_readings_passes_at_each_pass_cost(capsys):
    from audit.evaluation.kernel_probe import main

    main(["float32", "--pairs", "6", "--passes", "0", "100"])
    out = capsys.readouterr().out
    assert "float32: 1 answers of 18.0 pairs" in out
    for label in (
        "the fewest passes of up to 32 pairs (as before)",
        "a pass cost of 0 word",
        "a pass cost of 100 word",
    ):
        assert label in out
    padding = [
        int(line.split(" % of the word pieces")[0].rsplit(" ", 1)[1])
        for line in out.splitlines()
        if "padding" in line
    ]
    assert padding[1] == 0 and padding[0] >= padding[2] >= 0  # a pass a pair pads nothing
    largest = [float(line.rsplit(" ", 1)[1]) for line in out.splitlines() if "largest change" in line]
    assert largest[0] == 0.0 and max(largest) < 1e-4  # float32: the cut changes nothing

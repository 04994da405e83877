"""Two evaluate runs compared by what they catch (audit/evaluation/compare_runs.py)."""

from __future__ import annotations

import io

import numpy as np

from audit.evaluation import compare_runs


def _run(path, labels, *, ids=None, unbound=None):
    n = len(labels)
    np.savez(
        path,
        ids=np.array(ids or [f"c{i}" for i in range(n)]),
        labels=np.array(labels),
        labels_without_binding=np.array(unbound or labels),
        gold=np.array(["SUPPORTED", "NEI"] * (n // 2)),
        datasets=np.array(["wice"] * n),
        groups=np.arange(n) // 2,
    )
    return path


def test_a_run_that_lets_an_unsupported_claim_pass_loses_catch_rate(tmp_path):
    before = _run(tmp_path / "a.npz", ["SUPPORTED", "NEI"] * 20)
    after = _run(tmp_path / "b.npz", ["SUPPORTED", "SUPPORTED"] + ["SUPPORTED", "NEI"] * 19)
    out = io.StringIO()
    assert compare_runs.main([str(before), str(after)], out=out) == 0
    text = out.getvalue()
    assert "labels changed: 1" in text
    assert "AFTER - BEFORE, macro, paired: catch rate -5.0" in text
    assert "false alarm +0.0" in text


def test_runs_over_different_claims_are_refused_in_one_sentence(tmp_path):
    before = _run(tmp_path / "a.npz", ["SUPPORTED", "NEI"])
    after = _run(tmp_path / "b.npz", ["SUPPORTED", "NEI"], ids=["x", "y"])
    err = io.StringIO()
    assert compare_runs.main([str(before), str(after)], out=io.StringIO(), err=err) == 2
    assert err.getvalue().startswith("compare_runs: the two runs labelled different claims")

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


def test_runs_that_kept_their_p_supported_also_compare_how_they_rank(tmp_path):
    n = 40
    gold = np.array(["SUPPORTED", "NEI"] * (n // 2))
    sharp = np.where(gold == "SUPPORTED", 0.9, 0.1)
    blunt = np.where(np.arange(n) % 4 < 2, 0.9, 0.1)  # right on half the answers only
    paths = []
    for name, p in (("a.npz", blunt), ("b.npz", sharp)):
        path = _run(tmp_path / name, list(np.where(p >= 0.5, "SUPPORTED", "NEI")))
        with np.load(path) as data:
            np.savez(path, **dict(data), p_supported=p, blocked=np.zeros(n, dtype=bool))
        paths.append(str(path))
    out = io.StringIO()
    assert compare_runs.main(paths, out=out) == 0
    assert "AUROC of P(supported), AFTER - BEFORE, paired: wice +50.0" in out.getvalue()

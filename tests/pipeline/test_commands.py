"""verify_claims / verify_answers: output format, bad lines, missing files (issue 3 §6)."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command

CLAIM = {
    "id": "x1",
    "dataset": "t",
    "claim": "The annual fee is $150.",
    "evidence": [{"id": "e1", "title": "", "text": "The annual membership fee is $150."}],
    "label": "SUPPORTED",
}


def _write(path, lines):
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_verify_claims_writes_one_line_per_good_line_and_names_the_bad_ones(tmp_path, embedder, capsys):
    src = _write(
        tmp_path / "in.jsonl",
        [
            json.dumps(CLAIM),
            "{not json",
            json.dumps({"id": "x3"}),
            json.dumps({**CLAIM, "id": "x4", "claim": "The fee is $90."}),
        ],
    )
    out = tmp_path / "out.jsonl"
    with pytest.raises(SystemExit) as exit_info:
        call_command("verify_claims", "--input", str(src), "--output", str(out))
    assert exit_info.value.code == 1
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["id"] for r in rows] == ["x1", "x4"]
    assert rows[0]["label"] == "SUPPORTED" and rows[1]["label"] == "REFUTED"
    assert all(set(r) == {"id", "label", "confidence"} and 0 <= r["confidence"] <= 1 for r in rows)
    err = capsys.readouterr().err
    assert "line 2: not valid JSON" in err and "line 3: missing field(s): claim, evidence" in err


def test_verify_claims_says_so_in_one_line_when_the_input_file_is_missing(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        call_command(
            "verify_claims", "--input", str(tmp_path / "nope.jsonl"), "--output", str(tmp_path / "o")
        )
    assert exit_info.value.code == 2
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert err == [f"verify_claims: {tmp_path / 'nope.jsonl'}: no such file"]


def test_verify_answers_writes_the_answer_format(tmp_path, embedder):
    answer = {
        "id": "a1",
        "query": "What is the fee?",
        "answer": "The annual fee is $150 [1].",
        "contexts": ["[1] https://example.org\n\nThe annual membership fee is $150."],
    }
    src = _write(
        tmp_path / "a.jsonl", [json.dumps(answer), json.dumps({"id": "a2", "answer": 3, "contexts": []})]
    )
    out = tmp_path / "p.jsonl"
    with pytest.raises(SystemExit):
        call_command("verify_answers", "--input", str(src), "--output", str(out))
    (row,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert set(row) == {"id", "faithfulness", "audit_score", "flagged", "claims"}
    assert row["claims"][0]["label"] == "SUPPORTED" and row["faithfulness"] == 1.0


def _bench(tmp_path, **options) -> tuple[dict, str]:
    """One small benchmark run (300 chunks, 3 answers of 4 claims): its summary and what it printed."""
    import io

    from audit.evaluation.cli import run_bench

    out = io.StringIO()
    summary = run_bench(
        300,
        n_answers=3,
        claims_per_answer=4,
        out=out,
        err=io.StringIO(),
        cache_dir=tmp_path,
        pool_size=60,
        **options,
    )
    return summary, out.getvalue()


@pytest.mark.slow  # builds a benchmark index and times audits over it
def test_bench_ends_with_one_json_line_of_latency_figures(tmp_path, embedder):
    summary, text = _bench(tmp_path)
    last = json.loads(text.strip().splitlines()[-1])
    assert last == summary
    assert set(last) == {
        "p50_ms",
        "p95_ms",
        "cpu_p50_ms",
        "cpu_p95_ms",
        "floor_ms",
        "floor_cpu_ms",
        "p50_over_floor",
        "cpu_p50_over_floor",
        "claims_per_s",
        "peak_mb",
        "chunks",
        "parses_per_answer",
        "stored_parses_per_answer",
        "binding_ms",
        "stage_ms",
        "stage_cpu_ms",
        "settled",
        "mean_ms",
        "mean_cpu_ms",
        "stored_encodings",
    }
    assert last["floor_ms"] > 0 and last["p50_over_floor"] == pytest.approx(
        last["p50_ms"] / last["floor_ms"], abs=0.01
    )
    assert "reading floor (embed the claims, exact search over the 300 chunks" in text
    assert "kernels: cross-encoder " in text and " bf16 instructions)" in text
    assert last["chunks"] == 300 and 0 < last["p50_ms"] <= last["p95_ms"] and last["claims_per_s"] > 0
    assert last["cpu_p50_ms"] > 0
    assert (tmp_path / "bench_kb_300.npy").exists()  # cached for the next run
    # the chunks' sentences were encoded as ingestion encodes them, and the audits read them
    assert last["stored_encodings"] is True and (tmp_path / "bench_encodings.sqlite3").exists()
    assert "knowledge-base sentence encodings stored at ingestion, read by the audits" in text
    assert last["stored_parses_per_answer"] > 0  # and the binding read the parses stored beside them


@pytest.mark.slow  # builds a benchmark index and times audits over it
def test_bench_times_the_judge_with_and_without_the_role_binding_in_one_run(tmp_path, embedder):
    _, text = _bench(tmp_path, judges=["nli:no-binding", "nli"])
    reports = [json.loads(line) for line in text.splitlines() if line.startswith("{")]
    assert len(reports) == 2
    assert reports[0]["parses_per_answer"] == 0 and reports[1]["parses_per_answer"] > 0
    assert reports[0]["binding_ms"] == 0 and reports[1]["binding_ms"] > 0
    assert "judge nli without the role binding; " in text and "same run, one after the other:" in text


@pytest.mark.slow  # builds a benchmark index and times audits over it
def test_bench_splits_an_answers_time_between_its_stages_and_the_rest(tmp_path, embedder):
    parts = {}
    for name, options in (
        ("full", {"depth": "full"}),
        ("fast", {"depth": "fast"}),
        ("full without the binding", {"depth": "full", "judges": ["nli:no-binding"]}),
    ):
        summary, text = _bench(tmp_path, **options)
        wall, cpu = summary["stage_ms"], summary["stage_cpu_ms"]
        assert set(wall) == set(cpu) and sum(wall.values()) < summary["mean_ms"]
        assert (
            next(x for x in text.splitlines() if x.startswith("mean per answer")).count("(CPU ")
            == len(wall) + 2
        )
        parts[name] = wall
    # the full depth reads the claims with both encoders; without the role binding no time is the binding's
    assert (
        parts["full"]["bi-encoder"] > 0 and parts["full"]["cross-encoder"] > 0 and parts["full"]["search"] > 0
    )
    assert parts["full"]["role binding"] > 0
    # the checks beside the judge have their own clocks, so the rest is extraction, features and scoring
    assert parts["full"]["structural rules"] > 0 and parts["fast"]["structural rules"] > 0
    assert parts["full"]["other checks"] > 0
    assert parts["full without the binding"].get("role binding", 0.0) == 0.0
    assert parts["fast"]["bi-encoder"] > 0


@pytest.mark.slow  # builds a benchmark index and times audits over it
def test_bench_prints_the_share_of_claims_each_stage_settled(tmp_path, embedder):
    import re

    _, text = _bench(tmp_path, judge="nli")
    line = next(x for x in text.splitlines() if x.startswith("claims settled by each stage: "))
    shares = {
        name.strip(): float(v) for name, v in re.findall(r"([^,:]+?) (\d+\.\d) %", line.split(": ", 1)[1])
    }
    assert sum(shares.values()) == pytest.approx(100.0, abs=0.3)
    assert set(shares) <= {"cheap signals (features head, cascade)", "NLI reader", "no evidence found"}
    assert shares.get("NLI reader", 0) > 0


@pytest.mark.slow  # builds a benchmark index and times audits over it
def test_bench_saves_the_pairs_the_cross_encoder_read_and_the_kernel_probe_times_them_again(
    tmp_path, embedder, capsys
):
    from audit.evaluation.kernel_probe import main

    path = tmp_path / "pairs.json"
    _bench(tmp_path, depth="full", save_pairs=path)
    answers = json.loads(path.read_text())
    assert len(answers) == 3 and all(isinstance(p, str) and isinstance(h, str) for a in answers for p, h in a)
    assert sum(map(len, answers)) > 0
    main(["float32", "--passes", "100", "--pairs-file", str(path)])
    out = capsys.readouterr().out
    assert f"float32: {sum(1 for a in answers if a)} answers of " in out
    assert "passes cut at a pass cost of 100 word pieces: " in out


def test_the_kernel_probe_refuses_a_file_that_holds_no_bench_pairs_in_one_sentence(tmp_path):
    from audit.evaluation.kernel_probe import main

    bad = tmp_path / "pairs.json"
    bad.write_text('{"not": "pairs"}')
    with pytest.raises(
        SystemExit, match=r"is not a file of pairs written by `manage\.py bench --save-pairs`"
    ):
        main(["float32", "--passes", "100", "--pairs-file", str(bad)])
    with pytest.raises(SystemExit):
        main(["float32", "--pairs-file", str(bad)])  # without --passes: argparse's own error


def test_bench_refuses_to_save_pairs_into_a_folder_that_does_not_exist(tmp_path):
    from django.core.management import CommandError, call_command

    with pytest.raises(CommandError, match="--save-pairs needs the in-process backend"):
        call_command("bench", "--save-pairs", str(tmp_path / "missing" / "pairs.json"))

"""CLI: results / speed (in-process, plus real subprocesses for the one-line errors and exit codes)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from explorer.cli import main
from explorer.papers import speed

ROOT = Path(__file__).resolve().parents[1]


def test_results_json_rows_have_the_documented_fields(capsys):
    assert main(["results", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    fields = {"model", "variant", "benchmark", "metric", "value", "source"}
    assert rows and all(set(r) - {"texts"} == fields for r in rows)
    assert any(r["value"] is None for r in rows)  # "not reported" stays a row
    claims = [r for r in rows if "claim" in r.get("texts", {})]  # a claim in words (M2M-100's abstract): never a number
    assert claims and all(r["value"] is None and "more than 10 BLEU" in r["texts"]["claim"] for r in claims)
    notes = [r for r in rows if "note" in r.get("texts", {})]  # a caveat beside a number (ALBERT's README, BERT-large)
    assert notes and all(r["model"] == "BERT-large" and "XLNet" in r["texts"]["note"] for r in notes)


def test_results_filtered_by_benchmark(capsys):
    assert main(["results", "--benchmark", "cpu-inference", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {r["benchmark"] for r in rows} == {"cpu-inference"}
    seconds = {r["model"]: r["value"] for r in rows if r["metric"] == "inference_seconds"}
    assert seconds == {"ELMo": 895.0, "BERT-base": 668.0, "DistilBERT": 410.0}


def test_results_text_says_not_reported(capsys):
    assert main(["results", "--benchmark", "long-document-qa-dev"]) == 0
    assert "not reported" in capsys.readouterr().out


def test_results_json_covers_the_new_tables(capsys):
    assert main(["results", "--json"]) == 0
    benchmarks = {r["benchmark"] for r in json.loads(capsys.readouterr().out)}
    assert {"xnli", "lm-zero-shot", "open-domain-qa-test", "ms-marco-passage", "sts-unsupervised",
            "long-document-dev", "cnn-dailymail-test"} <= benchmarks


def test_budget_json_has_the_documented_fields(capsys):
    assert main(["budget", "gpt3", "mobilebert", "--json"]) == 0
    gpt3, t5 = json.loads(capsys.readouterr().out)
    fields = {"key", "corpus", "corpus_gb", "tokens", "steps", "batch", "seq_len", "hardware", "days", "train_flops",
              "train_flops_source"}
    assert fields <= set(gpt3) and fields <= set(t5)
    assert gpt3["train_flops"] == 3.14e23 and t5["train_flops"] is None


def test_budget_text_names_the_source(capsys):
    assert main(["budget", "bert-base"]) == 0
    out = capsys.readouterr().out
    assert "estimated: 6 x N x D" in out and "Devlin et al. 2019" in out


def test_speed_json_shape(monkeypatch, capsys):
    fake = speed.Speed(("bert-base", "distilbert"), (10.0, 5.0), 32, 3)
    monkeypatch.setattr(speed, "measure", lambda keys, seq_len, runs, threads, **placement: fake)
    assert main(["speed", "bert-base", "distilbert", "--runs", "3", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out == {"models": [{"key": "bert-base", "ms_per_example": 10.0},
                              {"key": "distilbert", "ms_per_example": 5.0}], "ratio": 2.0,
                   "device": "cpu", "device_name": "cpu", "dtype": "float32"}  # what ran


@pytest.mark.parametrize("argv, needle", [
    (["results", "--benchmark", "<script>glue"], "Unknown benchmark"),
    (["speed", "bert-base"], "exactly two"),
    (["speed", "bert-base", "distilbert", "--runs", "0"], "--runs"),
    (["speed", "no-such-model", "distilbert"], "Unknown variant"),
    (["speed"], "required"),
    (["budget", "<b>bert</b>"], "Unknown variant"),
])
def test_bad_input_is_one_line_and_exit_2(argv, needle):
    proc = subprocess.run([sys.executable, "-m", "explorer", *argv], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and needle in proc.stderr and "Traceback" not in proc.stderr

"""``python -m explorer forward``: the JSON the step-through promises, its text table, one-line refusals."""

from __future__ import annotations

import json

from explorer.cli import main

TEXT = "The capital of France is"
STEP_KEYS = {"name", "layer", "kind", "shape", "mean", "std", "max_abs_error"}


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def test_forward_prints_every_step_as_json(capsys) -> None:
    rc, out, _ = _run(capsys, "forward", "--model", "gemma3-270m", "--text", TEXT, "--json", "--device", "cpu")
    d = json.loads(out)
    assert rc == 0 and {"model", "model_type", "tokens", "card", "steps", "top", "logits_max_abs_error"} <= set(d)
    assert d["model"] == "gemma3-270m" and d["model_type"] == "gemma3_text" and d["card"]["label"] == "Gemma 3"
    assert all(set(s) >= STEP_KEYS for s in d["steps"]) and all(s["max_abs_error"] <= 1e-5 for s in d["steps"])
    assert len(d["top"]) == 5 and {"token", "probability"} == set(d["top"][0])
    assert d["logits_max_abs_error"] <= 1e-5


def test_one_layer_and_head_as_a_table(capsys) -> None:
    rc, out, _ = _run(capsys, "forward", "--model", "gemma3-270m", "--text", TEXT, "--layer", "1", "--head", "0",
                      "--device", "cpu")
    lines = out.splitlines()
    assert rc == 0 and lines[0].startswith("== gemma3-270m [Gemma 3, decoder")
    assert any(" 1 q " in line for line in lines) and not any(" 0 q " in line for line in lines)
    assert any("logits against the model's own" in line for line in lines)


def test_a_layer_out_of_range_is_one_line_before_loading(capsys) -> None:
    rc, out, err = _run(capsys, "forward", "--model", "gpt2", "--random-weights", "--text", TEXT, "--layer", "12")
    assert rc == 2 and out == "" and err.strip() == "error: Layer 12 is out of range: this model has layers 0 to 11."
    rc, _, err = _run(capsys, "forward", "--model", "gpt2", "--random-weights", "--text", "  ")
    assert rc == 2 and "The text is empty" in err and len(err.strip().splitlines()) == 1

"""explorer.cli.compress: ``python -m explorer compress KEY --method M --json``: the JSON shape is pinned by a
golden file (keys and value types; the numbers vary with the machine), the figures hold their invariants, and bad
input is one line on stderr with exit 2."""

from __future__ import annotations

import json
from typing import Any

import pytest

from explorer.cli import main


def _shape(value: Any) -> Any:
    """Keys and value types, numbers as "number": what a golden file can pin across machines."""
    if isinstance(value, dict):
        return {k: _shape(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_shape(v) for v in value[:1]]
    if isinstance(value, bool) or value is None:
        return type(value).__name__
    return "number" if isinstance(value, int | float) else type(value).__name__


@pytest.fixture(scope="module")
def int8_json() -> dict:
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["compress", "sentence-bert", "--method", "int8", "--device", "cpu", "--repeats", "2",
                     "--json"]) == 0
    return json.loads(out.getvalue())


def test_json_shape_matches_golden(int8_json, golden) -> None:
    golden("cli/compress-keys.json", json.dumps(_shape(int8_json), indent=2, sort_keys=True) + "\n")


def test_int8_is_smaller_and_measured(int8_json) -> None:
    r = int8_json
    assert r["model"] == "sentence-bert" and r["method"] == "int8" and r["device"] == "cpu"
    assert 0 < r["size_bytes"] < r["baseline_size_bytes"]
    assert r["latency_ms"] > 0 and r["baseline_latency_ms"] > 0
    q = r["quality"]
    assert q["metric"] == "cosine agreement" and q["baseline_value"] == 1.0 and 0.5 < q["value"] <= 1.0


def test_several_methods_give_a_list_and_a_text_table(capsys) -> None:
    assert main(["compress", "sentence-bert", "--method", "bf16", "--method", "prune-20", "--repeats", "1",
                 "--device", "cpu", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [r["method"] for r in out] == ["bf16", "prune-20"] and abs(out[1]["sparsity"] - 0.2) < 0.005
    assert main(["compress", "sentence-bert", "--method", "heads-25", "--repeats", "1", "--device", "cpu"]) == 0
    text = capsys.readouterr().out
    assert "heads-25" in text and "cosine agreement" in text and "dense" in text


@pytest.mark.parametrize("argv, needle", [
    (["--method", "prune-100"], "outside 0 to 99"),
    (["--method", "zip"], "use one of fp32"),
    (["--method", "fp16", "--device", "cpu"], "GPU only"),
    (["--method", "bf16", "--dtype", "bfloat16"], "--method bf16"),
    (["--method", "int8", "--repeats", "0"], "repeats"),
])
def test_bad_input_is_one_line_exit_2(capsys, argv, needle) -> None:
    with pytest.raises(SystemExit) if "--repeats" in argv else _nothing():
        assert main(["compress", "sentence-bert", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert needle in err and "\n" not in err and "Traceback" not in err


def _nothing():
    import contextlib

    return contextlib.nullcontext()


def test_early_exit_on_a_lab_model_gives_the_same_record_shape(lab_exits, golden, capsys) -> None:
    assert main(["compress", "lab/mlm-tiny-20steps-seed0", "--models-dir", str(lab_exits), "--method", "exit-0.5",
                 "--repeats", "1", "--device", "cpu", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    golden("cli/compress-exit-keys.json", json.dumps(_shape(record), indent=2, sort_keys=True) + "\n")
    assert record["method"] == "exit-0.5" and record["quality"]["metric"].startswith("accuracy on")
    assert 1.0 <= record["quality"]["mean_layers"] <= 2.0 and record["latency_ms"] > 0
    assert main(["compress", "lab/mlm-tiny-20steps-seed0", "--models-dir", str(lab_exits), "--method", "exit-0.5",
                 "--method", "int8"]) == 2
    assert "apart from the other methods" in capsys.readouterr().err


def test_help_lists_every_method_the_library_offers(capsys, monkeypatch) -> None:
    from explorer.compression import offer

    monkeypatch.setenv("COLUMNS", "100")
    with pytest.raises(SystemExit):
        main(["compress", "--help"])
    text = "".join(capsys.readouterr().out.split())  # argparse wraps lines (and may break at a hyphen)
    for f in offer.FORMS:
        assert f.form in text, f.form
    assert "mheads-N" in text and "exit-S" in text


def test_a_zero_original_prints_no_ratio_instead_of_crashing(monkeypatch, capsys) -> None:
    """The table's ratios are the study's own: an original of 0 bytes timed at 0 ms (and a perplexity that
    overflowed) prints n/a where a ratio or a figure has no value."""
    import math

    from explorer.compression import study
    from explorer.compression.quality import Quality

    def row(method: str, size: int, base_latency: float) -> study.Row:
        return study.Row(method, "", size, size, 0.0, 0.0, base_latency, Quality("perplexity", math.inf, math.inf),
                         0.0, "")

    zero = study.Study("m", "M", True, "cpu", "cpu", "float32", "tokens/s", "p", row("original", 0, 0.0),
                       (row("int8", 10, 0.0),))
    monkeypatch.setattr(study, "run", lambda *a, **k: zero)
    assert main(["compress", "m", "--method", "int8", "--device", "cpu"]) == 0
    line = capsys.readouterr().out.splitlines()[-1]
    assert line.split()[:1] == ["int8"] and line.count("n/a") == 4, line

"""``python -m explorer mechanism ...`` (explorer/cli/mechanisms.py): JSON equals the library's, one-line errors."""

from __future__ import annotations

import json

import pytest

from explorer.papers.mechanisms import distillation, text2text


def _cli(capsys, *argv: str) -> tuple[int, str, str]:
    from explorer.cli import main

    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse errors
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def test_text2text_json_is_the_librarys(capsys) -> None:
    code, out, _ = _cli(capsys, "mechanism", "t5", "stsb", "--label", "3.85", "--json")
    assert code == 0
    ex = text2text.T5_TASKS["stsb"]
    assert json.loads(out) == text2text.t5_frame("stsb", ex.example_input, "3.85").to_dict()
    code, out, _ = _cli(capsys, "mechanism", "ctrl", "Reviews", "--json")
    assert code == 0 and json.loads(out)["layout"]["ids"][0] == 41671
    code, out, _ = _cli(capsys, "mechanism", "m2m", "--src", "de", "--tgt", "en", "--json")
    d = json.loads(out)
    assert code == 0 and d["encoder"]["tokens"][0] == "__de__" and d["decoder"]["tokens"][:2] == ["</s>", "__en__"]


def test_text_output_names_the_numbers(capsys) -> None:
    code, out, _ = _cli(capsys, "mechanism", "t5", "cola")
    assert code == 0 and "labels.tokens: ▁not ▁acceptable </s>" in out


def test_distillation_and_deberta_json(capsys) -> None:
    code, out, _ = _cli(capsys, "mechanism", "distillation", "--temperature", "1", "--json")
    d = json.loads(out)
    ref = distillation.triple_loss("Paris is the capital of France, and Rome is the capital of Italy.", 0, 1.0,
                                   device="auto", dtype="auto")  # the CLI's default placement
    assert code == 0 and d["distilbert"]["losses"] == pytest.approx({"ce": ref.ce, "mlm": ref.mlm, "cos": ref.cos})
    assert d["tinybert"]["mapping"] == [0, 3, 6, 9, 12] and d["distilbert"]["weights"] == {"ce": 5.0, "mlm": 2.0,
                                                                                            "cos": 1.0}
    code, out, _ = _cli(capsys, "mechanism", "deberta", "deberta-v3-base", "--text", "Hello there.", "--json")
    assert code == 0 and json.loads(out)["max_prob_error"] < 1e-5


@pytest.mark.parametrize(("argv", "match"), [
    (["mechanism", "deberta", "bert-base"], "choose one of"),
    (["mechanism", "distillation", "--text", ""], "empty"),
    (["mechanism", "distillation", "--temperature", "0"], "--temperature: must be at least 0.5"),
    (["mechanism", "t5", "nope"], "Unknown T5 task"),
    (["mechanism", "t5", "stsb", "--label", "high"], "number"),
    (["mechanism", "ctrl", "Cooking"], "control codes"),
    (["mechanism", "m2m", "--src", "xx"], "100 languages"),
    (["mechanism", "m2m", "--text", "x" * 50_000], "2,000"),
    (["mechanism"], "required"),
])
def test_bad_arguments_one_line(capsys, argv: list[str], match: str) -> None:
    code, out, err = _cli(capsys, *argv)
    assert code == 2 and not out and match in err and len(err.strip().splitlines()) == 1


def test_distillation_takes_the_placement(capsys) -> None:
    code, out, _ = _cli(capsys, "mechanism", "distillation", "--device", "cpu", "--dtype", "bfloat16", "--json")
    d = json.loads(out)
    assert code == 0 and d["distilbert"]["dtype"] == d["tinybert"]["dtype"] == "bfloat16"
    assert d["distilbert"]["device"] == "cpu"

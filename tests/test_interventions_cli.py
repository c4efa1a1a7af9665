"""``python -m explorer patch / ablate / steer``: the JSON the issue specifies, text output, one-line errors."""

from __future__ import annotations

import json

import pytest

from explorer.cli import main
from tests.tiny_gemma import save_tiny_gemma

CLEAN, CORRUPT = "The Eiffel Tower is in the city of", "The Colosseum is in the city of"


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> str:
    return str(save_tiny_gemma(tmp_path_factory.mktemp("cli") / "gemma"))


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def test_patch_prints_the_grid_as_specified(capsys, model: str) -> None:
    rc, out, err = _run(capsys, "patch", "--model", model, "--clean", CLEAN, "--corrupt", CORRUPT, "--target",
                        "Paris", "--foil", "Rome", "--site", "heads", "--metric", "logit-diff", "--json",
                        "--device", "cpu")
    d = json.loads(out)
    assert rc == 0 and {"model", "site", "metric", "clean_tokens", "corrupt_tokens", "clean_metric", "corrupt_metric",
                        "grid"} <= set(d)
    assert d["site"] == "heads" and len(d["grid"]) == 3 and len(d["grid"][0]) == 2  # layers x heads
    assert d["clean_tokens"][1] == " E" and "cells" in err  # progress on stderr


def test_patch_text_output_is_a_table(capsys, model: str) -> None:
    rc, out, _ = _run(capsys, "patch", "--model", model, "--clean", CLEAN, "--corrupt", CORRUPT, "--target", "Paris",
                      "--foil", "Rome", "--metric", "kl", "--device", "cpu")
    lines = out.splitlines()
    assert rc == 0 and lines[1].startswith("layer") and len(lines) == 2 + 3
    assert lines[-1].split()[-1] == "1.000"  # the last layer at the last position restores the clean run


def test_ablate_and_rank_heads(capsys, model: str) -> None:
    rc, out, _ = _run(capsys, "ablate", "--model", model, "--text", CLEAN, "--head", "1.1", "--mode", "mean",
                      "--json", "--device", "cpu")
    d = json.loads(out)
    assert rc == 0 and d["component"] == "head 1.1" and d["mode"] == "mean" and len(d["before"]) == 10
    assert {"target_prob_before", "target_prob_after", "kl"} <= set(d)
    rc, out, _ = _run(capsys, "ablate", "--model", model, "--text", CLEAN, "--rank-heads", "--target", "Paris",
                      "--json", "--device", "cpu")
    assert rc == 0 and len(json.loads(out)["heads"]) == 6


def test_steer_prints_text(capsys, model: str) -> None:
    rc, out, _ = _run(capsys, "steer", "--model", model, "--text", "The Eiffel Tower is", "--positive", "Love",
                      "--positive", "I love it", "--negative", "Hate", "--layer", "1", "--coefficient", "0",
                      "--max-new-tokens", "4", "--json", "--device", "cpu")
    d = json.loads(out)
    assert rc == 0 and d["text"] == d["unsteered"] and d["positive"] == ["Love", "I love it"]


@pytest.mark.parametrize("argv,pattern", [
    (["ablate", "--text", "hi", "--head", "9.0"], "Layer 9 is out of range"),
    (["patch", "--clean", CLEAN, "--corrupt", "The Colosseum in Rome is in the city of", "--target", "Paris",
      "--foil", "Rome"], "10 tokens and the corrupted one 12"),
])
def test_errors_are_one_line(capsys, model: str, argv: list[str], pattern: str) -> None:
    rc, _, err = _run(capsys, argv[0], "--model", model, *argv[1:], "--device", "cpu")
    assert rc == 2 and pattern in err and "Traceback" not in err and err.count("\n") == 1


def test_a_coefficient_that_is_not_finite_is_refused_while_parsing(capsys, model: str) -> None:
    with pytest.raises(SystemExit):
        main(["steer", "--model", model, "--text", "hi", "--positive", "a", "--negative", "b", "--layer", "1",
              "--coefficient", "inf"])
    assert "finite number" in capsys.readouterr().err


def test_a_served_model_is_refused_in_words(capsys) -> None:
    rc, _, err = _run(capsys, "ablate", "--model", "served:llama", "--text", "hi", "--layer", "0")
    assert rc == 2 and "served by an inference engine" in err


def test_a_target_of_several_tokens_says_only_its_first_is_followed(capsys, model: str) -> None:
    rc, out, err = _run(capsys, "ablate", "--model", model, "--text", "The Eiffel Tower is in", "--head", "0.0",
                        "--target", "New York", "--device", "cpu", "--json")
    assert rc == 0, err
    said = " ".join(json.loads(out)["notices"])
    assert "'New York' is 2 tokens here" in said and "only its first token, ' New', is scored" in said

"""``generate`` and ``next-token``: the documented JSON, the same ids as the library, bad arguments exit 2."""

from __future__ import annotations

import json

import pytest

from explorer.cli import main
from explorer.tasks.generation import DecodingSettings, generate
from tests.tiny_gemma import load_tiny_gemma, save_tiny_gemma


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    return save_tiny_gemma(tmp_path_factory.mktemp("gemma"))


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("strategy", ["greedy", "sample", "top-k", "top-p", "beam"])
def test_generate_json_has_the_documented_shape_and_library_ids(tiny_dir, capsys, strategy: str) -> None:
    code, out, err = _run(capsys, "generate", "--model", str(tiny_dir), "--text", "The cat sat", "--strategy",
                          strategy, "--max-new-tokens", "6", "--seed", "3", "--beams", "3", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert list(data) == ["model", "strategy", "prompt", "text", "token_ids", "tokens", "steps", "device",
                          "device_name", "dtype"]
    assert data["strategy"] == strategy and data["prompt"] == "The cat sat"
    assert len(data["token_ids"]) == len(data["tokens"]) == len(data["steps"]) == 6
    step = data["steps"][0]
    assert list(step) == ["token", "token_id", "probability", "top"]
    assert list(step["top"][0]) == ["token", "probability"] and len(step["top"]) == 5
    assert [s["token_id"] for s in data["steps"]] == data["token_ids"]
    lib = generate(load_tiny_gemma(tiny_dir), "The cat sat",
                   DecodingSettings(strategy, max_new_tokens=6, seed=3, beams=3))
    assert data["token_ids"] == lib.token_ids


def test_next_token_json(tiny_dir, capsys) -> None:
    code, out, err = _run(capsys, "next-token", "--model", str(tiny_dir), "--text", "The cat sat", "--top-k", "4",
                          "--json")
    assert code == 0, err
    data = json.loads(out)
    assert list(data) == ["model", "vocab_size", "device", "device_name", "dtype", "tokens"]
    assert data["vocab_size"] == 50257 and len(data["tokens"]) == 4
    assert list(data["tokens"][0]) == ["token", "token_id", "logit", "probability"]
    probs = [t["probability"] for t in data["tokens"]]
    assert probs == sorted(probs, reverse=True)


def test_text_output_is_readable(tiny_dir, capsys) -> None:
    code, out, _ = _run(capsys, "next-token", "--model", str(tiny_dir), "--text", "Hello", "--top-k", "2")
    assert code == 0 and "output layer is the input embedding matrix" in out


@pytest.mark.parametrize("args", [
    ["generate", "--model", "M", "--text", "x", "--top-p", "1.5"],
    ["generate", "--model", "M", "--text", "x", "--top-p", "0"],
    ["generate", "--model", "M", "--text", "x", "--temperature", "-1"],
    ["generate", "--model", "M", "--text", "x", "--beams", "99"],
    ["generate", "--model", "M", "--text", "x", "--max-new-tokens", "100000"],
    ["generate", "--model", "M", "--text", "x", "--strategy", "nucleus"],
    ["generate", "--model", "M", "--text", "x", "--seed", "abc"],
    ["next-token", "--model", "M", "--text", "x", "--top-k", "0"],
])
def test_bad_arguments_are_one_line_and_exit_2(capsys, args: list[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        code = main(args)
        raise SystemExit(code)
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and "\n" not in err and "Traceback" not in err


@pytest.mark.parametrize("text", ["", "   "])
def test_empty_prompt_is_one_line_exit_2(tiny_dir, capsys, text: str) -> None:
    code, _, err = _run(capsys, "generate", "--model", str(tiny_dir), "--text", text, "--json")
    assert code == 2 and "empty" in err and err.count("\n") == 1


def test_huge_prompt_is_cut_with_a_note(tiny_dir, capsys) -> None:
    code, out, err = _run(capsys, "next-token", "--model", str(tiny_dir), "--text", "word " * 10_000, "--json")
    assert code == 0 and "only its last" in err
    assert json.loads(out)["tokens"]


def test_missing_model_is_one_line(capsys, tmp_path) -> None:
    code, _, err = _run(capsys, "generate", "--model", str(tmp_path / "nope"), "--text", "x", "--json")
    assert code == 2 and err.startswith("error:") and err.count("\n") == 1


@pytest.mark.parametrize("temperature", ["1e-45", "1e-39", "1e-300"])
def test_a_tiny_temperature_samples_greedily_with_a_note(tiny_dir, capsys, temperature: str) -> None:
    code, out, err = _run(capsys, "generate", "--model", str(tiny_dir), "--text", "Hello", "--strategy", "sample",
                          "--temperature", temperature, "--max-new-tokens", "3", "--json")
    greedy = generate(load_tiny_gemma(tiny_dir), "Hello", DecodingSettings("greedy", max_new_tokens=3))
    assert code == 0 and json.loads(out)["token_ids"] == greedy.token_ids
    assert "below 0.01" in err and "ran as greedy" in err and "Traceback" not in err

"""``python -m explorer mask``: JSON shape per kind, --list, errors on one line."""

from __future__ import annotations

import json

import pytest

from explorer.cli import main
from explorer.objectives import STRATEGIES
from explorer.objectives.spans import t5_reconstruct

TEXT = "Thank you for inviting me to your party last week. It was great!"


def mask_json(capsys, *args: str) -> dict:
    assert main(["mask", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("name", ["bert", "wwm", "roberta", "spanbert", "electra"])
def test_token_level_output(capsys, name: str) -> None:
    d = mask_json(capsys, name, "--text", TEXT, "--seed", "4")
    n = len(d["original_tokens"])
    assert len(d["input_tokens"]) == n == len(d["targets"])
    assert any(t is not None for t in d["targets"])
    assert all(t in (None, o) for t, o in zip(d["targets"], d["original_tokens"], strict=True))
    if name == "electra":
        assert d["labels"] == [int(a != b) for a, b in zip(d["input_tokens"], d["original_tokens"], strict=True)]
    assert d == mask_json(capsys, name, "--text", TEXT, "--seed", "4")  # same seed, same output


@pytest.mark.parametrize("name", [n for n, s in STRATEGIES.items() if s.kind == "seq2seq"])
def test_seq2seq_output(capsys, name: str) -> None:
    d = mask_json(capsys, name, "--text", TEXT, "--seed", "1")
    assert {"original_tokens", "input_tokens", "target_tokens"} <= set(d)
    if name == "t5":
        assert t5_reconstruct(d["input_tokens"], d["target_tokens"]) == d["original_tokens"]
    else:
        assert d["target_tokens"] == d["original_tokens"]


def test_list_and_epochs(capsys) -> None:
    assert main(["mask", "--list"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in STRATEGIES)
    listed = mask_json(capsys, "--list")
    assert [d["name"] for d in listed] == list(STRATEGIES) and all(d["description"] for d in listed)
    e0 = mask_json(capsys, "roberta", "--text", TEXT, "--epoch", "0")
    e1 = mask_json(capsys, "roberta", "--text", TEXT, "--epoch", "1")
    assert e0["input_tokens"] != e1["input_tokens"]
    tlm = mask_json(capsys, "xlm-tlm", "--text", "The cat.", "--text2", "Le chat.")
    assert tlm["lang_ids"][-1] == 1
    same = mask_json(capsys, "electra", "--text", TEXT, "--p-original", "1")
    assert sum(same["labels"]) == 0 and any(t is not None for t in same["targets"])


@pytest.mark.parametrize("argv", [
    ["mask", "nope", "--text", "x"], ["mask", "bert", "--text", "   "], ["mask", "bert"], ["mask"],
    ["mask", "bert", "--text", "x", "--seed", "-1"], ["mask", "xlm-tlm", "--text", "x"],
    ["mask", "bert", "--text", "x", "--p-original", "0.5"], ["mask", "electra", "--text", "x", "--p-original", "2"],
])
def test_bad_arguments_exit_non_zero_with_one_line(capsys, argv: list[str]) -> None:
    try:
        code = main(argv)
    except SystemExit as exc:  # numbers are refused by argparse itself (explorer.cli.argtypes)
        code = exc.code
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and "\n" not in err


def test_argparse_errors_exit_two_with_one_line(capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["mask", "bert", "--text", "x", "--seed", "x"])
    assert exc.value.code == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1

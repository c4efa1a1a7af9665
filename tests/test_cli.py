"""The CLI's outputs, byte for byte, against golden files (tests/golden/cli/).

Every command runs in-process through ``explorer.cli.main`` exactly as ``python -m explorer`` would.
A refactor must leave these bytes unchanged; a deliberate change regenerates them with
``python -m pytest tests/test_cli.py --update-golden`` and the diff is reviewed.
"""

from __future__ import annotations

import shlex

import pytest

from explorer.cli import main

CASES = [
    ("list.json", 'list --json'),
    ("inspect-albert-base.json", 'inspect albert-base --json'),
    ("inspect-t5-small.json", 'inspect t5-small --json'),
    ("compare-bert-roberta-gpt2.json", 'compare bert-base roberta-base gpt2 --json'),
    ("tokenize.json", 'tokenize --text "Transformerify this, naïve café 東京!" --json'),
    ("mask-bert.json", 'mask bert --text "Thank you for inviting me to your party last week." --seed 0 --json'),
    ("mask-t5.json", 'mask t5 --text "Thank you for inviting me to your party last week." --seed 0 --json'),
    ("mask-bart.json", 'mask bart-infill --text "Thank you for inviting me to your party last week." --seed 3 --json'),
    ("mask-electra.json", 'mask electra --text "Thank you for inviting me to your party last week." --seed 1 --json'),
    ("pattern-longformer.json", 'pattern longformer --seq-len 4096 --json'),
    ("pattern-bigbird.json", 'pattern bigbird --seq-len 4096 --json'),
    ("pattern-gpt3.json", 'pattern gpt3 --seq-len 2048 --json'),
    # live commands pin the CPU in float32: the golden bytes (device, dtype, scores) are the same on a GPU machine
    ("similarity.json", 'similarity --model sentence-bert --device cpu --dtype float32 --json "A cat sits on the mat." '
                        '"A kitten rests on a rug." "Stock markets fell today."'),
    ("attention.json",
     'attention --model sentence-bert --text "The cat sat on the mat." --device cpu --dtype float32 --json'),
    ("inspect-bert-base.txt", "inspect bert-base"),
    ("compare.csv", "compare bert-base albert-base t5-small --csv"),
    ("budget.json", "budget --json"),
]


REAL_ENCODER = {"similarity.json", "attention.json"}  # goldens of the real MiniLM's numbers (the slow tier)
QUICK = [c for c in CASES if c[0] not in REAL_ENCODER]
REAL = [c for c in CASES if c[0] in REAL_ENCODER]


@pytest.mark.parametrize(("name", "command"), QUICK, ids=[c[0] for c in QUICK])
def test_cli_output_matches_golden(name: str, command: str, golden, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(shlex.split(command)) == 0
    golden(f"cli/{name}", capsys.readouterr().out)


@pytest.mark.parametrize(("name", "command"), REAL, ids=[c[0] for c in REAL])
def test_cli_output_of_the_real_minilm_matches_golden(name: str, command: str, golden, bundled_encoder,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    assert main(shlex.split(command)) == 0
    golden(f"cli/{name}", capsys.readouterr().out)


@pytest.mark.parametrize("command", [
    ["tokenize", "--text", "\udcff\udcfe bad", "--json"],  # argv bytes that are not UTF-8 arrive as surrogates
    ["mask", "bert", "--text", "\udcff", "--json"],
    ["similarity", "--model", "sentence-bert", "\udcff", "b"],
])
def test_text_that_is_not_utf8_is_one_line(command: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(command) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not UTF-8" in err[0]


def test_endless_text_file_and_stdin_stop_at_the_limit(monkeypatch, capsys) -> None:
    import io

    class Zero(io.RawIOBase):
        def readable(self) -> bool:
            return True

        def readinto(self, b) -> int:
            b[:] = bytes(len(b))
            return len(b)

    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BufferedReader(Zero())))
    assert main(["tokenize", "--stdin", "--json"]) == 2
    assert "larger than 2,000,000 bytes" in capsys.readouterr().err
    assert main(["attention", "--model", "sentence-bert", "--text-file", "/dev/zero", "--json"]) == 2
    assert "a character device, not a regular file" in capsys.readouterr().err  # refused unread

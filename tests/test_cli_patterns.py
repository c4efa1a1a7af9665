"""``python -m explorer pattern`` (explorer/cli/patterns.py): JSON, text, options and one-line errors."""

from __future__ import annotations

import json

import pytest

from explorer.architecture import patterns as P
from explorer.architecture.patterns import kinds


def _cli(capsys, *argv: str) -> tuple[int, str, str]:
    from explorer.cli import main

    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse errors
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_pattern_json(capsys) -> None:

    code, out, _ = _cli(capsys, "pattern", "bigbird", "--seq-len", "1024", "--json", "--verify", "--seed", "2")
    assert code == 0
    d = json.loads(out)
    expected = P.pattern_stats(kinds.block_sparse(1024, 64, 3, seed=2))
    assert d["kind"] == "block-sparse" and d["nnz"] == expected.nnz == d["nnz_from_mask"]
    assert d["density"] == expected.density and d["score_memory_bytes"] == 4 * expected.nnz


def test_cli_pattern_options_and_text_output(capsys) -> None:

    code, out, _ = _cli(capsys, "pattern", "longformer", "--seq-len", "2048", "--global", "5,17", "--json", "--curve")
    d = json.loads(out)
    assert code == 0 and d["spec"]["global_positions"] == [0, 5, 17]
    assert d["cost_curve"]["lengths"][0] == 512 and d["cost_curve"]["lengths"][-1] == 16_384
    code, out, _ = _cli(capsys, "pattern", "gpt-neo", "--seq-len", "1024", "--layer", "1", "--curve")
    assert code == 0 and "local-causal" in out and "score_memory_bytes" in out
    assert out.rstrip().splitlines()[-1].split()[0] == "16384"


@pytest.mark.parametrize(
    ("argv", "match"),
    [
        (["pattern", "nope", "--seq-len", "10"], "Unknown variant"),
        (["pattern", "bert-base", "--seq-len", "0"], "must be at least 1"),
        (["pattern", "bert-base", "--seq-len", "-5"], "must be at least 1"),
        (["pattern", "t5-base", "--seq-len", "99999999999"], "at most 1,048,576"),
        (["pattern", "bert-base", "--seq-len", "4096"], "at most 512 tokens"),
        (["pattern", "bert-base", "--seq-len", "ten"], "must be a whole number"),
        (["pattern", "longformer", "--seq-len", "64", "--global", "a,b"], "from 0 to 63 separated by commas"),
        (["pattern", "longformer", "--seq-len", "64", "--global", "5,64"], "past the end of a 64-token input"),
        (["pattern", "longformer", "--seq-len", "64", "--global=-3"], "not a token position"),
    ],
)
def test_cli_pattern_bad_arguments_one_line(capsys, argv: list[str], match: str) -> None:
    code, out, err = _cli(capsys, *argv)
    assert code == 2 and not out
    assert match in err and len(err.strip().splitlines()) == 1, err

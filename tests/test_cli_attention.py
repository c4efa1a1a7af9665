"""``python -m explorer attention``: JSON output, .npy export and one-line errors (bundled model)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from explorer.cli import main

TEXT = "The trophy didn't fit in the suitcase because it was too big."


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    rc = main(["attention", *argv])
    out, err = capsys.readouterr()
    return rc, out, err


def test_json_lists_layers_heads_tokens_and_shape(capsys) -> None:
    rc, out, _ = _run(capsys, "--model", "sentence-bert", "--text", TEXT, "--json")
    d = json.loads(out)
    n = len(d["tokens"])
    assert rc == 0 and d["layers"] == 6 and d["heads"] == 12 and d["shape"] == [6, 12, n, n]
    assert d["tokens"][0] == "[CLS]" and "trophy" in d["tokens"] and not d["truncated"]
    assert "selected" not in d


def test_layer_and_head_print_that_matrix_zoomed(capsys) -> None:
    rc, out, _ = _run(capsys, "--model", "sentence-bert", "--text", TEXT, "--json",
                      "--layer", "5", "--head", "11", "--range", "1:6")
    sel = json.loads(out)["selected"]
    assert rc == 0 and sel["shape"] == [5, 5] and sel["row_offset"] == 1
    assert sel["row_tokens"][0] == "the" and sel["title"] == "Self-attention: layer 5, head 11"
    assert all(0 <= v <= 1 for row in sel["matrix"] for v in row)


def test_rollout_view_rows_sum_to_one(capsys) -> None:
    rc, out, _ = _run(capsys, "--model", "sentence-bert", "--text", TEXT, "--json", "--layer", "5",
                      "--view", "rollout")
    m = np.array(json.loads(out)["selected"]["matrix"])
    assert rc == 0 and np.allclose(m.sum(1), 1.0, atol=1e-3)


def test_npy_export_and_text_file_truncation(capsys, tmp_path) -> None:
    src = tmp_path / "long.txt"
    src.write_text(" ".join(f"w{i}" for i in range(5000)), encoding="utf-8")
    npy = tmp_path / "att.npy"
    rc, out, _ = _run(capsys, "--model", "sentence-bert", "--text-file", str(src), "--max-tokens", "64",
                      "--npy", str(npy))
    assert rc == 0 and "only the first 64" in out
    assert np.load(npy).shape == (6, 12, 64, 64)


@pytest.mark.parametrize("argv", [
    ["--model", "sentence-bert", "--text", "   "],
    ["--model", "no-such-model", "--text", TEXT],
    ["--model", "sentence-bert", "--text", TEXT, "--layer", "6"],
    ["--model", "sentence-bert", "--text", TEXT, "--layer", "0", "--view", "cross"],
    ["--model", "sentence-bert", "--text", TEXT, "--max-tokens", "0"],
    ["--model", "sentence-bert", "--text-file", "/no/such/file.txt"],
])
def test_bad_arguments_exit_2_with_one_line(capsys, argv) -> None:
    try:
        rc, out, err = _run(capsys, *argv)
    except SystemExit as exc:  # numbers are refused by argparse itself (explorer.cli.argtypes)
        rc, (out, err) = exc.code, capsys.readouterr()
    assert rc == 2 and out == "" and err.startswith("error: ") and err.count("\n") == 1


@pytest.mark.parametrize("argv", [["--model", "sentence-bert"], ["--model", "x", "--text", "a", "--range", "1-2"]])
def test_argparse_errors_are_one_line_too(capsys, argv) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["attention", *argv])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and err.count("\n") == 1


@pytest.mark.parametrize("kind", ["bart", "albert"])
def test_saved_directories_through_the_real_loader(capsys, tmp_path, kind) -> None:
    """A local save_pretrained directory: BART gives cross-attention, ALBERT (sdpa by default) works
    because the loader is asked for the eager kernel."""
    from tests.tiny_models import save_tiny

    path = save_tiny(kind, tmp_path / kind)
    argv = ["--model", str(path), "--text", TEXT, "--json", "--layer", "1"]
    rc, out, _ = _run(capsys, *argv, *(["--view", "cross", "--target", "It was big."] if kind == "bart" else []))
    d = json.loads(out)
    n = len(d["tokens"])
    assert rc == 0 and d["shape"] == [2, 2, n, n]
    if kind == "bart":
        t = len(d["decoder_tokens"])
        assert d["family"] == "encoder-decoder" and d["cross_shape"] == [2, 2, t, n]
        assert d["selected"]["shape"] == [t, n] and d["selected"]["title"].startswith("Cross-attention")
    else:
        assert np.allclose(np.array(d["selected"]["matrix"]).sum(1), 1.0, atol=1e-3)


def test_block_zoom_and_query_are_bounded_json(capsys, tmp_path) -> None:
    src = tmp_path / "long.txt"
    src.write_text(" ".join(f"w{i}" for i in range(5000)), encoding="utf-8")
    base = ["--model", "sentence-bert", "--text-file", str(src), "--json", "--layer", "2", "--head", "3"]
    rc, out, _ = _run(capsys, *base, "--block")
    d = json.loads(out)["detail"]
    m = np.array(d["matrix"])  # 512 tokens -> blocks of 2: 256 x 256, rows sum to 1
    assert rc == 0 and d["kind"] == "block" and d["block"] == 2 and m.shape == (256, 256)
    assert np.allclose(m.sum(1), 1.0, atol=1e-2) and d["edges"][:3] == [0, 2, 4] and len(out) < 1_500_000
    rc, out, _ = _run(capsys, *base, "--zoom", "100:140,0:512")
    d = json.loads(out)["detail"]
    assert rc == 0 and d["shape"] == [40, 512] and d["rows"] == [100, 140] and len(out) < 1_500_000
    rc, out, _ = _run(capsys, *base, "--query", "511")
    d = json.loads(out)["detail"]
    assert rc == 0 and len(d["row"]) == 512 and abs(sum(d["row"]) - 1) < 1e-2 and len(out) < 200_000
    rc, _, err = _run(capsys, *base, "--zoom", "300:200")
    assert rc == 2 and "empty" in err and len(err.splitlines()) == 1


def test_a_layer_wider_than_the_display_prints_its_block_map(capsys, monkeypatch) -> None:
    from explorer.tasks.attention import blocks

    monkeypatch.setattr("explorer.tasks.attention.DISPLAY_TOKENS", 8)  # the bundled model takes 512: shrink the display
    rc, out, _ = _run(capsys, "--model", "sentence-bert", "--text", TEXT, "--json", "--layer", "1")
    d = json.loads(out)
    assert rc == 0 and "selected" not in d and d["detail"]["kind"] == "block"
    assert d["detail"]["block"] == blocks.block_for(len(d["tokens"]))

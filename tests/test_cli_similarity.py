"""explorer.cli.similarity: ``python -m explorer similarity``: JSON matrix, text table, one-line errors."""

from __future__ import annotations

import json

import pytest
import torch

from explorer.runtime.resolve import resolve
from explorer.tasks import similarity as sim


@pytest.fixture(scope="module")
def bundled():
    from explorer.runtime.loading import load_model

    torch.set_num_threads(2)
    return load_model(resolve("sentence-bert"))


def test_cli_json_matrix(capsys, bundled) -> None:
    from explorer.cli import main

    assert main(["similarity", "--json", "A cat sits.", "A dog runs.", "A cat sits.", ""]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["model"] == "sentence-bert" and out["sentences"] == ["A cat sits.", "A dog runs."]
    expected = sim.similarity(bundled, out["sentences"]).matrix
    assert out["matrix"] == [list(r) for r in expected]
    assert any("duplicate" in n for n in out["notices"])


def test_cli_local_directory(capsys, tmp_path) -> None:
    from explorer.cli import main
    from tests.tiny_models import save_tiny

    path = save_tiny("bert-base", tmp_path / "tiny")
    assert main(["similarity", "--model", str(path), "--json", "one", "two", "three"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert len(out["matrix"]) == 3 and out["dim"] == 32


@pytest.mark.parametrize("argv, needle", [
    (["--model", "/does/not/exist", "a", "b"], "does not exist"),
    (["--model", "bert-large", "a", "b"], "download bert-large"),
    (["  ", ""], "No sentences"),
])
def test_cli_errors_are_one_line_exit_2(capsys, monkeypatch, tmp_path, argv, needle) -> None:
    from explorer.cli import main

    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-cache"))  # weights surely absent
    monkeypatch.setenv("EXPLORER_MODELS_DIR", str(tmp_path))
    assert main(["similarity", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert needle in err and "\n" not in err and "Traceback" not in err


def test_cli_text_table_notes_dropped_lines(capsys, bundled_encoder) -> None:
    from explorer.cli import main

    assert main(["similarity", "A cat sits.", "A dog runs.", "A cat sits.", "--device", "cpu",
                 "--dtype", "float32"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "note: Dropped a duplicate of line 1: 'A cat sits.'."
    assert out[1] == ("Sentence-BERT (all-MiniLM-L6-v2): cosine similarity of 2 sentences (384-d embeddings) "
                      "[cpu · float32]")
    assert out[2].startswith("[ 1]  1.000") and out[2].endswith("A cat sits.")


def test_cli_batch_size_must_be_positive(capsys) -> None:
    from explorer.cli import main

    with pytest.raises(SystemExit) as stop:  # refused while parsing (explorer.cli.argtypes)
        main(["similarity", "--batch-size", "0", "a", "b"])
    assert stop.value.code == 2 and "argument --batch-size: must be at least 1" in capsys.readouterr().err

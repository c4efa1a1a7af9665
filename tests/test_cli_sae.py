"""``python -m explorer sae``: train on the stand-in Gemma with the issue's JSON fields, then evaluate, read a text's
features, open a feature and steer it from the saved folder; bad input is one line on stderr and exit 2."""

from __future__ import annotations

import json

import pytest

from explorer.cli import main

TEXT = "The function returns a list"
FIDELITY = {"l0", "fve", "ce_clean", "ce_spliced", "ce_zero", "ce_recovered", "dead_fraction"}


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    try:
        rc = main(list(argv))
    except SystemExit as stop:  # argparse's own refusals
        rc = int(stop.code or 0)
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """A TopK SAE trained by the command on the stand-in Gemma (its own cache for the harvests)."""
    root = tmp_path_factory.mktemp("cli-sae")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("EXPLORER_CACHE_DIR", str(root / "cache"))
        rc = main(["sae", "train", "--model", "gemma3-270m", "--layer", "1", "--width", "64", "--k", "8",
                   "--tokens", "2048", "--seq-len", "32", "--heldout-tokens", "512", "--out", str(root / "sae"),
                   "--json", "--device", "cpu"])
        assert rc == 0
        yield root / "sae"


def test_train_saves_saelens_files_and_reports_the_fields(saved, capsys) -> None:
    assert (saved / "cfg.json").is_file() and (saved / "sae_weights.safetensors").is_file()
    record = json.loads((saved / "features.json").read_text())
    assert record["kind"] == "topk" and record["layer"] == 1 and set(record["measured"]) >= FIDELITY
    assert record["measured"]["l0"] == 8.0


def test_evaluate_prints_the_issues_fields(saved, capsys) -> None:
    rc, out, _ = _run(capsys, "sae", "evaluate", "--sae", str(saved), "--tokens", "512", "--json", "--device", "cpu")
    d = json.loads(out)
    assert rc == 0 and set(d) >= FIDELITY and d["l0"] == 8.0 and 0 < d["fve"] <= 1 and d["format"] == "explorer"


def test_features_feature_and_steer(saved, capsys) -> None:
    rc, out, _ = _run(capsys, "sae", "features", "--sae", str(saved), "--text", TEXT, "--json", "--device", "cpu")
    d = json.loads(out)
    assert rc == 0 and d["width"] == 64 and len(d["tokens"]) >= 4
    ordinary = [t for t in d["tokens"] if not t["special"]]
    assert all(len(t["features"]) == 8 for t in ordinary)  # TopK: k features at each token
    first = ordinary[0]["features"][0]["feature"]
    rc, out, _ = _run(capsys, "sae", "feature", "--sae", str(saved), "--id", str(first), "--tokens", "512", "--json",
                      "--device", "cpu")
    card = json.loads(out)
    assert rc == 0 and card["feature"] == first and card["top"] and len(card["raises"]) == 10
    assert card["top"][0]["value"] >= card["top"][-1]["value"] > 0
    rc, out, _ = _run(capsys, "sae", "steer", "--sae", str(saved), "--id", str(first), "--value", "30", "--text",
                      TEXT, "--json", "--device", "cpu")
    steer = json.loads(out)
    assert rc == 0 and steer["kl"] > 0 and len(steer["before"]) == len(steer["after"]) == 10


@pytest.mark.parametrize(("argv", "says"), [
    (["sae", "train", "--model", "gemma3-270m", "--kind", "big"], "invalid choice"),
    (["sae", "train", "--model", "gemma3-270m", "--width", "8"], "must be at least 16"),
    (["sae", "train", "--model", "gemma3-270m", "--width", "16", "--k", "32", "--device", "cpu"], "cannot exceed"),
    (["sae", "evaluate", "--sae", "no/such/folder"], "is not a folder"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, argv, says) -> None:
    rc, out, err = _run(capsys, *argv)
    assert rc == 2 and out == "" and says in err and len(err.strip().splitlines()) == 1


def test_a_feature_out_of_range_is_one_line(saved, capsys) -> None:
    rc, out, err = _run(capsys, "sae", "feature", "--sae", str(saved), "--id", "64", "--device", "cpu")
    assert rc == 2 and "out of range" in err and len(err.strip().splitlines()) == 1

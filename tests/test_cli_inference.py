"""explorer.cli.inference: fill-mask, models and download on the command line (one line per error, exit 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from explorer import weights
from explorer.cli import main
from explorer.loading import best_device
from tests.tiny_models import fake_variant, patch_catalog, save_tiny


@pytest.fixture(scope="module")
def dirs(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("cli-fm")
    return {k: save_tiny(k, root / k) for k in ("bert", "roberta")}


@pytest.fixture()
def catalog(monkeypatch):
    monkeypatch.delenv("EXPLORER_MODELS_DIR", raising=False)
    patch_catalog(monkeypatch, fake_variant("tiny-bert", "bert", "org/tiny-bert"),
                  fake_variant("tiny-roberta", "roberta", "org/tiny-roberta", "gpt2"),
                  fake_variant("sentence-bert", "bert", weights.BUNDLED_HUB_ID))


def test_cli_fill_mask_json_and_missing_weights(dirs, capsys, monkeypatch) -> None:
    rc = main(["fill-mask", "--models", f"{dirs['bert']},{dirs['roberta']}", "--text", "The [MASK] sat on the ___.",
               "--top-k", "3", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and [len(m["masks"]) for m in out["models"]] == [2, 2]
    assert all(len(k["predictions"]) == 3 and {"token", "score"} <= set(k["predictions"][0])
               for m in out["models"] for k in m["masks"])
    monkeypatch.delenv("EXPLORER_MODELS_DIR", raising=False)
    rc = main(["fill-mask", "--models", "bert-base", "--text", "The [MASK] sat."])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and "python -m explorer download bert-base" in err[0]
    assert main(["fill-mask", "--models", str(dirs["bert"]), "--text", "no blank"]) == 2


def test_cli_models_and_download(catalog, capsys, monkeypatch) -> None:
    assert main(["models", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["device"] == best_device() and [m["key"] for m in out["models"]][:2] == ["tiny-bert", "tiny-roberta"]
    assert main(["models"]) == 0 and "sentence-bert" in capsys.readouterr().out
    from huggingface_hub import HfApi

    monkeypatch.setattr(HfApi, "model_info", lambda self, r, **kw: (_ for _ in ()).throw(ConnectionError("down")))
    assert main(["download", "tiny-bert"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "Download of org/tiny-bert failed" in err[0]


def test_fill_mask_text_output_and_bad_top_k(dirs, capsys) -> None:
    rc = main(["fill-mask", "--models", str(dirs["bert"]), "--text", "The [MASK] sat.", "--top-k", "2"])
    out = capsys.readouterr().out
    assert rc == 0 and out.startswith(f"== bert  [{best_device()}, ") and out.count("mask 1:") == 1
    with pytest.raises(SystemExit) as exit_:
        main(["fill-mask", "--models", str(dirs["bert"]), "--text", "The [MASK] sat.", "--top-k", "x"])
    assert exit_.value.code == 2 and "--top-k must be a whole number" in capsys.readouterr().err


@pytest.mark.parametrize("value", ["0", "7", "two", "-1"])
def test_decoder_tokens_out_of_range_is_one_line(value: str, capsys) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["fill-mask", "--models", "gemma3-270m", "--text", "a [MASK] b", "--decoder-tokens", value])
    assert stop.value.code == 2 and "--decoder-tokens must be a whole number from 1 to 6" in capsys.readouterr().err


def test_decoder_tokens_reach_the_library(capsys, monkeypatch) -> None:
    from explorer import fillmask

    seen = {}

    def fake(specs, text, top_k, **kw):
        seen.update(kw)
        return fillmask.FillMaskResult(text, 1, (), ())

    monkeypatch.setattr(fillmask, "fill_mask", fake)
    assert main(["fill-mask", "--models", "gemma3-270m", "--text", "a [MASK] b", "--decoder-tokens", "4"]) == 0
    assert seen["answer_tokens"] == 4

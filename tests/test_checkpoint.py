"""explorer.training.checkpoint: a trained lab run saved atomically, listed as lab/NAME, answering on the live path.

One tiny real run (20 steps of 256 tokens, 32-token windows) is trained once for the module; every test
saves or reads it. Fill-mask through the CLI is compared with transformers' own pipeline on the same folder.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from types import SimpleNamespace

import pytest

from explorer.cli import main
from explorer.core.errors import ExplorerError
from explorer.runtime import weights
from explorer.tasks import defaults
from explorer.tasks.attention import choices
from explorer.training import checkpoint, corpus, record, trainer

PROMPT = "The function [MASK] a list of strings."


@pytest.fixture(scope="module")
def run() -> trainer.Run:
    plan = trainer.Plan("mlm", steps=20, batch_tokens=256, seq_len=32, eval_windows=4)
    return trainer.advance(trainer.start(plan))


@pytest.fixture(scope="module")
def models(run, tmp_path_factory) -> Path:
    """A models folder holding the run as lab/mlm-tiny-20steps-seed0 (its default place)."""
    root = tmp_path_factory.mktemp("models")
    out = checkpoint.default_out("mlm", "tiny", 20, 0, str(root))
    assert out == root / "lab" / "mlm-tiny-20steps-seed0"
    assert checkpoint.save(run, out) == out
    return root


def _saved(models: Path) -> Path:
    return models / "lab" / "mlm-tiny-20steps-seed0"


def test_a_checkpoint_holds_weights_tokenizer_card_and_summary(run, models) -> None:
    folder = _saved(models)
    names = {p.name for p in folder.iterdir()}
    assert {"config.json", "model.safetensors", "tokenizer.json", "README.md", "lab.json"} <= names
    card = checkpoint.load_card(folder)
    assert card == json.loads(json.dumps(record.of(run.plan, run, out=str(folder)).to_dict()))  # lab.json: the record
    readme = (folder / "README.md").read_text(encoding="utf-8")
    for words in ("mlm", "tiny", f"{card['params']:,}", "20 steps",
                  "tokens seen", f"{corpus.bundled().words:,} words", "Python Software Foundation License", "Seed: 0",
                  "device: cpu", "Held-out loss", "Date:"):
        assert words in readme, words
    assert not [p for p in folder.parent.iterdir() if p.name.startswith(".")]  # no temporary folder left


def test_fill_mask_answers_from_the_trained_folder_like_the_pipeline(models, capsys) -> None:
    from transformers import pipeline

    folder = _saved(models)
    assert main(["fill-mask", "--models", str(folder), "--text", PROMPT, "--device", "cpu", "--dtype", "float32",
                 "--json"]) == 0
    ours = json.loads(capsys.readouterr().out)["models"][0]["masks"][0]["predictions"]
    reference = pipeline("fill-mask", model=str(folder), top_k=5, device="cpu")(PROMPT)
    assert [p["word"] for p in ours] == [r["token_str"] for r in reference]
    assert [p["score"] for p in ours] == pytest.approx([r["score"] for r in reference], abs=1e-5)
    assert all(w.isascii() and w and not w.startswith("[") for w in (p["word"] for p in ours))  # words, no specials


def test_lab_models_resolve_by_name_and_show_on_the_live_pages(models, capsys) -> None:
    spec = "lab/mlm-tiny-20steps-seed0"
    found = weights.locate(spec, str(models))
    assert (found.status, found.source, Path(found.path or "")) == ("ready", "lab", _saved(models))
    listed = checkpoint.trained(str(models))
    assert [(t.spec, t.label, t.family) for t in listed] == [
        (spec, f"trained here (20 steps on {corpus.bundled().words:,} words)", "encoder")]
    label = f"{spec}: trained here (20 steps on {corpus.bundled().words:,} words)"
    assert defaults.lab_models("fill", str(models)) == {spec: label}
    assert spec in defaults.fill_keys(str(models)) and spec not in defaults.infill_keys(str(models))
    assert defaults.lab_models("encoder", str(models)) == {spec: label}  # Similarity
    assert (spec, label) in choices.model_options(False, str(models))  # Attention maps
    assert main(["fill-mask", "--models", spec, "--models-dir", str(models), "--text", PROMPT, "--device", "cpu"]) == 0
    assert "mask 1:" in capsys.readouterr().out


def test_a_bad_lab_name_is_a_message() -> None:
    with pytest.raises(ExplorerError, match="not a lab model name"):
        weights.locate("lab/../etc")
    assert weights.locate("lab/never-trained", "nowhere").status == "not present"


def test_an_exception_mid_save_leaves_nothing(run, tmp_path, monkeypatch) -> None:
    for stop in (RuntimeError("disk on fire"), KeyboardInterrupt()):
        def boom(*_a, stop=stop, **_k):
            raise stop
        monkeypatch.setattr(checkpoint, "_fsync_tree", boom)  # after the weights, before the rename
        with pytest.raises(type(stop)):
            checkpoint.save(run, tmp_path / "ckpt")
        assert list(tmp_path.iterdir()) == []  # no target, no temporary folder


def test_an_earlier_lab_checkpoint_is_replaced_whole(run, tmp_path, monkeypatch) -> None:
    target = checkpoint.save(run, tmp_path / "ckpt")
    (target / "stale.txt").write_text("from the earlier run")
    assert checkpoint.save(run, target) == target and not (target / "stale.txt").exists()
    monkeypatch.setattr(checkpoint, "_fsync_tree", lambda *_: (_ for _ in ()).throw(OSError(28, "No space left")))
    with pytest.raises(ExplorerError, match="No space left"):
        checkpoint.save(run, target)
    assert checkpoint.load_card(target)["steps"] == 20  # the earlier one is still whole
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ckpt"]


def test_a_folder_that_is_not_a_lab_checkpoint_is_refused(run, tmp_path) -> None:
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "thesis.tex").write_text("years of work")
    with pytest.raises(ExplorerError, match="not a lab checkpoint"):
        checkpoint.save(run, tmp_path / "mine")
    (tmp_path / "file").write_text("x")
    with pytest.raises(ExplorerError, match="is a file"):
        checkpoint.save(run, tmp_path / "file")
    (tmp_path / "empty").mkdir()
    checkpoint.check_target(tmp_path / "empty")  # an empty folder is fine
    assert (tmp_path / "mine" / "thesis.tex").read_text() == "years of work"


def test_cards_are_checked(tmp_path) -> None:
    with pytest.raises(ExplorerError, match="has no lab.json"):
        checkpoint.load_card(tmp_path)
    for text, match in (("[1, 2]", "not a lab card"), ("{" * 100, "nested"),
                        ('{"objective": "mlm"}', "not a lab card")):
        (tmp_path / "lab.json").write_text(text)
        with pytest.raises(ExplorerError, match=match):
            checkpoint.load_card(tmp_path)
    bad = tmp_path / "lab" / "bad"
    os.makedirs(bad)
    (bad / "config.json").write_text("{}")
    (bad / "lab.json").write_text("[1, 2]")
    assert checkpoint.trained(str(tmp_path)) == []  # a damaged card is not offered


def test_exportable_names_the_parts_the_pages_load() -> None:
    from transformers import BertConfig, BertForMaskedLM

    mlm = BertForMaskedLM(BertConfig(hidden_size=8, num_hidden_layers=1, num_attention_heads=1,
                                     intermediate_size=8, vocab_size=16))
    assert checkpoint.exportable(mlm) == {"": mlm}
    pair = SimpleNamespace(discriminator="D", generator="G")  # ELECTRA: discriminator on top, generator inside
    assert checkpoint.exportable(pair) == {"": "D", "generator": "G"}
    assert checkpoint.exportable(SimpleNamespace(mlm=mlm, boundary="SBO head")) == {"": mlm}  # SpanBERT
    assert checkpoint.exportable(SimpleNamespace(exportable=lambda: {"": mlm})) == {"": mlm}  # a family's own hook
    with pytest.raises(ExplorerError, match="exportable"):
        checkpoint.exportable(object())

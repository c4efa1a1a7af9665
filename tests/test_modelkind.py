"""The wrong kind of model gets the right message, and no server path, on every page and command that needs
one kind: a decoder (Decoding lab, generate, next-token), a masked LM (Fill-mask), T5/BART or a decoder
(Spans), a question-answering head (QA)."""

from __future__ import annotations

import pytest

from explorer.cli import main
from explorer.core.errors import ExplorerError
from explorer.runtime import modelkind
from explorer.runtime.resolve import resolve
from explorer.tasks import infill, qa
from explorer.tasks.fillmask import fill_mask
from explorer.tasks.generation import load_decoder
from tests.tiny_gemma import save_tiny_gemma
from tests.tiny_models import save_tiny


@pytest.fixture(scope="module")
def dirs(tmp_path_factory):
    root = tmp_path_factory.mktemp("kinds")
    return root, {"bert": save_tiny("bert", root / "bert"), "bert-base": save_tiny("bert-base", root / "bb"),
                  "t5": save_tiny("t5", root / "t5"), "gemma": save_tiny_gemma(root / "gemma")}


@pytest.fixture
def fenced(monkeypatch, dirs):
    """A shared server: typed paths fenced to the models folder (here the tiny models' folder)."""
    monkeypatch.setenv("EXPLORER_RESTRICT_PATHS", "1")
    monkeypatch.setenv("EXPLORER_MODELS_DIR", str(dirs[0]))
    return dirs


def _no_path(message: str, root) -> None:
    assert "site-packages" not in message and str(root) not in message and "/root" not in message, message
    assert "random-weight" not in message, message  # the pages that need a kind do not all have that mode


def test_sentence_bert_in_the_decoding_lab_is_an_encoder(fenced) -> None:
    with pytest.raises(ExplorerError) as err:
        load_decoder(resolve("sentence-bert"))
    assert str(err.value) == "sentence-bert is an encoder: the Decoding lab needs a decoder (gemma3-270m, gpt2, …)."


@pytest.mark.parametrize("command", ["generate", "next-token"])
def test_cli_decoder_commands_name_themselves(command: str, fenced, capsys) -> None:
    assert main([command, "--model", "sentence-bert", "--text", "Hello"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: sentence-bert is an encoder: `{command}` needs a decoder (gemma3-270m, gpt2, …)."]


def test_a_catalog_key_of_the_wrong_kind_is_told_before_its_missing_weights(fenced) -> None:
    with pytest.raises(ExplorerError, match="t5-small is an encoder-decoder: the Decoding lab needs a decoder"):
        load_decoder(resolve("t5-small"))


def test_fill_mask_with_a_sentence_encoder_or_a_bare_directory(fenced) -> None:
    root, d = fenced
    res = fill_mask(["sentence-bert", str(d["bert-base"])], "Paris is the [MASK] of France.")
    assert [spec for spec, _ in res.errors] == ["sentence-bert", str(d["bert-base"])]
    for _, message in res.errors:
        assert "saved without a masked-language-model head: Fill-mask needs a masked language model" in message
        _no_path(message, root)


def test_spans_with_an_encoder_says_what_it_needs(fenced) -> None:
    root, d = fenced
    for model in ("bert-base", str(d["bert"])):
        with pytest.raises(ExplorerError) as err:
            infill.run(resolve(model), "Thank you ___ me.")
        assert "is an encoder: Span infilling needs a T5 or BART model, or a decoder" in str(err.value)
        _no_path(str(err.value), root)


def test_qa_with_a_masked_lm_or_a_seq2seq_directory(fenced) -> None:
    root, d = fenced
    for kind, why in (("bert", "an encoder without a question-answering head"),
                      ("t5", "an encoder-decoder without a question-answering head")):
        with pytest.raises(ExplorerError) as err:
            qa.ask(resolve(str(d[kind])), "Where?", "In Paris.")
        assert f"is {why}: Question answering needs" in str(err.value)
        _no_path(str(err.value), root)


def test_a_decoder_directory_fills_masks_as_a_decoder(fenced) -> None:
    """A folder holding a decoder answers like the catalog's decoder (a causal column), not as a
    masked LM refused for its kind: the kind comes from its config.json (modelkind.is_decoder)."""
    root, d = fenced
    res = fill_mask([str(d["gemma"])], "Paris is the [MASK].", answer_tokens=1)
    assert not res.errors and len(res.models) == 1
    assert any("reads left to right" in n.text for n in res.models[0].notices)


def test_is_decoder_reads_the_catalog_or_the_folder(fenced) -> None:
    root, d = fenced
    assert modelkind.is_decoder("gemma3-270m") and modelkind.is_decoder("gpt2")
    assert not modelkind.is_decoder("bert-base") and not modelkind.is_decoder("t5-small")
    assert modelkind.is_decoder(str(d["gemma"]), resolve(str(d["gemma"])).path)  # the folder's config.json decides
    assert modelkind.is_decoder("gemma", resolve("gemma", str(root)).path)  # in models_dir
    assert not modelkind.is_decoder(str(d["bert"]), d["bert"]) and not modelkind.is_decoder(str(d["t5"]), d["t5"])
    assert not modelkind.is_decoder(str(d["gemma"]))  # a folder not resolved: its name alone says nothing
    for unknown in (str(root / "nothing-here"), "/etc", "not a model!", ""):  # the load says what is wrong
        assert not modelkind.is_decoder(unknown)


def test_every_task_asks_the_same_question(fenced) -> None:

    root, d = fenced
    for name in ("gemma3-270m", "bert-base", str(d["gemma"]), str(d["bert"]), str(d["t5"])):
        ref = resolve(name)
        decoder = modelkind.is_decoder(name, ref.path)
        assert (ref.task("masked-lm") == "causal-lm") is decoder and ref.decoder is decoder
        assert (infill.task(ref) == "causal-lm") is decoder
        assert qa.is_generative(ref) is decoder


@pytest.mark.parametrize(("config", "family"), [
    ({"model_type": "bert"}, "encoder"), ({"model_type": "gpt2"}, "decoder"),
    ({"model_type": "gemma3_text"}, "decoder"), ({"model_type": "t5"}, "encoder-decoder"),
    ({"model_type": "encoder-decoder", "is_encoder_decoder": True}, "encoder-decoder"),
    ({"model_type": "no-such-type"}, "encoder"),
])
def test_config_family(config: dict, family: str) -> None:
    assert modelkind.config_family(config) == family


def test_the_right_kind_passes() -> None:
    for name, task in (("gpt2", "causal-lm"), ("bert-base", "masked-lm"), ("t5-small", "seq2seq"),
                       ("bart-base", "masked-lm"), ("sentence-bert", "base"), ("unknown-dir", "causal-lm")):
        assert modelkind.check(name, task) is None


def test_a_checkpoint_missing_its_head_weights_is_shown_without_its_path(fenced, tmp_path) -> None:
    """config.json claims a masked-LM head the weights lack: loading refuses, naming the folder as the
    fence shows it (models folder/...), never the server's absolute path."""
    import json
    import shutil

    root, d = fenced
    broken = root / "claims-mlm"
    shutil.copytree(d["bert-base"], broken, dirs_exist_ok=True)
    config = json.loads((broken / "config.json").read_text())
    (broken / "config.json").write_text(json.dumps({**config, "architectures": ["BertForMaskedLM"]}))
    from explorer.runtime.loading import load_model

    with pytest.raises(ExplorerError) as err:
        load_model(resolve(str(broken)), "masked-lm")
    assert "models folder/claims-mlm has no trained weights for the masked-lm head" in str(err.value)
    _no_path(str(err.value), root)

"""explorer.runtime.loading: safety checks, device fallback, random mode, the shared LRU cache."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import pytest
import torch

from explorer.core.errors import ExplorerError
from explorer.runtime import loading, modelcache, placement, tokenizers
from explorer.runtime.resolve import resolve
from tests.tiny_models import fake_variant, patch_catalog, save_tiny


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("models")
    return {k: save_tiny(k, root / k) for k in ("bert", "bert-base", "roberta", "electra-discriminator")}


@pytest.fixture(autouse=True)
def fresh_cache():
    modelcache.clear_cache()
    yield
    modelcache.clear_cache()


def test_loads_saved_dir_in_eval_mode(models) -> None:
    lm = loading.load_model(resolve(str(models["bert"])), "masked-lm", device="cpu")  # float32 is the CPU's dtype
    assert type(lm.model).__name__ == "BertForMaskedLM" and not lm.model.training
    assert (lm.device, lm.dtype, lm.untrained, lm.source) == ("cpu", "float32", False, "path")
    assert len(lm.tokenizer) == lm.model.config.vocab_size and lm.to_dict()["parameters"] > 0
    assert loading.load_model(resolve(str(models["bert"])), "masked-lm", device="cpu") is lm  # cached
    assert loading.load_model(resolve(str(models["bert"])), "base", device="cpu") is not lm  # task is part of the key


def test_auto_device_is_the_best_one_and_says_its_dtype(models) -> None:
    lm = loading.load_model(resolve(str(models["bert"])), "masked-lm")
    param = next(lm.model.parameters())
    assert lm.device == loading.best_device() == param.device.type  # "cuda" on a GPU machine
    assert lm.dtype == str(param.dtype).removeprefix("torch.")


def test_electra_discriminator_and_roberta(models) -> None:
    disc = loading.load_model(resolve(str(models["electra-discriminator"])), "electra-discriminator")
    assert type(disc.model).__name__ == "ElectraForPreTraining"
    rob = loading.load_model(resolve(str(models["roberta"])), "masked-lm")
    assert rob.tokenizer.mask_token == "<mask>" and rob.tokenizer.pad_token_id == 1


def test_bundled_minilm_base_but_no_mlm_head() -> None:
    from explorer.runtime.weights import BUNDLED_HUB_ID

    lm = loading.load_model(resolve(BUNDLED_HUB_ID))
    assert lm.source == "bundled" and type(lm.model).__name__ == "BertModel" and len(lm.tokenizer) == 30522
    with pytest.raises(ExplorerError, match="an encoder saved without a masked-language-model head"):
        loading.load_model(resolve(BUNDLED_HUB_ID), "masked-lm")
    for short in ("all-minilm-l6-v2", "all-MiniLM-L6-v2"):  # the hub's short name of the same checkpoint, any case
        ref = resolve(short)
        assert ref.ready and ref.status is not None and ref.status.source == "bundled", ref.reason


def test_missing_head_unknown_task_missing_path(models) -> None:
    with pytest.raises(ExplorerError, match="masked-language-model head"):
        loading.load_model(resolve(str(models["bert-base"])), "masked-lm")
    with pytest.raises(ExplorerError, match="Unknown task"):
        loading.load_model(resolve(str(models["bert"])), "translate")
    with pytest.raises(ExplorerError, match="does not exist"):
        loading.load_model(resolve("/no/such/model"), "masked-lm")
    with pytest.raises(ExplorerError, match="Unknown device 'tpu'"):
        loading.load_model(resolve(str(models["bert"])), device="tpu")
    assert modelcache.cache_info() == []  # failures are never cached


def test_pickle_needs_opt_in(tmp_path: Path) -> None:
    save_tiny("bert", tmp_path / "b", bin_only=True)
    with pytest.raises(ExplorerError, match="pickled"):
        loading.load_model(resolve(str(tmp_path / "b")), "masked-lm")
    with pytest.warns(UserWarning, match="only do this for files you trust"):
        lm = loading.load_model(resolve(str(tmp_path / "b")), "masked-lm", allow_pickle=True)
    assert type(lm.model).__name__ == "BertForMaskedLM"


@pytest.mark.parametrize("damage", ["truncate", "garbage"])
def test_corrupt_safetensors_is_clear_and_cache_survives(models, tmp_path: Path, damage: str) -> None:
    good = loading.load_model(resolve(str(models["bert"])), "masked-lm")
    bad = shutil.copytree(models["bert"], tmp_path / "bad")
    data = (bad / "model.safetensors").read_bytes()
    (bad / "model.safetensors").write_bytes(data[: len(data) // 2] if damage == "truncate" else b"\x00garbage" * 9)
    with pytest.raises(ExplorerError, match="corrupt or truncated"):
        loading.load_model(resolve(str(bad)), "masked-lm")
    assert loading.load_model(resolve(str(models["bert"])), "masked-lm") is good


def test_config_contradicting_the_weights_is_a_message(models, tmp_path: Path) -> None:
    import json

    bad = shutil.copytree(models["bert"], tmp_path / "resized")
    config = json.loads((bad / "config.json").read_text())
    config["hidden_size"], config["intermediate_size"] = 2 * config["hidden_size"], 2 * config["intermediate_size"]
    (bad / "config.json").write_text(json.dumps(config))
    with pytest.raises(ExplorerError, match="do not have the shapes its config.json describes"):
        loading.load_model(resolve(str(bad)), "masked-lm")


def test_a_bug_inside_from_pretrained_is_not_turned_into_advice(models, monkeypatch, tmp_path: Path) -> None:
    fresh = shutil.copytree(models["bert"], tmp_path / "fresh")  # not in the model cache yet

    def broken(*args, **kwargs):
        raise RuntimeError("a programming error")

    monkeypatch.setattr(loading, "_auto_class", lambda task: type("Broken", (), {"from_pretrained": broken}))
    with pytest.raises(RuntimeError, match="a programming error"):
        loading.load_model(resolve(str(fresh)), "masked-lm")


def test_wrong_architecture_for_key(monkeypatch, tmp_path: Path, models) -> None:
    patch_catalog(monkeypatch, fake_variant("tiny-roberta", "roberta", "org/tiny-roberta", "gpt2"))
    shutil.copytree(models["bert"], tmp_path / "tiny-roberta")
    with pytest.raises(ExplorerError, match="holds a 'bert' model but 'tiny-roberta' is a 'roberta'"):
        loading.load_model(resolve("tiny-roberta", str(tmp_path)), "masked-lm")


def test_missing_weights_for_key_names_how_to_get_them(monkeypatch) -> None:
    monkeypatch.delenv("EXPLORER_MODELS_DIR", raising=False)
    patch_catalog(monkeypatch, fake_variant("tiny-bert", "bert", "org/tiny-bert"))
    with pytest.raises(ExplorerError, match=r"python -m explorer download tiny-bert"):
        loading.load_model(resolve("tiny-bert"), "masked-lm")


def test_random_weights_are_labelled_and_reproducible(monkeypatch) -> None:
    from transformers import BertConfig

    import explorer.architecture.build

    patch_catalog(monkeypatch, fake_variant("tiny-bert", "bert", "org/tiny-bert"))
    small = {"hidden_size": 32, "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 64}
    monkeypatch.setattr(explorer.architecture.build, "make_config", lambda key: BertConfig(vocab_size=100, **small))
    a = loading.load_model(resolve("tiny-bert", random_weights=True), "masked-lm")
    assert a.untrained and a.path is None and not a.model.training
    assert a.model.config.vocab_size == len(a.tokenizer)  # grown to the shipped tokenizer
    modelcache.clear_cache()
    b = loading.load_model(resolve("tiny-bert", random_weights=True), "masked-lm")
    assert b is not a
    assert all(torch.equal(x, y) for x, y in zip(a.model.parameters(), b.model.parameters(), strict=True))


def test_concurrent_sessions_load_once(models, monkeypatch) -> None:
    calls = []
    real = loading._from_pretrained

    def counting(*args, **kw):
        calls.append(1)
        return real(*args, **kw)

    monkeypatch.setattr(loading, "_from_pretrained", counting)
    got: list[object] = []
    ref = resolve(str(models["bert"]))
    threads = [threading.Thread(target=lambda: got.append(loading.load_model(ref, "masked-lm"))) for _ in range(6)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    assert len(got) == 6 and len({id(g) for g in got}) == 1 and len(calls) == 1


def test_resaved_weights_are_reloaded(tmp_path: Path) -> None:
    save_tiny("bert", tmp_path / "b", seed=1)
    a = loading.load_model(resolve(str(tmp_path / "b")), "masked-lm")
    save_tiny("bert", tmp_path / "b", seed=2)
    b = loading.load_model(resolve(str(tmp_path / "b")), "masked-lm")
    emb = [m.model.bert.embeddings.word_embeddings.weight for m in (a, b)]
    assert b is not a and not torch.equal(*emb)


def test_gpu_out_of_memory_falls_back_to_cpu(models, monkeypatch) -> None:
    real_to = torch.nn.Module.to

    def to(self, *args, **kw):
        if kw.get("device") == "cuda" or (args and str(args[0]) == "cuda"):
            raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2 GiB")
        return real_to(self, *args, **kw)

    monkeypatch.setattr(torch.nn.Module, "to", to)
    monkeypatch.setattr(placement, "best_device", lambda: "cuda")
    monkeypatch.setattr(placement, "auto_dtype", lambda device: torch.bfloat16)
    lm = loading.load_model(resolve(str(models["bert"])), "masked-lm")
    assert (lm.device, lm.dtype) == ("cpu", "float32") and [n.kind for n in lm.notices] == ["fallback"]
    assert "ran out of memory" in lm.to_dict()["notice"]
    assert next(lm.model.parameters()).device.type == "cpu"


def test_random_catalog_electra_pair_and_mask_added_to_copy() -> None:
    from explorer.tokenization import load_tokenizer

    gen = loading.load_model(resolve("electra-small-generator", random_weights=True), "masked-lm")
    disc = loading.load_model(resolve("electra-small-discriminator", random_weights=True), "electra-discriminator")
    assert type(gen.model).__name__ == "ElectraForMaskedLM" and gen.untrained
    assert type(disc.model).__name__ == "ElectraForPreTraining" and disc.untrained and disc.path is None
    patched = tokenizers.tokenizer_with_mask("t5", "deberta-v2")
    assert patched.mask_token == "[MASK]" and load_tokenizer("t5").mask_token is None  # shared one untouched


def test_half_precision_checkpoint_loads_as_float32_on_cpu(tmp_path: Path) -> None:
    import transformers as tf

    from explorer.tokenization import load_tokenizer

    tok = load_tokenizer("bert-base-uncased")
    cfg = tf.BertConfig(vocab_size=len(tok), hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=64)
    tf.BertForMaskedLM(cfg).half().save_pretrained(tmp_path / "fp16")
    tok.save_pretrained(tmp_path / "fp16")
    lm = loading.load_model(resolve(str(tmp_path / "fp16")), "masked-lm", device="cpu")
    assert next(lm.model.parameters()).dtype == torch.float32 and lm.dtype == "float32"


def test_broken_tokenizer_file_falls_back_to_the_variant_or_says_what_to_do(models, tmp_path: Path) -> None:
    bad = shutil.copytree(models["bert"], tmp_path / "bad-tok")
    (bad / "tokenizer.json").write_text("{not json")
    with pytest.raises(ExplorerError, match="no tokenizer files"):
        loading.load_model(resolve(str(bad)), "masked-lm")


def test_programming_errors_are_not_turned_into_advice(models, monkeypatch) -> None:
    import transformers

    def broken(*args, **kw):
        raise KeyError("a bug, not a user problem")

    monkeypatch.setattr(transformers.AutoModelForMaskedLM, "from_pretrained", broken)
    with pytest.raises(KeyError):
        loading.load_model(resolve(str(models["bert"])), "masked-lm")


def test_random_weights_over_the_memory_budget_are_refused_before_allocating(monkeypatch) -> None:
    import resource

    from explorer.core.errors import ExplorerError
    from explorer.runtime import loading

    monkeypatch.setenv("EXPLORER_MEMORY_CAP_GB", "4")
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(ExplorerError, match=r"t5-11b with random weights needs about \d+\.\d GB"):
        loading.load_model(resolve("t5-11b", random_weights=True), "seq2seq")
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 500_000  # KiB: nothing big allocated


def test_checkpoint_over_the_budget_and_offload_cap_is_refused_from_its_headers(monkeypatch, tmp_path) -> None:
    """Over the budget, a checkpoint is offloaded (tests/test_offload.py); beyond offload's hard cap too,
    the budget's message remains, with why offloading cannot help."""
    from explorer.core.errors import ExplorerError
    from explorer.runtime import loading, offload
    from tests.tiny_models import save_tiny

    path = save_tiny("bert", tmp_path / "tiny")
    monkeypatch.setenv("EXPLORER_MEMORY_CAP_GB", "0.000001")
    monkeypatch.setattr(offload, "MAX_OFFLOAD_PARAMS", 1_000)
    with pytest.raises(ExplorerError, match="The checkpoint in .* needs about .* beyond this app's limit"):
        loading.load_model(resolve(str(path)), "masked-lm")


def test_pickled_checkpoint_over_the_memory_budget_is_refused_not_offloaded(monkeypatch, tmp_path) -> None:
    from explorer.core.errors import ExplorerError
    from explorer.runtime import loading

    path = save_tiny("bert", tmp_path / "tiny", bin_only=True)
    monkeypatch.setenv("EXPLORER_MEMORY_CAP_GB", "0.000001")
    with pytest.raises(ExplorerError, match="needs about .* Offloading to disk needs safetensors"), \
            pytest.warns(UserWarning, match="only do this for files you trust"):
        loading.load_model(resolve(str(path)), "masked-lm", allow_pickle=True)


def test_bert2bert_with_untrained_weights_loads_as_its_two_composed_berts() -> None:
    """No Auto class builds BERT2BERT from one BERT config: the random-weight path composes it (encoder, and a decoder
    copy with cross-attention) as the Architecture explorer does."""
    model, _ = loading._random_model("bert2bert", "seq2seq", "eager")
    assert type(model).__name__ == "EncoderDecoderModel"
    assert model.config.decoder.add_cross_attention and model.config.decoder.is_decoder
    assert model.config.encoder.num_hidden_layers == 12

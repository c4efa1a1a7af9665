"""explorer.runtime.resolve: a model named once, resolved once; the loader takes the ref and asks nothing again."""

from __future__ import annotations

import shutil
from collections import Counter

import pytest

from explorer.core.errors import ExplorerError
from explorer.runtime import loading, modelcache, modelkind, weights
from explorer.runtime.resolve import ModelRef, resolve
from tests.tiny_models import save_tiny


@pytest.fixture(scope="module")
def bert_dir(tmp_path_factory):
    return save_tiny("bert", tmp_path_factory.mktemp("resolve") / "bert")


def test_a_directory_resolves_to_its_weights_kind_and_stamp(bert_dir) -> None:
    ref = resolve(f"  {bert_dir} ", None)
    assert (ref.spec, ref.ready, ref.random_weights, ref.family, ref.model_type) == (str(bert_dir), True, False,
                                                                                     "encoder", "bert")
    assert ref.path == str(bert_dir) and ref.stamp.startswith(str(bert_dir)) and ref.task("seq2seq") == "seq2seq"
    assert hash(ref) == hash(resolve(str(bert_dir), None))  # pages key their caches on it


def test_untrained_weights_when_asked_or_allowed_and_absent(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf"))
    absent = resolve("electra-small-generator", str(tmp_path))
    assert not absent.ready and absent.missing and not absent.random_weights and "download" in absent.reason
    allowed = resolve("electra-small-generator", str(tmp_path), allow_random=True)
    assert allowed.random_weights and allowed.stamp == "random" and allowed.family == "encoder"


def test_a_folder_of_another_architecture_is_not_ready_and_says_so(bert_dir, tmp_path) -> None:
    shutil.copytree(bert_dir, tmp_path / "FacebookAI--roberta-base")
    ref = resolve("roberta-base", str(tmp_path))
    assert not ref.ready and "holds a 'bert' model but 'roberta-base'" in ref.reason
    with pytest.raises(ExplorerError, match="holds a 'bert' model"):
        loading.load_model(ref, "masked-lm")


def test_a_ref_knows_its_folder_and_can_go_untrained(bert_dir, tmp_path) -> None:
    ref = resolve(str(bert_dir), str(tmp_path))
    assert ref.models_dir == str(tmp_path) and ref.weights_dir == ref.path == str(bert_dir)
    untrained = ref.as_untrained()
    assert (untrained.ready, untrained.random_weights, untrained.stamp, untrained.path) == (False, True, "random", None)
    assert untrained.weights_dir == str(bert_dir) and untrained.family == ref.family  # what a size estimate reads
    assert untrained.as_untrained() is untrained and hash(untrained) != hash(ref)


def test_bad_names_resolve_to_a_reason_not_an_exception() -> None:
    for text in ("", "   ", "<script>x</script>", "x" * 5000, "../../etc/passwd", "名前"):
        ref = resolve(text, None)
        assert not ref.ready and ref.family is None and ref.reason


def test_a_decoder_loads_as_a_causal_lm_whatever_the_page_loads_encoders_as() -> None:
    ref = resolve("gemma3-270m", None)
    assert ref.decoder and {ref.task(t) for t in ("masked-lm", "seq2seq")} == {"causal-lm"}
    with pytest.raises(ExplorerError, match="is a decoder: Fill-mask needs"):
        ref.check("masked-lm", "Fill-mask")


def test_the_loader_asks_nothing_again_of_a_resolved_model(bert_dir, monkeypatch) -> None:
    ref = resolve(str(bert_dir), None)
    modelcache.clear_cache()
    calls: Counter[str] = Counter()
    for module, name in ((weights, "locate"), (modelkind, "family_of")):
        real = getattr(module, name)
        monkeypatch.setattr(module, name, lambda *a, _r=real, _n=name, **k: calls.update([_n]) or _r(*a, **k))
    loaded = loading.load_model(ref, "masked-lm")
    assert loaded.model is not None and calls == {}
    assert isinstance(ref, ModelRef)


def test_one_rule_says_how_each_family_loads_when_asked_for_tokens(bert_dir) -> None:
    assert resolve("gpt2").head_task() == "causal-lm" and resolve("t5-small").head_task() == "seq2seq"
    assert resolve("bert-base").head_task() == "masked-lm" == resolve("bert-base").head_task(head_optional=True)
    bare = resolve("all-minilm-l6-v2")  # the bundled MiniLM, saved as BertModel: no masked-LM head
    assert not bare.predicts_tokens
    assert bare.head_task(head_optional=True) == "base" and bare.head_task() == "masked-lm"

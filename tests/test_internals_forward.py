"""The step-through's oracles: every recomputed step equals the model's own intermediate (hooked on its module, or
at the nearest later module) within 1e-5, the read logits equal the model's own forward, ``top`` equals the
next-token and fill-mask answers on the same text and weights, and a card that misdescribes the model (post-LN
read as pre-LN, rotary positions read as none) walks to values the model never computed.

Tiny random models of each family the step-through covers (BERT, RoBERTa, ELECTRA, GPT-2, Gemma 3 with GQA,
windows, two rotary bases, (1 + w) norms and soft-capping, T5 plain and gated) with their real tokenizers; the slow
test walks the real Gemma 3 270M and all-MiniLM-L6-v2."""

from __future__ import annotations

import dataclasses
import threading

import pytest
import torch
import transformers as tf

from explorer.architecture import anatomy
from explorer.architecture.build import BUILD_LOCK
from explorer.core.errors import ExplorerError
from explorer.internals.forward import run as forward_run
from explorer.internals.forward.families import family_of
from explorer.internals.forward.hooks import Point, capture
from explorer.internals.forward.steps import KINDS
from explorer.internals.forward.walk import Walk, walk
from explorer.runtime import tokenizers
from explorer.runtime.loading import LoadedModel
from explorer.runtime.resolve import resolve
from explorer.tasks.fillmask.masked import fill_clean
from explorer.tasks.generation.nexttoken import next_token

TOL = 1e-5
SMALL = {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 64,
         "initializer_range": 0.4}  # wide weights: a peaked prediction whose top tokens do not tie
MASKED, PROMPT = "The capital of France is [MASK] and it is big.", "The capital of France is a city of many"
# Verified at their own module: the steps a model has a module for (soft-capped logits have none)
OWN_POINT = {"q", "k", "v", "concat", "out-proj", "residual", "mlp-up", "mlp-down", "final-norm"}


def _loaded(model: torch.nn.Module, tokenizer: object, key: str) -> LoadedModel:
    return LoadedModel(key, key, model.eval(), tokenizer, "cpu", "float32", None, None, True, 0.0)  # type: ignore[arg-type]


def _eager(cls, config) -> torch.nn.Module:
    """Eager attention, as the step-through loads a model: its recomputation agrees to the last bit."""
    return cls._from_config(config, attn_implementation="eager")


def _seeded(make):
    with BUILD_LOCK, torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        return make()


def _gemma(tok) -> torch.nn.Module:
    config = tf.Gemma3TextConfig(
        vocab_size=len(tok), hidden_size=32, intermediate_size=48, num_hidden_layers=3, num_attention_heads=4,
        num_key_value_heads=2, head_dim=8, sliding_window=4, query_pre_attn_scalar=8, final_logit_softcapping=30.0,
        layer_types=["sliding_attention", "sliding_attention", "full_attention"], initializer_range=0.4,
        rope_parameters={"sliding_attention": {"rope_type": "default", "rope_theta": 100.0},
                         "full_attention": {"rope_type": "default", "rope_theta": 10000.0}})
    model = _eager(tf.Gemma3ForCausalLM, config)
    with torch.no_grad():  # norms stored around 0: random ones, so that (1 + w) is not 1
        for name, p in model.named_parameters():
            if "norm" in name:
                p.normal_(0.0, 0.5)
    return model


@pytest.fixture(scope="module")
def families() -> dict[str, LoadedModel]:
    bert, gpt2 = tokenizers.shipped_tokenizer("bert-base-uncased"), tokenizers.shipped_tokenizer("gpt2")
    roberta, t5 = tokenizers.roberta_tokenizer(), tokenizers.shipped_tokenizer("t5")
    t5_sizes = {"d_model": 32, "d_kv": 16, "d_ff": 48, "num_layers": 2, "num_heads": 2, "decoder_start_token_id": 0}
    made = {
        "bert": (lambda: _eager(tf.BertForMaskedLM, tf.BertConfig(vocab_size=len(bert), **SMALL)), bert),
        "roberta": (lambda: _eager(tf.RobertaForMaskedLM, tf.RobertaConfig(vocab_size=len(roberta), pad_token_id=1,
                                                                           **SMALL)), roberta),
        "electra": (lambda: _eager(tf.ElectraForMaskedLM, tf.ElectraConfig(vocab_size=len(bert), embedding_size=16,
                                                                           **SMALL)), bert),
        "gpt2": (lambda: _eager(tf.GPT2LMHeadModel, tf.GPT2Config(vocab_size=len(gpt2), n_embd=32, n_layer=2,
                                                                  n_head=2, initializer_range=0.4)), gpt2),
        "gemma": (lambda: _gemma(gpt2), gpt2),
        "t5": (lambda: _eager(tf.T5ForConditionalGeneration, tf.T5Config(vocab_size=len(t5), **t5_sizes)), t5),
        "t5-gated": (lambda: _eager(tf.T5ForConditionalGeneration, tf.T5Config(
            vocab_size=len(t5), feed_forward_proj="gated-gelu", **t5_sizes)), t5),
        "gpt2-sdpa": (lambda: tf.GPT2LMHeadModel(tf.GPT2Config(vocab_size=len(gpt2), n_embd=32, n_layer=2,
                                                               n_head=2)), gpt2),
    }
    return {key: _loaded(_seeded(make), tok, key) for key, (make, tok) in made.items()}


def _text(key: str) -> str:
    return MASKED if key in ("bert", "roberta", "electra") else PROMPT


def _assert_oracle(w: Walk) -> None:
    assert w.steps and all(s.max_abs_error is not None for s in w.steps)
    worst = max(w.steps, key=lambda s: s.max_abs_error or 0.0)
    assert (worst.max_abs_error or 0.0) <= TOL, f"{worst.name} (layer {worst.layer}): {worst.max_abs_error}"
    assert all(s.exact for s in w.steps if s.kind in OWN_POINT), [s.name for s in w.steps if not s.exact]
    assert sum(s.exact for s in w.steps if s.kind == "logits") == (1 if w.top else 0)
    assert {s.kind for s in w.steps} <= set(KINDS)


@pytest.mark.parametrize("key", ["bert", "roberta", "electra", "gpt2", "gemma", "t5", "t5-gated", "gpt2-sdpa"])
def test_every_step_equals_the_models_own_intermediate(families, key: str) -> None:
    """(gpt2-sdpa: a model run by a fused attention kernel agrees to float32's rounding too.)"""
    w = walk(families[key], _text(key))
    _assert_oracle(w)
    assert w.logits_max_abs_error is not None and w.logits_max_abs_error <= TOL
    assert w.steps[-1].kind == "probs" and abs(sum(p for _, p in w.top) - 1) < 1  # top-k of a distribution


def test_the_steps_follow_the_cards_anatomy(families) -> None:
    gemma = walk(families["gemma"], PROMPT)
    layer0 = [s.kind for s in gemma.steps if s.layer == 0]
    assert layer0[:9] == ["norm", "q", "k", "v", "norm", "norm", "position", "position", "scores"]  # qk-norm, RoPE
    assert layer0.count("norm") == 6 and "mlp-gate" in layer0  # sandwich: 4 + query and key norms; GeGLU
    mask = next(s for s in gemma.steps if s.kind == "mask" and s.layer == 0).tensor
    assert mask is not None and mask[6, 2] == 0 and mask[6, 3] == 1 and mask[2, 3] == 0  # causal, window of 4
    k = next(s for s in gemma.steps if s.kind == "k")
    assert k.shape[0] == 2 and "4 query heads read 2 key/value heads (GQA)" in k.note
    bert = [s.kind for s in walk(families["bert"], MASKED).steps if s.layer == 0]
    assert bert[bert.index("out-proj"):][:3] == ["out-proj", "residual", "norm"]  # post-LN
    t5 = walk(families["t5"], PROMPT)
    assert "scale" not in {s.kind for s in t5.steps}  # T5 does not scale its scores
    assert {s.stack for s in t5.steps} == {"encoder", "decoder"} and len(t5.decoder_tokens) == 1
    assert any(s.name.startswith("cross-attention: keys") and s.shape[1] == len(t5.tokens) for s in t5.steps)


@pytest.mark.parametrize("key", ["gpt2", "gemma"])
def test_top_is_the_next_token_answer(families, key: str) -> None:
    w, reference = walk(families[key], PROMPT), next_token(families[key], PROMPT, top_k=5)
    assert [t for t, _ in w.top] == [c.token for c in reference.candidates]
    assert [p for _, p in w.top] == pytest.approx([c.probability for c in reference.candidates], abs=TOL)


@pytest.mark.parametrize("key", ["bert", "roberta", "electra"])
def test_top_is_the_fill_mask_answer(families, key: str) -> None:
    w, reference = walk(families[key], MASKED), fill_clean(families[key], MASKED, 5).masks[0]
    assert w.read_position == reference.position
    assert [t for t, _ in w.top] == [p.token for p in reference.predictions]
    assert [p for _, p in w.top] == pytest.approx([p.score for p in reference.predictions], abs=TOL)


def test_top_is_the_encoder_decoders_first_answer_token(families) -> None:
    lm = families["t5"]
    w = walk(lm, PROMPT)
    ids = lm.tokenizer(PROMPT)["input_ids"]
    with torch.no_grad():
        logits = lm.model(input_ids=torch.tensor([ids]), decoder_input_ids=torch.tensor([[0]])).logits[0, 0]
    probs, best = logits.softmax(-1).topk(5)
    assert [t for t, _ in w.top] == [lm.tokenizer.decode([int(i)]) for i in best]
    assert [p for _, p in w.top] == pytest.approx(probs.tolist(), abs=TOL)


def _worst(w: Walk) -> float:
    return max(s.max_abs_error or 0.0 for s in w.steps)


def test_a_card_planted_with_the_wrong_norm_placement_or_position_kind_fails_the_oracle(families) -> None:
    bert = anatomy.card_of("bert")
    pre_ln = dataclasses.replace(bert, norms=dataclasses.replace(bert.norms, placement="pre"))
    assert _worst(walk(families["bert"], MASKED)) <= TOL
    assert _worst(walk(families["bert"], MASKED, card=pre_ln)) > 1e-2
    gemma = anatomy.card_of("gemma3_text")
    unrotated = dataclasses.replace(gemma, stacks=(dataclasses.replace(
        gemma.main, positions=dataclasses.replace(gemma.main.positions, kind="none")),))
    w = walk(families["gemma"], PROMPT, card=unrotated)
    assert _worst(w) > 1e-2 and "position" not in {s.kind for s in w.steps}


def test_one_layer_and_one_head(families) -> None:
    w = walk(families["gemma"], PROMPT, layer=1, head=3, keep_tensors=False)
    assert {s.layer for s in w.steps} == {None, 1} and all(s.tensor is None for s in w.steps)
    q = next(s for s in w.steps if s.kind == "q")
    k = next(s for s in w.steps if s.kind == "k")
    assert q.axes == ("token", "feature") and q.shape == k.shape and q.max_abs_error is not None
    _assert_oracle(w)
    with pytest.raises(ExplorerError, match="Head 4 is out of range: this model has heads 0 to 3"):
        walk(families["gemma"], PROMPT, head=4)
    with pytest.raises(ExplorerError, match="Layer 3 is out of range: this model has layers 0 to 2"):
        walk(families["gemma"], PROMPT, layer=3)


def test_special_tokens_only_and_too_many_tokens_are_refused(families) -> None:
    with pytest.raises(ExplorerError, match="special tokens only"):
        walk(families["bert"], "[CLS] [SEP]")
    with pytest.raises(ExplorerError, match="reads at most 64"):
        walk(families["gpt2"], "word " * 70)
    with pytest.raises(ExplorerError, match="temperature"):
        walk(families["gpt2"], PROMPT, temperature=0)


def test_a_type_without_a_family_is_refused_naming_those_that_are() -> None:
    with pytest.raises(ExplorerError, match=r"not stepped through for llama yet: it covers ALBERT \(albert\)"):
        family_of("llama")


@pytest.fixture
def no_loading(monkeypatch):
    def refuse(*_a, **_k):
        raise AssertionError("the model was loaded before the input was checked")
    monkeypatch.setattr(forward_run.loading, "load_model", refuse)


@pytest.mark.parametrize("text, layer, head, needle", [
    ("   ", None, None, "The text is empty"),
    ("x" * 1001, None, None, "has 1,001 characters"),
    (PROMPT, 12, None, "Layer 12 is out of range: this model has layers 0 to 11"),
    (PROMPT, None, 12, "Head 12 is out of range"),
])
def test_bad_input_is_refused_before_the_model_loads(no_loading, text, layer, head, needle) -> None:
    with pytest.raises(ExplorerError, match=needle):
        forward_run.run(resolve("gpt2", None, random_weights=True), text, layer=layer, head=head)


def test_an_unknown_type_is_refused_before_loading(no_loading, tmp_path) -> None:
    llama = tf.LlamaForCausalLM(tf.LlamaConfig(vocab_size=16, hidden_size=8, intermediate_size=16,
                                               num_hidden_layers=1, num_attention_heads=2))
    llama.save_pretrained(tmp_path)
    with pytest.raises(ExplorerError, match="no anatomy card for model type 'llama'"):
        forward_run.run(resolve(str(tmp_path)), PROMPT)


def test_the_bundled_models_are_walked_through_run() -> None:
    """The quick tier's stand-ins of the bundled Gemma and MiniLM (a BERT saved without a head: no logits)."""
    gemma = forward_run.run(resolve("gemma3-270m"), PROMPT, device="cpu")
    _assert_oracle(gemma)
    assert gemma.model == "gemma3-270m" and gemma.top and gemma.logits_max_abs_error is not None
    minilm = forward_run.run(resolve("sentence-bert"), "A cat sat on the mat.", device="cpu")
    _assert_oracle(minilm)
    assert minilm.top == () and minilm.logits_max_abs_error is None and minilm.steps[-1].kind == "norm"


def test_the_real_gemma_and_minilm_walk_to_their_own_values(bundled_decoder, bundled_encoder) -> None:
    """The real weights (eager attention, as the step-through loads them): every step within 1e-5."""
    gemma = forward_run.run(resolve("gemma3-270m"), "The capital of France is", device="cpu")
    _assert_oracle(gemma)
    assert gemma.logits_max_abs_error is not None and gemma.logits_max_abs_error <= TOL
    assert gemma.card.main.layers == 18 and gemma.top[0][0] in (" Paris", " the", " a")
    minilm = forward_run.run(resolve("sentence-bert"), "A cat sat on the mat.", device="cpu")
    _assert_oracle(minilm)
    assert minilm.card.main.layers == 6


def test_the_hooks_see_their_own_threads_forward_only_and_always_come_off(families) -> None:
    """A shared model: another session's forward while the hooks are on passes through them unrecorded."""
    model = families["gpt2"].model
    ids = torch.tensor([[464, 3139, 286]])
    points = [Point("transformer.h.0.attn.c_proj"), Point("transformer.ln_f", "in")]

    def elsewhere_then_mine() -> object:
        other = threading.Thread(target=lambda: model(input_ids=torch.tensor([[1, 2, 3, 4, 5]])))
        other.start()
        other.join()
        return model(input_ids=ids)

    got = capture(model, points, elsewhere_then_mine)
    assert [len(got.values[(p.path, p.io)]) for p in points] == [1, 1]
    assert got.value(points[0]) is not None and got.value(points[0]).shape[1] == 3

    def broken() -> object:
        raise RuntimeError("a forward that fails")

    with pytest.raises(RuntimeError):
        capture(model, points, broken)
    assert not any(m._forward_hooks or m._forward_pre_hooks for m in model.modules())


def test_a_variant_too_big_to_build_whole_is_walked_as_a_scaled_down_copy(monkeypatch) -> None:
    """Past the memory budget (here a 0.3 GB cap against GPT-2's 0.5 GB), an untrained variant is walked as a copy
    with fewer layers, said so, and its steps still equal the copy's own intermediates."""
    from explorer.internals.forward import run as forward_run

    monkeypatch.setenv("EXPLORER_MEMORY_CAP_GB", "0.3")
    walked = forward_run.run(resolve("gpt2", None, random_weights=True), "Hello there", device="cpu")
    assert any("scaled-down copy" in n.text for n in walked.notices)
    assert max(s.layer for s in walked.steps if s.layer is not None) == forward_run.SCALED_LAYERS - 1
    assert walked.logits_max_abs_error <= 1e-5

"""The step-through's oracles for the encoder families beyond BERT, RoBERTa and ELECTRA: every recomputed step
equals the model's own intermediate within 1e-5, the read logits equal its own forward, ``top`` equals the
fill-mask answer on the same text and weights, and a card planted with the wrong attention pattern (Longformer's
window read as full attention), no relative positions (DeBERTa's read as none) or no layer sharing (ALBERT's one
layer read as separate ones) walks to values the model never computed.

Each model is its catalog variant's config scaled down (2 layers, 32 wide, 2 heads), randomly initialised, with the
variant's shipped tokenizer: ALBERT (one shared layer, factorised embeddings), DistilBERT (learned and sinusoidal
positions), XLM (parallel layer lists, a plain vocabulary projection), Longformer (a window of 8, the input padded
by the model), BigBird (block-sparse config falling back to full attention), the DeBERTa family (relative
positions disentangled from content) and MobileBERT (bottlenecks, four stacked FFNs, NoNorm, trigram embeddings)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
import torch
import transformers as tf

from explorer.architecture import anatomy, catalog
from explorer.architecture.build import BUILD_LOCK, config_from_dict
from explorer.core.errors import ExplorerError
from explorer.internals.forward.families import SUPPORTED
from explorer.internals.forward.steps import KINDS
from explorer.internals.forward.walk import Walk, walk
from explorer.runtime import tokenizers
from explorer.runtime.loading import LoadedModel
from explorer.tasks.fillmask.masked import fill_clean

TOL = 1e-5
MASKED = "The capital of France is [MASK] and it is big."
OWN_POINT = {"q", "k", "v", "concat", "out-proj", "residual", "mlp-up", "mlp-down", "final-norm"}
# Every size field a variant's config may spell, scaled down; wide weights give a peaked prediction
TINY: dict[str, Any] = {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 64,
                        "dim": 32, "hidden_dim": 64, "n_layers": 2, "n_heads": 2, "emb_dim": 32, "embedding_size": 16,
                        "true_hidden_size": 16, "intra_bottleneck_size": 16}
INIT = {"initializer_range": 0.4, "init_std": 0.4, "embed_init_std": 0.4}
VARIANTS: dict[str, tuple[str, dict[str, Any]]] = {  # test key -> (catalog variant, what else changes)
    "albert": ("albert-base", {}),
    "distilbert": ("distilbert", {}),
    "distilbert-sinusoidal": ("distilbert", {"sinusoidal_pos_embds": True}),
    "xlm": ("xlm", {}),
    "longformer": ("longformer", {"attention_window": [8, 8], "initializer_range": 0.2}),
    "bigbird": ("bigbird", {"block_size": 8, "num_random_blocks": 1}),
    # narrower weights where the attention's own rounding (Longformer's chunks, DeBERTa's three scaled terms)
    # would otherwise reach 1e-5 on values in the tens
    "deberta": ("deberta-base", {"initializer_range": 0.2, "legacy": False, "position_biased_input": True,
                                 "type_vocab_size": 2}),
    "deberta-v3": ("deberta-v3-base", {"initializer_range": 0.2}),
    "deberta-v2-conv": ("deberta-v2-xlarge", {"attention_head_size": 16, "initializer_range": 0.2}),
    "mobilebert": ("mobilebert", {}),
}


def _randomise_norms(model: torch.nn.Module) -> None:
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith(("LayerNorm.weight", "LayerNorm.bias")):
                p.normal_(1.0 if name.endswith("weight") else 0.0, 0.3)


def _tiny(key: str) -> LoadedModel:
    variant, extra = VARIANTS[key]
    about = catalog.get_variant(variant)
    tok = tokenizers.tokenizer_with_mask(about.tokenizer, about.model_type)
    data = catalog.variant_config(variant)
    data = {**data, **{k: v for k, v in TINY.items() if k in data}, **INIT, "vocab_size": len(tok), **extra}
    with BUILD_LOCK, torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        model = tf.AutoModelForMaskedLM.from_config(config_from_dict(data), attn_implementation="eager")
        if key == "mobilebert":  # its NoNorm starts as x * 1 + 0: random, so that leaving it out shows
            _randomise_norms(model)
    return LoadedModel(key, key, model.eval(), tok, "cpu", "float32", None, None, True, 0.0)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def families() -> dict[str, LoadedModel]:
    return {key: _tiny(key) for key in VARIANTS}


@pytest.fixture(scope="module")
def walks(families) -> dict[str, Walk]:
    """Each model walked once on the masked text (the tests read these; a walk is a frozen result)."""
    return {key: walk(lm, MASKED) for key, lm in families.items()}


def _worst(w: Walk) -> float:
    return max(s.max_abs_error or 0.0 for s in w.steps)


def _assert_oracle(w: Walk) -> None:
    assert w.steps and all(s.max_abs_error is not None for s in w.steps)
    worst = max(w.steps, key=lambda s: s.max_abs_error or 0.0)
    assert (worst.max_abs_error or 0.0) <= TOL, f"{worst.name} (layer {worst.layer}): {worst.max_abs_error}"
    own = [s for s in w.steps if s.kind in OWN_POINT and not s.name.endswith("_bias")]  # DeBERTa's q_bias, v_bias
    assert all(s.exact for s in own), [s.name for s in own if not s.exact]
    assert {s.kind for s in w.steps} <= set(KINDS)
    assert w.logits_max_abs_error is not None and w.logits_max_abs_error <= TOL


def test_every_encoder_type_of_the_catalog_is_walked_here_or_beside_bert() -> None:
    types = {catalog.get_variant(v).model_type for v, _ in VARIANTS.values()}
    encoders = {t for t, card in anatomy.CARDS.items() if card.family == "encoder"}
    assert types | {"bert", "roberta", "xlm-roberta", "electra"} == encoders and encoders <= set(SUPPORTED)


@pytest.mark.parametrize("key", list(VARIANTS))
def test_every_step_equals_the_models_own_intermediate(walks, key: str) -> None:
    w = walks[key]
    _assert_oracle(w)
    assert {s.stack for s in w.steps} == {"encoder"} and w.tokens[w.read_position] in ("[MASK]", "<mask>")


@pytest.mark.parametrize("key", list(VARIANTS))
def test_top_is_the_fill_mask_answer(families, walks, key: str) -> None:
    w, reference = walks[key], fill_clean(families[key], MASKED, 5).masks[0]
    assert w.read_position == reference.position
    assert [t for t, _ in w.top] == [p.token for p in reference.predictions]
    assert [p for _, p in w.top] == pytest.approx([p.score for p in reference.predictions], abs=TOL)


def _step(w: Walk, name: str, layer: int | None = 0):
    return next(s for s in w.steps if s.name.startswith(name) and s.layer == layer)


def test_the_encoders_steps_follow_their_cards(walks) -> None:
    albert = walks["albert"]
    shared = "albert.encoder.albert_layer_groups.0.albert_layers.0.attention.query"
    assert _step(albert, "attention: queries Q", 1).checked_against == shared  # layer 1: the 2nd call of one layer
    assert _step(albert, "embeddings projected", None).shape[-1] == 32  # from embedding_size 16
    sines = walks["distilbert-sinusoidal"]
    assert _step(sines, "position embedding (sinusoidal", None).max_abs_error == 0.0  # the formula is the table
    xlm = walks["xlm"]
    assert "no language embedding" in _step(xlm, "embeddings summed", None).note
    assert [s.name for s in xlm.steps if s.kind == "head"] == []  # the vocabulary straight from the stream
    window = _step(walks["longformer"], "attention: mask")
    assert window.tensor is not None and window.tensor[6, 2] == 1 and window.tensor[6, 1] == 0  # 4 on each side
    assert "sliding window of 8" in window.note
    assert "falls back to full attention" in _step(walks["bigbird"], "attention: mask").note
    v3 = walks["deberta-v3"]
    kinds = [s.kind for s in v3.steps if s.layer == 0]
    assert kinds[kinds.index("v") + 1:][:7] == ["position"] * 7 and "log-bucketed" in _step(v3, "relative d").note
    assert _step(v3, "relative embeddings projected as queries").checked_against.endswith("query_proj")  # shared
    conv = walks["deberta-v2-conv"]
    assert _step(conv, "convolution of the embeddings").exact and _step(conv, "convolution's norm").exact
    v1 = walks["deberta"]
    assert _step(v1, "attention: queries Q + q_bias").shape == _step(v1, "attention: keys K").shape
    assert _step(v1, "position embedding (learned)", None).exact  # position_biased_input
    mobile = walks["mobilebert"]
    assert _step(mobile, "token embedding beside its neighbours'", None).shape == (len(mobile.tokens), 48)  # 3 x 16
    assert [s.shape[-1] for s in mobile.steps if s.kind == "residual" and s.layer == 0] == [16] * 5 + [32]
    assert "NoNorm" in _step(mobile, "embedding norm", None).name


def test_a_card_planted_with_full_attention_no_relative_positions_or_unshared_layers_fails_the_oracle(
        families) -> None:
    longformer = anatomy.card_of("longformer")
    full = dataclasses.replace(longformer, attention=dataclasses.replace(longformer.attention, kind="full"))
    assert _worst(walk(families["longformer"], MASKED, card=full)) > 1e-2
    deberta = anatomy.card_of("deberta-v2")
    absolute = dataclasses.replace(deberta, stacks=(dataclasses.replace(
        deberta.main, positions=dataclasses.replace(deberta.main.positions, kind="none")),))
    assert _worst(walk(families["deberta-v3"], MASKED, card=absolute)) > 1e-2
    albert = anatomy.card_of("albert")
    # read as separate layers, layer 1 is checked against the shared layer's first call, layer 0's values
    assert _worst(walk(families["albert"], MASKED, card=dataclasses.replace(albert, sharing="none"))) > 1e-2


def test_bigbird_that_ran_block_sparse_is_refused_in_words() -> None:
    """Past (5 + 2r) blocks the model runs block-sparse (a fresh model: transformers switches a model to full
    attention for good once it sees a short input)."""
    with pytest.raises(ExplorerError, match="BigBird ran block-sparse attention on 6[0-9] tokens.*at most 56"):
        walk(_tiny("bigbird"), "word " * 60)

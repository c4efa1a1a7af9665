"""A card in words, aspect by aspect, and what differs between two cards: what the Forward pass page says beside
two variants walked side by side (torch-free: only the cards and their numbers are read).

>>> from explorer.architecture.anatomy import resolved
>>> bert = resolved({"model_type": "bert", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
...                  "intermediate_size": 128, "max_position_embeddings": 64})
>>> described(bert)["norms"]
'LayerNorm after each residual add (post-LN)'
>>> gpt2 = resolved({"model_type": "gpt2", "n_embd": 64, "n_layer": 2, "n_head": 4, "n_positions": 64})
>>> differences(bert, gpt2)[0]
'norms: BERT: LayerNorm after each residual add (post-LN); GPT-2: LayerNorm before each sublayer (pre-LN)'
>>> [d.split(":")[0] for d in differences(bert, gpt2)]
['norms', 'attention', 'mlp']
"""

from __future__ import annotations

from explorer.architecture.anatomy.resolved import Resolved

__all__ = ["ASPECTS", "described", "differences"]

ASPECTS = ("positions", "norms", "attention", "heads", "scale", "mlp", "residual", "sharing", "embeddings", "readout")

_PLACEMENT = {"post": "after each residual add (post-LN)", "pre": "before each sublayer (pre-LN)",
              "sandwich": "before and after each sublayer (sandwich: four a block)"}
_NORM = {"layernorm": "LayerNorm", "rmsnorm": "RMSNorm", "affine": "an elementwise affine map (NoNorm)"}
_ATTENTION = {"full": "every token attends to every token",
              "causal": "causal (a token attends to itself and the tokens before it)",
              "local-global": "causal, local windows on some layers and global attention on the others",
              "sliding-window": "a sliding window around each token, plus global tokens",
              "block-sparse": "block-sparse (window, global and random blocks; full attention on short texts)"}
_POSITIONS = {"learned-absolute": "a learned position table added to the token embeddings once",
              "sinusoidal": "fixed sinusoids added to the token embeddings once",
              "relative-buckets": "a learned bias per bucket of relative distance, added to the scores",
              "disentangled": "relative positions with their own projections (content and position terms)",
              "rotary": "queries and keys rotated by their position (RoPE)", "none": "no position signal"}


def _positions(r: Resolved) -> str:
    p = r.positions
    said = _POSITIONS.get(p.kind, p.kind)
    if p.kind == "rotary":
        bases = ", ".join(f"{kind} {base:,.0f}" for kind, base in p.bases) if p.bases else ""
        dims = f" on {p.rotary_dims} dimensions of each head" if p.rotary_dims else ""
        return f"{said}{dims}" + (f", base {bases}" if bases else "")
    if p.kind == "relative-buckets" and p.buckets:
        return f"{said} ({p.buckets} buckets, log-spaced past half, up to {p.max_distance})"
    if p.kind == "learned-absolute" and p.max_positions:
        return f"{said} ({p.max_positions:,} positions)"
    return said


def _attention(r: Resolved) -> str:
    card, s = r.card, r.main
    said = _ATTENTION[card.attention.kind]
    windowed = [w for w in s.windows if w]
    if card.attention.kind == "local-global" and windowed:
        said = (f"causal; a {windowed[0]:,}-token window on {len(windowed)} of {s.layers} layers, global attention "
                "on the others")
    return said + (", then cross-attention to the encoder" if card.attention.cross else "")


def _heads(r: Resolved) -> str:
    s = r.main
    if s.grouping == "MHA":
        return f"{s.heads} heads of {s.head_width}, each with its own keys and values (MHA)"
    share = s.heads // max(1, s.kv_heads)
    return (f"{s.heads} query heads of {s.head_width} sharing {s.kv_heads} key/value head"
            f"{'s' if s.kv_heads > 1 else ''}, {share} queries each ({s.grouping})")


def _mlp(r: Resolved) -> str:
    width = f" to {r.main.d_ff:,}" if r.main.d_ff else ""
    kind = {"gated": f"gated: {r.activation}(gate) × up{width}, then down",
            "dense": f"up{width}, {r.activation}, down",
            "bottleneck": f"inside a {r.bottleneck}-wide bottleneck: up{width}, {r.activation}, down"}[r.mlp_kind]
    return kind + (f", {r.stacked_mlps} MLPs one after another" if r.stacked_mlps > 1 else "")


def _readout(r: Resolved) -> str:
    said = "tied to the token embeddings" if r.tied else "its own output matrix"
    if r.final_softcap:
        said += f", logits soft-capped at {r.final_softcap:g}"
    if r.logits_rescale:
        said += f", the stream scaled by {r.logits_rescale:.3g} first"
    return said


def described(r: Resolved) -> dict[str, str]:
    """Each of :data:`ASPECTS` of a card (its main stack's numbers) in one phrase."""
    card = r.card
    norm = _NORM[card.norms.kind] + (" scaling by (1 + w)" if card.norms.plus_one else "")
    norm += f" {_PLACEMENT[card.norms.placement]}" + (", queries and keys normalised per head"
                                                        if card.norms.qk_norm else "")
    scale = ("none (no 1/√d)" if r.attention_scale == 1.0 else f"scores × {r.attention_scale:.4g}")
    return {
        "positions": _positions(r), "norms": norm,
        "attention": _attention(r),
        "heads": _heads(r), "scale": scale, "mlp": _mlp(r),
        "residual": ("parallel: attention and MLP read the same input, both added at once"
                     if card.residual == "parallel" else "sequential: attention, then the MLP"),
        "sharing": "one layer's weights used by every layer" if card.sharing == "all-layers" else "each layer its own",
        "embeddings": f"token embeddings × {r.embed_scale:.4g}" if r.embed_scale else "token embeddings as stored",
        "readout": _readout(r),
    }


def differences(a: Resolved, b: Resolved) -> tuple[str, ...]:
    """One sentence per aspect where the two cards differ, in :data:`ASPECTS` order."""
    da, db = described(a), described(b)
    return tuple(f"{k}: {a.card.label}: {da[k]}; {b.card.label}: {db[k]}" for k in ASPECTS if da[k] != db[k])

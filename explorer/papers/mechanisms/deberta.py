"""DeBERTa's disentangled attention, split into its three terms on a real module.

DeBERTa (He et al. 2021, eq. 2-4) scores query i against key j as the sum of
content-to-content ``Q_c K_c^T``, content-to-position ``Q_c K_r[δ(i,j)]^T`` and
position-to-content ``K_c Q_r[δ(j,i)]^T`` terms, all divided by ``sqrt(3 d)``. We build one layer
of a DeBERTa variant from its config (random weights: the point is the arithmetic, and the
split holds for any weights), capture the inputs of its ``DisentangledSelfAttention`` with a hook,
compute the three terms ourselves, and check that ``softmax(c2c + c2p + p2c)`` equals the
attention probabilities the model itself returns, and that ``c2p + p2c`` equals the model's own
``disentangled_attention_bias``. DeBERTa v1 (``deberta-base``, model_type ``deberta``) is split the same
way on its own module: one fused ``in_proj`` for Q/K/V, the query scaled before the products, and
relative distances clamped to ±``max_relative_positions`` instead of log buckets.

The enhanced mask decoder (EMD: absolute positions added just before the MLM head) is not part of
transformers' ``DebertaForMaskedLM``/``DebertaV2ForMaskedLM``: their heads are a plain transform + decoder,
so no tree or breakdown can show it; :data:`EMD_NOTE` says so on the page.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import torch

from explorer.architecture import build, catalog
from explorer.core.errors import ExplorerError, shorten
from explorer.core.limits import DEBERTA_SENTENCE_CHARS
from explorer.core.userinput import require_text
from explorer.runtime import placement

__all__ = ["EMD_NOTE", "STAND_IN", "SUPPORTED", "V1", "DisentangledSplit", "bucket_table", "split_attention",
           "variant_buckets"]

SUPPORTED = ("deberta-base", "deberta-v2-xlarge", "deberta-v3-base")
V1 = ("deberta-base",)  # model_type deberta: another module (fused in_proj, no buckets)
# DeBERTa's own vocabularies are not shipped: each variant uses the catalog's stand-in ("tokenizer" in
# assets/catalog.json: GPT-2's BPE for v1, whose pieces are the same; T5's SentencePiece for v2/v3), one choice
# app-wide.
STAND_IN = {key: catalog.get_variant(key).tokenizer for key in SUPPORTED}
EMD_NOTE = ("The enhanced mask decoder (absolute positions entering just before the MLM head) is not in "
            "transformers' DebertaForMaskedLM or DebertaV2ForMaskedLM, whose heads are a plain transform + decoder: "
            "the tree and breakdown of the DeBERTa variants therefore cannot show it. Its only trace is `z_steps` "
            "in DebertaModel / DebertaV2Model (re-running the last layer with the previous output as the query), "
            "which is fixed at 0 and adds no absolute positions.")
MAX_TOKENS = 64


@dataclass(frozen=True)
class DisentangledSplit:
    """Layer-0 attention of one text, split per head into the three DeBERTa terms."""

    key: str
    tokens: tuple[str, ...]
    c2c: np.ndarray  # (H, L, L) content-to-content, already divided by sqrt(d * scale_factor)
    c2p: np.ndarray  # (H, L, L) content-to-position
    p2c: np.ndarray  # (H, L, L) position-to-content
    model_probs: np.ndarray  # (H, L, L) what the model itself returned (output_attentions)
    max_prob_error: float  # max |softmax(c2c + c2p + p2c) - model_probs|
    max_bias_error: float  # max |c2p + p2c - model.disentangled_attention_bias|
    relative: np.ndarray  # (L, L) bucketed relative distance i - j the position terms used
    device: str = "cpu"  # where the real module ran (explorer.runtime.placement)
    device_name: str = "cpu"
    dtype: str = "float32"

    @property
    def total(self) -> np.ndarray:
        """(H, L, L) the scores before softmax: the sum of the three terms."""
        return self.c2c + self.c2p + self.p2c

    def shares(self, head: int) -> dict[str, float]:
        """Mean absolute size of each term in one head (how much each contributes)."""
        parts = {"content→content": self.c2c, "content→position": self.c2p, "position→content": self.p2c}
        return {name: float(np.abs(t[head]).mean()) for name, t in parts.items()}

    def to_dict(self) -> dict[str, object]:
        return {"key": self.key, "tokens": list(self.tokens), "heads": int(self.c2c.shape[0]),
                "max_prob_error": self.max_prob_error, "max_bias_error": self.max_bias_error,
                "shares_head0": self.shares(0), "device": self.device, "device_name": self.device_name,
                "dtype": self.dtype}


def bucket_table(position_buckets: int = 256, max_relative_positions: int = 512,
                 max_distance: int = 1024) -> tuple[np.ndarray, np.ndarray]:
    """(distances, buckets): DeBERTa-v2's log buckets as attention uses them.

    Exact up to ``position_buckets / 2``, log-spaced beyond, and clamped to the ``2 * position_buckets``
    rows of the relative embedding table (as ``disentangled_attention_bias`` clamps its gather index).
    """
    from transformers.models.deberta_v2.modeling_deberta_v2 import make_log_bucket_position

    d = torch.arange(-max_distance, max_distance + 1)
    if position_buckets <= 0:
        return d.numpy(), d.numpy()
    buckets = make_log_bucket_position(d, position_buckets, max_relative_positions).long()
    return d.numpy(), buckets.clamp(-position_buckets, position_buckets - 1).numpy()


def variant_buckets(key: str, max_distance: int = 1024) -> tuple[np.ndarray, np.ndarray, int]:
    """(distances, buckets, exact range) with the bucket settings of ``key``'s config.

    >>> d, b, exact = variant_buckets("deberta-v3-base")
    >>> exact, int(b[d == 100][0]), int(b[d == 1000][0])
    (128, 100, 255)
    """
    if key not in SUPPORTED:
        raise ExplorerError(f"{shorten(key)!r} has no DeBERTa position buckets; choose one of {SUPPORTED}.")
    config = catalog.variant_config(key)
    buckets = int(config.get("position_buckets", -1))
    max_rel = int(config.get("max_relative_positions", -1))
    max_rel = max_rel if max_rel > 0 else int(config["max_position_embeddings"])  # as the encoders read it
    distances, table = bucket_table(buckets, max_rel, max_distance)
    if buckets <= 0:  # no buckets (v1): attention clamps the distance to the 2 * max_rel rows of its table
        return distances, np.clip(table, -max_rel, max_rel - 1), max_rel
    return distances, table, buckets // 2


def _one_layer_model(key: str, vocab_size: int, device: str = "cpu") -> torch.nn.Module:
    """The variant with one layer and the stand-in tokenizer's vocabulary, random weights, eval mode."""
    if key not in SUPPORTED:
        raise ExplorerError(f"{shorten(key)!r} has no DeBERTa disentangled attention here; choose one of {SUPPORTED}.")
    config = build.config_from_dict({**catalog.variant_config(key), "num_hidden_layers": 1,
                                     "vocab_size": vocab_size})
    config._attn_implementation = "eager"
    torch.manual_seed(0)  # initialised on the CPU whatever the device: the same weights everywhere
    return build.instantiate(config, "base", device="cpu").eval().to(device)


def _heads(module: Any, x: torch.Tensor) -> torch.Tensor:
    return module.transpose_for_scores(x, module.num_attention_heads)  # (B*H, L, d)


def _position_terms(att: Any, q: torch.Tensor, k: torch.Tensor, rel: torch.Tensor, rel_emb: torch.Tensor,
                    scale_factor: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(B*H, L, L) c2p and p2c, following eq. 3-4 of the paper with the module's own projections."""
    span = att.pos_ebd_size
    emb = rel_emb[: span * 2].unsqueeze(0)  # (1, 2k, D)
    pos_k = _heads(att, (att.key_proj if att.share_att_key else att.pos_key_proj)(emb))  # (H, 2k, d)
    pos_q = _heads(att, (att.query_proj if att.share_att_key else att.pos_query_proj)(emb))
    scale = float(np.sqrt(q.size(-1) * scale_factor))
    idx = torch.clamp(rel + span, 0, span * 2 - 1).expand(q.size(0), -1, -1)  # δ(i, j) -> table row
    c2p = torch.gather(q @ pos_k.transpose(-1, -2), -1, idx) / scale
    idx_t = torch.clamp(-rel + span, 0, span * 2 - 1).expand(q.size(0), -1, -1)  # δ(j, i)
    p2c = torch.gather(k @ pos_q.transpose(-1, -2), -1, idx_t).transpose(-1, -2) / scale
    return c2p, p2c


def split_attention(key: str, text: str, *, device: str | None = None, dtype: str | None = None) -> DisentangledSplit:
    """Run layer 0 of ``key`` on ``text`` and split its attention scores into c2c + c2p + p2c.

    ``device``/``dtype`` (:mod:`explorer.runtime.placement`): where the real module runs; in half precision the
    two error columns grow to that precision's rounding (about 1e-2 for bfloat16), which they then show.

    >>> s = split_attention("deberta-v3-base", "The cat sat.")
    >>> s.c2c.shape == s.c2p.shape == s.p2c.shape, s.max_prob_error < 1e-5, s.max_bias_error < 1e-5
    (True, True, True)
    """
    from explorer.tokenization import load_tokenizer

    text = require_text(text, what="The sentence", empty_hint="Type a short sentence.",
                        max_chars=DEBERTA_SENTENCE_CHARS, limit_note="Type a shorter sentence.")
    if key not in SUPPORTED:
        raise ExplorerError(f"{shorten(key)!r} has no DeBERTa disentangled attention here; choose one of {SUPPORTED}.")
    tok = load_tokenizer(STAND_IN[key])  # DeBERTa's own files are not shipped
    enc = tok(text, return_tensors="pt", truncation=True, max_length=MAX_TOKENS)
    where, torch_dtype = placement.Placement.parse(device, dtype).resolve()
    model = _one_layer_model(key, len(tok)).to(device=where, dtype=torch_dtype)
    deberta: Any = model  # a DebertaModel / DebertaV2Model: its submodules are looked up by name
    att = deberta.encoder.layer[0].attention.self
    seen: dict[str, torch.Tensor] = {}
    hook = att.register_forward_pre_hook(lambda m, a, kw: seen.update(h=a[0], **kw), with_kwargs=True)
    try:
        with torch.inference_mode():
            out = model(input_ids=enc["input_ids"].to(where), output_attentions=True)
    finally:
        hook.remove()
    split = _split_v1 if key in V1 else _split
    tokens = tok.convert_ids_to_tokens(enc["input_ids"][0].tolist())
    assert isinstance(tokens, list)  # a list of ids gives a list of tokens
    result = split(key, tokens, att, seen, out.attentions[0][0])
    return replace(result, device=where, device_name=placement.device_name(where),
                   dtype=placement.dtype_name(torch_dtype))


def _np(t: torch.Tensor) -> np.ndarray:
    """A tensor from any device and dtype as float32 numpy (numpy has no bfloat16)."""
    return t.detach().float().cpu().numpy()


def _split(key: str, tokens: list[str], att: Any, seen: dict[str, torch.Tensor],
           probs: torch.Tensor) -> DisentangledSplit:
    with torch.inference_mode():
        q, k = _heads(att, att.query_proj(seen["h"])), _heads(att, att.key_proj(seen["h"]))
        scale_factor = 1 + ("c2p" in att.pos_att_type) + ("p2c" in att.pos_att_type)
        c2c = q @ k.transpose(-1, -2) / float(np.sqrt(q.size(-1) * scale_factor))
        rel = seen["relative_pos"].reshape(1, *seen["relative_pos"].shape[-2:]).long()  # (1, L, L)
        c2p, p2c = _position_terms(att, q, k, rel, seen["rel_embeddings"], scale_factor)
        own_bias = att.disentangled_attention_bias(q, k, seen["relative_pos"], seen["rel_embeddings"], scale_factor)
        mine = torch.softmax(c2c + c2p + p2c, dim=-1)
    return DisentangledSplit(
        key, tuple(tokens), _np(c2c), _np(c2p), _np(p2c), _np(probs),
        # int offsets
        float((mine - probs).abs().max()), float((c2p + p2c - own_bias).abs().max()), rel[0].cpu().numpy())


def _terms_v1(att: Any, h: torch.Tensor, rel: torch.Tensor, rel_emb: torch.Tensor,
              scale_factor: int) -> tuple[torch.Tensor, ...]:
    """(1, H, L, L) c2c, c2p, p2c of DeBERTa v1 and the scaled query / key it built them from."""
    q, k, _ = att.transpose_for_scores(att.in_proj(h)).chunk(3, dim=-1)  # (1, H, L, d) each
    q = q + att.transpose_for_scores(att.q_bias[None, None, :])
    scale = float(np.sqrt(q.size(-1) * scale_factor))
    q = q / scale  # v1 scales the query once, before every product
    span = min(h.size(-2), att.max_relative_positions)
    emb = rel_emb[att.max_relative_positions - span: att.max_relative_positions + span][None]  # (1, 2s, D)
    pos_k = att.transpose_for_scores(att.pos_proj(emb))  # (1, H, 2s, d)
    pos_q = att.transpose_for_scores(att.pos_q_proj(emb)) / scale
    idx = torch.clamp(rel + span, 0, span * 2 - 1).expand(1, q.size(1), -1, -1)  # δ(i, j) -> table row
    idx_t = torch.clamp(-rel + span, 0, span * 2 - 1).expand(1, q.size(1), -1, -1)  # δ(j, i)
    c2p = torch.gather(q @ pos_k.transpose(-1, -2), -1, idx)
    p2c = torch.gather(k @ pos_q.transpose(-1, -2), -1, idx_t).transpose(-1, -2)
    return q @ k.transpose(-1, -2), c2p, p2c, q, k


def _split_v1(key: str, tokens: list[str], att: Any, seen: dict[str, torch.Tensor],
              probs: torch.Tensor) -> DisentangledSplit:
    with torch.inference_mode():
        scale_factor = 1 + len(att.pos_att_type)
        rel = seen["relative_pos"].reshape(1, 1, *seen["relative_pos"].shape[-2:]).long()  # (1, 1, L, L)
        c2c, c2p, p2c, q, k = _terms_v1(att, seen["h"], rel, seen["rel_embeddings"], scale_factor)
        own_bias = att.disentangled_att_bias(q, k, seen["relative_pos"], seen["rel_embeddings"], scale_factor)
        mine = torch.softmax(c2c + c2p + p2c, dim=-1)[0]
    return DisentangledSplit(
        key, tuple(tokens), _np(c2c[0]), _np(c2p[0]), _np(p2c[0]), _np(probs),
        float((mine - probs).abs().max()), float((c2p + p2c - own_bias).abs().max()), rel[0, 0].cpu().numpy())

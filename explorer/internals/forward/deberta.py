"""DeBERTa and DeBERTa-v2/v3: BERT's embeddings (a learned position table only where ``position_biased_input``
says so), post-LN blocks and masked-LM head, with relative positions disentangled from content in every layer.

Each layer scores a query against a key three ways, each divided by ``sqrt(d_head x (1 + terms))``: content to
content (Q·Kᵀ), content to position (c2p: the query against the key's relative distance, projected like a key)
and position to content (p2c: the key against the query's distance, projected like a query). The distances index a
table of relative embeddings shared by every layer; v2 buckets distances past ``position_buckets / 2``
log-linearly, normalises the table (``encoder.LayerNorm``) and projects it with the layer's own query and key
projections (``share_att_key``); v2's ``conv_kernel_size`` adds a convolution of the embeddings to layer 0's
output. DeBERTa (v1) fuses Q, K and V into one projection laid out head by head, with separate query and value
biases."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, cast

import torch
from torch import nn

from explorer.architecture.anatomy.card import Attention, Stack
from explorer.architecture.anatomy.resolved import StackShape
from explorer.core.errors import ExplorerError
from explorer.internals.forward import ops
from explorer.internals.forward.bert import Bert
from explorer.internals.forward.family import HEAD_AXES, KV_AXES, Ctx
from explorer.internals.forward.hooks import Point
from explorer.internals.forward.mlmhead import MlmHead, head_logits, points_of
from explorer.internals.forward.recorder import View
from explorer.internals.located import has

if TYPE_CHECKING:  # typing only
    from transformers import PretrainedConfig

__all__ = ["DEBERTA", "DEBERTA_V2", "Deberta", "DebertaV2", "log_buckets"]

SCORE_AXES = ("head", "query", "key")
REL_AXES = ("distance", "feature")


def log_buckets(relative: torch.Tensor, buckets: int, max_position: int) -> torch.Tensor:
    """DeBERTa-v2's bucket of each distance: exact within ``buckets / 2``, log-spaced up to ``max_position``."""
    sign, mid = torch.sign(relative), buckets // 2
    near = (relative < mid) & (relative > -mid)
    far = torch.where(near, torch.tensor(mid - 1).type_as(relative), relative.abs())
    log_pos = torch.ceil(torch.log(far / mid) / torch.log(torch.tensor((max_position - 1) / mid)) * (mid - 1)) + mid
    return torch.where(far <= mid, relative.type_as(log_pos), log_pos * sign).long()


def _terms(config: object) -> tuple[str, ...]:
    listed = getattr(config, "pos_att_type", None) or ()
    return tuple(t.strip() for t in (listed.lower().split("|") if isinstance(listed, str) else listed))


def _span(config: object, field: str) -> int:
    value = int(getattr(config, field, -1) or -1)
    return value if value > 0 else int(config.max_position_embeddings)  # type: ignore[attr-defined]


class DebertaV2(Bert):
    def walk(self, ctx: Ctx) -> torch.Tensor | None:
        config = cast("PretrainedConfig", ctx.model.config)
        if getattr(config, "embedding_size", config.hidden_size) != config.hidden_size or getattr(
                config, "talking_head", False):
            raise ExplorerError("This DeBERTa projects its embeddings (embedding_size) or mixes its heads (talking "
                                "heads): the step-through walks DeBERTa without them. Pick a catalog variant.")
        return super().walk(ctx)

    def embed(self, ctx: Ctx, stack: Stack) -> torch.Tensor:
        if getattr(ctx.model.config, "position_biased_input", False):  # the absolute table is added too
            stack = replace(stack, positions=replace(stack.positions, kind="learned-absolute"))
        return super().embed(ctx, stack)

    # ---- the relative table and the distances, as each version reads them ------------------------------------
    def span(self, ctx: Ctx, t: int) -> int:
        """How many distances on each side the table is read at (``att_span``)."""
        config = ctx.model.config
        buckets = int(getattr(config, "position_buckets", -1) or -1)
        return buckets if buckets > 0 else _span(config, "max_relative_positions")

    def distances(self, ctx: Ctx, t: int, device: torch.device) -> tuple[torch.Tensor, str]:
        """(query position - key position) of each pair ``(T, T)``, bucketed where the config says, and a note."""
        config, ids = ctx.model.config, torch.arange(t, device=device)
        relative = ids[:, None] - ids[None, :]
        buckets, longest = int(getattr(config, "position_buckets", -1) or -1), _span(config, "max_relative_positions")
        if buckets <= 0:
            return relative, "query position - key position"
        return log_buckets(relative, buckets, longest), (f"query position - key position, log-bucketed past "
                                                         f"±{buckets // 2} up to {longest}")

    def relative_table(self, ctx: Ctx, stack: Stack, i: int, span: int) -> torch.Tensor:
        """The relative embeddings read (``2 span`` rows), normalised where the config says."""
        table_path = stack.positions.module
        assert table_path
        rows = ctx.table(table_path, torch.arange(2 * span, device=ctx.ids[stack.name].device))
        rows = ctx.rec.add("relative position embeddings (table)", "position", rows, stack=stack.name, layer=i,
                           axes=REL_AXES, note=f"distances -{span} to {span - 1}")
        if "layer_norm" not in str(getattr(ctx.model.config, "norm_rel_ebd", "none")).lower():
            return rows
        norm = ctx.at("encoder.LayerNorm")
        eps = float(getattr(norm, "eps", None) or getattr(norm, "variance_epsilon", None) or 0.0)
        normed, _, _ = ops.layer_norm(rows, ops.weight(norm), ops.weight(norm, "bias"), eps)
        return ctx.rec.add("relative position embeddings normalised (encoder.LayerNorm)", "position", normed,
                           stack=stack.name, layer=i, axes=REL_AXES, point=Point(ctx.found.path("encoder.LayerNorm")),
                           view=lambda v: v)  # the table has no batch axis

    def position_projections(self, ctx: Ctx, stack: Stack, i: int) -> tuple[str, str, int]:
        """(the projection of the table as keys, as queries, the call of those modules that projects it)."""
        self_attn = stack.block.path + ".attention.self"
        if getattr(ctx.model.config, "share_att_key", False):
            return f"{self_attn}.key_proj", f"{self_attn}.query_proj", 1
        return f"{self_attn}.pos_key_proj", f"{self_attn}.pos_query_proj", 0

    # ---- the disentangled terms, added to the scaled scores ------------------------------------------------
    def bias(self, ctx: Ctx, stack: Stack, i: int, q: torch.Tensor, k: torch.Tensor) -> torch.Tensor | None:
        terms = _terms(ctx.model.config)
        if stack.positions.kind != "disentangled" or not getattr(ctx.model.config, "relative_attention", False) \
                or not terms:
            return None
        rec, name, t = ctx.rec, stack.name, q.shape[1]
        span = self.span(ctx, t)
        distance, note = self.distances(ctx, t, q.device)
        rec.add("relative distances", "position", distance.float(), stack=name, layer=i, axes=("query", "key"),
                note=note)
        rows = self.relative_table(ctx, stack, i, span)
        as_key, as_query, call = self.position_projections(ctx, stack, i)
        total = torch.zeros(q.shape[0], t, k.shape[1], device=q.device)
        if "c2p" in terms:
            keys = self._project(ctx, stack, i, rows, as_key, call, "keys")
            index = (distance + span).clamp(0, 2 * span - 1).expand(q.shape[0], -1, -1)
            total = total + rec.add("content → position: Q · (key of the distance)ᵀ", "position",
                                    torch.gather(q @ keys.transpose(-1, -2), -1, index), stack=name, layer=i,
                                    axes=SCORE_AXES)
        if "p2c" in terms:
            queries = self._project(ctx, stack, i, rows, as_query, call, "queries")
            index = (-distance + span).clamp(0, 2 * span - 1).expand(k.shape[0], -1, -1)
            p2c = torch.gather(k @ queries.transpose(-1, -2), -1, index).transpose(-1, -2)
            total = total + rec.add("position → content: K · (query of the distance)ᵀ", "position", p2c,
                                    stack=name, layer=i, axes=SCORE_AXES)
        scale = ctx.numbers.attention_scale
        return rec.add(f"disentangled terms × {scale:.4g}", "position", total * scale, stack=name, layer=i,
                       axes=SCORE_AXES, note=f"{' + '.join(terms)}, scaled as the content scores are")

    def _project(self, ctx: Ctx, stack: Stack, i: int, rows: torch.Tensor, template: str, call: int,
                 what: str) -> torch.Tensor:
        """The table projected by ``template`` at layer ``i``: ``(heads, 2 span, d)``."""
        heads = ctx.found.shape(stack.name).heads
        point = Point(ctx.found.path(template, i), "out", call)
        return ctx.rec.add(f"relative embeddings projected as {what}", "position",
                           ops.split_heads(ops.project(rows, ctx.at(template, i)), heads), stack=stack.name,
                           layer=i, axes=("head", "distance", "feature"), point=point,
                           view=lambda v: ops.split_heads(v[0], heads))

    # ---- v2's convolution beside layer 0 -------------------------------------------------------------------
    def block(self, ctx: Ctx, stack: Stack, i: int, x: torch.Tensor) -> torch.Tensor:
        out = super().block(ctx, stack, i, x)
        if i != 0 or not has(ctx.model, ctx.found.path("encoder.conv")):
            return out
        return self.convolve(ctx, stack, x, out)

    def convolve(self, ctx: Ctx, stack: Stack, embedded: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
        """``LayerNorm(layer 0's output + act(conv(the embeddings)))``: each token mixed with its neighbours'."""
        rec, name, conv = ctx.rec, stack.name, ctx.at("encoder.conv.conv")
        assert isinstance(conv, nn.Conv1d)
        w, b = ops.weight(conv), ops.weight(conv, "bias")
        assert w is not None and isinstance(conv.padding, tuple)
        mixed = torch.nn.functional.conv1d(embedded.T[None], w, b, padding=conv.padding, groups=conv.groups)[0].T
        width = conv.kernel_size[0]
        mixed = rec.add(f"convolution of the embeddings (kernel {width})", "mlp-up", mixed, stack=name, layer=0,
                        point=Point(ctx.found.path("encoder.conv.conv")), view=lambda v: v[0].T,
                        note=f"each token with its {width // 2} neighbours on either side")
        act = str(getattr(ctx.model.config, "conv_act", "tanh"))
        active = rec.add(f"convolution: {act}", "mlp-act", ops.activation(act)(mixed), stack=name, layer=0)
        summed = rec.add("residual: layer 0 + convolution", "residual", out + active, stack=name, layer=0,
                         point=Point(ctx.found.path("encoder.conv.LayerNorm"), "in"))
        return self.norm(ctx, stack, "encoder.conv.LayerNorm", 0, summed, "convolution's norm")

    def head(self, ctx: Ctx, x: torch.Tensor) -> torch.Tensor | None:
        """The legacy head is BERT's (``cls.predictions``); the other multiplies by the token embeddings itself."""
        if ctx.found.head != "deberta":
            return super().head(ctx, x)
        return head_logits(ctx, x, _modern_head(ctx))

    def head_points(self, ctx: Ctx) -> list[Point]:
        """The head's modules, and the position modules the walk compares with beside the card's."""
        paths = ["encoder.LayerNorm", "encoder.conv.conv", "encoder.conv.LayerNorm"]
        for stack in ctx.card.stacks:
            for i in range(ctx.found.shape(stack.name).layers):
                as_key, as_query, _ = self.position_projections(ctx, stack, i)
                paths += [as_key.format(i=i), as_query.format(i=i)]
        found = [ctx.found.path(p) for p in paths]
        points = [Point(p) for p in found if has(ctx.model, p)]
        points += [Point(ctx.found.path("encoder.conv.LayerNorm"), "in")] if has(
            ctx.model, ctx.found.path("encoder.conv.LayerNorm")) else []
        head = points_of(ctx.model, _modern_head(ctx)) if ctx.found.head == "deberta" else super().head_points(ctx)
        return head + points


def _fused_view(heads: int, n: int) -> View:
    """Part ``n`` (0: Q, 1: K, 2: V) of each head of a hooked fused projection ``(1, T, heads * 3 d)``."""
    return lambda v: ops.split_heads(v[0], heads).chunk(3, dim=-1)[n]


def _modern_head(ctx: Ctx) -> MlmHead:
    """``lm_predictions.lm_head``: dense -> activation -> LayerNorm, then the token embeddings (transposed) plus a
    bias, a matrix no module applies (the logits wait for the model's own)."""
    head, table = "lm_predictions.lm_head", ctx.found.path(ctx.card.main.embeddings.token)

    def weights(model: nn.Module) -> tuple[torch.Tensor, torch.Tensor | None]:
        w, b = ops.weight(model.get_submodule(table)), ops.weight(model.get_submodule(head), "bias")
        assert w is not None
        return w.T, b

    return MlmHead(ctx.numbers.activation, dense=f"{head}.dense", norm=f"{head}.LayerNorm", weights=weights)


class Deberta(DebertaV2):
    def span(self, ctx: Ctx, t: int) -> int:
        return min(t, _span(ctx.model.config, "max_relative_positions"))

    def distances(self, ctx: Ctx, t: int, device: torch.device) -> tuple[torch.Tensor, str]:
        ids = torch.arange(t, device=device)
        return ids[:, None] - ids[None, :], "query position - key position"

    def relative_table(self, ctx: Ctx, stack: Stack, i: int, span: int) -> torch.Tensor:
        """Rows ``max - span`` to ``max + span`` of the table: the distances this text has."""
        table_path, longest = stack.positions.module, _span(ctx.model.config, "max_relative_positions")
        assert table_path
        rows = ctx.table(table_path, torch.arange(longest - span, longest + span, device=ctx.ids[stack.name].device))
        return ctx.rec.add("relative position embeddings (table)", "position", rows, stack=stack.name, layer=i,
                           axes=REL_AXES, note=f"distances -{span} to {span - 1}")

    def position_projections(self, ctx: Ctx, stack: Stack, i: int) -> tuple[str, str, int]:
        self_attn = stack.block.path + ".attention.self"
        return f"{self_attn}.pos_proj", f"{self_attn}.pos_q_proj", 0

    def project_qkv(self, ctx: Ctx, stack: Stack, spec: Attention, i: int, h: torch.Tensor, memory: torch.Tensor,
                    shape: StackShape, who: str) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """One projection, each head's query, key and value side by side; then the query and value biases."""
        assert spec.qkv
        heads, rec, name = shape.heads, ctx.rec, stack.name
        fused = ops.split_heads(ops.project(h, ctx.at(spec.qkv, i)), heads)  # (heads, T, 3 d)
        point, parts = ctx.point(stack, spec.qkv, i), fused.chunk(3, dim=-1)
        own = stack.block.path + ".attention.self"
        out = []
        for n, (label, kind, bias) in enumerate((("queries Q", "q", "q_bias"), ("keys K", "k", None),
                                                 ("values V", "v", "v_bias"))):
            axes = HEAD_AXES if kind == "q" else KV_AXES
            x = rec.add(f"{who}: {label}", kind, parts[n], stack=name, layer=i, axes=axes, point=point,
                        view=_fused_view(heads, n),
                        note="one fused projection, laid out head by head (q, k, v of head 0, then head 1, ...)")
            if bias:
                b = ops.split_heads(ops.weight(ctx.at(own, i), bias)[None], heads)  # type: ignore[index]
                x = rec.add(f"{who}: {label} + {bias}", kind, x + b, stack=name, layer=i, axes=axes)
            out.append(x)
        return out[0], out[1], out[2]


DEBERTA_V2 = DebertaV2()
DEBERTA = Deberta()

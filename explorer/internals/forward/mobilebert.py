"""MobileBERT: a narrow stream inside each layer, widened back at its end, and NoNorm (``x * w + b``, nothing
normalised) in place of LayerNorm.

Embeddings: each token's narrow embedding beside its right and left neighbours' (``trigram_input``), projected to
the hidden size (``embedding_transformation``), plus learned positions and token types, then NoNorm. Each layer
narrows the stream to ``true_hidden_size`` (``bottleneck.input``: the residual its attention adds to); queries and
keys read a second narrowing shared by both (``bottleneck.attention``), values the wide stream. The attention's
output is added to the narrow residual and normalised; ``num_feedforward_networks - 1`` stacked FFNs (each with
its residual add and norm) and the layer's own MLP follow, and ``output.bottleneck`` widens the result back,
added to the layer's input. The masked-LM head multiplies by the token embeddings beside extra rows
(``cls.predictions.dense``): a matrix no module applies, so the logits wait for the model's own."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

import torch
from torch import nn

from explorer.architecture.anatomy.card import Stack
from explorer.internals.forward import ops
from explorer.internals.forward.bert import Bert
from explorer.internals.forward.family import HEAD_AXES, KV_AXES, Ctx
from explorer.internals.forward.hooks import Point
from explorer.internals.forward.mlmhead import MlmHead, head_logits, points_of
from explorer.internals.located import has

if TYPE_CHECKING:  # typing only
    from transformers import PretrainedConfig

__all__ = ["MOBILEBERT", "MobileBert"]

HEAD = "cls.predictions"


def _trigram(x: torch.Tensor) -> torch.Tensor:
    """``(T, e) -> (T, 3e)``: [the next token's, its own, the previous token's] (zeros past either end)."""
    zero = x.new_zeros(1, x.shape[1])
    return torch.cat([torch.cat([x[1:], zero]), x, torch.cat([zero, x[:-1]])], dim=1)


class MobileBert(Bert):
    def embed(self, ctx: Ctx, stack: Stack) -> torch.Tensor:
        e, rec, name, ids = stack.embeddings, ctx.rec, stack.name, ctx.ids[stack.name]
        config = cast("PretrainedConfig", ctx.model.config)
        assert e.positions and e.token_types and e.norm and e.projection
        x = rec.add("token embedding", "embed", ctx.table(e.token, ids), stack=name, point=ctx.point(stack, e.token))
        if config.trigram_input:
            x = rec.add("token embedding beside its neighbours' (next, own, previous)", "embed", _trigram(x),
                        stack=name, point=ctx.point(stack, e.projection, io="in"))
        if config.trigram_input or config.embedding_size != config.hidden_size:
            x = rec.add("embeddings projected to the hidden size", "embed", ops.project(x, ctx.at(e.projection)),
                        stack=name, point=ctx.point(stack, e.projection))
        where = torch.arange(ids.shape[0], device=ids.device)
        pos = rec.add("position embedding (learned)", "position", ctx.table(e.positions, where), stack=name,
                      point=ctx.point(stack, e.positions))
        types = rec.add("token-type embedding (sentence A)", "embed", ctx.table(e.token_types, torch.zeros_like(ids)),
                        stack=name, point=ctx.point(stack, e.token_types))
        x = rec.add("embeddings summed", "embed", x + pos + types, stack=name, point=ctx.point(stack, e.norm, io="in"))
        return self.norm(ctx, stack, e.norm, None, x, "embedding norm")

    def norm(self, ctx: Ctx, stack: Stack, template: str, i: int | None, x: torch.Tensor, name: str,
             kind: str = "norm", axes: tuple[str, ...] = ("token", "feature")) -> torch.Tensor:
        """NoNorm (``x * w + b``), or a LayerNorm where the config's ``normalization_type`` asks for one."""
        layer = ctx.at(template, i or 0)
        if not isinstance(layer, nn.LayerNorm):
            y = ops.affine(x, ops.weight(layer), ops.weight(layer, "bias"))
            return ctx.rec.add(f"{name} (NoNorm: x × w + b)", kind, y, stack=stack.name, layer=i, axes=axes,
                               point=ctx.point(stack, template, i or 0))
        y, mean, var = ops.layer_norm(x, ops.weight(layer), ops.weight(layer, "bias"), layer.eps)
        return ctx.rec.add(name, kind, y, stack=stack.name, layer=i, axes=axes,
                           point=ctx.point(stack, template, i or 0),
                           statistics=(("mean", tuple(mean.tolist())), ("variance", tuple(var.tolist()))))

    def _linear(self, ctx: Ctx, stack: Stack, i: int, path: str, x: torch.Tensor, name: str, kind: str,
                ) -> torch.Tensor:
        at = f"{stack.block.path}.{path}"
        return ctx.rec.add(name, kind, ops.project(x, ctx.at(at, i)), stack=stack.name, layer=i,
                           point=ctx.point(stack, at, i))

    def _narrowed(self, ctx: Ctx, stack: Stack, i: int, part: str, x: torch.Tensor, what: str) -> torch.Tensor:
        h = self._linear(ctx, stack, i, f"bottleneck.{part}.dense", x, f"bottleneck: {what}", "mlp-down")
        return self.norm(ctx, stack, f"{stack.block.path}.bottleneck.{part}.LayerNorm", i, h,
                         f"bottleneck: {what}, normalised")

    def _add_norm(self, ctx: Ctx, stack: Stack, i: int, norm: str, x: torch.Tensor, what: str) -> torch.Tensor:
        at = f"{stack.block.path}.{norm}"
        x = ctx.rec.add(f"residual: {what}", "residual", x, stack=stack.name, layer=i,
                        point=ctx.point(stack, at, i, "in"))
        return self.norm(ctx, stack, at, i, x, f"norm after {what}")

    def block(self, ctx: Ctx, stack: Stack, i: int, x: torch.Tensor) -> torch.Tensor:
        config = cast("PretrainedConfig", ctx.model.config)
        q_in = k_in = v_in = residual = x
        if config.use_bottleneck:
            residual = self._narrowed(ctx, stack, i, "input", x, "the stream narrowed (the attention's residual)")
            if config.use_bottleneck_attention:
                q_in = k_in = v_in = residual
            elif config.key_query_shared_bottleneck:
                q_in = k_in = self._narrowed(ctx, stack, i, "attention", x, "narrowed for queries and keys")
        h = self._add_norm(ctx, stack, i, "attention.output.LayerNorm",
                           residual + self._attend(ctx, stack, i, q_in, k_in, v_in), "narrow stream + attention")
        for j in range(config.num_feedforward_networks - 1):
            h = self._add_norm(ctx, stack, i, f"ffn.{j}.output.LayerNorm",
                               h + self._ffn(ctx, stack, i, f"ffn.{j}.", h, f"FFN {j + 1}"), f"stream + FFN {j + 1}")
        last = config.num_feedforward_networks
        h = self._add_norm(ctx, stack, i, "output.LayerNorm", h + self._ffn(ctx, stack, i, "", h, f"FFN {last}"),
                           f"stream + FFN {last}")
        if not config.use_bottleneck:
            return h
        wide = self._linear(ctx, stack, i, "output.bottleneck.dense", h, "bottleneck: widened back", "mlp-up")
        return self._add_norm(ctx, stack, i, "output.bottleneck.LayerNorm", x + wide, "layer input + widened")

    def _attend(self, ctx: Ctx, stack: Stack, i: int, q_in: torch.Tensor, k_in: torch.Tensor, v_in: torch.Tensor,
                ) -> torch.Tensor:
        spec, heads, rec, name = stack.block.attention, ctx.found.shape(stack.name).heads, ctx.rec, stack.name
        parts = []
        for (label, kind, path), h in zip((("queries Q", "q", spec.q), ("keys K", "k", spec.k),
                                           ("values V", "v", spec.v)), (q_in, k_in, v_in), strict=True):
            assert path
            parts.append(rec.add(f"attention: {label}", kind, ops.split_heads(ops.project(h, ctx.at(path, i)), heads),
                                 stack=name, layer=i, axes=HEAD_AXES if kind == "q" else KV_AXES,
                                 point=ctx.point(stack, path, i), view=lambda v: ops.split_heads(v[0], heads)))
        mix = self.mix(ctx, stack, i, parts[0], parts[1], parts[2], False, "attention")
        concat = rec.add("attention: heads concatenated", "concat", ops.merge_heads(mix), stack=name, layer=i,
                         point=ctx.point(stack, spec.out, i, "in"))
        return rec.add("attention: output projection", "out-proj", ops.project(concat, ctx.at(spec.out, i)),
                       stack=name, layer=i, point=ctx.point(stack, spec.out, i))

    def _ffn(self, ctx: Ctx, stack: Stack, i: int, at: str, h: torch.Tensor, what: str) -> torch.Tensor:
        """One FFN (``at``: ``ffn.j.`` of a stacked one, "" for the layer's own): up, activation, down."""
        act = ctx.numbers.activation
        up = self._linear(ctx, stack, i, f"{at}intermediate.dense", h, f"{what}: up projection", "mlp-up")
        down_at = f"{stack.block.path}.{at}output.dense"
        hidden = ctx.rec.add(f"{what}: {act}", "mlp-act", ops.activation(act)(up), stack=stack.name, layer=i,
                             point=ctx.point(stack, down_at, i, "in"))
        return self._linear(ctx, stack, i, f"{at}output.dense", hidden, f"{what}: down projection", "mlp-down")

    def head(self, ctx: Ctx, x: torch.Tensor) -> torch.Tensor | None:
        return head_logits(ctx, x, _head(ctx)) if ctx.found.head is not None else None

    def head_points(self, ctx: Ctx) -> list[Point]:
        """The head's modules, and every module of a layer the card does not name (bottlenecks, stacked FFNs)."""
        paths = [name for name, _ in ctx.model.named_modules() if ".encoder.layer." in f".{name}"]
        head = points_of(ctx.model, _head(ctx)) if ctx.found.head is not None else []
        return head + [Point(p, io) for p in paths for io in ("in", "out") if has(ctx.model, p)]


def _head(ctx: Ctx) -> MlmHead:
    def weights(model: nn.Module) -> tuple[torch.Tensor, torch.Tensor | None]:
        decoder, extra = model.get_submodule(f"{HEAD}.decoder"), model.get_submodule(f"{HEAD}.dense")
        w, rows, b = ops.weight(decoder), ops.weight(extra), ops.weight(decoder, "bias")
        assert w is not None and rows is not None
        return torch.cat([w.T, rows], dim=0), b

    return MlmHead(ctx.numbers.activation, dense=f"{HEAD}.transform.dense", norm=f"{HEAD}.transform.LayerNorm",
                   weights=weights)


MOBILEBERT = MobileBert()

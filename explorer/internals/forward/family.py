"""The framework every family's walk shares: one walk's context and the transformer's steps as the card orders them.

:class:`Family` recomputes a stack of blocks from the card alone: where its norms go (post, pre, sandwich), whether
positions rotate queries and keys (rotary) or add a bias to the scores (relative buckets), how scores are scaled
and masked (causal, local windows), and whether the MLP is gated. A family file (``bert.py``, ``gemma3.py``,
``gpt2.py``, ``t5.py``, one per family, the TransformerLens idea) adds what the card cannot say: how its
embeddings are summed, the relative bias's buckets, the head. Because the block follows the card, a card that
misdescribes a model (post-LN read as pre-LN, rotary read as none) walks to values the model never computed, and
the comparison with the hooked modules shows it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn

from explorer.architecture.anatomy import Card, Resolved, StackShape
from explorer.architecture.anatomy.card import Attention, Stack
from explorer.internals.forward import ops
from explorer.internals.forward.hooks import Point
from explorer.internals.forward.recorder import Recorder, View, batch_row
from explorer.internals.located import Located

__all__ = ["Ctx", "Family", "HEAD_AXES"]

HEAD_AXES = ("head", "token", "feature")
Sublayer = Callable[[torch.Tensor], torch.Tensor]  # the stream (normalised or not) -> what the sublayer adds
KV_AXES = ("kv-head", "token", "feature")
SCORE_AXES = ("head", "query", "key")


@dataclass
class Ctx:
    """One walk: the model and its card, the recorder, the token ids of each stack, the read position."""

    model: nn.Module
    found: Located
    rec: Recorder
    ids: dict[str, torch.Tensor]  # stack name -> (T,) ids
    read: int  # the position of the main stack whose prediction is read
    memory: torch.Tensor | None = None  # the encoder's output, for a decoder's cross-attention

    @property
    def card(self) -> Card:
        return self.found.card

    @property
    def numbers(self) -> Resolved:
        return self.found.numbers

    def at(self, template: str, i: int = 0) -> nn.Module:
        return self.found.at(template, i)

    def point(self, stack: Stack, template: str, i: int = 0, io: str = "out") -> Point:
        """The hooked value of ``template`` at layer ``i``: a layer shared by every layer is the i-th call."""
        shared = self.card.sharing == "all-layers" and template.startswith(stack.block.path)
        return Point(self.found.path(template, i), io, i if shared else 0)

    def table(self, template: str, ids: torch.Tensor) -> torch.Tensor:
        """Rows ``ids`` of an embedding table (float32)."""
        w = ops.weight(self.at(template))
        assert w is not None
        return w[ids]


def _heads_view(heads: int, lo: int | None = None, hi: int | None = None) -> View:
    return lambda t: ops.split_heads(t[0][..., lo:hi], heads)


class Family:
    """The common transformer, recomputed step by step from a card (override what a family does otherwise)."""

    def walk(self, ctx: Ctx) -> torch.Tensor | None:
        """Every stack in turn (an encoder's output is the decoder's memory), then the head: the read position's
        logits ``(V,)``."""
        x = torch.zeros(0)
        for stack in ctx.card.stacks:
            x = self.stack(ctx, stack)
            if stack is not ctx.card.main:
                ctx.memory = x
        return self.head(ctx, x)

    def stack(self, ctx: Ctx, stack: Stack) -> torch.Tensor:
        x = self.embed(ctx, stack)
        for i in range(ctx.found.shape(stack.name).layers):
            x = self.block(ctx, stack, i, x)
        if stack.final_norm:
            x = self.norm(ctx, stack, stack.final_norm, None, x, "final norm", "final-norm")
        return x

    def embed(self, ctx: Ctx, stack: Stack) -> torch.Tensor:
        raise NotImplementedError

    def head(self, ctx: Ctx, x: torch.Tensor) -> torch.Tensor | None:
        """The read position's logits ``(V,)`` from the last stream ``(T, d)``, or None without a head."""
        raise NotImplementedError

    def head_points(self, ctx: Ctx) -> list[Point]:
        """The modules beyond the card's whose values :meth:`head` (or a family's own steps: DeBERTa's relative
        table, MobileBERT's bottlenecks) compares with, hooked beside the card's."""
        return []

    # ---- one block, as the card's norm placement orders it ---------------------------------------------------
    def block(self, ctx: Ctx, stack: Stack, i: int, x: torch.Tensor) -> torch.Tensor:
        b, per = stack.block, 2 if ctx.card.norms.placement == "sandwich" else 1
        parts: list[tuple[str, tuple[str, ...], Sublayer]] = [
            ("attention", b.norms[:per], lambda h: self.attention(ctx, stack, i, h, cross=False))]
        if b.cross is not None and ctx.memory is not None:
            parts.append(("cross-attention", b.cross_norms[:per],
                          lambda h: self.attention(ctx, stack, i, h, cross=True)))
        parts.append(("MLP", b.norms[per:2 * per], lambda h: self.mlp(ctx, stack, i, h)))
        for j, (what, norms, inner) in enumerate(parts):
            later = parts[j + 1][1][0] if j + 1 < len(parts) and parts[j + 1][1] else None
            x = self.sublayer(ctx, stack, i, x, what, norms, inner, later)
        return x

    def sublayer(self, ctx: Ctx, stack: Stack, i: int, x: torch.Tensor, what: str, norms: tuple[str, ...],
                 inner: Sublayer, later: str | None) -> torch.Tensor:
        """Norm(s) around one sublayer and its residual add; the sum is checked where the model next reads it
        (``later``: the next sublayer's first norm, else the block's output; after a post-LN, the norm's input)."""
        placement = ctx.card.norms.placement
        h = self.norm(ctx, stack, norms[0], i, x, f"norm before the {what}") if placement != "post" else x
        y = inner(h)
        if placement == "sandwich":
            y = self.norm(ctx, stack, norms[1], i, y, f"norm after the {what}")
        if placement == "post":
            seen = ctx.point(stack, norms[0], i, "in")
        else:
            seen = ctx.point(stack, later, i, "in") if later else ctx.point(stack, stack.block.path, i)
        x = ctx.rec.add(f"residual: stream + {what}", "residual", x + y, stack=stack.name, layer=i, point=seen)
        if placement == "post":
            x = self.norm(ctx, stack, norms[0], i, x, f"norm after the {what}'s residual add")
        return x

    def norm(self, ctx: Ctx, stack: Stack, template: str, i: int | None, x: torch.Tensor, name: str,
             kind: str = "norm", axes: tuple[str, ...] = ("token", "feature")) -> torch.Tensor:
        """The card's norm (LayerNorm: mean and variance; RMSNorm: RMS, Gemma's (1 + w); NoNorm: x * w + b)."""
        layer = ctx.at(template, i or 0)
        w, b = ops.weight(layer), ops.weight(layer, "bias")
        eps = float(getattr(layer, "eps", None) or getattr(layer, "variance_epsilon", None) or 0.0)
        norms = ctx.card.norms
        stats: tuple[tuple[str, tuple[float, ...]], ...] = ()
        if norms.kind == "layernorm":
            y, mean, var = ops.layer_norm(x, w, b, eps)
            stats = (("mean", tuple(mean.flatten().tolist())), ("variance", tuple(var.flatten().tolist())))
        elif norms.kind == "rmsnorm":
            y, rms = ops.rms_norm(x, w, eps, norms.plus_one)
            stats = (("rms", tuple(rms.flatten().tolist())),)
        else:
            y = ops.affine(x, w, b)
        point = ctx.point(stack, template, i or 0)
        return ctx.rec.add(name, kind, y, stack=stack.name, layer=i, axes=axes, point=point,
                           statistics=stats if x.dim() == 2 else ())

    # ---- attention ---------------------------------------------------------------------------------------------
    def attention(self, ctx: Ctx, stack: Stack, i: int, h: torch.Tensor, cross: bool) -> torch.Tensor:
        spec = stack.block.cross if cross else stack.block.attention
        assert spec is not None
        shape, memory = ctx.found.shape(stack.name), ctx.memory if cross else h
        assert memory is not None
        who = "cross-attention" if cross else "attention"
        q, k, v = self.project_qkv(ctx, stack, spec, i, h, memory, shape, who)
        if spec.q_norm and spec.k_norm and ctx.card.norms.qk_norm:
            q = self.norm(ctx, stack, spec.q_norm, i, q, f"{who}: query norm (per head)", axes=HEAD_AXES)
            k = self.norm(ctx, stack, spec.k_norm, i, k, f"{who}: key norm (per head)", axes=KV_AXES)
        if not cross:
            q, k = self.rotate(ctx, stack, i, q, k)
        mix = self.mix(ctx, stack, i, q, k, v, cross, who)
        concat = ctx.rec.add(f"{who}: heads concatenated", "concat", ops.merge_heads(mix), stack=stack.name,
                             layer=i, point=ctx.point(stack, spec.out, i, "in"))
        out = ops.project(concat, ctx.at(spec.out, i))
        return ctx.rec.add(f"{who}: output projection", "out-proj", out, stack=stack.name, layer=i,
                           point=ctx.point(stack, spec.out, i))

    def project_qkv(self, ctx: Ctx, stack: Stack, spec: Attention, i: int, h: torch.Tensor, memory: torch.Tensor,
                    shape: StackShape, who: str) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Q from the stream, K and V from the stream (or the encoder's output): (heads, T, d_head) each."""
        heads, kv, width = shape.heads, shape.kv_heads, shape.head_width
        share = f"{heads} query heads read {kv} key/value heads ({shape.grouping})"
        if spec.qkv:  # one fused projection: Q, K and V side by side in its output
            both = ops.project(h, ctx.at(spec.qkv, i))
            cuts = (0, heads * width, (heads + kv) * width, (heads + 2 * kv) * width)
            parts = [both[:, cuts[n]:cuts[n + 1]] for n in range(3)]
            views = [_heads_view(n_heads, cuts[n], cuts[n + 1]) for n, n_heads in enumerate((heads, kv, kv))]
            points = [ctx.point(stack, spec.qkv, i)] * 3
        else:
            paths = (spec.q, spec.k, spec.v)
            assert all(paths)
            parts = [ops.project(x, ctx.at(str(p), i)) for x, p in zip((h, memory, memory), paths, strict=True)]
            views = [_heads_view(n) for n in (heads, kv, kv)]
            points = [ctx.point(stack, str(p), i) for p in paths]
        out = []
        for (name, kind, n), part, view, point in zip((("queries Q", "q", heads), ("keys K", "k", kv),
                                                       ("values V", "v", kv)), parts, views, points, strict=True):
            axes = HEAD_AXES if kind == "q" else KV_AXES
            out.append(ctx.rec.add(f"{who}: {name}", kind, ops.split_heads(part, n), stack=stack.name, layer=i,
                                   axes=axes, point=point, view=view, note=share if kind != "q" else ""))
        return out[0], out[1], out[2]

    def mix(self, ctx: Ctx, stack: Stack, i: int, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, cross: bool,
            who: str) -> torch.Tensor:
        """Scores, their scale and position bias, the mask, the softmax and the weighted sum of V: (heads, T, d)."""
        group = q.shape[0] // k.shape[0]
        k, v = k.repeat_interleave(group, 0), v.repeat_interleave(group, 0)  # each query head's key/value head
        rec, name = ctx.rec, stack.name
        bias = None if cross else self.bias(ctx, stack, i, q, k)  # computed first, as T5 does
        scores = rec.add(f"{who}: scores Q·Kᵀ", "scores", q @ k.transpose(-1, -2), stack=name, layer=i,
                         axes=SCORE_AXES)
        scale = self.scale(ctx, stack, i)
        if scale != 1.0:
            scores = rec.add(f"{who}: scores × {scale:.4g}", "scale", scores * scale, stack=name, layer=i,
                             axes=SCORE_AXES)
        if bias is not None:
            scores = rec.add(f"{who}: scores + position bias", "position", scores + bias, stack=name, layer=i,
                             axes=SCORE_AXES)
        cap = ctx.numbers.attn_softcap
        if cap:
            scores = rec.add(f"{who}: scores soft-capped at {cap:g}", "scale", torch.tanh(scores / cap) * cap,
                             stack=name, layer=i, axes=SCORE_AXES)
        allowed = self.allowed(ctx, stack, i, q.shape[1], k.shape[1], cross)
        rec.add(f"{who}: mask (1 = may attend)", "mask", allowed.float(), stack=name, layer=i, axes=("query", "key"),
                note=self.mask_note(ctx, stack, i, cross))
        probs = rec.add(f"{who}: softmax", "softmax", ops.softmax(scores.masked_fill(~allowed, float("-inf"))),
                        stack=name, layer=i, axes=SCORE_AXES)
        return rec.add(f"{who}: weighted sum of V", "mix", probs @ v, stack=name, layer=i, axes=HEAD_AXES)

    def scale(self, ctx: Ctx, stack: Stack, i: int) -> float:
        return ctx.numbers.attention_scale

    def mask_note(self, ctx: Ctx, stack: Stack, i: int, cross: bool) -> str:
        """What the mask of layer ``i`` stands for, in words, where a family has more to say (a local layer's window,
        a sparse pattern that ran full); "" by default."""
        return ""

    def allowed(self, ctx: Ctx, stack: Stack, i: int, t: int, s: int, cross: bool) -> torch.Tensor:
        """(T, S) True where a query may attend to a key: causal in a decoder, within a window on local layers."""
        device = ctx.ids[stack.name].device
        query, key = torch.arange(t, device=device)[:, None], torch.arange(s, device=device)[None, :]
        ok = torch.ones(t, s, dtype=torch.bool, device=device)
        if cross:
            return ok
        shape = ctx.found.shape(stack.name)
        kind, window = shape.layer_kinds[i], shape.windows[i]
        if stack.name == "decoder":
            ok = ok & (key <= query)
        if window is not None and kind == "local":
            ok = ok & (query - key < window)
        if window is not None and kind == "sliding":
            ok = ok & ((query - key).abs() <= window // 2)
        return ok

    # ---- positions inside attention ----------------------------------------------------------------------------
    def rotate(self, ctx: Ctx, stack: Stack, i: int, q: torch.Tensor, k: torch.Tensor,
               ) -> tuple[torch.Tensor, torch.Tensor]:
        """Rotary positions where the card has them: each (query, key) pair turned by its position's angle, on the
        whole head in the "rotate half" layout (a family rotating part of a head, or neighbouring pairs, as GPT-J
        does, overrides this)."""
        if stack.positions.kind != "rotary":
            return q, k
        numbers, shape = ctx.numbers.positions, ctx.found.shape(stack.name)
        bases = dict(numbers.bases)
        base = bases.get(shape.layer_kinds[i], bases.get("all", next(iter(bases.values()))))
        cos, sin = ops.rope_angles(torch.arange(q.shape[1], device=q.device), q.shape[-1], base)
        note = f"base {base:,.0f} ({shape.layer_kinds[i]} layer)"
        q = ctx.rec.add("attention: queries rotated (RoPE)", "position", ops.rope(q, cos, sin), stack=stack.name,
                        layer=i, axes=HEAD_AXES, note=note)
        k = ctx.rec.add("attention: keys rotated (RoPE)", "position", ops.rope(k, cos, sin), stack=stack.name,
                        layer=i, axes=KV_AXES, note=note)
        return q, k

    def bias(self, ctx: Ctx, stack: Stack, i: int, q: torch.Tensor, k: torch.Tensor) -> torch.Tensor | None:
        """A bias added to the scaled scores of queries ``(heads, T, d)`` and keys ``(heads, S, d)`` (T5's relative
        buckets, DeBERTa's disentangled terms): ``(heads, T, S)``; None where the card has none."""
        return None

    # ---- MLP -----------------------------------------------------------------------------------------------------
    def mlp(self, ctx: Ctx, stack: Stack, i: int, h: torch.Tensor) -> torch.Tensor:
        b, rec, name = stack.block, ctx.rec, stack.name
        act = ops.activation(ctx.numbers.activation)
        if ctx.numbers.mlp_kind == "gated":
            gate_path, up_path = b.mlp_gated or (b.mlp_gate, b.mlp_up)
            assert gate_path and up_path
            gate = rec.add("MLP: gate projection", "mlp-gate", ops.project(h, ctx.at(gate_path, i)), stack=name,
                           layer=i, point=ctx.point(stack, gate_path, i))
            up = rec.add("MLP: up projection", "mlp-up", ops.project(h, ctx.at(up_path, i)), stack=name, layer=i,
                         point=ctx.point(stack, up_path, i))
            active = rec.add(f"MLP: {ctx.numbers.activation}(gate)", "mlp-act", act(gate), stack=name, layer=i)
            hidden = rec.add("MLP: activation × up", "mlp-gated", active * up, stack=name, layer=i,
                             point=ctx.point(stack, b.neurons, i, "in"))
        else:
            assert b.mlp_up
            up = rec.add("MLP: up projection", "mlp-up", ops.project(h, ctx.at(b.mlp_up, i)), stack=name, layer=i,
                         point=ctx.point(stack, b.mlp_up, i))
            hidden = rec.add(f"MLP: {ctx.numbers.activation}", "mlp-act", act(up), stack=name, layer=i,
                             point=ctx.point(stack, b.neurons, i, "in"))
        down = ops.project(hidden, ctx.at(b.neurons, i))
        return rec.add("MLP: down projection", "mlp-down", down, stack=name, layer=i,
                       point=ctx.point(stack, b.neurons, i))


def linear_head(ctx: Ctx, x: torch.Tensor) -> torch.Tensor | None:
    """The read position's logits through a linear output head (``lm_head``): ``(V,)``; None without one."""
    if ctx.found.head is None:
        return None
    path = ctx.found.head_path
    logits = ops.project(x[ctx.read:ctx.read + 1], ctx.model.get_submodule(path))[0]
    return ctx.rec.add("logits (the read position)", "logits", logits, stack=ctx.card.main.name,
                       axes=("vocabulary",), point=Point(path), view=read_row(ctx))


def linear_head_points(ctx: Ctx) -> list[Point]:
    return [Point(ctx.found.head_path)] if ctx.found.head is not None else []


def read_row(ctx: Ctx) -> View:
    """The view of the read position of a (1, T, ...) value, counted from the end: a decoder's forward may keep
    only its last position's logits."""
    back = ctx.read - int(ctx.ids[ctx.card.main.name].shape[0])
    return lambda t: batch_row(t)[back]

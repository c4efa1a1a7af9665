"""GPT-J: token embeddings only (positions rotate queries and keys), a parallel block (one LayerNorm whose output
both the attention and the MLP read, their two outputs added to the stream at once), causal attention scaled by
1/sqrt(d_head), a final LayerNorm and an untied output head with a bias.

Rotary positions turn only the first ``rotary_dim`` dimensions of each head, and GPT-J pairs neighbouring
dimensions (x0, x1), (x2, x3), ... (``rotate_every_two``), where Gemma and Llama pair each dimension with the one
half a head away: the shared framework's rotation is the latter, so this family rotates its own way. The parallel
block follows the card's ``residual``: a card that said "sequential" walks GPT-2's block, which the model never
computed."""

from __future__ import annotations

from dataclasses import replace

import torch

from explorer.architecture.anatomy.card import Stack
from explorer.internals.forward.family import HEAD_AXES, Ctx, Family, linear_head, linear_head_points
from explorer.internals.forward.hooks import Point

__all__ = ["GPTJ", "GptJ", "pair_angles", "rotate_pairs"]

KV_AXES = ("kv-head", "token", "feature")


def pair_angles(positions: torch.Tensor, dims: int, base: float) -> tuple[torch.Tensor, torch.Tensor]:
    """(cos, sin), each (T, dims): pair j (dimensions 2j and 2j + 1) turns by ``position / base ** (2j / dims)``,
    each angle repeated for the two dimensions of its pair."""
    inv = 1.0 / (base ** (torch.arange(0, dims, 2, dtype=torch.float32, device=positions.device) / dims))
    angles = positions.float()[:, None] * inv[None, :]
    return angles.cos().repeat_interleave(2, -1), angles.sin().repeat_interleave(2, -1)


def rotate_pairs(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """(heads, T, d): the first ``cos.shape[-1]`` dimensions turned pair by pair, ``x * cos + (-x1, x0) * sin``; the
    rest passed through."""
    dims = cos.shape[-1]
    turn, rest = x[..., :dims], x[..., dims:]
    swapped = torch.stack((-turn[..., 1::2], turn[..., ::2]), dim=-1).flatten(-2)
    return torch.cat([turn * cos + swapped * sin, rest], dim=-1)


class GptJ(Family):
    def embed(self, ctx: Ctx, stack: Stack) -> torch.Tensor:
        e = stack.embeddings
        return ctx.rec.add("token embedding", "embed", ctx.table(e.token, ctx.ids[stack.name]), stack=stack.name,
                           point=ctx.point(stack, e.token))

    def block(self, ctx: Ctx, stack: Stack, i: int, x: torch.Tensor) -> torch.Tensor:
        """One norm, then attention and MLP side by side on its output: ``x + attn(ln(x)) + mlp(ln(x))``."""
        b = stack.block
        if ctx.card.residual != "parallel":  # read as sequential: the one norm before each sublayer in turn
            return super().block(ctx, replace(stack, block=replace(b, norms=b.norms * 2)), i, x)
        h = self.norm(ctx, stack, b.norms[0], i, x, "norm before the attention and the MLP (one, shared)")
        attended = self.attention(ctx, stack, i, h, cross=False)
        mixed = self.mlp(ctx, stack, i, h)
        return ctx.rec.add("residual: stream + attention + MLP", "residual", attended + mixed + x, stack=stack.name,
                           layer=i, point=ctx.point(stack, b.path, i),
                           note="parallel block: the attention and the MLP read the same normalised stream")

    def rotate(self, ctx: Ctx, stack: Stack, i: int, q: torch.Tensor, k: torch.Tensor,
               ) -> tuple[torch.Tensor, torch.Tensor]:
        if stack.positions.kind != "rotary":
            return q, k
        numbers = ctx.numbers.positions
        dims = min(numbers.rotary_dims or q.shape[-1], q.shape[-1])
        base = dict(numbers.bases).get("all", next(iter(dict(numbers.bases).values()), 10000.0))
        cos, sin = pair_angles(torch.arange(q.shape[1], device=q.device), dims, base)
        note = (f"the first {dims} of {q.shape[-1]} dimensions of each head, neighbouring pairs (x0, x1), (x2, x3), "
                f"...; base {base:,.0f}")
        q = ctx.rec.add("attention: queries rotated (RoPE, pairs of neighbours)", "position",
                        rotate_pairs(q, cos, sin), stack=stack.name, layer=i, axes=HEAD_AXES, note=note)
        k = ctx.rec.add("attention: keys rotated (RoPE, pairs of neighbours)", "position", rotate_pairs(k, cos, sin),
                        stack=stack.name, layer=i, axes=KV_AXES, note=note)
        return q, k

    def head(self, ctx: Ctx, x: torch.Tensor) -> torch.Tensor | None:
        return linear_head(ctx, x)

    def head_points(self, ctx: Ctx) -> list[Point]:
        return linear_head_points(ctx)


GPTJ = GptJ()

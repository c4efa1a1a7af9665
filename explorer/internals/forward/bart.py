"""BART: token embeddings (times sqrt(d_model) where the config's ``scale_embedding`` says so) plus learned
positions, the sum normalised (``layernorm_embedding``), post-LN blocks, the encoder's stack, then the decoder's
(causal self-attention, then cross-attention to the encoder's output), the tied head and ``final_logits_bias``
added to its logits. The decoder reads its start token (``decoder_start_token_id``) alone.

BART's position table starts at row 2 (``BartLearnedPositionalEmbedding.offset``, fairseq's padding rows): a
token at position p reads row p + 2. M2M-100 (``m2m_100.py``) and BigBird-Pegasus (``bigbird_pegasus.py``) share
this walk and change the positions and where the norms are (their cards)."""

from __future__ import annotations

import torch

from explorer.architecture.anatomy.card import Stack
from explorer.internals.forward.family import Ctx, Family, linear_head, linear_head_points
from explorer.internals.forward.hooks import Point
from explorer.internals.located import has

__all__ = ["BART", "Bart"]


def _rows(t: torch.Tensor) -> torch.Tensor:
    """A position module's (T, d) rows: BART's has a batch axis, BigBird-Pegasus's (called with a shape) none."""
    return t[0] if t.dim() == 3 else t


class Bart(Family):
    def embed(self, ctx: Ctx, stack: Stack) -> torch.Tensor:
        e, rec, name = stack.embeddings, ctx.rec, stack.name
        x = self.tokens(ctx, stack)
        if e.positions and has(ctx.model, ctx.found.path(e.positions)):
            x = x + self.positions(ctx, stack)
        summed = ctx.point(stack, e.norm, io="in") if e.norm else ctx.point(stack, stack.block.path, 0, "in")
        x = rec.add("embeddings summed", "embed", x, stack=name, point=summed)
        if e.norm:
            x = self.norm(ctx, stack, e.norm, None, x, "embedding norm")
        return x

    def tokens(self, ctx: Ctx, stack: Stack) -> torch.Tensor:
        """The token embedding; the module scales it itself (``embed_scale``), so only the scaled value is its own."""
        e, rec, name = stack.embeddings, ctx.rec, stack.name
        scale, seen = ctx.numbers.embed_scale, ctx.point(stack, e.token)
        x = rec.add("token embedding (table row)", "embed", ctx.table(e.token, ctx.ids[name]), stack=name,
                    point=None if scale else seen)
        if not scale:
            return x
        return rec.add(f"token embedding × √d_model ({scale:.4g})", "embed", x * scale, stack=name, point=seen)

    def positions(self, ctx: Ctx, stack: Stack) -> torch.Tensor:
        """Learned positions: rows ``offset`` to ``offset + T - 1`` of the table (BART's offset is 2)."""
        e, ids = stack.embeddings, ctx.ids[stack.name]
        assert e.positions
        offset = int(getattr(ctx.at(e.positions), "offset", 0))
        where = torch.arange(ids.shape[0], device=ids.device) + offset
        note = f"rows {int(where[0])} to {int(where[-1])}" + (f" (the table's first {offset} rows are never read)"
                                                              if offset else "")
        return ctx.rec.add("position embedding (learned)", "position", ctx.table(e.positions, where),
                           stack=stack.name, point=ctx.point(stack, e.positions), note=note, view=_rows)

    def head(self, ctx: Ctx, x: torch.Tensor) -> torch.Tensor | None:
        logits = linear_head(ctx, x)
        bias = getattr(ctx.model, "final_logits_bias", None)
        if logits is None or not ctx.card.readout.logits_bias or not isinstance(bias, torch.Tensor):
            return logits
        return ctx.rec.add("logits + final_logits_bias", "logits", logits + bias.detach().float()[0],
                           stack=ctx.card.main.name, axes=("vocabulary",))

    def head_points(self, ctx: Ctx) -> list[Point]:
        return linear_head_points(ctx)


BART = Bart()

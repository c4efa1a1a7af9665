"""Longformer: RoBERTa's embeddings (positions from ``padding_idx + 1``), post-LN blocks and masked-LM head, with
sliding-window attention: each token sees the ``attention_window / 2`` tokens on either side of it (global
attention only where a forward asks for it; the masked-LM forward the step-through runs asks for none).

The model pads its input to a multiple of ``attention_window`` with padding tokens that no real token attends to,
and its self-attention projects the stream sequence-first: the walk recomputes the real tokens alone, so the
hooked values are laid out batch-first and cut to the real tokens before they are compared."""

from __future__ import annotations

import torch

from explorer.architecture.anatomy.card import Stack
from explorer.internals.forward.bert import Bert
from explorer.internals.forward.family import Ctx
from explorer.internals.forward.hooks import Captured

__all__ = ["LONGFORMER", "Longformer", "unpadded"]

SEQUENCE_FIRST = (".attention.self.query", ".attention.self.key", ".attention.self.value")


def unpadded(captured: Captured, tokens: int) -> Captured:
    """``captured`` with every value batch-first and its token axis cut to the first ``tokens``."""
    values: dict[tuple[str, str], list[torch.Tensor]] = {}
    for (path, io), calls in captured.values.items():
        first = path.endswith(SEQUENCE_FIRST)
        values[(path, io)] = [_cut(t.transpose(0, 1) if first and t.dim() == 3 else t, tokens) for t in calls]
    return Captured(values, captured.output)


def _cut(t: torch.Tensor, tokens: int) -> torch.Tensor:
    return t[:, :tokens] if t.dim() >= 2 and t.shape[0] == 1 and t.shape[1] > tokens else t


class Longformer(Bert):
    def walk(self, ctx: Ctx) -> torch.Tensor | None:
        ctx.rec.captured = unpadded(ctx.rec.captured, len(ctx.ids[ctx.card.main.name]))
        return super().walk(ctx)

    def mask_note(self, ctx: Ctx, stack: Stack, i: int, cross: bool) -> str:
        window = ctx.found.shape(stack.name).windows[i]
        if window is None:
            return ""
        return (f"sliding window of {window}: each token sees the {window // 2} tokens on either side of it "
                "(no token attends globally)")


LONGFORMER = Longformer()

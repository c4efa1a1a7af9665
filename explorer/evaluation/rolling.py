"""Rolling windows over a long text, each token scored once, as lm-evaluation-harness's ``loglikelihood_rolling``.

The text's tokens (without special tokens) are cut into windows of the model's context: the first window reads
``<bos>`` and predicts its tokens, each later one reads the token before it and predicts the next ``window`` tokens,
and the last, shorter one reads as many tokens before it as fill a window (:func:`windows`, lm-eval's
``get_rolling_token_windows`` with ``context_len=1`` and ``make_disjoint_window``).
Summed over the windows, the log-probabilities give the text's log-likelihood; its perplexity is
``exp(-log-likelihood / tokens)``. (lm-eval's ``hf`` model encodes the text with the tokenizer's special tokens, so
with Gemma's tokenizer it also scores ``<bos>`` after ``<bos>``; pass ``add_bos_token=False`` to it to compare.)

A window of 2,048 tokens of a 262,144-token vocabulary would be 2 GB of float32 logits. The model's body runs once
per window and its output layer projects the positions in slices of :data:`HEAD_ROWS` (:func:`window_logprobs`):
the head is applied here as the model applies it (its output embeddings, then Gemma's final soft-capping), checked
against the model's own logits of the window's last position; a head this does not reproduce falls back to the
model's own forward, slice by slice.

>>> windows([11, 12, 13, 14, 15], prefix=2, window=3)
[([2], [11, 12, 13]), ([12, 13], [14, 15])]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import torch

from explorer.runtime.offload import input_device

if TYPE_CHECKING:  # typing only: transformers loads with the model
    from transformers import PreTrainedModel
    from transformers.modeling_outputs import BaseModelOutputWithPast

__all__ = ["HEAD_ROWS", "window_logprobs", "windows"]

HEAD_ROWS = 128  # positions projected at once: 128 x 262,144 float32 logits = 134 MB on Gemma 3


def windows(tokens: Sequence[int], prefix: int, window: int) -> list[tuple[list[int], list[int]]]:
    """(context, predicted) token lists: every token predicted once, each window at most ``window`` long."""
    if window < 1:
        raise ValueError("a window holds at least one token")
    out: list[tuple[list[int], list[int]]] = []
    tokens = list(tokens)
    if not tokens:
        return out
    first = min(window, len(tokens))
    out.append(([prefix], tokens[:first]))
    done = first
    while done < len(tokens):
        n = min(len(tokens) - done, window)
        read = tokens[done + n - window - 1:done + n - 1]  # a full window's input, ending before the last token
        out.append((read[:len(read) - (n - 1)], tokens[done:done + n]))  # the context: what is not predicted
        done += n
    return out


def _head(model: PreTrainedModel, hidden: torch.Tensor) -> torch.Tensor:
    """Logits (N, V) from final hidden states (N, D) as the model's own forward computes them."""
    logits = model.get_output_embeddings()(hidden)
    cap = getattr(model.config, "final_logit_softcapping", None)
    if cap:
        logits = torch.tanh(logits / cap) * cap
    return logits


def _scored(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    return torch.log_softmax(logits.float(), dim=-1).gather(1, targets[:, None])[:, 0]  # (N,)


def _by_slices(model: PreTrainedModel, x: torch.Tensor, targets: torch.Tensor, start: int) -> torch.Tensor:
    """The fallback: the model's own forward, projecting one slice of positions at a time."""
    parts = []
    for s in range(start, x.shape[1], HEAD_ROWS):
        keep = torch.zeros_like(x, dtype=torch.bool)  # (1, T)
        keep[0, s:s + HEAD_ROWS] = True
        parts.append(_scored(model(input_ids=x, logits_to_keep=keep).logits, targets[s - start:s - start + HEAD_ROWS]))
    return torch.cat(parts)


def window_logprobs(model: PreTrainedModel, context: Sequence[int], predicted: Sequence[int]) -> torch.Tensor:
    """log p of each ``predicted`` token (P,) after ``context`` and the predicted tokens before it."""
    ids = [*context, *predicted][:-1]
    x = torch.tensor([ids], device=input_device(model))  # (1, T)
    targets = torch.tensor(list(predicted), device=x.device)  # (P,)
    start = len(context) - 1  # position predicting the first predicted token
    captured: list[torch.Tensor] = []

    def keep_hidden(_module: torch.nn.Module, _args: tuple[object, ...],
                    output: BaseModelOutputWithPast | tuple[torch.Tensor, ...]) -> None:
        hidden = output[0] if isinstance(output, tuple) else output.last_hidden_state
        if hidden is not None:
            captured.append(hidden)

    with torch.inference_mode():
        hook = model.base_model.register_forward_hook(keep_hidden)
        try:
            last = model(input_ids=x, logits_to_keep=1).logits[0, -1]  # (V,) the model's own head, once
        finally:
            hook.remove()
        hidden = captured[-1][0, start:]  # (P, D)
        if not torch.allclose(_head(model, hidden[-1:])[0].float(), last.float(), rtol=1e-3, atol=1e-3):
            return _by_slices(model, x, targets, start).cpu()
        return torch.cat([_scored(_head(model, hidden[s:s + HEAD_ROWS]), targets[s:s + HEAD_ROWS])
                          for s in range(0, hidden.shape[0], HEAD_ROWS)]).cpu()

"""The next-token distribution of a decoder for a prompt: every token's logit and probability.

Probabilities are the softmax of the model's own last-position logits (float32), so they
sum to 1 over the whole vocabulary; the table shows the ``top_k`` most likely. Whether the
output layer *is* the input embedding matrix (weight tying) is read off the loaded model,
by tensor identity, not from the config.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch

from explorer.core.errors import ExplorerError, shorten
from explorer.core.handles import Tokenizer
from explorer.core.notices import Notice, texts
from explorer.runtime.offload import input_device
from explorer.runtime.placement import ran_on
from explorer.tasks.generation.prompt import Prompt, encode_prompt, prompt_limit

if TYPE_CHECKING:  # typing only: no runtime import of the loader
    from transformers import Cache, PreTrainedModel

    from explorer.runtime.loading import LoadedModel

__all__ = ["Candidate", "NextToken", "forward_last", "next_token", "output_is_input_embedding", "takes_logits_to_keep",
           "token_text"]

MAX_TABLE = 100  # rows of the next-token table


@dataclass(frozen=True)
class Candidate:
    """One possible next token."""

    token: str  # decoded text of the piece (" capital")
    token_id: int
    logit: float
    probability: float

    def to_dict(self) -> dict[str, object]:
        return {"token": self.token, "token_id": self.token_id, "logit": round(self.logit, 6),
                "probability": round(self.probability, 8)}


@dataclass(frozen=True)
class NextToken:
    """The ``top_k`` most likely next tokens of ``model`` after the prompt."""

    model: str
    vocab_size: int  # size of the output distribution (logits per position)
    tied_output: bool  # the output layer's weight is the input embedding tensor itself
    prompt_tokens: int  # tokens read (after cutting)
    candidates: tuple[Candidate, ...]
    notices: tuple[Notice, ...] = ()
    device: str = "cpu"  # what ran, from the loaded model
    device_name: str = "cpu"  # e.g. "cuda:0 (NVIDIA H100 80GB HBM3)"
    dtype: str = "float32"

    def to_dict(self) -> dict[str, object]:
        """The CLI's JSON: ``{"model", "vocab_size", "device", "device_name", "dtype", "tokens": [...]}``."""
        return {"model": self.model, "vocab_size": self.vocab_size, "device": self.device,
                "device_name": self.device_name, "dtype": self.dtype,
                "tokens": [c.to_dict() for c in self.candidates]}

    @property
    def notice_texts(self) -> list[str]:
        return texts(self.notices)


def output_is_input_embedding(model: PreTrainedModel) -> bool:
    """True when the output layer multiplies by the very tensor that embeds the input tokens."""
    out, inp = model.get_output_embeddings(), model.get_input_embeddings()
    if out is None or inp is None:
        return False
    a, b = out.weight, inp.weight
    if not isinstance(a, torch.Tensor) or not isinstance(b, torch.Tensor):
        return False  # a layer without a weight matrix shares none
    return a is b or (a.device.type != "meta" and a.data_ptr() == b.data_ptr() and a.shape == b.shape)


def token_text(tokenizer: Tokenizer, token_id: int) -> str:
    """How one token reads (special tokens kept, e.g. ``<eos>``)."""
    return tokenizer.decode([int(token_id)], skip_special_tokens=False, clean_up_tokenization_spaces=False)


def takes_logits_to_keep(model: torch.nn.Module) -> bool:
    """Whether the model's forward can skip the output layer at positions nobody reads (transformers'
    ``logits_to_keep``; ``generate`` checks the same way). Gemma 3's 262k-token head is most of a step."""
    return "logits_to_keep" in inspect.signature(model.forward).parameters


def forward_last(model: torch.nn.Module, input_ids: torch.Tensor, cache: Cache | None = None,
                 call: Any = None, on_device: bool = False) -> tuple[torch.Tensor, Cache | None]:
    """Logits at the last position (B, V) in float32, and the updated KV cache.

    ``input_ids`` is the whole prompt (1, T) on the first call, then only the new tokens (B, 1):
    the cache holds every earlier position, so the prefix is never recomputed. ``call`` replaces
    ``model.__call__`` (the compiled one-token step); ``on_device`` keeps the logits where the model
    ran (the decoders pick and rank there and move only a few numbers), else they come to the CPU.
    """
    kwargs: dict[str, object] = {"logits_to_keep": 1} if takes_logits_to_keep(model) else {}
    out = (call or model)(input_ids=input_ids.to(input_device(model)), past_key_values=cache, use_cache=True,
                          **kwargs)
    device = out.logits.device if on_device else "cpu"
    return out.logits[:, -1, :].to(dtype=torch.float32, device=device, copy=True), out.past_key_values  # (B, V)


def _candidates(tokenizer: Tokenizer, logits: torch.Tensor, top_k: int) -> tuple[Candidate, ...]:
    probs = torch.softmax(logits, dim=-1)  # (V,)
    values, ids = probs.topk(min(top_k, probs.shape[-1]))
    return tuple(Candidate(token_text(tokenizer, i), int(i), float(logits[i]), float(p))
                 for p, i in zip(values.tolist(), ids.tolist(), strict=True))


def next_token(loaded: LoadedModel, text: str, top_k: int = 10) -> NextToken:
    """The next-token distribution of a loaded decoder (``explorer.runtime.loading.LoadedModel``)."""
    if isinstance(top_k, bool) or not isinstance(top_k, int) or not 1 <= top_k <= MAX_TABLE:
        raise ExplorerError(f"top-k must be a whole number from 1 to {MAX_TABLE} (got {shorten(top_k)!r}).")
    model, tokenizer = loaded.model, loaded.tokenizer
    cap = prompt_limit(model)  # the model's context, or the device's cap, with its reason
    prompt: Prompt = encode_prompt(tokenizer, text, cap.value, cap.reason)
    with torch.inference_mode():
        logits, _ = forward_last(model, torch.tensor([prompt.ids]))
    untrained = (Notice("untrained", "Untrained weights: predictions are noise."),) if loaded.untrained else ()
    return NextToken(loaded.key, int(logits.shape[-1]), output_is_input_embedding(model), len(prompt.ids),
                     _candidates(tokenizer, logits[0], top_k), prompt.notices + untrained, **ran_on(loaded))

"""DeBERTa's scale-invariant fine-tuning (SiFT), its perturbation computed on a real model.

SiFT (He et al. 2021, Sec. 3.4) is virtual adversarial training whose perturbation is added to the *normalised*
word embeddings: ``ê_t = (e_t - mean_t) / std_t``. Embedding vectors differ in size from token to token (and more
so in big models), so a perturbation of one fixed size is a shove for a small vector and nothing for a large one;
on normalised embeddings every token is moved by the same share of its own scale. In terms of the raw embedding,
SiFT moves token t by ``std_t x ε`` where a plain perturbation moves every token by one ``ε``.

Computed on a real model (the bundled all-MiniLM-L6-v2, whose word embeddings differ in size from token to token,
or the bundled Gemma 3 270M, whose scaled embeddings all have nearly the same size, so both perturbations coincide
there): the prompt's input embeddings, the adversarial direction of virtual adversarial training (one
power-iteration step: the gradient of the output's divergence at a small random δ, Miyato et al. 2018), then two
perturbations of the **same total size** along it, one scaled per token as SiFT does, one uniform, and how far
each moves the output (a decoder's next-token distribution: KL; an encoder's sentence vector: 1 - cosine) and
each token (relative to its own embedding). A trained SiFT model also learns to be robust to these moves; that
training is not run here.

>>> import torch
>>> e = torch.tensor([[3.0, 1.0], [30.0, 10.0]])
>>> [round(float(x), 2) for x in token_scale(e)]  # the per-token std of the normalisation
[1.0, 10.0]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch

from explorer.core.errors import ExplorerError
from explorer.core.handles import Tokenizer
from explorer.core.limits import SIFT_PROMPT_CHARS
from explorer.core.userinput import require_text
from explorer.tasks.generation.nexttoken import token_text

if TYPE_CHECKING:
    from explorer.runtime.loading import LoadedModel

__all__ = ["MAX_EPSILON", "SiftResult", "perturb", "token_scale"]

MAX_EPSILON = 2.0  # the perturbation's size, as a share of a token's own scale
MAX_TOKENS = 64
XI = 1e-3  # the random start of the power iteration (its size does not matter much: only the direction is kept)


def token_scale(embeddings: torch.Tensor) -> torch.Tensor:
    """The std of each token's embedding (T,): what SiFT's normalisation divides by."""
    return embeddings.float().std(dim=-1, unbiased=False).clamp(min=1e-8)


def _unit_rows(x: torch.Tensor) -> torch.Tensor:
    """Each row scaled to an RMS of 1 (the size of a normalised embedding's entries)."""
    return x / x.pow(2).mean(-1, keepdim=True).sqrt().clamp(min=1e-12)


def _output(model: torch.nn.Module, embeds: torch.Tensor) -> torch.Tensor:
    """A decoder's next-token log-probabilities (V,), or an encoder's mean-pooled unit sentence vector (D,)."""
    out = model(inputs_embeds=embeds[None])
    if hasattr(out, "logits"):
        return torch.log_softmax(out.logits[0, -1].float(), -1)
    return torch.nn.functional.normalize(out.last_hidden_state[0].float().mean(0), dim=-1)


def _divergence(clean: torch.Tensor, moved: torch.Tensor, decoder: bool) -> torch.Tensor:
    """KL(p || p') in nats for a decoder; 1 - cosine of the sentence vectors for an encoder."""
    if decoder:
        return torch.sum(clean.exp() * (clean - moved))
    return 1 - torch.dot(clean, moved)


@dataclass(frozen=True)
class SiftResult:
    """How far each perturbation moves the prediction, and each token relative to its own embedding."""

    tokens: tuple[str, ...]
    scale: tuple[float, ...]  # per-token std of the embedding
    epsilon: float
    kl_sift: float  # how far SiFT's perturbation moved the output (``measure``)
    kl_uniform: float  # the same for a uniform perturbation of the same total size
    relative_sift: tuple[float, ...]  # ||δ_t|| / ||e_t|| per token
    relative_uniform: tuple[float, ...]
    top_clean: tuple[tuple[str, float], ...]
    top_sift: tuple[tuple[str, float], ...]
    top_uniform: tuple[tuple[str, float], ...]
    measure: str  # what kl_sift and kl_uniform measure


def _top(tokenizer: Tokenizer, lp: torch.Tensor, k: int = 5) -> tuple[tuple[str, float], ...]:
    values, ids = lp.exp().topk(k)
    return tuple((token_text(tokenizer, int(i)), round(float(v), 4)) for v, i in zip(values, ids, strict=True))


def perturb(loaded: LoadedModel, text: str, epsilon: float = 0.5, seed: int = 0) -> SiftResult:
    """SiFT's and a uniform perturbation of ``text``'s embeddings along the adversarial direction, compared."""
    text = require_text(text, what="text", empty_hint="type a prompt.", max_chars=SIFT_PROMPT_CHARS,
                        limit_note="a sentence shows it")
    if isinstance(epsilon, bool) or not isinstance(epsilon, int | float) or not 0 < epsilon <= MAX_EPSILON:
        raise ExplorerError(f"The perturbation size must be above 0 and at most {MAX_EPSILON:g} (got {epsilon!r}).")
    model, tok = loaded.model, loaded.tokenizer
    ids = tok(text, return_tensors="pt")["input_ids"][0][:MAX_TOKENS]
    device = next(model.parameters()).device
    decoder = model.get_output_embeddings() is not None  # an output layer: next-token log-probabilities
    with torch.no_grad():
        embeds = model.get_input_embeddings()(ids.to(device)).float()  # (T, D), Gemma's scaling included
        clean = _output(model, embeds.to(model.dtype))
    start = _unit_rows(torch.randn(embeds.shape, generator=torch.Generator().manual_seed(seed))).to(device)
    delta = (XI * start).requires_grad_(True)
    gap = _divergence(clean, _output(model, (embeds + delta).to(model.dtype)), decoder)
    (grad,) = torch.autograd.grad(gap, delta)
    direction = _unit_rows(grad.detach())  # (T, D), RMS 1 per token
    scale = token_scale(embeds)  # (T,)
    sift = epsilon * scale[:, None] * direction  # each token by epsilon of its own scale
    uniform = direction * (sift.norm() / direction.norm())  # the same total size, spread evenly
    with torch.no_grad():
        lp_sift, lp_uniform = (_output(model, (embeds + d).to(model.dtype)) for d in (sift, uniform))

    def kl_of(moved: torch.Tensor) -> float:
        return round(float(_divergence(clean, moved, decoder)), 6)

    def relative(d: torch.Tensor) -> tuple[float, ...]:
        return tuple(round(float(x), 4) for x in d.norm(dim=-1) / embeds.norm(dim=-1).clamp(min=1e-8))

    tokens = tuple(token_text(tok, int(i)) for i in ids)
    tops = (_top(tok, clean), _top(tok, lp_sift), _top(tok, lp_uniform)) if decoder else ((), (), ())
    return SiftResult(tokens, tuple(round(float(s), 4) for s in scale), float(epsilon), kl_of(lp_sift),
                      kl_of(lp_uniform), relative(sift), relative(uniform), *tops, "KL(p || p') of the next token, nats"
                      if decoder else "1 - cosine of the sentence embedding")

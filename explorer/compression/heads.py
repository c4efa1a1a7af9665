"""Structured head pruning: the least important attention heads switched off, by one of two importances.

``heads-N`` ranks by a data-free proxy; ``mheads-N`` by Michel et al.'s gradient importance (below).

Importance proxy (data-free, deterministic): the Frobenius norm of a head's slice of the attention
**output projection**, ``‖W_O[:, h·d:(h+1)·d]‖`` (BERT's ``attention.output.dense``, Gemma's
``self_attn.o_proj``). A head contributes to the residual stream only through that slice, so a head
whose slice is small moves the output least. Michel et al. (2019, "Are Sixteen Heads Really Better
than One?") rank heads by the gradient of a task loss with respect to a head mask instead; that needs
a loss the model was trained on, which MiniLM (a sentence encoder without its MLM head) does not have.

Gradient importance (``mheads-N``, Michel et al. 2019, eq. 2): a mask ξ_h multiplies each head's output
where it enters the output projection; the importance of head h is |∂L/∂ξ_h| at ξ = 1 for the model's own
loss on a text (:func:`gradient_scores`), normalised by its layer's L2 norm as the paper does. A decoder's
loss is its next-token loss; an encoder's is its masked-LM loss (:func:`masked_copies`: every token predicted
once, from a copy with every seventh token masked), measured on its checkpoint's masked-LM model and carried
over to the same encoder inside another wrapper by :func:`onto`. The text is Python-documentation prose from
the lab's corpus, not the held-out text the quality is then measured on, so the ranking does not peek at the
test.

Pruning ``heads-N`` ranks every head of every layer together and zeroes the slices of the N% lowest
(rounded down), which removes exactly their contribution. The matrices keep their shape (transformers 5
has no ``prune_heads``; Gemma's grouped key/value heads make physical removal model-specific), so
the dense size on disk does not change: only the work a sparse kernel could skip does.

>>> import torch
>>> layer = torch.nn.Linear(8, 4)            # 2 heads of 4 dims
>>> head_norms(layer, 2).shape
torch.Size([2])
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, replace

import torch

from explorer.architecture.modeltypes import num_heads
from explorer.core.errors import ExplorerError
from explorer.core.limits import HEAD_IMPORTANCE_TEXT_CHARS
from explorer.internals import sites
from explorer.training import corpus

__all__ = ["MASK_EVERY", "HeadScore", "gradient_scores", "head_norms", "importance_text",
           "masked_copies", "onto", "output_projections", "prune", "require_lm_loss", "scores"]



@dataclass(frozen=True)
class HeadScore:
    """One head's importance under the proxy."""

    layer: str  # the output projection's module name
    head: int
    score: float


def output_projections(model: torch.nn.Module) -> dict[str, torch.nn.Linear]:
    """The attention output projection of every layer (whose input is the heads concatenated), by module name,
    from the model's anatomy card (:mod:`explorer.internals.sites`); {} for a model of no known type, or whose
    projection is not a Linear layer (GPT-2's Conv1D keeps its weight the other way round)."""
    try:
        found = sites.of(model)
    except ExplorerError:
        return {}
    if found.heads_in_t is None:
        return {}
    layers = {found.heads_in(i): sites.module(model, found.heads_in(i)) for i in range(found.layers)}
    return {name: m for name, m in layers.items() if isinstance(m, torch.nn.Linear)}


def head_norms(layer: torch.nn.Linear, n_heads: int) -> torch.Tensor:
    """(n_heads,) Frobenius norm of each head's column block of ``layer.weight`` (out, n_heads * d)."""
    w = layer.weight.detach().float()  # (hidden, heads * head_dim)
    return w.reshape(w.shape[0], n_heads, -1).pow(2).sum(dim=(0, 2)).sqrt()


def _heads_of(model: torch.nn.Module) -> int:
    n = num_heads(getattr(model, "config", None) or {})
    if not n:
        raise ExplorerError("heads-N needs a transformer whose config names its attention heads; this model has "
                            "none. Pick prune-N or a cast instead.")
    return n


def scores(model: torch.nn.Module) -> list[HeadScore]:
    """Every head's proxy score, lowest first (ties: earlier layer, lower head first)."""
    n, found = _heads_of(model), output_projections(model)
    if not found:
        raise ExplorerError("heads-N found no attention output projection in this model (it knows BERT-, "
                            "Gemma-, BART- and GPT-NeoX-style layers). Pick prune-N or a cast instead.")
    out = [HeadScore(name, h, float(v)) for name, layer in found.items()
           for h, v in enumerate(head_norms(layer, n))]
    return sorted(out, key=lambda s: s.score)


MASK_EVERY = 7  # an encoder's copies mask every 7th token (14%, about BERT's 15%), each copy a different seventh


def importance_text() -> str:
    """The text the gradient importance is measured on: the first training paragraphs of the lab's corpus."""
    out = ""
    for doc in corpus.bundled().train:
        for paragraph in doc:
            out += paragraph + "\n"
            if len(out) >= HEAD_IMPORTANCE_TEXT_CHARS:
                return out[:HEAD_IMPORTANCE_TEXT_CHARS]
    return out


def require_lm_loss(model: torch.nn.Module) -> None:
    """mheads-N needs a model that computes its own language-model loss; anything else is told so."""
    if "labels" not in inspect.signature(model.forward).parameters:
        raise ExplorerError("mheads-N ranks heads by the model's own language-model loss, and this model has no "
                            "language-model head (a sentence encoder such as MiniLM). Pick heads-N, or a decoder "
                            "such as gemma3-270m.")


def masked_copies(input_ids: torch.Tensor, mask_id: int, special: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """An encoder's masked-LM inputs for one text ``input_ids`` (1, T): ``MASK_EVERY`` copies (K, T), copy k
    with the tokens at positions k, k + K, ... replaced by ``mask_id`` and labelled, -100 elsewhere, so every
    token but the ``special`` ones (a (1, T) bool, [CLS] and [SEP]) is predicted exactly once, with no randomness.

    >>> ids, labels = masked_copies(torch.tensor([[101, 5, 6, 7, 102]]), 103, torch.tensor([[1, 0, 0, 0, 1]]).bool())
    >>> ids[0].tolist(), labels[0].tolist()  # copy 0 would mask [CLS] only: it is left out
    ([101, 103, 6, 7, 102], [-100, 5, -100, -100, -100])
    >>> ids.shape[0], int((labels != -100).sum())  # three copies, the three ordinary tokens once each
    (3, 3)
    """
    t = input_ids.shape[1]
    pos = torch.arange(t, device=input_ids.device)
    # (K, T)
    chosen = (pos[None, :] % MASK_EVERY == torch.arange(MASK_EVERY, device=input_ids.device)[:, None]) & ~special
    chosen = chosen[chosen.any(dim=1)]  # a text shorter than K tokens: no empty copy (its loss would be NaN)
    ids = input_ids.expand(len(chosen), t).masked_fill(chosen, mask_id)
    labels = input_ids.expand(len(chosen), t).masked_fill(~chosen, -100)
    return ids, labels


def onto(ranked: list[HeadScore], model: torch.nn.Module) -> list[HeadScore]:
    """``ranked`` with its layers named as in ``model``: a ranking measured on the same encoder inside another
    wrapper (``bert.encoder.layer.0...`` in BertForMaskedLM is ``encoder.layer.0...`` in BertModel)."""
    names = list(output_projections(model))
    out = []
    for s in ranked:
        match = [n for n in names if s.layer == n or s.layer.endswith("." + n) or n.endswith("." + s.layer)]
        if len(match) != 1:
            raise ExplorerError(f"mheads-N measured head importance on {s.layer}, which matches {len(match)} layers "
                                "of the model to prune: its masked-LM model is not the same encoder. Pick heads-N.")
        out.append(replace(s, layer=match[0]))
    return out


def gradient_scores(model: torch.nn.Module, input_ids: torch.Tensor,
                    labels: torch.Tensor | None = None) -> list[HeadScore]:
    """Michel et al.'s importance of every head for the model's loss on ``input_ids`` (B, T), lowest first.

    ``model`` must return ``.loss`` when given ``labels`` (default: ``input_ids``, a causal LM's next-token
    targets; an encoder's come from :func:`masked_copies`); its weights get no gradient."""
    require_lm_loss(model)
    n, found = _heads_of(model), output_projections(model)
    if not found:
        raise ExplorerError("mheads-N found no attention output projection in this model. Pick heads-N instead.")
    device = input_ids.device
    masks = {name: torch.ones(n, device=device, requires_grad=True) for name in found}  # ξ, one per head

    def gate(name: str):  # noqa: ANN202  (a forward pre-hook)
        def hook(_module: torch.nn.Module, args: tuple) -> tuple:
            x = args[0]  # (..., heads * head_dim): the heads' outputs, concatenated
            gated = (x.unflatten(-1, (n, -1)) * masks[name].to(x.dtype)[:, None]).flatten(-2)
            return (gated, *args[1:])
        return hook

    handles = [layer.register_forward_pre_hook(gate(name)) for name, layer in found.items()]
    frozen = [p for p in model.parameters() if p.requires_grad]
    for p in frozen:
        p.requires_grad_(False)  # only ξ needs a gradient: no weight gradients held in memory
    try:
        with torch.enable_grad():
            model(input_ids=input_ids, labels=input_ids if labels is None else labels).loss.backward()
    finally:
        for h in handles:
            h.remove()
        for p in frozen:
            p.requires_grad_(True)
    ranked = []
    for name, xi in masks.items():
        grad = xi.grad.abs() if xi.grad is not None else torch.zeros(n)
        grad = grad / grad.norm().clamp_min(1e-12)  # the paper's per-layer normalisation
        ranked += [HeadScore(name, h, float(v)) for h, v in enumerate(grad)]
    return sorted(ranked, key=lambda s: s.score)


def prune(model: torch.nn.Module, percent: int, ranked: list[HeadScore] | None = None) -> list[HeadScore]:
    """Zero the output-projection slices of the ``percent``% lowest-scoring heads, in place (the caller
    passes a copy); ``ranked`` (lowest first) defaults to the proxy's :func:`scores`. Returns the heads
    switched off."""
    ranked, n = ranked if ranked is not None else scores(model), _heads_of(model)
    gone = ranked[: len(ranked) * percent // 100]
    layers = output_projections(model)
    with torch.no_grad():
        for s in gone:
            layer = layers[s.layer]
            d = layer.in_features // n
            layer.weight[:, s.head * d:(s.head + 1) * d] = 0
    return gone

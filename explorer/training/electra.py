"""ELECTRA's family: a small generator fills the masked positions, a discriminator spots its replacements.

Clark et al. (2020): the generator is a masked LM trained on the positions the ``electra``
strategy of :mod:`explorer.objectives` masks (15%, all ``[MASK]``: the strategy's
``generator_input``); its *sampled* tokens (drawn from its softmax, no gradient through the
draw) replace those positions, and the discriminator labels every real token original (0) or
replaced (1). A sample equal to the original counts as original: the label compares tokens.
Loss = MLM + 50 x RTD, the paper's weight (the RTD loss is a mean over ~7x more tokens and is
much smaller, so it is scaled up to matter).

The two networks share their token and position embeddings
(:class:`explorer.architecture.custom_models.ElectraPair`), so the generator is half the
discriminator's width (heads and FFN halved too, within the paper's 1/4-1/2) but its
``embedding_size`` equals the discriminator's hidden size. Reported accuracy
(``correct / predicted``) is the *discriminator's* over every real token; the generator's
masked-token accuracy is ``parts["generator_accuracy"]``.

>>> from explorer.training import recipes
>>> gen, disc = configs(recipes.get("electra"), "tiny")
>>> gen.hidden_size, disc.hidden_size, gen.embedding_size, gen.num_attention_heads
(64, 128, 128, 1)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from explorer.architecture import build as arch
from explorer.architecture import cost
from explorer.core.handles import Tokenizer
from explorer.objectives.base import Vocab
from explorer.objectives.electra import ElectraResult
from explorer.training import examples, models
from explorer.training.examples import IGNORE
from explorer.training.losses import Loss
from explorer.training.recipes import Recipe

__all__ = ["GENERATOR", "DISCRIMINATOR", "RTD_WEIGHT", "build", "configs", "corrupt", "features", "forward_flops",
           "loss", "sample"]

RTD_WEIGHT = 50.0  # the paper's lambda: RTD's per-token BCE is far smaller than the generator's MLM loss
GENERATOR, DISCRIMINATOR = "electra-small-generator", "electra-small-discriminator"  # catalog keys


def configs(recipe: Recipe, size: str) -> tuple[Any, Any]:
    """(generator, discriminator) configs: the catalog's ELECTRA-Small pair scaled to the lab ``size``.

    The discriminator takes the size's knobs; the generator is half as wide (heads and FFN too)
    with the discriminator's embedding width, so the token embeddings can be one tensor.
    """
    disc = models.config(recipe, size, DISCRIMINATOR)
    disc.embedding_size = disc.hidden_size  # no projection in the discriminator: it uses the shared table as is
    gen = models.config(recipe, size, GENERATOR)
    gen.hidden_size = max(1, disc.hidden_size // 2)
    gen.num_attention_heads = max(1, disc.num_attention_heads // 2)
    gen.intermediate_size = max(1, disc.intermediate_size // 2)
    gen.embedding_size = disc.hidden_size  # the generator projects the shared table down to its width
    arch.validate(gen)
    arch.validate(disc)
    return gen, disc


def build(recipe: Recipe, size: str, seed: int, device: str = "cpu") -> nn.Module:
    """The seeded :class:`ElectraPair` (train mode), embeddings shared, under the one build lock."""
    gen, disc = configs(recipe, size)
    with arch.BUILD_LOCK:  # seeding and init must not interleave with another thread's build
        torch.manual_seed(seed)
        pair = arch.instantiate(disc, "electra-pair", "cpu", {"generator_config": gen, "discriminator_config": disc})
    return pair.to(device).train()


def features(recipe: Recipe, window: Sequence[str], seed: int, index: int, epoch: int, tok: Tokenizer,
             vocab: Vocab) -> dict[str, Any]:
    """The generator's input (``[MASK]`` where the strategy selected) and its MLM labels.

    The strategy's own stand-in sampler (its ``input_tokens``/``labels``) is not used: here the
    real generator proposes, inside :func:`loss`.
    """
    drawn = examples.draw(recipe, recipe.strategy, window, seed, index, epoch, vocab)
    assert isinstance(drawn, ElectraResult)
    return {"input_ids": examples.ids(tok, drawn.generator_input), "labels": examples.ids(tok, drawn.targets)}


def _sample_seed(ids: torch.Tensor) -> int:
    """A seed from the batch's contents: the same batch draws the same samples in any thread or run."""
    weights = torch.arange(1, ids.shape[-1] + 1, device=ids.device)  # (T,)
    return int((ids * weights).sum()) % (2**62)


def sample(logits: torch.Tensor, seed: int) -> torch.Tensor:
    """(N, V) generator logits -> (N,) token ids drawn from softmax(logits) (temperature 1), no gradient.

    A private generator keeps the draw reproducible and out of the global RNG that dropout uses. It is the
    logits' device's generator: the same seed draws other tokens on CUDA than on the CPU (reproducible per device).
    """
    if logits.shape[0] == 0:
        return torch.zeros(0, dtype=torch.long, device=logits.device)
    rng = torch.Generator(device=logits.device)
    rng.manual_seed(seed)
    with torch.no_grad():
        probs = torch.softmax(logits.detach().float(), dim=-1)  # (N, V)
        return torch.multinomial(probs, 1, generator=rng).squeeze(-1)  # (N,)


def corrupt(ids: torch.Tensor, labels: torch.Tensor, sampled: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The discriminator's input and its labels: ``sampled`` (N,) put at the N labelled positions of (B, T).

    Returns (input ids (B, T), replaced (B, T) bool). Replaced means the token differs from the
    original: a sample that equals it is labelled original, as in the paper.
    """
    where = labels != IGNORE  # (B, T)
    original = torch.where(where, labels, ids)  # (B, T): the uncorrupted window
    fake = original.clone()
    fake[where] = sampled
    return fake, fake != original


def _generator_logits(pair: Any, ids: torch.Tensor, mask: torch.Tensor, where: torch.Tensor) -> torch.Tensor:
    """(N, V) generator logits at the masked positions only (the head is most of a tiny model's compute)."""
    gen = pair.generator
    hidden = gen.electra(input_ids=ids, attention_mask=mask).last_hidden_state  # (B, T, Hg)
    return gen.generator_lm_head(gen.generator_predictions(hidden[where]))  # (N, V)


def loss(model: nn.Module, batch: dict[str, torch.Tensor]) -> Loss:
    """MLM (generator) + 50 x RTD (discriminator); accuracy = the discriminator's over real tokens.

    ``parts``: ``mlm``, ``rtd``, ``generator_accuracy`` (masked tokens the generator got right),
    ``replaced`` (share of real tokens whose sample differs from the original), ``masked`` (N).
    """
    pair: Any = model
    ids, mask, labels = batch["input_ids"], batch["attention_mask"], batch["labels"]  # (B, T) each
    where = labels != IGNORE  # (B, T): the strategy's selection, nothing else
    target = labels[where]  # (N,)
    logits = _generator_logits(pair, ids, mask, where)  # (N, V)
    if target.numel():
        mlm = F.cross_entropy(logits.float(), target)
        gen_correct = int((logits.argmax(-1) == target).sum())
    else:  # a batch with nothing masked: no generator signal, zero loss with grad
        mlm, gen_correct = logits.sum() * 0.0, 0
    fake, replaced = corrupt(ids, labels, sample(logits, _sample_seed(ids)))  # (B, T) each
    real = mask.bool()  # (B, T): every non-pad token is labelled, specials included
    replaced &= real
    disc_logits = pair.discriminator(input_ids=fake, attention_mask=mask).logits  # (B, T)
    rtd = F.binary_cross_entropy_with_logits(disc_logits[real].float(), replaced[real].float())
    n_real = int(real.sum())
    correct = int(((disc_logits[real] > 0) == replaced[real]).sum())
    parts = {"mlm": float(mlm.detach()), "rtd": float(rtd.detach()),
             "generator_accuracy": gen_correct / max(int(target.numel()), 1),
             "replaced": float(replaced.sum()) / max(n_real, 1), "masked": float(target.numel())}
    return Loss(mlm + RTD_WEIGHT * rtd, parts, n_real, correct)


def forward_flops(model: nn.Module, seq_len: int) -> float:
    """Forward FLOPs per token of the generator plus the discriminator (both run on every token)."""
    pair: Any = model
    return float(sum(cost.per_token(net, net.config, seq_len).total for net in (pair.generator, pair.discriminator)))

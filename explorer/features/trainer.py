"""Training a dictionary on harvested activations: TopK with AuxK, JumpReLU and transcoders, seeded on the CPU.

Every run first rescales its inputs (and a transcoder's targets) by one number each, so that their mean squared
norm is their width (SAELens's ``expected_average_only_in``): the learning rate and the bandwidth then mean the
same for every model; the scales are folded into the saved weights at the end (:func:`fold`). Then, per batch:

- the loss is the fraction of variance unexplained, ``FVU = |x - x_hat|^2 / |x - mean(x)|^2`` over the batch;
- **TopK** (Gao et al. 2024): only the k selected pre-activations carry gradients, decoded as a sparse sum;
- **JumpReLU** and the **transcoder**: ``FVU + sparsity x mean L0``, the threshold learnt through the
  straight-through estimators of :mod:`explorer.features.jumprelu`; each feature's threshold starts at the
  pre-activation its first batch exceeds ``k / width`` of the time, so the first steps already have an L0 near k;
- **dead features** (none fired for ``dead_tokens`` training tokens) get AuxK (Gao et al.): the top ``d/2`` dead
  pre-activations reconstruct what the live ones left, weighted ``aux_alpha``; they are counted throughout;
- decoder rows are kept at unit norm (the gradient along each row removed first), Adam at the recipe's rate with a
  2% warm-up and a linear decay over the last 20% of the steps.

Every random draw comes from generators seeded by the recipe: the same harvest and recipe give the same weights.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F

from explorer.features.dictionary import Dictionary, Shape
from explorer.features.harvest import Harvest
from explorer.features.jumprelu import JumpReLU, Step
from explorer.features.recipe import Recipe
from explorer.runtime import cancel

__all__ = ["Run", "TrainReport", "fold", "scale_of", "start", "train"]

REPORT_EVERY = 16  # steps between progress reports
Progress = Callable[[float, str], None]


@dataclass(frozen=True)
class TrainReport:
    """How a training went: steps done (fewer than asked when stopped), tokens read, time, the last batches'
    FVU and L0, features dead at the end, and the curve (step, FVU, L0)."""

    steps: int
    asked: int
    tokens: int
    seconds: float
    fvu: float
    l0: float
    dead: int
    curve: tuple[tuple[int, float, float], ...] = ()

    @property
    def tokens_per_second(self) -> float:
        return self.tokens / self.seconds if self.seconds > 0 else 0.0

    def to_dict(self) -> dict[str, object]:
        return {"steps": self.steps, "asked": self.asked, "tokens": self.tokens, "seconds": round(self.seconds, 2),
                "tokens_per_second": round(self.tokens_per_second, 1), "fvu": round(self.fvu, 6),
                "l0": round(self.l0, 3), "dead": self.dead, "curve": [list(c) for c in self.curve]}


def scale_of(harvest: Harvest, name: str) -> float:
    """The one number that makes the mean squared norm of ``name`` ("x" or "y") its width, from the first part."""
    values = harvest.part(0)[name].float()
    mean_square = float(values.pow(2).sum(dim=-1).mean())
    return math.sqrt(values.shape[-1] / mean_square) if mean_square > 0 else 1.0


def _shape(recipe: Recipe, harvest: Harvest) -> Shape:
    transcoder = recipe.kind == "transcoder"
    return Shape(d_in=harvest.d_in, width=recipe.width, d_out=harvest.d_out or harvest.d_in,
                 activation="topk" if recipe.kind == "topk" else "jumprelu", k=recipe.k,
                 apply_b_dec_to_input=not transcoder, skip=transcoder and recipe.skip)


def _init(recipe: Recipe, harvest: Harvest, scales: tuple[float, float]) -> Dictionary:
    """Unit-norm random decoder rows, the encoder their transpose (an SAE) or its own draw (a transcoder), the
    decoder bias at the mean target."""
    d = Dictionary(_shape(recipe, harvest))
    g = torch.Generator().manual_seed(recipe.seed)
    with torch.no_grad():
        rows = torch.randn(d.width, d.shape.d_out, generator=g)
        d.W_dec.copy_(rows / rows.norm(dim=-1, keepdim=True))
        if recipe.kind == "transcoder":
            cols = torch.randn(d.shape.d_in, d.width, generator=g)
            d.W_enc.copy_(cols / cols.norm(dim=0, keepdim=True))
        else:
            d.W_enc.copy_(d.W_dec.T)
        first = harvest.part(0)
        target = first["y"] if recipe.kind == "transcoder" else first["x"]
        d.b_dec.copy_(target.float().mean(dim=0) * (scales[1] if recipe.kind == "transcoder" else scales[0]))
    return d


@dataclass
class Run:
    """A run in progress: its dictionary, optimiser, step, each feature's tokens since it last fired."""

    model: Dictionary
    optimizer: torch.optim.Optimizer
    recipe: Recipe
    scales: tuple[float, float]
    since: torch.Tensor  # (W,) tokens since each feature last fired
    step: int = 0
    curve: list[tuple[int, float, float]] = field(default_factory=list)


def _features(s: Run, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
    """(features ``(B, W)`` as a dense tensor, the reconstruction ``(B, d_out)`` without skip, L0 with its
    pseudo-gradient or None) of the rescaled batch ``x``."""
    d, r = s.model, s.recipe
    sae_in = x - d.b_dec if d.shape.apply_b_dec_to_input else x
    if r.kind == "topk":
        top = (sae_in @ d.W_enc + d.b_enc).topk(r.k, dim=-1)  # a dense product: faster on a CPU than gathering k
        picked = torch.relu(top.values)  # (B, k)
        recon = F.embedding_bag(top.indices, d.W_dec, per_sample_weights=picked, mode="sum") + d.b_dec
        dense = torch.zeros(x.shape[0], d.width).scatter(-1, top.indices, picked.detach())
        return dense, recon, None
    pre = sae_in @ d.W_enc + d.b_enc
    if s.step == 0 and not s.curve:
        with torch.no_grad():  # each threshold starts where its feature fires on k / width of the first batch
            rank = max(1, min(pre.shape[0], math.ceil(pre.shape[0] * (1 - r.k / d.width))))
            d.threshold.copy_(pre.kthvalue(rank, dim=0).values.clamp(min=1e-3))
    acts = JumpReLU.apply(pre, d.threshold, r.bandwidth)
    l0 = Step.apply(pre, d.threshold, r.bandwidth).sum(dim=-1).mean()
    return acts.detach(), acts @ d.W_dec + d.b_dec, l0


def _aux(s: Run, x: torch.Tensor, residual: torch.Tensor, variance: torch.Tensor) -> torch.Tensor:
    """AuxK: the top ``d_in / 2`` dead pre-activations reconstruct ``residual`` (Gao et al., appendix B.1)."""
    dead = (s.since >= s.recipe.dead_tokens).nonzero(as_tuple=True)[0]
    if not len(dead) or s.recipe.aux_alpha == 0:
        return torch.zeros(())
    d = s.model
    k_aux = min(d.shape.d_in // 2, len(dead))
    sae_in = x - d.b_dec if d.shape.apply_b_dec_to_input else x
    pre = sae_in @ d.W_enc[:, dead] + d.b_enc[dead]  # (B, dead)
    top = pre.topk(k_aux, dim=-1)
    guess = F.embedding_bag(top.indices, d.W_dec[dead], per_sample_weights=torch.relu(top.values), mode="sum")
    scale = min(len(dead) / k_aux, 1.0)
    return scale * (guess - residual.detach()).pow(2).sum() / variance


def _rate(s: Run) -> float:
    steps, step = max(1, s.recipe.steps), s.step
    warm, decay = max(1, steps // 50), max(1, steps // 5)
    factor = min(1.0, (step + 1) / warm, (steps - step) / decay)
    return s.recipe.learning_rate * max(0.0, factor)


def _step(s: Run, x: torch.Tensor, y: torch.Tensor | None) -> tuple[float, float]:
    """One optimiser step on a rescaled batch; its (FVU, L0)."""
    d, r = s.model, s.recipe
    target = y if y is not None else x
    variance = (target - target.mean(dim=0)).pow(2).sum().clamp(min=1e-12)
    features, recon, l0 = _features(s, x)
    if d.W_skip is not None:
        recon = recon + x @ d.W_skip.T
    residual = target - recon
    fvu = residual.pow(2).sum() / variance
    loss = fvu + r.aux_alpha * _aux(s, x, residual, variance) + (r.sparsity * l0 if l0 is not None else 0.0)
    s.optimizer.zero_grad(set_to_none=True)
    loss.backward()
    with torch.no_grad():
        if d.W_dec.grad is not None:  # unit-norm rows: the gradient along each row would only change its norm
            d.W_dec.grad -= (d.W_dec.grad * d.W_dec).sum(-1, keepdim=True) * d.W_dec
        for group in s.optimizer.param_groups:
            group["lr"] = _rate(s)
        s.optimizer.step()
        d.W_dec.div_(d.W_dec.norm(dim=-1, keepdim=True).clamp(min=1e-8))
        if d.shape.activation == "jumprelu":
            d.threshold.clamp_(min=1e-4)
        fired = (features > 0).any(dim=0)
        s.since += x.shape[0]
        s.since[fired] = 0
    s.step += 1
    return float(fvu.detach()), float((features > 0).sum(dim=-1).float().mean())


def start(harvest: Harvest, recipe: Recipe) -> Run:
    """A fresh run: the rescaling measured, the dictionary initialised, the optimiser ready."""
    scales = (scale_of(harvest, "x"), scale_of(harvest, "y") if harvest.d_out is not None else 1.0)
    model = _init(recipe, harvest, scales)
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.Adam(params, lr=recipe.learning_rate, betas=(0.9, 0.999))
    return Run(model, optimizer, recipe, scales, torch.zeros(recipe.width, dtype=torch.long))


def train(harvest: Harvest, recipe: Recipe, *, state: Run | None = None, progress: Progress | None = None,
          should_stop: Callable[[], bool] | None = None) -> tuple[Run, TrainReport]:
    """Train (or go on training ``state``) for the recipe's steps; a stop keeps what was trained so far."""
    s = state or start(harvest, recipe)
    begun, first_step, fvu, l0 = time.perf_counter(), s.step, 1.0, 0.0
    per_epoch = max(1, harvest.rows // recipe.batch)
    while s.step < recipe.steps:
        epoch, skip = divmod(s.step, per_epoch)
        for i, (x, y) in enumerate(harvest.batches(recipe.batch, recipe.seed, epoch)):
            if i < skip:
                continue  # a resumed run picks up within its epoch
            if s.step >= recipe.steps or (should_stop is not None and should_stop()):
                return s, _report(s, begun, first_step, fvu, l0)
            cancel.check()
            fvu, l0 = _step(s, x * s.scales[0], None if y is None else y * s.scales[1])
            if s.step % REPORT_EVERY == 0 or s.step == recipe.steps:
                s.curve.append((s.step, round(fvu, 5), round(l0, 2)))
                if progress is not None:
                    pace = (s.step - first_step) * recipe.batch / max(1e-9, time.perf_counter() - begun)
                    progress(s.step / recipe.steps, f"training: step {s.step:,} of {recipe.steps:,} (FVU {fvu:.3f}, "
                                                    f"L0 {l0:.1f}, {int((s.since >= recipe.dead_tokens).sum()):,} "
                                                    f"dead; {pace:,.0f} tokens/s)")
        if harvest.rows < recipe.batch:
            break
    return s, _report(s, begun, first_step, fvu, l0)


def _report(s: Run, begun: float, first_step: int, fvu: float, l0: float) -> TrainReport:
    return TrainReport(s.step, s.recipe.steps, s.step * s.recipe.batch, time.perf_counter() - begun, fvu, l0,
                       int((s.since >= s.recipe.dead_tokens).sum()), tuple(s.curve))


def fold(s: Run) -> Dictionary:
    """The trained dictionary in the model's own units: the rescaling folded into its weights (module docstring)."""
    d = s.model
    s_in, s_out = s.scales if s.recipe.kind == "transcoder" else (s.scales[0], s.scales[0])
    out = Dictionary(d.shape)
    with torch.no_grad():
        out.W_enc.copy_(d.W_enc * s_in)
        out.b_enc.copy_(d.b_enc)
        out.W_dec.copy_(d.W_dec / s_out)
        out.b_dec.copy_(d.b_dec / s_out)
        out.threshold.copy_(d.threshold)
        if d.W_skip is not None and out.W_skip is not None:
            out.W_skip.copy_(d.W_skip * (s_in / s_out))
    return out.requires_grad_(False)

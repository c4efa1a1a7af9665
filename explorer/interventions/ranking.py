"""Every attention head ranked by what ablating it does to the answer, beside the Compression lab's gradient
importance of the same heads (Michel et al. 2019).

The ablation effect is causal and specific to one prompt: each head is zero- (or mean-) ablated in its own copy of
the forward (rows of batched forwards, like a patching grid) and the metric's change is recorded; the ranking is by
its size. Michel et al.'s importance is |∂ loss / ∂ head mask| for the model's own language-model loss on the lab
corpus, the score the Compression lab prunes ``mheads-N`` by (:func:`explorer.compression.heads.gradient_scores`),
measured here on a view of the same weights. Where the two agree, a head that matters for language modelling in
general matters for this prompt too; the Spearman correlation says how much they agree.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch

from explorer.compression import heads as compression_heads
from explorer.compression import methods as compression_methods
from explorer.core.errors import ExplorerError
from explorer.core.labels import UNTRAINED_NOTE
from explorer.core.notices import Notice, texts
from explorer.interventions import ablation, metrics, plan, prompts, stacks, traces
from explorer.interventions.components import Component
from explorer.interventions.engine import engine_for, view_copy
from explorer.interventions.grid import json_number
from explorer.interventions.pair import token_texts
from explorer.runtime import cancel, placement
from explorer.runtime.offload import input_device

if TYPE_CHECKING:
    from explorer.internals.sites import Sites
    from explorer.runtime.loading import LoadedModel

__all__ = ["HeadRank", "HeadRanking", "gradient_importance", "rank_heads", "spearman"]


@dataclass(frozen=True)
class HeadRank:
    layer: int
    head: int
    effect: float  # the metric with the head ablated minus without (NaN: not computed)
    importance: float | None  # Michel et al.'s normalised gradient importance (None: not available)


@dataclass(frozen=True)
class HeadRanking:
    """Every head of the stack, largest ablation effect first."""

    model: str
    text: str
    mode: str
    metric: str
    target: str
    foil: str | None
    base: float  # the metric without ablation
    heads: tuple[HeadRank, ...]
    importance_note: str  # where the gradient importance comes from, or why there is none
    spearman: float | None  # rank correlation of |effect| and importance over the heads having both
    notices: tuple[Notice, ...] = ()
    untrained: bool = False
    seconds: float = 0.0
    device: str = "cpu"  # what ran (placement.ran_on)
    device_name: str = "cpu"
    dtype: str = "float32"

    def rows(self) -> list[dict[str, object]]:
        return [{"rank": i + 1, "head": f"{h.layer}.{h.head}", "layer": h.layer, "effect": json_number(h.effect),
                 "gradient_importance": None if h.importance is None else json_number(h.importance)}
                for i, h in enumerate(self.heads)]

    def to_dict(self) -> dict[str, object]:
        return {"model": self.model, "text": self.text, "mode": self.mode, "metric": self.metric,
                "target": self.target, "foil": self.foil, "base": json_number(self.base), "heads": self.rows(),
                "importance_note": self.importance_note,
                "spearman": None if self.spearman is None else json_number(self.spearman),
                "notices": texts(self.notices), "untrained": self.untrained, "seconds": round(self.seconds, 3),
                "device": self.device, "device_name": self.device_name, "dtype": self.dtype}


def spearman(a: list[float], b: list[float]) -> float | None:
    """Spearman's rank correlation (ties broken by order); None for fewer than 3 pairs or a constant list.

    >>> spearman([1.0, 2.0, 3.0, 4.0], [10.0, 20.0, 30.0, 40.0]), spearman([1.0, 2.0, 3.0], [3.0, 2.0, 1.0])
    (1.0, -1.0)
    """
    if len(a) < 3 or len(set(a)) < 2 or len(set(b)) < 2:
        return None
    ra, rb = (torch.tensor(x).argsort().argsort().float() for x in (a, b))
    ra, rb = ra - ra.mean(), rb - rb.mean()
    return round(float((ra * rb).sum() / (ra.norm() * rb.norm())), 6)


def _importance_tokens(model: torch.nn.Module) -> int:
    """Tokens of the lab text the importance reads: the Compression lab's count, within the model's positions."""
    positions = getattr(model.config, "max_position_embeddings", None) or compression_methods.MAX_IMPORTANCE_TOKENS
    return min(compression_methods.MAX_IMPORTANCE_TOKENS, int(positions))


def gradient_importance(loaded: LoadedModel, s: Sites) -> tuple[dict[tuple[int, int], float], str]:
    """Michel et al.'s importance of the stack's heads, as the Compression lab measures it, and a note saying
    where it comes from; an empty map and the reason when this model has none."""
    copy = view_copy(loaded.model)  # its own parameters: the backward pass never touches the shared model
    device = input_device(copy)
    try:
        if s.family == "encoder":
            ranked = compression_methods.masked_scores(copy, loaded.tokenizer, str(device))
        else:
            ids = loaded.tokenizer(compression_heads.importance_text(), return_tensors="pt")["input_ids"]
            ranked = compression_heads.gradient_scores(copy, ids[:, :_importance_tokens(copy)].to(device))
    except ExplorerError as err:
        return {}, f"No gradient importance for this model: {err}"
    layer_of = {s.heads_in(i): i for i in range(s.layers)}
    found = {(layer_of[r.layer], r.head): r.score for r in ranked if r.layer in layer_of}
    if not found:
        return {}, "No gradient importance for this stack: the Compression lab scores another attention."
    return found, ("Gradient importance (Michel et al. 2019): |∂ loss / ∂ head mask| for the model's own loss on the "
                   "lab corpus, normalised per layer, as the Compression lab's mheads-N ranks heads.")


def _effects(loaded: LoadedModel, s: Sites, prompt: prompts.Prompt, mode: str, metric: str, target: int,
             foil: int | None) -> tuple[float, list[float], Notice | None]:
    """(metric unablated, each head's effect in (layer, head) order, why a stopped request stopped)."""
    engine = engine_for(loaded.model)
    cells = [(layer, head) for layer in range(s.layers) for head in range(s.heads)]
    inputs = traces.batch_inputs(engine, prompt, 1)
    readout = traces.readout_index(prompt, inputs)
    vocab = int(getattr(engine.model.config, "vocab_size", 0) or 50_000)
    work = plan.plan(engine.model.config, len(cells), len(prompt.ids), vocab if readout == -1 else vocab * len(
        prompt.decoder_ids or prompt.ids), dtype_bytes=engine.dtype_bytes)
    effects = [float("nan")] * len(cells)
    with engine.session():
        acts, base_logits = traces.capture(engine, s, "heads", inputs, readout)
        base = float(metrics.values(base_logits.float().cpu()[None], metric, target, foil, clean=base_logits)[0])
        swap = {layer: ablation.replacement(engine, s, Component("head", layer, 0), mode, acts[layer],
                                            loaded.tokenizer) for layer in range(s.layers)}
        for start in range(0, len(cells), work.rows_per_forward):
            try:
                cancel.check()
            except cancel.RequestStopped as err:
                if err.reason == "gone" or start == 0:
                    raise
                return base, effects, Notice("stopped", f"{err} Ranked: {start:,} of {len(cells):,} heads.")
            batch = cells[start:start + work.rows_per_forward]
            logits = traces.replaced(engine, s, "heads", traces.batch_inputs(engine, prompt, len(batch)), readout,
                                     batch, swap)
            values = metrics.values(logits, metric, target, foil, clean=base_logits.float().cpu())
            effects[start:start + len(batch)] = (values - base).tolist()
    return base, effects, None


def rank_heads(loaded: LoadedModel, text: object, target: object = None, foil: object = None, *,
               mode: str = "zero", stack: str | None = None, importance: bool = True) -> HeadRanking:
    """Rank every head by its ablation effect on ``text``'s answer: the target-minus-foil logit difference when a
    foil is given, else the target's probability (``target`` defaults to the model's top answer)."""
    started = time.perf_counter()
    typed = prompts.check_prompt(text, "text")
    if mode not in ablation.MODES:
        raise ExplorerError(f"Unknown ablation mode {mode!r}: use one of {', '.join(ablation.MODES)}.")
    engine = engine_for(loaded.model)
    s, _ = stacks.stack_sites(engine.model, stack)
    prompt = prompts.read(loaded.tokenizer, engine.model.config, typed, s.family)
    metric = "logit-diff" if foil is not None and str(foil).strip() else "prob"
    target_id = _target(s, prompt, loaded, target)
    foil_id = prompts.answer_id(loaded.tokenizer, prompt, foil, "foil") if metric == "logit-diff" else None
    base, effects, stopped = _effects(loaded, s, prompt, mode, metric, target_id, foil_id)
    found, note = gradient_importance(loaded, s) if importance else ({}, "Gradient importance not asked for.")
    ranks = [HeadRank(layer, head, effects[layer * s.heads + head], found.get((layer, head)))
             for layer in range(s.layers) for head in range(s.heads)]
    ranks.sort(key=lambda r: -abs(r.effect) if r.effect == r.effect else 0.0)
    both = [r for r in ranks if r.importance is not None and r.effect == r.effect]
    rho = spearman([abs(r.effect) for r in both], [float(r.importance or 0.0) for r in both]) if both else None
    names = token_texts(loaded.tokenizer, tuple(i for i in (target_id, foil_id) if i is not None))
    notices = tuple(n for n in (stopped, Notice("untrained", UNTRAINED_NOTE) if loaded.untrained else None) if n)
    return HeadRanking(loaded.key, typed, mode, metric, names[0], names[1] if foil_id is not None else None, base,
                       tuple(ranks), note, rho, notices, loaded.untrained, time.perf_counter() - started,
                       **placement.ran_on(loaded))


def _target(s: Sites, prompt: prompts.Prompt, loaded: LoadedModel, target: object) -> int:
    """The target token's id: the typed answer's, or the model's top answer when none is typed."""
    if target is not None and str(target).strip():
        return prompts.answer_id(loaded.tokenizer, prompt, target, "target")
    eng = engine_for(loaded.model)
    inputs = traces.batch_inputs(eng, prompt, 1)
    with eng.session():
        _, logits = traces.capture(eng, s, "resid", inputs, traces.readout_index(prompt, inputs))
    return int(logits.argmax())

"""Ablation: switch a head, a neuron, a block or a layer off and watch the next-token distribution move.

``zero`` replaces the component's output by zeros (a head or neuron: its columns of the projection's input, so its
contribution to the stream is exactly nothing; a layer: its contribution, so its output is its input). ``mean``
replaces it by its mean over a reference text (:data:`REFERENCE`: the lab corpus's first paragraphs, its special
tokens left out), the usual way to remove what a component says about *this* input while keeping what it says about
any input. The distribution is read where the prompt's answer is (:mod:`explorer.interventions.prompts`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch

from explorer.core.errors import ExplorerError
from explorer.core.labels import UNTRAINED_NOTE
from explorer.core.notices import Notice, texts
from explorer.interventions import components, models, prompts, stacks, traces
from explorer.interventions.components import Component
from explorer.interventions.engine import Engine, engine_for
from explorer.interventions.grid import json_number
from explorer.interventions.metrics import distance
from explorer.interventions.pair import token_texts
from explorer.runtime import placement
from explorer.training import corpus

if TYPE_CHECKING:
    from explorer.internals.sites import Sites
    from explorer.runtime.loading import LoadedModel
    from explorer.runtime.resolve import ModelRef

__all__ = ["MODES", "REFERENCE_TOKENS", "TOP_K", "Ablation", "ablate", "ablate_loaded", "reference", "replacement"]

MODES = ("zero", "mean")
TOP_K = 10  # next tokens shown before and after
REFERENCE_TOKENS = 128  # tokens of the reference text a mean is taken over
REFERENCE = "the lab corpus's first paragraphs"


@dataclass(frozen=True)
class Ablation:
    """The next-token distribution before and after one ablation."""

    model: str
    text: str
    component: str  # its label, e.g. "head 3.1"
    mode: str
    target: str
    target_id: int
    before: tuple[tuple[str, float], ...]  # the top tokens (text, probability) before
    after: tuple[tuple[str, float], ...]  # the top tokens after
    target_before: float  # the target's probability before and after
    target_after: float
    kl: float  # KL(before || after), nats
    notices: tuple[Notice, ...] = ()
    untrained: bool = False
    seconds: float = 0.0
    device: str = "cpu"  # what ran (placement.ran_on)
    device_name: str = "cpu"
    dtype: str = "float32"

    @property
    def change(self) -> float:
        return self.target_after - self.target_before

    def rows(self) -> list[dict[str, object]]:
        """The table: each token in either top list, its probability before and after."""
        before, after = dict(self.before), dict(self.after)
        tokens = list(before) + [t for t in after if t not in before]
        return [{"token": t, "before": json_number(before.get(t, float("nan"))),
                 "after": json_number(after.get(t, float("nan")))} for t in tokens]

    def to_dict(self) -> dict[str, object]:
        return {"model": self.model, "text": self.text, "component": self.component, "mode": self.mode,
                "target": self.target, "target_prob_before": json_number(self.target_before),
                "target_prob_after": json_number(self.target_after), "change": json_number(self.change),
                "kl": json_number(self.kl), "before": [{"token": t, "prob": json_number(p)} for t, p in self.before],
                "after": [{"token": t, "prob": json_number(p)} for t, p in self.after],
                "notices": texts(self.notices), "untrained": self.untrained, "seconds": round(self.seconds, 3),
                "device": self.device, "device_name": self.device_name, "dtype": self.dtype}


def reference(engine: Engine, tokenizer: object, family: str) -> prompts.Prompt:
    """The reference text a mean ablation averages over, as the model reads it (at most REFERENCE_TOKENS)."""
    text = " ".join(p for doc in corpus.bundled().train[:2] for p in doc)
    ids = tuple(tokenizer(text, add_special_tokens=True, truncation=True,  # type: ignore[operator]
                          max_length=REFERENCE_TOKENS)["input_ids"])
    decoder = (prompts.start_id(engine.model.config),) if family == "encoder-decoder" else None
    return prompts.Prompt(REFERENCE, ids, decoder, len(ids) - 1, len(ids), "", "", "")


def _means(engine: Engine, s: Sites, site: str, layer: int, tokenizer: object) -> torch.Tensor:
    """(X,) the site's mean over the reference text's ordinary tokens."""
    ref = reference(engine, tokenizer, s.family)
    acts, _ = traces.capture(engine, s, site, traces.batch_inputs(engine, ref, 1), 0)
    special = set(getattr(tokenizer, "all_special_ids", []) or [])
    keep = torch.tensor([i not in special for i in ref.ids], device=acts[layer].device)
    return acts[layer][keep].float().mean(dim=0)


def replacement(engine: Engine, s: Sites, component: Component, mode: str, like: torch.Tensor,
                tokenizer: object) -> torch.Tensor:
    """What ``component``'s site is replaced by, shaped like ``like`` (T, X): zeros, or the reference mean."""
    if mode not in MODES:
        raise ExplorerError(f"Unknown ablation mode {mode!r}: use one of {', '.join(MODES)}.")
    if mode == "zero":
        return torch.zeros_like(like)
    return _means(engine, s, component.site, component.layer, tokenizer).to(like.dtype).expand_as(like)


def _top(tokenizer: object, probs: torch.Tensor) -> tuple[tuple[str, float], ...]:
    values, ids = probs.topk(TOP_K)
    names = token_texts(tokenizer, tuple(int(i) for i in ids))  # type: ignore[arg-type]
    return tuple((n, float(v)) for n, v in zip(names, values, strict=True))


def ablate_loaded(loaded: LoadedModel, text: object, component: Component, *, mode: str = "zero",
                  target: object = None, stack: str | None = None) -> Ablation:
    """Ablate ``component`` of a loaded model on ``text``; ``target`` defaults to the top token before."""
    started = time.perf_counter()
    typed = prompts.check_prompt(text, "text")
    engine = engine_for(loaded.model)
    s, _ = stacks.stack_sites(engine.model, stack)
    components.check(component, s)
    prompt = prompts.read(loaded.tokenizer, engine.model.config, typed, s.family)
    with engine.session():
        inputs = traces.batch_inputs(engine, prompt, 1)
        readout = traces.readout_index(prompt, inputs)
        acts, before = traces.capture(engine, s, component.site, inputs, readout)
        value = replacement(engine, s, component, mode, acts[component.layer], loaded.tokenizer)
        after = traces.replaced(engine, s, component.site, inputs, readout, [(component.layer, component.column)],
                                {component.layer: value})[0]
    p_before, p_after = torch.softmax(before.float().cpu(), -1), torch.softmax(after, -1)
    target_id = int(p_before.argmax()) if target is None or not str(target).strip() else \
        prompts.answer_id(loaded.tokenizer, prompt, target, "target")
    phrase = prompts.phrase_notice(loaded.tokenizer, prompt, target, "target")
    notices = tuple(n for n in (phrase, Notice("untrained", UNTRAINED_NOTE) if loaded.untrained else None) if n)
    return Ablation(loaded.key, typed, component.label, mode, token_texts(loaded.tokenizer, (target_id,))[0],
                    target_id, _top(loaded.tokenizer, p_before), _top(loaded.tokenizer, p_after),
                    float(p_before[target_id]), float(p_after[target_id]),
                    float(distance(before.float().cpu()[None], after[None])[0]), notices, loaded.untrained,
                    time.perf_counter() - started, **placement.ran_on(loaded))


def ablate(ref: ModelRef, text: object, component: Component, *, mode: str = "zero", target: object = None,
           stack: str | None = None, device: str | None = None, dtype: str | None = None) -> Ablation:
    """:func:`ablate_loaded` for the model ``ref`` names (resolved by the caller,
    :func:`explorer.interventions.models.local_ref`); the text and mode are checked before it loads."""
    prompts.check_prompt(text, "text")
    if mode not in MODES:
        raise ExplorerError(f"Unknown ablation mode {mode!r}: use one of {', '.join(MODES)}.")
    components.check_config(component, ref.config())  # a layer or head the model lacks: said before it loads
    loaded = models.load(ref, device=device, dtype=dtype)
    return ablate_loaded(loaded, text, component, mode=mode, target=target, stack=stack)

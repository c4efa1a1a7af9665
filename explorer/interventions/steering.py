"""Steering by activation addition (Turner et al. 2023): a direction in the residual stream added at one layer,
and the text a decoder writes with and without it, side by side, from the same seed.

The direction is the difference of mean activations after block ``layer``: the mean over the positive prompts minus
the mean over the negative ones, each prompt averaged over its ordinary tokens (special tokens such as Gemma's
``<bos>``, whose activations are outliers, are left out); a contrast pair is two lists of one. While generating,
``coefficient * direction`` is added to the block's output at every position, the prompt's and each new token's.

Both texts come from the same loop (:func:`decode`, with a KV cache, greedy by default or sampled from one seeded
generator): the unsteered one runs the shared model as it is, the steered one runs nnsight's trace of the engine's
view, so a coefficient of 0 reproduces the unsteered text exactly.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import nnsight
import torch

from explorer.core.errors import ExplorerError
from explorer.core.handles import Tokenizer
from explorer.core.labels import UNTRAINED_NOTE
from explorer.core.notices import Notice, texts
from explorer.internals import sites
from explorer.interventions import components, models, prompts
from explorer.interventions.engine import Engine, engine_for
from explorer.runtime import cancel, placement
from explorer.runtime.offload import input_device
from explorer.tasks.generation.nexttoken import takes_logits_to_keep
from explorer.tasks.generation.steps import eos_ids

if TYPE_CHECKING:
    from transformers import Cache

    from explorer.runtime.loading import LoadedModel
    from explorer.runtime.resolve import ModelRef

__all__ = ["MAX_NEW_TOKENS", "MAX_PROMPTS", "STRATEGIES", "Steering", "decode", "direction", "steer", "steer_loaded"]

MAX_NEW_TOKENS = 64  # two generations per request, one forward per token each
MAX_PROMPTS = 16  # prompts per list a direction averages over
STRATEGIES = ("greedy", "sample")
Step = Callable[[torch.Tensor, "Cache | None"], tuple[torch.Tensor, "Cache | None"]]  # ids (1, n) -> logits (V,)


@dataclass(frozen=True)
class Steering:
    """A generation with and without a steering vector."""

    model: str
    prompt: str
    layer: int
    coefficient: float
    positive: tuple[str, ...]
    negative: tuple[str, ...]
    direction_norm: float  # the direction's L2 norm (before the coefficient)
    text: str  # the steered continuation
    unsteered: str
    strategy: str
    seed: int
    max_new_tokens: int
    notices: tuple[Notice, ...] = ()
    untrained: bool = False
    seconds: float = 0.0
    device: str = "cpu"  # what ran (placement.ran_on)
    device_name: str = "cpu"
    dtype: str = "float32"

    def to_dict(self) -> dict[str, object]:
        return {"model": self.model, "prompt": self.prompt, "text": self.text, "unsteered": self.unsteered,
                "layer": self.layer, "coefficient": self.coefficient, "positive": list(self.positive),
                "negative": list(self.negative), "direction_norm": round(self.direction_norm, 6),
                "strategy": self.strategy, "seed": self.seed, "max_new_tokens": self.max_new_tokens,
                "notices": texts(self.notices), "untrained": self.untrained, "seconds": round(self.seconds, 3),
                "device": self.device, "device_name": self.device_name, "dtype": self.dtype}


def _check_lists(positive: Sequence[str], negative: Sequence[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    out = []
    for items, what in ((positive, "positive"), (negative, "negative")):
        kept = tuple(prompts.check_prompt(t, f"{what} prompt") for t in items if isinstance(t, str) and t.strip())
        if not kept:
            raise ExplorerError(f"The {what} prompts are empty: type at least one (e.g. 'Love' and 'Hate').")
        if len(kept) > MAX_PROMPTS:
            raise ExplorerError(f"{len(kept)} {what} prompts: a direction averages at most {MAX_PROMPTS}.")
        out.append(kept)
    return out[0], out[1]


def check_settings(coefficient: float, max_new_tokens: int, strategy: str) -> None:
    """One message per bad setting, before any work."""
    if not isinstance(coefficient, int | float) or not math.isfinite(coefficient):
        raise ExplorerError(f"The coefficient must be a finite number, not {coefficient!r}.")
    if not isinstance(max_new_tokens, int) or not 1 <= max_new_tokens <= MAX_NEW_TOKENS:
        raise ExplorerError(f"max_new_tokens must be a whole number from 1 to {MAX_NEW_TOKENS}, not "
                            f"{max_new_tokens!r}.")
    if strategy not in STRATEGIES:
        raise ExplorerError(f"Unknown strategy {strategy!r}: use one of {', '.join(STRATEGIES)}.")


def _mean_activation(engine: Engine, s: sites.Sites, layer: int, tokenizer: Tokenizer, text: str) -> torch.Tensor:
    """(d_model,) block ``layer``'s output averaged over ``text``'s ordinary tokens."""
    ids = list(tokenizer(text, add_special_tokens=True)["input_ids"])[:prompts.MAX_TOKENS]
    special = set(getattr(tokenizer, "all_special_ids", []) or [])
    keep = [i for i, t in enumerate(ids) if t not in special] or list(range(len(ids)))
    x = torch.tensor([ids], device=input_device(engine.model))
    with engine.envoy.trace(input_ids=x, use_cache=False) as tracer:
        out = nnsight.save(sites.first(engine.at(s.block(layer)).output)[0, keep].float().mean(dim=0))
        tracer.stop()  # nothing past the layer is needed
    return out


def direction(engine: Engine, s: sites.Sites, layer: int, tokenizer: Tokenizer, positive: Sequence[str],
              negative: Sequence[str]) -> torch.Tensor:
    """(d_model,) mean activation of the positive prompts minus that of the negative ones, after block ``layer``."""
    means = [torch.stack([_mean_activation(engine, s, layer, tokenizer, t) for t in group]).mean(dim=0)
             for group in (positive, negative)]
    return means[0] - means[1]


def _plain_step(model: torch.nn.Module) -> Step:
    keep = {"logits_to_keep": 1} if takes_logits_to_keep(model) else {}

    def step(ids: torch.Tensor, cache: Cache | None) -> tuple[torch.Tensor, Cache | None]:
        out = model(input_ids=ids, past_key_values=cache, use_cache=True, **keep)
        return out.logits[0, -1], out.past_key_values
    return step


def _steered_step(engine: Engine, s: sites.Sites, layer: int, vector: torch.Tensor) -> Step:
    keep = {"logits_to_keep": 1} if takes_logits_to_keep(engine.model) else {}

    def step(ids: torch.Tensor, cache: Cache | None) -> tuple[torch.Tensor, Cache | None]:
        with engine.envoy.trace(input_ids=ids, past_key_values=cache, use_cache=True, **keep):
            hidden = sites.first(engine.at(s.block(layer)).output)
            hidden += vector.to(hidden.dtype)  # every position this forward computes
            out = nnsight.save(engine.envoy.output)
        return out.logits[0, -1], out.past_key_values
    return step


def decode(step: Step, ids: list[int], max_new_tokens: int, stop: tuple[int, ...], device: torch.device,
           strategy: str = "greedy", seed: int = 0, temperature: float = 1.0) -> tuple[list[int], Notice | None]:
    """New token ids after ``ids``: greedy, or sampled from a generator seeded with ``seed``; stops at ``stop``. A
    server request out of time keeps the tokens so far, and the notice says so."""
    generator = torch.Generator().manual_seed(seed)
    new: list[int] = []
    logits, cache = step(torch.tensor([ids], device=device), None)
    for _ in range(max_new_tokens):
        try:
            cancel.check()
        except cancel.RequestStopped as err:
            if err.reason == "gone" or not new:
                raise
            return new, Notice("stopped", f"{err} Generated: {len(new)} of {max_new_tokens} tokens.")
        if strategy == "greedy":
            token = int(logits.argmax())
        else:
            probs = torch.softmax(logits.float().cpu() / temperature, dim=-1)
            token = int(torch.multinomial(probs, 1, generator=generator))
        new.append(token)
        if token in stop or len(new) == max_new_tokens:
            break
        logits, cache = step(torch.tensor([[token]], device=device), cache)
    return new, None


def steer_loaded(loaded: LoadedModel, text: object, positive: Sequence[str], negative: Sequence[str], *, layer: int,
                 coefficient: float, max_new_tokens: int = 24, strategy: str = "greedy", seed: int = 0) -> Steering:
    """Generate from ``text`` with and without the steering vector (see the module docstring)."""
    started = time.perf_counter()
    prompt = prompts.check_prompt(text, "prompt")
    pos, neg = _check_lists(positive, negative)
    check_settings(coefficient, max_new_tokens, strategy)
    engine = engine_for(loaded.model)
    s = engine.sites
    if s.family != "decoder":
        raise ExplorerError(f"Steering compares two generations, and a {s.family} does not continue a text here: "
                            f"pick a decoder, e.g. {models.BUNDLED}.")
    if not isinstance(layer, int) or not 0 <= layer < s.layers:
        raise ExplorerError(f"Layer {layer} is out of range: this model has layers 0 to {s.layers - 1}.")
    ids = list(loaded.tokenizer(prompt, add_special_tokens=True)["input_ids"])[-prompts.MAX_TOKENS * 4:]
    device, stop = input_device(loaded.model), eos_ids(loaded.model)
    with torch.no_grad():  # the shared model as it is: nothing of nnsight on its path
        plain, cut_plain = decode(_plain_step(loaded.model), ids, max_new_tokens, stop, device, strategy, seed)
    with engine.session():
        vector = direction(engine, s, layer, loaded.tokenizer, pos, neg)
        steered, cut = decode(_steered_step(engine, s, layer, coefficient * vector), ids, max_new_tokens, stop,
                              device, strategy, seed)
    words = [loaded.tokenizer.decode(t, skip_special_tokens=True) for t in (steered, plain)]
    notices = tuple(n for n in (cut_plain, cut, Notice("untrained", UNTRAINED_NOTE) if loaded.untrained else None)
                    if n is not None)
    return Steering(loaded.key, prompt, layer, float(coefficient), pos, neg, float(vector.norm()), words[0],
                    words[1], strategy, seed, max_new_tokens, notices, loaded.untrained, time.perf_counter() - started,
                    **placement.ran_on(loaded))


def steer(ref: ModelRef, text: object, positive: Sequence[str], negative: Sequence[str], *, layer: int,
          coefficient: float, max_new_tokens: int = 24, strategy: str = "greedy", seed: int = 0,
          device: str | None = None, dtype: str | None = None) -> Steering:
    """:func:`steer_loaded` for the model ``ref`` names (resolved by the caller,
    :func:`explorer.interventions.models.local_ref`); every setting is checked before it loads."""
    prompts.check_prompt(text, "prompt")
    _check_lists(positive, negative)
    check_settings(coefficient, max_new_tokens, strategy)
    components.check_config(components.Component("layer", int(layer)), ref.config())  # before the model loads
    loaded = models.load(ref, device=device, dtype=dtype)
    return steer_loaded(loaded, text, positive, negative, layer=layer, coefficient=coefficient,
                        max_new_tokens=max_new_tokens, strategy=strategy, seed=seed)

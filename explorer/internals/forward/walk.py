"""One walk through a model: every step recomputed from its weights and checked against its own forward.

:func:`walk` hooks the modules its card names (:mod:`explorer.internals.forward.hooks`), runs the model once,
then recomputes every operation in the order the model runs it (the family's file over the shared framework,
:mod:`explorer.internals.forward.family`), each step compared with the hooked value at the same point. The final
logits are compared with the model's own output, and ``top`` is read from the recomputed ones: the next token
for a decoder, the blank for a masked LM, the decoder's first token for an encoder-decoder.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Iterator
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING

import torch
from torch import nn

from explorer.architecture.anatomy import Card, Resolved
from explorer.architecture.anatomy.card import Attention, Stack
from explorer.core.errors import ExplorerError
from explorer.core.handles import Tokenizer
from explorer.core.notices import Notice, texts
from explorer.internals.forward import families, hooks, inputs, ops
from explorer.internals.forward.family import Ctx, Family
from explorer.internals.forward.hooks import Point
from explorer.internals.forward.recorder import Recorder
from explorer.internals.forward.steps import Step
from explorer.internals.located import Located, has, locate
from explorer.runtime.offload import input_device
from explorer.runtime.placement import ran_on

if TYPE_CHECKING:  # typing only: no runtime import of the loader's model types
    from explorer.runtime.loading import LoadedModel

__all__ = ["MAX_TEMPERATURE", "MAX_TOP_K", "Walk", "check_options", "check_range", "walk"]

MAX_TOP_K = 50
MAX_TEMPERATURE = 100.0


@dataclass(frozen=True)
class Walk:
    """Every step of one forward pass, the prediction read from the recomputed logits, and how far they are from
    the model's own."""

    model: str
    model_type: str
    family: str
    tokens: tuple[str, ...]  # the encoder's (or only stack's) tokens
    decoder_tokens: tuple[str, ...]
    card: Resolved
    steps: tuple[Step, ...]
    read_position: int  # in the decoder's tokens for an encoder-decoder
    top: tuple[tuple[str, float], ...]  # (token, probability) at the read position, most likely first
    temperature: float
    logits_max_abs_error: float | None  # recomputed logits against the model's own forward, every position
    notices: tuple[Notice, ...] = ()
    untrained: bool = False
    seconds: float = 0.0
    device: str = "cpu"
    device_name: str = "cpu"
    dtype: str = "float32"

    def to_dict(self) -> dict[str, object]:
        """The CLI's JSON (the tensors left out: the steps are not copied whole)."""
        plain = {f.name: getattr(self, f.name) for f in fields(self)
                 if f.name not in ("card", "steps", "top", "notices", "tokens", "decoder_tokens")}
        return {**plain, "tokens": list(self.tokens), "decoder_tokens": list(self.decoder_tokens),
                "card": self.card.to_dict(), "steps": [s.to_dict() for s in self.steps],
                "top": [{"token": t, "probability": p} for t, p in self.top], "notices": texts(self.notices)}


def check_range(numbers: Resolved, layer: int | None, head: int | None) -> None:
    """Refuse, from the config alone, a layer or a head the model does not have."""
    layers = max(s.layers for s in numbers.stacks)
    heads = max(s.heads for s in numbers.stacks)
    if layer is not None and not 0 <= layer < layers:
        raise ExplorerError(f"Layer {layer} is out of range: this model has layers 0 to {layers - 1}.")
    if head is not None and not 0 <= head < heads:
        raise ExplorerError(f"Head {head} is out of range: this model has heads 0 to {heads - 1} in each layer.")


def _attention_points(found: Located, spec: Attention | None, i: int) -> Iterator[Point]:
    if spec is None:
        return
    for path in (spec.q, spec.k, spec.v, spec.qkv, spec.q_norm, spec.k_norm, spec.out):
        if path:
            yield Point(found.path(path, i))
    yield Point(found.path(spec.out, i), "in")


def _stack_points(found: Located, stack: Stack) -> Iterator[Point]:
    e, b = stack.embeddings, stack.block
    for path in (e.token, e.positions, e.token_types, e.projection, e.norm, stack.final_norm, b.bias):
        if path:
            yield Point(found.path(path))
            yield Point(found.path(path), "in")
    for i in range(found.shape(stack.name).layers):
        yield from _attention_points(found, b.attention, i)
        yield from _attention_points(found, b.cross, i)
        for path in (b.path, *b.norms, *b.cross_norms, b.neurons):
            yield Point(found.path(path, i))
            yield Point(found.path(path, i), "in")
        for path in (b.mlp_up, b.mlp_gate, *(b.mlp_gated or ())):
            if path:
                yield Point(found.path(path, i))


def _points(ctx: Ctx, family: Family) -> list[Point]:
    """Every module the card names, for every layer, and the family's head modules (those the model has)."""
    found = ctx.found
    wanted = {p for s in found.card.stacks if s.name in found.stacks for p in _stack_points(found, s)}
    wanted.update(family.head_points(ctx))
    return sorted((p for p in wanted if has(found.model, p.path)), key=lambda p: (p.path, p.io))


def _inputs(model: nn.Module, card: Card, framed: inputs.Framed, device: torch.device) -> dict[str, object]:
    """The forward's arguments; a decoder's keeps only its last position's logits, the one read."""
    ids = torch.tensor([framed.ids], device=device)
    if card.family == "encoder-decoder":
        return {"input_ids": ids, "decoder_input_ids": torch.tensor([framed.decoder_ids], device=device),
                "use_cache": False}
    if card.family != "decoder":
        return {"input_ids": ids}
    keep = "logits_to_keep" in inspect.signature(model.forward).parameters
    return {"input_ids": ids, "use_cache": False, **({"logits_to_keep": 1} if keep else {})}


def _own_logits(output: object, back: int) -> torch.Tensor | None:
    """The model's own logits at the read position (``back``: counted from the end), float32."""
    logits = getattr(output, "logits", None)
    return logits[0, back].float() if isinstance(logits, torch.Tensor) else None


def _top(tokenizer: Tokenizer, logits: torch.Tensor, temperature: float, k: int,
         ) -> tuple[torch.Tensor, tuple[tuple[str, float], ...]]:
    probs = ops.softmax(logits / temperature)
    values, ids = probs.topk(min(k, probs.shape[-1]))
    decode = tokenizer.decode
    return probs, tuple((str(decode([int(i)])), round(float(p), 8)) for p, i in zip(values, ids, strict=True))


def check_options(top_k: int, temperature: float) -> None:
    if isinstance(top_k, bool) or not isinstance(top_k, int) or not 1 <= top_k <= MAX_TOP_K:
        raise ExplorerError(f"top-k must be a whole number from 1 to {MAX_TOP_K} (got {top_k!r}).")
    if not isinstance(temperature, int | float) or not 0 < temperature <= MAX_TEMPERATURE:
        raise ExplorerError(f"The temperature must be a number above 0 and at most {MAX_TEMPERATURE:g} "
                            f"(got {temperature!r}).")


def _ready(model: nn.Module, card: Card | None, layer: int | None, head: int | None) -> tuple[Located, Family]:
    if getattr(model, "hf_device_map", None) is not None:
        raise ExplorerError("This model is spread over several devices (offloaded): the step-through reads every "
                            "weight on one device. Pick a smaller model, or a machine with more memory.")
    found = locate(model, card)
    family = families.family_of(found.card.model_type)
    check_range(found.numbers, layer, head)
    missing = [s.name for s in found.card.stacks if s.name not in found.stacks]
    if missing:
        raise ExplorerError(f"This model has no {' or '.join(missing)} stack here: the step-through walks a "
                            f"{found.card.label} whole. Load it with its full class.")
    return found, family


def _logits_error(mine: torch.Tensor | None, theirs: torch.Tensor | None) -> float | None:
    if mine is None or theirs is None or mine.shape != theirs.shape:
        return None
    return float((mine - theirs.to(mine.device)).abs().max())


def _notices(loaded: LoadedModel, framed: inputs.Framed) -> tuple[Notice, ...]:
    notes = framed.notices
    if loaded.dtype != "float32":
        notes += (Notice("info", f"The model ran in {loaded.dtype}; the steps are recomputed in float32 from its "
                                 f"weights, so they differ from its own by {loaded.dtype}'s rounding."),)
    if loaded.untrained:
        notes += (Notice("untrained", "Untrained weights: the prediction is noise."),)
    return notes


def _captured(model: nn.Module, found: Located, family: Family, framed: inputs.Framed,
              ) -> tuple[hooks.Captured, dict[str, torch.Tensor]]:
    """The model's own forward with the card's modules hooked, and each stack's ids (on the model's device)."""
    device = input_device(model)
    ids: dict[str, torch.Tensor] = {found.card.stacks[0].name: torch.tensor(framed.ids, device=device)}
    if framed.decoder_ids:
        ids[found.card.main.name] = torch.tensor(framed.decoder_ids, device=device)
    given = _inputs(model, found.card, framed, device)
    draft = Ctx(model, found, Recorder(hooks.Captured({}, None)), ids, framed.read)
    with hooks.lock_of(model):
        return hooks.capture(model, _points(draft, family), lambda: model(**given)), ids


def _recompute(ctx: Ctx, family: Family, tokenizer: Tokenizer, top_k: int, temperature: float,
               ) -> tuple[tuple[tuple[str, float], ...], float | None]:
    """Every step, then the probabilities: (top, the read logits' error against the model's own)."""
    with torch.inference_mode():
        logits = family.walk(ctx)
        if logits is None:
            return (), None
        back = ctx.read - int(ctx.ids[ctx.card.main.name].shape[0])
        error = _logits_error(logits, _own_logits(ctx.rec.captured.output, back))
        probs, top = _top(tokenizer, logits, temperature, top_k)
        ctx.rec.add(f"probabilities (softmax at temperature {temperature:g})", "probs", probs,
                    stack=ctx.card.main.name, axes=("vocabulary",))
        return top, error


def walk(loaded: LoadedModel, text: str, *, layer: int | None = None, head: int | None = None, top_k: int = 5,
         temperature: float = 1.0, keep_tensors: bool = True, card: Card | None = None) -> Walk:
    """Every step of ``loaded`` on ``text`` (see the module docstring). ``layer`` keeps that layer's steps only
    (the embeddings and the head are kept too); ``head`` keeps one head of each step that has a head axis;
    ``card`` walks the model as another card describes it (a card that does not fit shows large errors)."""
    started = time.perf_counter()
    check_options(top_k, temperature)
    model, tokenizer = loaded.model, loaded.tokenizer
    found, family = _ready(model, card, layer, head)
    framed = inputs.frame(tokenizer, found.card, model.config, inputs.check_text(text))
    captured, ids = _captured(model, found, family, framed)
    shape = found.shape(found.card.main.name)
    rec = Recorder(captured, head=head, kv_group=shape.heads // max(1, shape.kv_heads), keep_tensors=keep_tensors,
                   layers=None if layer is None else {layer})
    top, error = _recompute(Ctx(model, found, rec, ids, framed.read), family, tokenizer, top_k, float(temperature))
    steps = rec.finish(error, "the model's own logits" if error is not None else None)
    decode = tokenizer.decode
    return Walk(loaded.key, found.card.model_type, found.card.family, tuple(decode([i]) for i in framed.ids),
                tuple(decode([i]) for i in framed.decoder_ids), found.numbers, steps, framed.read, top,
                float(temperature), error, _notices(loaded, framed), loaded.untrained,
                round(time.perf_counter() - started, 3), **ran_on(loaded))

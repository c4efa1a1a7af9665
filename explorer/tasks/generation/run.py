"""Whole generations for the CLI and the decoding lab: load the decoder, decode, compare strategies.

``generate`` and ``compare`` drive the same step-by-step decoders the page advances one token
at a time (:class:`~explorer.tasks.generation.decoder.TokenDecoder`,
:class:`~explorer.tasks.generation.beam.BeamDecoder`), so a page's Step button and a CLI run give
the same tokens for the same settings and seed.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from explorer.core.notices import Notice, texts
from explorer.runtime import bundled, capacity, loading, placement
from explorer.runtime.placement import ran_on
from explorer.runtime.resolve import ModelRef, resolve
from explorer.tasks.generation.beam import BeamDecoder
from explorer.tasks.generation.decoder import TokenDecoder
from explorer.tasks.generation.fastpath import dynamic_reason
from explorer.tasks.generation.prompt import Prompt, encode_prompt, prompt_limit
from explorer.tasks.generation.repetition import RepetitionPoint, repetition_curve
from explorer.tasks.generation.steps import Step
from explorer.tasks.generation.strategy import MIN_TEMPERATURE, STRATEGIES, DecodingSettings

if TYPE_CHECKING:  # typing only: no runtime import of the loader
    from explorer.runtime.loading import LoadedModel

__all__ = ["Generation", "compare", "generate", "load_decoder", "make_decoder", "result", "start"]

Decoder = TokenDecoder | BeamDecoder


@dataclass(frozen=True)
class Generation:
    """The continuation one strategy produced, token by token."""

    model: str
    settings: DecodingSettings
    prompt: str
    text: str  # the new tokens decoded (special tokens dropped)
    steps: tuple[Step, ...]
    finished: bool  # ended (end-of-sequence or max_new_tokens), not just paused
    seconds: float
    notices: tuple[Notice, ...] = ()
    device: str = "cpu"  # what ran, from the loaded model
    device_name: str = "cpu"  # e.g. "cuda:0 (NVIDIA H100 80GB HBM3)"
    dtype: str = "float32"

    @property
    def token_ids(self) -> list[int]:
        return [s.token_id for s in self.steps]

    @property
    def tokens(self) -> list[str]:
        return [s.token for s in self.steps]

    def repetition(self, n: int = 3) -> list[RepetitionPoint]:
        return repetition_curve(self.token_ids, n)

    def to_dict(self) -> dict[str, object]:
        """The CLI's JSON (``generate --json``)."""
        return {"model": self.model, "strategy": self.settings.strategy, "prompt": self.prompt, "text": self.text,
                "token_ids": self.token_ids, "tokens": self.tokens, "steps": [s.to_dict() for s in self.steps],
                "device": self.device, "device_name": self.device_name, "dtype": self.dtype}

    @property
    def notice_texts(self) -> list[str]:
        return texts(self.notices)


def load_decoder(ref: ModelRef, progress: bundled.Progress | None = None, *, purpose: str = "the Decoding lab",
                 device: str | None = None, dtype: str | None = None) -> LoadedModel:
    """The causal LM ``ref`` names, loaded on ``device`` in ``dtype`` (:mod:`explorer.runtime.placement`); the
    bundled Gemma 3 270M is converted first (once) with ``progress``. Another kind of model is refused in words
    naming ``purpose`` (the page or command)."""
    placement.Placement.parse(device, dtype).resolve()  # a bad choice is refused before a conversion starts
    if ref.spec == bundled.KEY:
        bundled.ensure_converted(ref.models_dir, progress)
        if not ref.ready:  # resolved before its weights were converted: they are on disk now
            ref = resolve(ref.spec, ref.models_dir)
    return loading.load_model(ref, "causal-lm", purpose=purpose, device=device, dtype=dtype)


def make_decoder(loaded: LoadedModel, prompt: Prompt, settings: DecodingSettings) -> Decoder:
    """The step-by-step decoder for the settings' strategy (nothing computed yet)."""
    settings = settings.validated(capacity.model_facts(loaded.model))
    cls = BeamDecoder if settings.effective_strategy == "beam" else TokenDecoder
    return cls(loaded.model, loaded.tokenizer, prompt.ids, settings)


def start(loaded: LoadedModel, text: str, settings: DecodingSettings) -> tuple[Prompt, Decoder]:
    """Encode the prompt (cut to the window) and make its decoder."""
    settings = settings.validated(capacity.model_facts(loaded.model))  # the device's caps, with their reasons
    cap = prompt_limit(loaded.model)
    prompt = encode_prompt(loaded.tokenizer, text, cap.value, cap.reason)
    return prompt, make_decoder(loaded, prompt, settings)


def _notices(loaded: LoadedModel, prompt: Prompt, settings: DecodingSettings) -> tuple[Notice, ...]:
    out = list(prompt.notices)
    if settings.effective_strategy != settings.strategy:
        out.append(Notice("info", f"Temperature {settings.temperature:g} is below {MIN_TEMPERATURE:g}: sampling that "
                                  f"cold is greedy decoding, so {settings.strategy} ran as greedy."))
    if loaded.untrained:
        out.append(Notice("untrained", "Untrained weights: the tokens are noise."))
    slow = _slow_path(loaded, prompt, settings)
    if slow:
        out.append(Notice("info", slow))
    return tuple(out)


def _slow_path(loaded: LoadedModel, prompt: Prompt, settings: DecodingSettings) -> str | None:
    """On a GPU, why greedy/sampling runs without the static cache and CUDA graphs (None: it has them). The
    CPU is eager whatever the cache; beam search keeps the dynamic cache, reordered, as ``generate`` does."""
    if getattr(loaded, "device", "cpu") != "cuda" or settings.effective_strategy == "beam":
        return None
    return dynamic_reason(loaded.model, len(prompt.ids) + settings.max_new_tokens)


def result(loaded: LoadedModel, prompt: Prompt, decoder: Decoder, seconds: float = 0.0) -> Generation:
    """The generation so far of a (possibly unfinished) decoder."""
    steps = tuple(decoder.steps)
    text = loaded.tokenizer.decode([s.token_id for s in steps], skip_special_tokens=True)
    return Generation(loaded.key, decoder.settings, prompt.text, text, steps, decoder.finished, seconds,
                      _notices(loaded, prompt, decoder.settings), **ran_on(loaded))


def generate(loaded: LoadedModel, text: str, settings: DecodingSettings) -> Generation:
    """Decode ``text`` to the end with one strategy."""
    prompt, decoder = start(loaded, text, settings)
    began = time.perf_counter()
    decoder.run()
    return result(loaded, prompt, decoder, time.perf_counter() - began)


def compare(loaded: LoadedModel, text: str, base: DecodingSettings,
            strategies: Sequence[str] = STRATEGIES) -> tuple[Generation, ...]:
    """The same prompt, length and seed through several strategies, side by side."""
    return tuple(generate(loaded, text, replace(base, strategy=s)) for s in dict.fromkeys(strategies))

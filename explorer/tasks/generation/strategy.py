"""Decoding settings: the strategy and its knobs, checked once, and the logits processors they mean.

The strategies are transformers' own: ``greedy`` (argmax), ``sample`` (temperature only),
``top-k`` and ``top-p`` (temperature, then keep the k best / the smallest set holding p of the
mass), and ``beam``. The filters are transformers' ``TemperatureLogitsWarper``,
``TopKLogitsWarper`` and ``TopPLogitsWarper`` in the order ``generate`` applies them, so the
same seed samples the same tokens as ``torch.manual_seed(seed); model.generate(do_sample=True)``.

>>> DecodingSettings("top-p", temperature=0.7, top_p=0.9).validated().effective_strategy
'top-p'
>>> DecodingSettings("sample", temperature=0.0).validated().effective_strategy
'greedy'
>>> DecodingSettings("sample", temperature=1e-45).validated().effective_strategy  # too cold to sample
'greedy'
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace
from typing import Literal

from explorer.core.errors import ExplorerError, shorten
from explorer.runtime import capacity
from explorer.runtime.capacity import CPU_NEW_TOKENS, CPU_PROMPT_TOKENS

__all__ = ["MAX_BEAMS", "MAX_TEMPERATURE", "MIN_TEMPERATURE", "MAX_NEW_TOKENS", "MAX_PROMPT_TOKENS", "MAX_TOP_K",
           "STRATEGIES", "TOP_ALTERNATIVES", "DecodingSettings", "Strategy", "logits_processors"]

Strategy = Literal["greedy", "sample", "top-k", "top-p", "beam"]
STRATEGIES: tuple[str, ...] = ("greedy", "sample", "top-k", "top-p", "beam")
MAX_NEW_TOKENS = CPU_NEW_TOKENS  # the CPU cap (explorer.runtime.capacity.new_tokens gives the device's)
MAX_BEAMS = 8  # each beam is a row of every forward pass
MAX_TOP_K = 1000
# The model's context is far longer (32,768 for Gemma 3 270M), but one forward pass over 1,024
# tokens already takes several seconds on a 2-core CPU; longer prompts are cut with a notice.
# The CPU cap; explorer.runtime.capacity.prompt_tokens gives the device's (the context where KV caches fit).
MAX_PROMPT_TOKENS = CPU_PROMPT_TOKENS
# Below this, logits / T overflow float32 (1e-45 gives inf - inf = NaN in the softmax) long before
# the distribution is anything but one-hot already: such a temperature runs as greedy, with a notice.
MIN_TEMPERATURE = 0.01
MAX_TEMPERATURE = 100.0  # flatter than this is uniform noise for any model
TOP_ALTERNATIVES = 5  # alternatives recorded at every step (hover text, CLI "top")


@dataclass(frozen=True)
class DecodingSettings:
    """One strategy and its knobs (the knobs another strategy uses are ignored)."""

    strategy: str = "greedy"
    temperature: float = 1.0  # 0 (or below MIN_TEMPERATURE) means greedy
    top_k: int = 50
    top_p: float = 0.9
    beams: int = 4
    max_new_tokens: int = 20
    seed: int = 0

    @property
    def effective_strategy(self) -> str:
        """The strategy actually run: sampling below MIN_TEMPERATURE (0 included) is greedy."""
        sampling = self.strategy in ("sample", "top-k", "top-p")
        return "greedy" if sampling and self.temperature < MIN_TEMPERATURE else self.strategy

    def to_dict(self) -> dict[str, object]:
        return asdict(self)

    def validated(self, facts: capacity.DeviceFacts | None = None) -> DecodingSettings:
        """These settings if every knob is in range, else one ExplorerError saying what to change.

        ``facts``: the device that decodes (:func:`explorer.runtime.capacity.model_facts`); its cap on new
        tokens applies (:func:`explorer.runtime.capacity.new_tokens`: 200 on a CPU, 1,024 on a GPU) and a
        refusal quotes its reason. None: the CPU's cap, the narrowest (checks before a model is loaded).
        """
        if self.strategy not in STRATEGIES:
            raise ExplorerError(f"Unknown strategy {shorten(self.strategy)!r}: use one of {', '.join(STRATEGIES)}.")
        _check_number(self.temperature, "temperature")
        if not 0 <= self.temperature <= MAX_TEMPERATURE:
            raise ExplorerError(f"Temperature must be from 0 to {MAX_TEMPERATURE:g} (got {self.temperature:g}); "
                                "0 means greedy.")
        _check_number(self.top_p, "top-p")
        if not 0 < self.top_p <= 1:
            raise ExplorerError(f"top-p must be in (0, 1] (got {self.top_p:g}): 0.9 keeps the tokens holding "
                                "90% of the probability.")
        _check_range(self.top_k, "top-k", 1, MAX_TOP_K)
        _check_range(self.beams, "The number of beams", 1, MAX_BEAMS)
        cap = capacity.new_tokens(facts) if facts is not None else None
        _check_range(self.max_new_tokens, "max-new-tokens", 1, cap.value if cap else MAX_NEW_TOKENS,
                     cap.reason if cap else "")
        _check_range(self.seed, "The seed", 0, 2**32 - 1)
        return replace(self, temperature=float(self.temperature), top_p=float(self.top_p))


def _check_number(value: object, name: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ExplorerError(f"{name} must be a finite number, not {shorten(repr(value))}.")


def _check_range(value: object, name: str, lo: int, hi: int, why: str = "") -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ExplorerError(f"{name} must be a whole number, not {shorten(repr(value))}.")
    if not lo <= value <= hi:
        because = f" here ({why})" if why else ""
        raise ExplorerError(f"{name} must be between {lo:,} and {hi:,}{because} (got {value:,}).")


def logits_processors(settings: DecodingSettings):
    """The warpers ``generate(do_sample=True, ...)`` builds for these settings, in its order."""
    from transformers.generation.logits_process import (
        LogitsProcessorList,
        TemperatureLogitsWarper,
        TopKLogitsWarper,
        TopPLogitsWarper,
    )

    out = LogitsProcessorList()
    if settings.temperature != 1.0:
        out.append(TemperatureLogitsWarper(settings.temperature))
    if settings.strategy == "top-k":
        out.append(TopKLogitsWarper(top_k=settings.top_k))
    if settings.strategy == "top-p" and settings.top_p < 1.0:
        out.append(TopPLogitsWarper(top_p=settings.top_p))
    return out

"""Greedy and sampled decoding one token at a time, keeping the KV cache between steps.

The first ``step()`` runs the whole prompt once; every later step feeds only the newest token
and reuses the cache, exactly as ``model.generate`` does, so the prefix is never recomputed.
Sampling uses a private ``torch.Generator`` seeded with the settings' seed and draws with
``torch.multinomial`` after transformers' own warpers: the same seed gives the same tokens as
``torch.manual_seed(seed); model.generate(do_sample=True, ...)``, and never touches the
global random state other users of the process share.

Speed: the cache is a ``StaticCache`` sized prompt + max_new_tokens where the model supports one
(written in place, no per-step ``torch.cat``), and on CUDA the one-token step runs compiled with CUDA
graphs as in ``generate(cache_implementation="static")`` (:mod:`explorer.tasks.generation.fastpath`; eager
on the CPU). Greedy picks and ranks the alternatives on the model's device: only the token, the
five alternatives and one probability cross to the CPU, never the vocabulary-sized logits.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from explorer.core.handles import Tokenizer
from explorer.runtime import cancel, capacity
from explorer.tasks.generation.fastpath import make_cache, step_call
from explorer.tasks.generation.nexttoken import forward_last
from explorer.tasks.generation.steps import Step, eos_ids, make_step
from explorer.tasks.generation.strategy import DecodingSettings, logits_processors

if TYPE_CHECKING:  # typing only: transformers loads with the first model
    from transformers import Cache, PreTrainedModel

__all__ = ["TokenDecoder"]


class TokenDecoder:
    """Greedy / sample / top-k / top-p decoding of one prompt, advanced with :meth:`step`."""

    def __init__(self, model: PreTrainedModel, tokenizer: Tokenizer, prompt_ids: tuple[int, ...],
                 settings: DecodingSettings) -> None:
        self.model, self.tokenizer = model, tokenizer
        self.settings = settings.validated(capacity.model_facts(model))  # the new-token cap of the model's device
        self._sampling = self.settings.effective_strategy != "greedy"
        self._processors = logits_processors(self.settings) if self._sampling else None
        self._generator = torch.Generator().manual_seed(self.settings.seed)
        self._ids = torch.tensor([prompt_ids], dtype=torch.long)  # (1, T + steps): warpers may read it
        self._pending = self._ids  # what the next forward reads: the prompt, then one token
        self._cache: Cache | None = make_cache(model, len(prompt_ids) + self.settings.max_new_tokens)  # None: dynamic
        self._step_call = step_call(model, self._cache)  # compiled on CUDA with a static cache, else eager
        self._eos = set(eos_ids(model))
        self.steps: list[Step] = []
        self.finished = False

    @property
    def token_ids(self) -> list[int]:
        return [s.token_id for s in self.steps]

    def _choose(self, logits: torch.Tensor) -> int:
        """The next token from the last-position logits (1, V), as ``generate`` picks it."""
        if not self._sampling:
            return int(torch.argmax(logits, dim=-1))
        assert self._processors is not None  # made in __init__ whenever the strategy samples
        logits = logits.cpu()  # the private generator is a CPU one: same draws on every device
        scores = self._processors(self._ids, logits)  # (1, V) with filtered tokens at -inf
        probs = torch.softmax(scores, dim=-1)
        return int(torch.multinomial(probs, num_samples=1, generator=self._generator))

    def step(self) -> Step | None:
        """Generate one token (None once finished: end-of-sequence or max_new_tokens)."""
        if self.finished:
            return None
        cancel.check()  # stop here when this server request is out of budget or its page is gone
        with torch.inference_mode():
            call = self._step_call if self.steps else None  # the prompt (prefill) always runs eager
            logits, self._cache = forward_last(self.model, self._pending, self._cache, call, on_device=True)  # (1, V)
            token = self._choose(logits)
            record = make_step(self.tokenizer, torch.softmax(logits[0], dim=-1), token)
        self.steps.append(record)
        self._pending = torch.tensor([[token]], dtype=torch.long)
        self._ids = torch.cat([self._ids, self._pending], dim=1)
        self.finished = token in self._eos or len(self.steps) >= self.settings.max_new_tokens
        return record

    def run(self, until: int | None = None) -> list[Step]:
        """Step until finished, or until ``until`` tokens exist; returns all steps so far."""
        target = self.settings.max_new_tokens if until is None else min(until, self.settings.max_new_tokens)
        while not self.finished and len(self.steps) < target:
            self.step()
        return self.steps

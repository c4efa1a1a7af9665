"""Decoding with a real decoder: next-token distributions and generation one token at a time.

- :mod:`~explorer.tasks.generation.strategy`: strategies (greedy, sample, top-k, top-p, beam), limits, warpers
- :mod:`~explorer.tasks.generation.prompt`: prompt -> ids, cut to the window with a notice
- :mod:`~explorer.tasks.generation.nexttoken`: next-token table, weight-tying check, the cached forward
- :mod:`~explorer.tasks.generation.steps`: one generated token with its probability and alternatives
- :mod:`~explorer.tasks.generation.decoder`: greedy / sampled decoding, KV cache kept between steps
- :mod:`~explorer.tasks.generation.beam`: beam search with transformers' exact rules
- :mod:`~explorer.tasks.generation.repetition`: repeated n-grams and distinct-2 over length
- :mod:`~explorer.tasks.generation.run`: whole generations and side-by-side comparisons (CLI, page)

Every result matches transformers on the same weights (tests/test_generation_*.py): greedy and
beam ids equal ``model.generate``'s, sampling equals ``generate(do_sample=True)`` for the same
seed, next-token probabilities are the softmax of the model's logits.

The package names the entry points (a decoder loaded, its settings, the next token, a whole generation);
anything else is imported from its module.
"""

from __future__ import annotations

from explorer.tasks.generation.nexttoken import NextToken, next_token
from explorer.tasks.generation.run import Generation, generate, load_decoder, start
from explorer.tasks.generation.strategy import STRATEGIES, DecodingSettings

__all__ = ["DecodingSettings", "Generation", "NextToken", "STRATEGIES", "generate", "load_decoder", "next_token",
           "start"]

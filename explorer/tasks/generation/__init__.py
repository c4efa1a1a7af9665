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
"""

from __future__ import annotations

from explorer.tasks.generation.beam import BeamDecoder
from explorer.tasks.generation.decoder import TokenDecoder
from explorer.tasks.generation.nexttoken import Candidate, NextToken, next_token, output_is_input_embedding
from explorer.tasks.generation.prompt import Prompt, encode_prompt
from explorer.tasks.generation.repetition import RepetitionPoint, repetition_curve
from explorer.tasks.generation.run import (
    Generation,
    compare,
    generate,
    load_decoder,
    make_decoder,
    result,
    start,
)
from explorer.tasks.generation.steps import Alternative, Step, step_table
from explorer.tasks.generation.strategy import (
    MAX_BEAMS,
    MAX_NEW_TOKENS,
    MAX_PROMPT_TOKENS,
    STRATEGIES,
    DecodingSettings,
)

__all__ = [
    "MAX_BEAMS", "MAX_NEW_TOKENS", "MAX_PROMPT_TOKENS", "STRATEGIES", "Alternative", "BeamDecoder", "Candidate",
    "DecodingSettings", "Generation", "NextToken", "Prompt", "RepetitionPoint", "Step", "TokenDecoder", "compare",
    "encode_prompt", "generate", "load_decoder", "make_decoder", "next_token", "output_is_input_embedding",
    "repetition_curve", "result", "start", "step_table",
]

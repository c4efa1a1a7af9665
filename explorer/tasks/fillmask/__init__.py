"""Fill-mask: every model's top-k words for every blank of a prompt, side by side, one prompt or many.

- :mod:`~explorer.tasks.fillmask.prompt`: the prompt checked, each model's own mask token;
- :mod:`~explorer.tasks.fillmask.masked`: one loaded masked LM's answer (the MLM head on the masked rows only);
- :mod:`~explorer.tasks.fillmask.run`: :func:`fill_mask`, the page's and the CLI's entry: each model resolved once,
  a masked LM or a decoder column per model;
- :mod:`~explorer.tasks.fillmask.batch`: many prompts at once (one per line), batched forward passes;
- :mod:`~explorer.tasks.fillmask.result`: what a column returns, the same for masked LMs and decoders.

>>> from explorer.tasks import fillmask
>>> fillmask.clean_text("The capital of France is [mask].")
'The capital of France is [mask].'
"""

from explorer.tasks.fillmask.masked import (
    MAX_TOP_K,
    check_top_k,
    encode,
    encode_many,
    fill_clean,
    fill_one,
    frame,
    mask_logits,
    max_tokens,
    mlm_head,
    specials_around,
    to_model_fill,
    whole_word,
    window,
    word_context,
)
from explorer.tasks.fillmask.prompt import FOREIGN_MASKS, MARKER, MAX_MASKS, PRESETS, clean_text, model_prompt
from explorer.tasks.fillmask.result import FillMaskResult, MaskResult, ModelFill, Prediction
from explorer.tasks.fillmask.run import FILLERS, Filler, fill_mask, picked_models, resolved

__all__ = [
    "FILLERS", "FOREIGN_MASKS", "MARKER", "MAX_MASKS", "MAX_TOP_K", "PRESETS", "FillMaskResult", "Filler",
    "MaskResult", "ModelFill", "Prediction", "check_top_k", "clean_text", "encode", "encode_many", "fill_clean",
    "fill_mask", "fill_one", "frame", "mask_logits", "max_tokens", "mlm_head", "model_prompt",
    "picked_models", "resolved", "specials_around", "to_model_fill", "whole_word", "window", "word_context",
]

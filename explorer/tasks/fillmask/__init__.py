"""Fill-mask: every model's top-k words for every blank of a prompt, side by side, one prompt or many.

- :mod:`~explorer.tasks.fillmask.prompt`: the prompt checked, each model's own mask token;
- :mod:`~explorer.tasks.fillmask.masked`: one loaded masked LM's answer (the MLM head on the masked rows only);
- :mod:`~explorer.tasks.fillmask.run`: :func:`fill_mask`, the page's and the CLI's entry: each model resolved once,
  a masked LM or a decoder column per model;
- :mod:`~explorer.tasks.fillmask.batch`: many prompts at once (one per line), batched forward passes;
- :mod:`~explorer.tasks.fillmask.result`: what a column returns, the same for masked LMs and decoders.

The package names the entry points (:func:`fill_mask`, one model's :func:`fill_one`, the prompt's checks and
presets, the result); anything else is imported from its module.

>>> from explorer.tasks import fillmask
>>> fillmask.clean_text("The capital of France is [mask].")
'The capital of France is [mask].'
"""

from explorer.tasks.fillmask.masked import MAX_TOP_K, fill_one
from explorer.tasks.fillmask.prompt import MARKER, PRESETS, clean_text
from explorer.tasks.fillmask.result import FillMaskResult
from explorer.tasks.fillmask.run import fill_mask

__all__ = ["FillMaskResult", "MARKER", "MAX_TOP_K", "PRESETS", "clean_text", "fill_mask", "fill_one"]

"""Weights and where they run: finding and downloading checkpoints, loading them once on the chosen
device and precision, the model cache and its memory bounds, the worker queue and request budgets,
the size caps, the path fence, the bundled Gemma conversion and ``doctor``."""

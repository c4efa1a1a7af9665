"""Third-party import-time log noise, turned down by the two applications (the CLI and the app).

transformers imports torchao whenever it is installed (its quantizer registry), and torchao's import logs
each CUDA-only extension it cannot load on a CPU ("Failed to load .../_C_cutlass_90a.abi3.so") and makes
torch's pytree log a deprecation, all at WARNING: four lines on every command that loads a model, about
nothing the user did. The library itself never changes logging; ``python -m explorer`` and
``app/main.py`` call :func:`quiet_imports` once at start.

>>> import logging
>>> quiet_imports()
>>> logging.getLogger("torchao").getEffectiveLevel() == logging.ERROR
True
>>> logging.getLogger("transformer_explorer").getEffectiveLevel() == logging.ERROR  # ours is untouched
False
"""

from __future__ import annotations

import logging

__all__ = ["NOISY", "quiet_imports"]

# logger -> what it says at import time that is not worth a line
NOISY = {
    "torchao": "every CUDA-only extension it cannot load on a CPU",
    "torch.utils._pytree": "Enum register_constant() deprecations that torchao's import triggers",
}


def quiet_imports() -> None:
    """These loggers say errors only (their warnings are import-time noise: :data:`NOISY`)."""
    for name in NOISY:
        logging.getLogger(name).setLevel(logging.ERROR)

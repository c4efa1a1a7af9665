"""Figure cases of the Forward pass page (tests/figure_cases.py imports this): a tiny Gemma walked once."""

from __future__ import annotations

from functools import lru_cache

from explorer.internals.forward import align
from explorer.plots import forward
from tests.figure_cases import CASES


@lru_cache(maxsize=1)
def _walk():
    import tempfile
    from pathlib import Path

    from explorer.internals.forward.run import run
    from explorer.runtime.resolve import resolve
    from tests.tiny_gemma import save_tiny_gemma

    folder = Path(tempfile.mkdtemp(prefix="figure-forward-"))
    return run(resolve(str(save_tiny_gemma(folder / "gemma")), None), "The capital of France is", device="cpu")


def _step(kind: str):
    return next(s for s in _walk().steps if s.kind == kind)


CASES["forward.block_flow"] = lambda: forward.block_flow(_walk(), 5)
CASES["forward.step_figure"] = lambda: forward.step_figure(_walk(), _step("mlp-up"))
CASES["forward.step_figure:scores"] = lambda: forward.step_figure(_walk(), _step("softmax"), head=1)
CASES["forward.step_figure:vocabulary"] = lambda: forward.step_figure(_walk(), _step("probs"))
CASES["forward.token_vector"] = lambda: forward.token_vector(_walk(), _step("residual"), 2)
CASES["forward.stream_norms"] = lambda: forward.stream_norms([(_walk(), align.stream(_walk()))], token=1)
CASES["forward.prediction"] = lambda: forward.prediction(_walk())

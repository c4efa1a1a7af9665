"""Inference speed of catalog variants on this machine: DistilBERT's Table 3, reproduced.

Sanh et al. (2019, Table 3) time a full CPU pass over STS-B with batch size 1: BERT-base 668 s,
DistilBERT 410 s, a ratio of 1.63. Here each variant is built from its published config with
*random* weights (a forward pass does the same arithmetic whatever the weights are, so it takes
the same time as the trained model), fed the same token ids one example at a time, and timed in
interleaved rounds (A, B, A, B, ...) so that a slow moment of a shared machine hits both models
alike. The figure per model is the median over the rounds.

Timing uses one CPU thread by default (``threads``): on a shared machine two OpenMP threads that
compete with other processes spin at every barrier, and one BERT-base forward took 1.0 s instead of
0.13 s here. The thread count is process-wide, so it is restored as soon as the timing ends.
"""

from __future__ import annotations

import contextlib
import functools
import statistics
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from explorer.architecture import catalog, membudget, modeltypes
from explorer.core.errors import ExplorerError
from explorer.core.timing import interleaved

if TYPE_CHECKING:  # typing only: torch loads when a model is built
    import torch

__all__ = ["PAPER", "Speed", "measure"]

MAX_RUNS = 500
MAX_SEQ_LEN = 4096  # beyond this one forward of a base model takes seconds on a CPU
MAX_THREADS = 64
DEFAULT_SEQ_LEN = 32  # about one STS-B sentence pair in WordPiece tokens, the input of Table 3
# Sanh et al. 2019, Table 3: seconds for a full STS-B dev pass on CPU, batch size 1.
PAPER = {"bert-base": 668.0, "distilbert": 410.0}


@dataclass(frozen=True)
class Speed:
    """Median milliseconds per example of each model; ratio = first / second."""

    keys: tuple[str, ...]
    ms_per_example: tuple[float, ...]
    seq_len: int
    runs: int
    device: str = "cpu"  # what ran (explorer.runtime.placement)
    device_name: str = "cpu"  # e.g. "cuda:0 (NVIDIA H100 80GB HBM3)"
    dtype: str = "float32"

    @property
    def ratio(self) -> float:
        return self.ms_per_example[0] / self.ms_per_example[1]

    def to_dict(self) -> dict[str, object]:
        return {"models": [{"key": k, "ms_per_example": round(ms, 3)} for k, ms in zip(self.keys, self.ms_per_example,
                                                                                      strict=True)],
                "ratio": round(self.ratio, 3), "device": self.device, "device_name": self.device_name,
                "dtype": self.dtype}


@contextlib.contextmanager
def _threads(n: int) -> Iterator[None]:
    """Run the block with ``n`` torch CPU threads, then restore the previous count."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _check(keys: Sequence[str], runs: int, seq_len: int) -> None:
    if len(keys) != 2:
        raise ExplorerError(f"Give exactly two variant keys to compare (got {len(keys)}), e.g. bert-base distilbert.")
    if not 1 <= runs <= MAX_RUNS:
        raise ExplorerError(f"--runs must be between 1 and {MAX_RUNS} (got {runs}).")
    if not 1 <= seq_len <= MAX_SEQ_LEN:
        raise ExplorerError(f"--seq-len must be between 1 and {MAX_SEQ_LEN} (got {seq_len}).")


def _build(key: str, seq_len: int):
    """A randomly initialised bare model on the CPU, after checking it fits in memory and takes seq_len."""
    from explorer.architecture import build, layertree  # import torch at their tops

    variant = catalog.get_variant(key)  # unknown keys: message with suggestions
    config = build.make_config(key)
    limit = modeltypes.max_input_tokens(config)
    if limit is not None and seq_len > limit:
        raise ExplorerError(f"{variant.name} takes at most {limit} tokens: use --seq-len {limit} or less.")
    meta = build.instantiate(config, "base", "meta", variant.extra)
    membudget.require_fits(layertree.unique_params(meta), variant.name)
    return build.instantiate(config, "base", "cpu", variant.extra).eval(), config


def _synced(call: Callable[[], object], device: str) -> Callable[[], object]:
    """``call`` that waits for the GPU to finish: CUDA kernels run asynchronously, so without the wait
    the clock would only time the launch."""
    if not device.startswith("cuda"):
        return call
    import torch

    def run() -> object:
        out = call()
        torch.cuda.synchronize()
        return out

    return run


def _inputs(model, config, seq_len: int, vocab: int) -> dict[str, torch.Tensor]:
    """The same seeded token ids for every model (ids below every model's vocabulary size)."""
    import torch

    from explorer.architecture import shapes

    ids = torch.randint(5, max(6, vocab), (1, seq_len), generator=torch.Generator().manual_seed(0))  # (1, T)
    return {name: ids for name in shapes.dummy_inputs(model, config, seq_len)}


def measure(keys: Sequence[str], seq_len: int = DEFAULT_SEQ_LEN, runs: int = 20, threads: int = 1, *,
            device: str | None = None, dtype: str | None = None) -> Speed:
    """Median ms per example (batch size 1) of two variants, timed in interleaved rounds on ``threads``
    CPU threads, on ``device`` in ``dtype`` (:mod:`explorer.runtime.placement`; the paper's Table 3 is the CPU in
    float32, which ``auto`` picks only on a machine without a GPU)."""
    import torch

    from explorer.runtime import placement

    _check(keys, runs, seq_len)
    if not 1 <= threads <= MAX_THREADS:
        raise ExplorerError(f"--threads must be between 1 and {MAX_THREADS} (got {threads}).")
    where, torch_dtype = placement.Placement.parse(device, dtype).resolve()
    built = [(model.to(device=where, dtype=torch_dtype), config) for model, config in
             (_build(key, seq_len) for key in keys)]
    vocab = min(int(getattr(c, "vocab_size", 0) or getattr(getattr(c, "encoder", None), "vocab_size", 30000))
                for _, c in built)
    calls = []
    for model, config in built:
        inputs = {name: x.to(where) for name, x in _inputs(model, config, seq_len, vocab).items()}
        calls.append(_synced(functools.partial(model, **inputs), where))
    with torch.inference_mode(), _threads(threads):
        times = interleaved(calls, runs)
    medians = tuple(1000 * statistics.median(t) for t in times)
    return Speed(tuple(keys), medians, seq_len, runs, where, placement.device_name(where),
                 placement.dtype_name(torch_dtype))

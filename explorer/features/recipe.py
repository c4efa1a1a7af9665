"""What a dictionary is trained as, on what and for how long: one checked recipe, with the defaults measured here.

- ``kind``: ``topk`` (Gao et al. 2024: the k largest pre-activations, AuxK for dead latents), ``jumprelu``
  (Rajamanoharan et al. 2024, Gemma Scope: a threshold per feature, its L0 penalised through a straight-through
  estimator) or ``transcoder`` (a JumpReLU dictionary from the MLP's input to its output, Dunefsky et al. 2024;
  ``skip`` adds a linear skip from input to output, Paulo et al. 2025);
- ``site`` and ``layer`` (``resid``, ``attn`` or ``mlp``; ``None`` is the middle layer), ``stack`` for T5/BART;
- ``width`` features, ``k`` (topk), ``sparsity`` (the L0 coefficient of jumprelu and transcoders);
- ``tokens`` activations harvested for training (special tokens such as ``<bos>`` are left out: their activations
  are outliers hundreds of times larger than the rest), read ``epochs`` times in batches of ``batch``;
- ``lr`` (Adam; ``None``: 2e-4 x sqrt(16,384 / width), Gao et al.'s scaling, raised for short runs), ``seed``.

The defaults train a TopK SAE of 4,096 features, k = 32, on 262,144 tokens of the bundled corpus's middle layer;
harvesting and training throughput on the bundled Gemma 3 270M: benchmarks/bench_sae.py.

>>> DEFAULT.checked().kind, DEFAULT.width, DEFAULT.k
('topk', 4096, 32)
>>> Recipe(width=0).checked()  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
explorer.core.errors.ExplorerError: The width must be a whole number from 16 to 65,536 (got 0).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields, replace

from explorer.core.errors import ExplorerError, shorten

__all__ = ["DEFAULT", "KINDS", "QUICK", "TRAINED_SITES", "Recipe", "with_changes"]

KINDS = ("topk", "jumprelu", "transcoder")
TRAINED_SITES = ("resid", "attn", "mlp")
_WHOLE = {  # name -> (lowest, highest)
    "width": (16, 65_536), "k": (1, 4_096), "tokens": (1_024, 20_000_000), "seed": (0, 2**31 - 1),
    "batch": (16, 65_536), "seq_len": (8, 1_024), "epochs": (1, 100), "heldout_tokens": (256, 1_000_000),
    "ce_tokens": (64, 1_000_000), "dead_tokens": (1_024, 100_000_000),
}


@dataclass(frozen=True)
class Recipe:
    """One training run's settings (see the module docstring)."""

    kind: str = "topk"
    site: str = "resid"
    layer: int | None = None
    stack: str | None = None
    width: int = 4096
    k: int = 32
    sparsity: float = 0.003  # the L0 coefficient: loss = FVU + sparsity x L0 (jumprelu, transcoder)
    tokens: int = 262_144
    lr: float | None = None
    seed: int = 0
    batch: int = 1024
    seq_len: int = 128
    epochs: int = 1
    skip: bool = False  # transcoders: a linear skip from the MLP's input to its output
    heldout_tokens: int = 8_192  # held-out tokens L0, FVE and the dead and dense fractions are measured on
    ce_tokens: int = 2_048  # held-out tokens of the three loss runs (a decoder's whole head runs at each)
    dead_tokens: int = 65_536  # a feature that has not fired for this many training tokens counts as dead
    aux_alpha: float = 1 / 32  # AuxK's weight (Gao et al.)
    bandwidth: float = 0.05  # the straight-through estimator's kernel width, in the rescaled units

    def checked(self) -> Recipe:
        """The recipe, or an ExplorerError naming the first bad setting and its range."""
        if self.kind not in KINDS:
            raise ExplorerError(f"Unknown kind {shorten(str(self.kind))!r}: use one of {', '.join(KINDS)}.")
        if self.site not in TRAINED_SITES:
            raise ExplorerError(f"Unknown site {shorten(str(self.site))!r}: train on one of "
                                f"{', '.join(TRAINED_SITES)} (a transcoder reads the MLP's input and output).")
        for name, (lo, hi) in _WHOLE.items():
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
                raise ExplorerError(f"The {name.replace('_', ' ')} must be a whole number from {lo:,} to {hi:,} "
                                    f"(got {shorten(repr(value))}).")
        if self.kind == "topk" and self.k > self.width:
            raise ExplorerError(f"k ({self.k:,}) cannot exceed the width ({self.width:,}): pick a smaller k.")
        if self.layer is not None and (isinstance(self.layer, bool) or not isinstance(self.layer, int)
                                       or self.layer < 0):
            raise ExplorerError(f"The layer must be a whole number from 0 (got {shorten(repr(self.layer))}).")
        numbers: tuple[tuple[str, object, float, float], ...] = (
            ("learning rate", self.lr, 1e-6, 1.0), ("sparsity", self.sparsity, 0.0, 10.0),
            ("bandwidth", self.bandwidth, 1e-4, 10.0), ("aux alpha", self.aux_alpha, 0.0, 10.0))
        for name, value, low, high in numbers:
            if value is None and name == "learning rate":
                continue
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) \
                    or not low <= value <= high:
                raise ExplorerError(f"The {name} must be a number from {low:g} to {high:g} (got "
                                    f"{shorten(repr(value))}).")
        if self.stack not in (None, "encoder", "decoder"):
            raise ExplorerError(f"Unknown stack {shorten(str(self.stack))!r}: use encoder or decoder.")
        if self.tokens < self.batch:
            raise ExplorerError(f"{self.tokens:,} tokens do not fill one batch of {self.batch:,}: give more tokens.")
        return self

    @property
    def learning_rate(self) -> float:
        """The learning rate used: the chosen one, else Gao et al.'s rule, scaled up for runs this short."""
        return self.lr if self.lr is not None else 4 * 2e-4 * math.sqrt(16_384 / self.width)

    @property
    def uses_k(self) -> bool:
        return self.kind == "topk"

    @property
    def steps(self) -> int:
        return self.epochs * (self.tokens // self.batch)

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


DEFAULT = Recipe()
_FIELDS = frozenset(f.name for f in fields(Recipe))
# The page tests' and EXPLORER_LAB_QUICK's run: a few batches of short windows.
QUICK = Recipe(width=64, k=8, tokens=2_048, batch=256, seq_len=32, heldout_tokens=512, ce_tokens=128,
               dead_tokens=1_024)


def with_changes(recipe: Recipe, **changes: object) -> Recipe:
    """``recipe`` with the changes given (None values left out), checked."""
    out = replace(recipe)
    for name, value in changes.items():
        if value is not None:
            if name not in _FIELDS:
                raise ExplorerError(f"Unknown setting {shorten(name)!r}: use one of {', '.join(sorted(_FIELDS))}.")
            object.__setattr__(out, name, value)  # a fresh copy, not yet shared; checked() checks every value
    return out.checked()

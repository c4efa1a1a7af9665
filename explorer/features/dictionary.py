"""A sparse dictionary: a sparse autoencoder (or transcoder) as SAELens and Gemma Scope define its numbers.

Shapes (SAELens's): ``W_enc (d_in, width)``, ``b_enc (width,)``, ``W_dec (width, d_out)``, ``b_dec (d_out,)``,
``threshold (width,)`` for JumpReLU, ``W_skip (d_out, d_in)`` for a transcoder's skip. For an input ``x (..., d_in)``:

- the input is normalised when the file says so (``constant_norm_rescale``: ``x * sqrt(d_in) / |x|``; ``layer_norm``),
  then ``b_dec`` is subtracted when ``apply_b_dec_to_input`` (SAELens's default; Gemma Scope and transcoders: not);
- pre-activations ``pre = x @ W_enc + b_enc``;
- features ``f``: ``topk``: the ``k`` largest pre-activations through a ReLU, the rest 0; ``jumprelu``:
  ``relu(pre) * (pre > threshold)`` (Gemma Scope's and SAELens's JumpReLU); ``relu``: SAELens's standard SAE;
- the reconstruction ``f @ W_dec + b_dec`` (``+ x @ W_skip.T`` with a skip), un-normalised as the input was.

Our own dictionaries are trained in a rescaled space and saved with the scale folded into the weights, so every
file here reads with ``normalize = "none"``.

>>> import torch
>>> d = Dictionary(Shape(d_in=2, width=3, d_out=2, activation="jumprelu"))
>>> with torch.no_grad():
...     _ = d.W_enc.copy_(torch.tensor([[1.0, 0.0, 2.0], [0.0, 1.0, 0.0]])); _ = d.threshold.fill_(0.5)
>>> d.encode(torch.tensor([[0.4, 2.0]])).tolist()  # pre (0.4, 2.0, 0.8): 0.4 is under the threshold
[[0.0, 2.0, 0.800000011920929]]
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import torch
from torch import nn

from explorer.core.errors import ExplorerError

__all__ = ["ACTIVATIONS", "NORMALIZATIONS", "Dictionary", "Shape"]

ACTIVATIONS = ("topk", "jumprelu", "relu")
NORMALIZATIONS = ("none", "constant_norm_rescale", "layer_norm")


@dataclass(frozen=True)
class Shape:
    """What a dictionary is: its widths, activation and how its input is prepared (see the module docstring)."""

    d_in: int
    width: int
    d_out: int
    activation: str = "topk"
    k: int | None = None  # topk only
    apply_b_dec_to_input: bool = True
    normalize: str = "none"
    skip: bool = False

    def checked(self) -> Shape:
        if self.activation not in ACTIVATIONS:
            raise ExplorerError(f"Unknown activation {self.activation!r}: the explorer reads {', '.join(ACTIVATIONS)}.")
        if self.normalize not in NORMALIZATIONS:
            raise ExplorerError(f"This file normalises its input by {self.normalize!r}, which the explorer does not "
                                f"reproduce exactly (it reads {', '.join(NORMALIZATIONS)}): fold the scale into the "
                                "weights first (SAELens: fold_activation_norm_scaling_factor).")
        for name in ("d_in", "width", "d_out"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ExplorerError(f"The dictionary's {name} must be a positive whole number, not {value!r}.")
        if self.activation == "topk" and not (isinstance(self.k, int) and 1 <= self.k <= self.width):
            raise ExplorerError(f"A TopK dictionary needs k from 1 to its width {self.width:,} (got {self.k!r}).")
        if (self.skip or self.d_in != self.d_out) and self.normalize != "none":
            raise ExplorerError("A transcoder whose input is normalised is not read here: fold the scale into its "
                                "weights first.")
        shape = self if self.activation == "topk" or self.k is None else replace(self, k=None)  # k: TopK's alone
        if shape.apply_b_dec_to_input and shape.d_in != shape.d_out:
            return replace(shape, apply_b_dec_to_input=False)  # a transcoder's b_dec lives in the output space
        return shape


class Dictionary(nn.Module):
    """The weights of one sparse dictionary and the formulas of the module docstring (float32 on the CPU by
    default; a file's float16 is read into float32)."""

    def __init__(self, shape: Shape) -> None:
        super().__init__()
        self.shape = shape.checked()
        s = self.shape
        self.W_enc = nn.Parameter(torch.zeros(s.d_in, s.width))  # (d_in, W)
        self.b_enc = nn.Parameter(torch.zeros(s.width))  # (W,)
        self.W_dec = nn.Parameter(torch.zeros(s.width, s.d_out))  # (W, d_out)
        self.b_dec = nn.Parameter(torch.zeros(s.d_out))  # (d_out,)
        self.threshold = nn.Parameter(torch.zeros(s.width), requires_grad=s.activation == "jumprelu")  # (W,)
        self.W_skip = nn.Parameter(torch.zeros(s.d_out, s.d_in)) if s.skip else None  # (d_out, d_in)

    @property
    def width(self) -> int:
        return self.shape.width

    def _normalised(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(the input as the encoder reads it, the scale and shift that undo it on the output)."""
        x = x.to(self.W_enc.dtype)
        one, zero = torch.ones_like(x[..., :1]), torch.zeros_like(x[..., :1])
        if self.shape.normalize == "constant_norm_rescale":
            coeff = self.shape.d_in ** 0.5 / x.norm(dim=-1, keepdim=True)
            return x * coeff, 1.0 / coeff, zero
        if self.shape.normalize == "layer_norm":
            mu = x.mean(dim=-1, keepdim=True)
            std = (x - mu).std(dim=-1, keepdim=True)
            return (x - mu) / (std + 1e-5), std, mu
        return x, one, zero

    def pre(self, x: torch.Tensor) -> torch.Tensor:
        """``(..., d_in)`` -> the pre-activations ``(..., width)``."""
        sae_in, _, _ = self._normalised(x)
        if self.shape.apply_b_dec_to_input:
            sae_in = sae_in - self.b_dec
        return sae_in @ self.W_enc + self.b_enc

    def activate(self, pre: torch.Tensor) -> torch.Tensor:
        """Pre-activations -> features ``(..., width)`` (the activation of the module docstring)."""
        if self.shape.activation == "topk":
            top = pre.topk(int(self.shape.k or 1), dim=-1)
            return torch.zeros_like(pre).scatter_(-1, top.indices, torch.relu(top.values))
        if self.shape.activation == "jumprelu":
            return torch.relu(pre) * (pre > self.threshold).to(pre.dtype)
        return torch.relu(pre)

    def encode(self, x: torch.Tensor) -> torch.Tensor:
        """``(..., d_in)`` -> features ``(..., width)``."""
        return self.activate(self.pre(x))

    def decode(self, features: torch.Tensor, x: torch.Tensor | None = None) -> torch.Tensor:
        """Features ``(..., width)`` -> the reconstruction ``(..., d_out)``; ``x`` (the input) adds the skip and
        undoes the input's normalisation (needed whenever the file normalises or has a skip)."""
        out = features.to(self.W_dec.dtype) @ self.W_dec + self.b_dec
        if x is not None:
            sae_in, scale, shift = self._normalised(x)
            if self.W_skip is not None:
                out = out + sae_in @ self.W_skip.T
            out = out * scale + shift
        elif self.W_skip is not None or self.shape.normalize != "none":
            raise ExplorerError("This dictionary's reconstruction needs its input (a skip or a normalisation).")
        return out

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """The reconstruction of ``x`` (``(..., d_in)`` -> ``(..., d_out)``)."""
        return self.decode(self.encode(x), x)

    def direction(self, feature: int) -> torch.Tensor:
        """``(d_out,)`` feature ``feature``'s decoder row: what one unit of it adds to the reconstruction."""
        if isinstance(feature, bool) or not isinstance(feature, int) or not 0 <= feature < self.width:
            raise ExplorerError(f"Feature {feature!r} is out of range: this dictionary has features 0 to "
                                f"{self.width - 1:,}.")
        return self.W_dec[feature]

"""The operations of a transformer written out as plain tensor arithmetic (float32), as a textbook states them.

Nothing here calls a module's forward: weights are read from the modules, the arithmetic is redone, so each
step's value can be compared with what the module itself computed.

>>> import torch
>>> x = torch.tensor([[1.0, 2.0, 3.0]])
>>> y, mean, var = layer_norm(x, torch.ones(3), torch.zeros(3), 0.0)
>>> [round(v, 4) for v in y[0].tolist()], mean.tolist(), round(var.item(), 4)
([-1.2247, 0.0, 1.2247], [2.0], 0.6667)
>>> t5_buckets(torch.tensor([-3, 0, 3, 200]), bidirectional=True, buckets=32, max_distance=128).tolist()
[3, 0, 19, 31]
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import nn

from explorer.core.errors import ExplorerError

__all__ = ["ACTIVATIONS", "activation", "affine", "layer_norm", "merge_heads", "project", "rms_norm", "rope",
           "rope_angles", "softmax", "split_heads", "t5_buckets"]


def _gelu(x: torch.Tensor) -> torch.Tensor:
    """0.5 x (1 + erf(x / sqrt 2)), torch's kernel: the formula written out differs in the last bit, which a
    200-wide outlier feature turns into 1.5e-5."""
    return torch.nn.functional.gelu(x)


def _gelu_tanh(x: torch.Tensor) -> torch.Tensor:
    """0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))), torch's kernel (Gemma's ``gelu_pytorch_tanh``)."""
    return torch.nn.functional.gelu(x, approximate="tanh")


def _gelu_new(x: torch.Tensor) -> torch.Tensor:
    """The same curve written out in the order GPT-2's ``gelu_new`` computes it: torch's kernel rounds otherwise,
    and 24 layers of GPT-Neo carry that last bit to 1e-4."""
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


def _gelu_fast(x: torch.Tensor) -> torch.Tensor:
    return 0.5 * x * (1.0 + torch.tanh(x * 0.7978845608 * (1.0 + 0.044715 * x * x)))


ACTIVATIONS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "gelu": _gelu, "gelu_new": _gelu_new, "gelu_pytorch_tanh": _gelu_tanh, "gelu_fast": _gelu_fast,
    "relu": lambda x: x.clamp(min=0), "silu": torch.nn.functional.silu, "swish": torch.nn.functional.silu,
    "quick_gelu": lambda x: x * torch.sigmoid(1.702 * x), "tanh": torch.tanh,
}


def activation(name: str) -> Callable[[torch.Tensor], torch.Tensor]:
    if name not in ACTIVATIONS:
        raise ExplorerError(f"The step-through does not know the activation {name!r}: it knows "
                            f"{', '.join(sorted(ACTIVATIONS))}.")
    return ACTIVATIONS[name]


def weight(layer: nn.Module, name: str = "weight") -> torch.Tensor | None:
    value = getattr(layer, name, None)
    return value.detach().float() if isinstance(value, torch.Tensor) else None


def project(x: torch.Tensor, layer: nn.Module) -> torch.Tensor:
    """``x @ W.T + b`` of a Linear, or ``x @ W + b`` of GPT-2's Conv1D (its weight stored (in, out))."""
    w, b = weight(layer), weight(layer, "bias")
    if w is None:
        raise ExplorerError(f"{type(layer).__name__} has no weight to project with.")
    w = w if type(layer).__name__ == "Conv1D" else w.T
    # addmm sums in the order the modules' own kernels do: a 200-wide activation stays equal to the last float
    return torch.addmm(b, x, w) if b is not None else x @ w


def layer_norm(x: torch.Tensor, w: torch.Tensor | None, b: torch.Tensor | None, eps: float,
               ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(normalised x, each row's mean, its variance): ``(x - mean) / sqrt(var + eps) * w + b``."""
    mean = x.mean(-1, keepdim=True)
    var = (x - mean).pow(2).mean(-1, keepdim=True)
    # torch's kernel for the value: the formula's rounding differs in the last bit, which the next projection of an
    # outlier feature (MiniLM's reach 200) turns into 2e-5
    y = torch.nn.functional.layer_norm(x, x.shape[-1:], w, b, eps)
    return y, mean[..., 0], var[..., 0]


def rms_norm(x: torch.Tensor, w: torch.Tensor | None, eps: float, plus_one: bool = False,
             ) -> tuple[torch.Tensor, torch.Tensor]:
    """(normalised x, each row's RMS): ``x / sqrt(mean(x^2) + eps) * w`` (Gemma: ``* (1 + w)``), no mean taken."""
    ms = x.pow(2).mean(-1, keepdim=True)
    y = x * torch.rsqrt(ms + eps)
    if w is not None:
        y = y * (1.0 + w) if plus_one else y * w
    return y, ms[..., 0].sqrt()


def affine(x: torch.Tensor, w: torch.Tensor | None, b: torch.Tensor | None) -> torch.Tensor:
    """MobileBERT's NoNorm: ``x * w + b``, nothing normalised."""
    y = x * w if w is not None else x
    return y + b if b is not None else y


def split_heads(x: torch.Tensor, heads: int) -> torch.Tensor:
    """(T, heads * d) -> (heads, T, d)."""
    return x.reshape(x.shape[0], heads, -1).transpose(0, 1)


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """(heads, T, d) -> (T, heads * d): the heads side by side."""
    return x.transpose(0, 1).reshape(x.shape[1], -1)


def softmax(x: torch.Tensor) -> torch.Tensor:
    """``exp(x - max) / sum(exp(x - max))`` over the last axis (a masked -inf weighs 0), torch's kernel."""
    return torch.softmax(x, dim=-1)


def rope_angles(positions: torch.Tensor, dims: int, base: float) -> tuple[torch.Tensor, torch.Tensor]:
    """(cos, sin), each (T, dims): pair j of a head turns by ``position / base ** (2j / dims)``, the two halves of
    the head sharing the angles (the "rotate half" layout)."""
    inv = 1.0 / (base ** (torch.arange(0, dims, 2, dtype=torch.float32, device=positions.device) / dims))
    angles = positions.float()[:, None] * inv[None, :]
    both = torch.cat([angles, angles], dim=-1)
    return both.cos(), both.sin()


def rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """(heads, T, d) rotated: ``x * cos + rotate_half(x) * sin``."""
    half = x.shape[-1] // 2
    rotated = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
    return x * cos + rotated * sin


def t5_buckets(relative: torch.Tensor, *, bidirectional: bool, buckets: int, max_distance: int) -> torch.Tensor:
    """T5's bucket of each relative distance (key position - query position): exact up to half the buckets, then
    log-spaced up to ``max_distance``; a decoder only looks back, so later keys share bucket 0."""
    out = torch.zeros_like(relative)
    if bidirectional:
        buckets //= 2
        out += (relative > 0).long() * buckets
        distance = relative.abs()
    else:
        distance = (-relative).clamp(min=0)
    exact = buckets // 2
    large = exact + (torch.log(distance.float() / exact) / math.log(max_distance / exact)
                     * (buckets - exact)).long()
    large = large.clamp(max=buckets - 1)
    return out + torch.where(distance < exact, distance, large)

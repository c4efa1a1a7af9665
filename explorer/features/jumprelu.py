"""JumpReLU's straight-through estimators (Rajamanoharan et al. 2024, "Jumping Ahead"), as Gemma Scope trains them.

``JumpReLU(z, t) = z * H(z - t)`` and ``L0 = sum H(z - t)`` have no useful gradient in the threshold ``t`` (the step
``H`` is flat almost everywhere), so the backward pass uses pseudo-derivatives from a rectangle kernel of width
``eps`` around the threshold: ``dL0/dt = -(1/eps) K((z - t)/eps)`` and ``dJumpReLU/dt = -(t/eps) K((z - t)/eps)``,
with ``K(u) = 1`` for ``|u| < 1/2``. The gradient in ``z`` is the plain one (``H(z - t)``, and none for L0). Both
sum the threshold's gradient over the batch dimension (its first).

>>> import torch
>>> z = torch.tensor([[0.2, 1.0, 0.49]], requires_grad=True)
>>> t = torch.tensor([0.5, 0.5, 0.5], requires_grad=True)
>>> JumpReLU.apply(z, t, 0.1).tolist()  # 0.49 is under the threshold
[[0.0, 1.0, 0.0]]
>>> Step.apply(z, t, 0.1).sum().backward()
>>> t.grad.tolist()  # only 0.49 is within half the bandwidth of the threshold: -1 / 0.1
[0.0, 0.0, -10.0]
"""

from __future__ import annotations

import torch

__all__ = ["JumpReLU", "Step"]


def _kernel(z: torch.Tensor, threshold: torch.Tensor, bandwidth: float) -> torch.Tensor:
    return (((z - threshold) / bandwidth).abs() < 0.5).to(z.dtype)


class Step(torch.autograd.Function):
    """``H(z - t)`` with the pseudo-derivative in ``t`` (the L0 penalty's)."""

    @staticmethod
    def forward(ctx: torch.autograd.function.FunctionCtx, z: torch.Tensor, threshold: torch.Tensor,
                bandwidth: float) -> torch.Tensor:
        ctx.save_for_backward(z, threshold)
        ctx.bandwidth = bandwidth  # type: ignore[attr-defined]
        return (z > threshold).to(z.dtype)

    @staticmethod
    def backward(ctx: torch.autograd.function.FunctionCtx, grad: torch.Tensor,
                 ) -> tuple[None, torch.Tensor, None]:
        z, threshold = ctx.saved_tensors  # type: ignore[attr-defined]
        eps = ctx.bandwidth  # type: ignore[attr-defined]
        return None, (-(1.0 / eps) * _kernel(z, threshold, eps) * grad).sum(dim=0), None


class JumpReLU(torch.autograd.Function):
    """``z * H(z - t)`` with the pseudo-derivative in ``t`` and the plain gradient in ``z``."""

    @staticmethod
    def forward(ctx: torch.autograd.function.FunctionCtx, z: torch.Tensor, threshold: torch.Tensor,
                bandwidth: float) -> torch.Tensor:
        ctx.save_for_backward(z, threshold)
        ctx.bandwidth = bandwidth  # type: ignore[attr-defined]
        return z * (z > threshold).to(z.dtype)

    @staticmethod
    def backward(ctx: torch.autograd.function.FunctionCtx, grad: torch.Tensor,
                 ) -> tuple[torch.Tensor, torch.Tensor, None]:
        z, threshold = ctx.saved_tensors  # type: ignore[attr-defined]
        eps = ctx.bandwidth  # type: ignore[attr-defined]
        dz = (z > threshold).to(z.dtype) * grad
        dt = (-(threshold / eps) * _kernel(z, threshold, eps) * grad).sum(dim=0)
        return dz, dt, None

"""What an attribution costs, known before any work: passes x tokens x model, its batches, and its time.

A forward over T tokens costs about ``2 x P x T`` floating-point operations (P: the parameters a token passes
through, the input embedding table excepted) plus ``2 x d x V`` for each position whose logits are read (Gemma 3's
262,144-way head); a backward costs two forwards. So:

- gradient norm and gradient x input: one forward and one backward (3 passes);
- integrated gradients at ``n`` steps: ``3 n`` passes, plus 4 forwards (captum reads the embeddings of the input
  and of the baseline, and completeness scores both);
- SmoothGrad: a backward for each of its noisy copies (3 passes each), and one forward for the number;
- occlusion: one forward per shown token, and one for the whole text.

Memory: a backward keeps every layer's activations of its rows (``layers x`` what one layer holds,
:func:`explorer.runtime.activations.per_token_bytes`), so the integrated-gradients steps run in batches of the
rows that fit :data:`GRADIENT_BYTES` (and the request's memory left); occlusion's forwards in batches of
:func:`explorer.runtime.activations.tokens_per_forward`. Time: the operations over the pace measured by this
process's last attribution on the device (a typical 2-core CPU figure before any): in a server request, a method
that cannot be cut short (gradients, integrated gradients) is refused before it starts when the estimate passes
the time left; occlusion is anytime and keeps what it computed.

>>> Cost("ig", 196.0, 12, 268_000_000, 2.1e12, 8, 2**28, 60.0, "typical").to_dict()["seconds"]
60.0
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import torch

from explorer.architecture.modeltypes import is_encoder_decoder, num_layers
from explorer.core.errors import ExplorerError
from explorer.explain.frame import Frame
from explorer.explain.methods import method_of
from explorer.explain.scorer import Embedder
from explorer.runtime import activations, cancel

__all__ = ["GRADIENT_BYTES", "Cost", "check", "estimate", "record"]

GRADIENT_BYTES = 1 << 30  # one backward's activations at most (beside the weights): a quarter of a 2-core box's share
_PACE: dict[tuple[str, str], float] = {}  # (device, method) -> FLOP/s measured by the last such attribution here


@dataclass(frozen=True)
class Cost:
    """The estimate of one attribution (see the module docstring)."""

    method: str
    passes: float  # forward-equivalents
    tokens: int  # tokens one pass reads (every row of the frame)
    parameters: int
    flops: float
    rows: int  # rows one batch holds (integrated gradients' steps x the frame's rows; occlusion's frames x rows)
    batch_bytes: int  # activations one batch keeps
    seconds: float | None
    pace: str  # where the seconds come from

    def to_dict(self) -> dict[str, object]:
        return {**asdict(self), "flops": float(f"{self.flops:.4g}"),
                "seconds": None if self.seconds is None else round(self.seconds, 1)}

    @property
    def said(self) -> str:
        """One line: "integrated gradients: 196 passes x 12 tokens x 268M parameters ≈ 2.1 TFLOP, ~60 s"."""
        time = f", ~{self.seconds:.1f} s ({self.pace})" if self.seconds is not None else ""
        work = f"{self.flops / 1e12:.2g} TFLOP" if self.flops >= 1e11 else f"{self.flops / 1e9:.2g} GFLOP"
        size = f"{self.parameters / 1e6:,.0f}M" if self.parameters >= 1e7 else f"{self.parameters / 1e6:.2g}M"
        return f"{self.method}: {self.passes:,.0f} passes x {self.tokens:,} tokens x {size} parameters ≈ {work}{time}"


def _layers(config: object) -> int:
    """Blocks a pass runs through (an encoder-decoder's both stacks)."""
    if is_encoder_decoder(config):
        return (num_layers(config, "encoder") or 12) + (num_layers(config, "decoder") or 12)
    return num_layers(config) or 12


def _sizes(model: torch.nn.Module, frame: Frame) -> tuple[int, int, int, int]:
    """(parameters a token passes through, hidden width, vocabulary, logit positions read per pass)."""
    weight = getattr(Embedder(model).inner, "weight", None)
    table = int(weight.numel()) if isinstance(weight, torch.Tensor) else 0
    total = sum(p.numel() for p in model.parameters())
    vocab, width = (int(weight.shape[0]), int(weight.shape[1])) if isinstance(weight, torch.Tensor) else (0, 0)
    read = {(t.row, t.at) for t in frame.terms}
    logits = sum(len(r) for r in frame.rows) if frame.kind == "masked" else len(read)
    return max(1, total - table), width, vocab, logits


def _pace(device: str, method: str) -> tuple[float | None, str]:
    if (device, method) in _PACE:
        return _PACE[device, method], "measured on this server"
    if device == "cpu":
        return method_of(method).typical_flops, "typical on a 2-core CPU"
    return None, "not measured on this device yet"


def _row_bytes(model: torch.nn.Module, frame: Frame, backward: bool) -> int:
    """Activation bytes of one frame's rows in one pass (with a backward: every layer's kept)."""
    config, longest = model.config, max(len(r) for r in (*frame.rows, *frame.decoder))
    size = next((p.element_size() for p in model.parameters()), 4)
    layer = activations.per_token_bytes(config, longest, size) * longest * len(frame.rows)
    _, _, vocab, logits = _sizes(model, frame)
    return layer * (_layers(config) if backward else 1) + logits * vocab * 4 * (3 if backward else 1)


def estimate(model: torch.nn.Module, frame: Frame, method: str, steps: int = 0, device: str = "cpu") -> Cost:
    """The cost of ``method`` on ``frame`` (``steps``: integrated gradients')."""
    record = method_of(method)
    body, width, vocab, logits = _sizes(model, frame)
    passes = record.passes(len(frame.shown), steps)
    flops = passes * 2.0 * (body * frame.tokens + width * vocab * logits)
    per = _row_bytes(model, frame, record.backward)
    left = cancel.memory_left()
    cap = GRADIENT_BYTES if record.backward else activations.FORWARD_BYTES
    budget = min(cap, left if left is not None else 1 << 62)
    if record.backward and per > budget:
        raise ExplorerError(f"One gradient pass over this text keeps about {per / 2**20:,.0f} MB of activations; this "
                            f"server allows {budget / 2**20:,.0f} MB for it: shorten the text, or use occlusion "
                            "(forward passes only).")
    copies = min(max(1, budget // max(1, per)), max(1, record.copies(len(frame.shown), steps)))
    rate, why = _pace(device, method)
    return Cost(method, passes, frame.tokens, body, flops, int(copies) * len(frame.rows), int(per * copies),
                None if rate is None else flops / rate, why)


def check(cost: Cost) -> None:
    """Refuse, before any work, a method that cannot stop halfway when its estimate passes the request's time
    left (outside a request, the CLI's, nothing is refused)."""
    left = cancel.seconds_left()
    if method_of(cost.method).anytime or left is None or cost.seconds is None or cost.seconds <= left:
        return
    raise ExplorerError(f"This attribution would take about {cost.seconds:.0f} s ({cost.said}); a request here may "
                        f"run {left:.0f} s more. Ask for fewer steps or a shorter text, or run it from the command "
                        "line (python -m explorer attribute ...), which has no time limit.")


def record(cost: Cost, seconds: float, device: str) -> None:
    """Keep the pace this attribution reached, for the next estimates on ``device``."""
    if seconds > 0.05:  # shorter runs measure Python's overhead, not the device
        _PACE[device, cost.method] = cost.flops / seconds

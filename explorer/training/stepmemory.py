"""The memory a training step needs, known from the plan and the config before anything is built.

A step of the lab's trainer holds, at its peak: the weights, their gradients and AdamW's two moments
(float32: 16 bytes per trained parameter; a distilling teacher's frozen weights: 4), the activations
the backward pass needs for one forward pass of ``micro`` padded tokens, the step's examples as
Python lists, and what the framework itself adds on a first step (its lazily imported modelling
code, autograd's and the math library's work space). The activations per padded token of one
stack are, in float32 values::

    layers x (HIDDEN x hidden + INTERMEDIATE x intermediate + SCORES x heads x keys)

(keys: the window length; attention's scores B x H x T x T are materialised on the CPU) plus the
vocabulary-wide rows of the loss: ``rows x copies x vocab`` per token, where ``rows`` is the share of
positions that get a V-wide output (15% for a masked LM, every position for GPT, the decoder's length
for T5/BART, student and teacher for DistilBERT) and ``copies`` the logits, their softmax and their
gradients alive at once. For a tiny model the loss rows dominate; at 512 tokens the scores do.

The coefficients come from measured peaks (growth of a fresh process's VmHWM over one start and one step,
2-core CPU, torch 2.13, transformers 5.23), measured -> estimated: tiny mlm 4,096 tokens of 128: 402 MB -> 550 MB;
tiny mlm 131,072 of 512: 8.2 GB -> 11.5 GB; small mlm 16,384 of 512: 3.8 GB -> 5.1 GB; tiny gpt 16,384 of 128:
2.5 GB -> 3.1 GB; small gpt 8,192 of 128: 2.5 GB -> 2.8 GB; tiny bart 16,384 of 512: 5.0 GB -> 7.5 GB; tiny
distilbert 8,192 of 128: 2.3 GB -> 2.6 GB; tiny electra 16,384 of 512: 1.7 GB -> 2.8 GB. Over 26 such steps (every
loss family) the estimate was 1.11 to 1.63 times the measured peak, never under it
(``tests/test_stepmemory.py`` measures real steps again and allows a factor of 2).

A step that does not fit in one pass is cut into micro-batches of at most :attr:`StepPlan.micro_tokens`
padded tokens whose gradients are accumulated (the same examples, the same tokens per step); one in which
even a single window does not fit, or that would need more than :data:`MAX_ACCUMULATION` passes, is
refused with the figure and the largest setting that fits.

>>> s = Shape(params=1_000_000, frozen=0, stacks=(Stack(2, 128, 512, 2),), vocab=8192, rows=1.0, copies=4)
>>> round(activation_bytes(s, 128) / 1e3)  # bytes per padded token of a tiny GPT at 128 tokens
172
>>> p = fit(s, batch_tokens=1_000_000, seq_len=512, budget=(4 * 10**9, "test"))
>>> p.passes > 1 and p.peak <= 4 * 10**9
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from explorer.architecture import membudget, modeltypes
from explorer.core.errors import ExplorerError
from explorer.runtime import cancel
from explorer.training import recipes

__all__ = ["MAX_ACCUMULATION", "Estimate", "Shape", "Stack", "StepPlan", "activation_bytes", "budget", "estimate",
           "fine_tune_fits", "fit", "limits", "shape", "step_plan"]

FLOAT = 4  # training runs in float32
STATE_BYTES = FLOAT * 4  # weight, gradient and AdamW's two moments per trained parameter
OVERHEAD_BYTES = 256 * 2**20  # a fresh process: 168 MB after building (modelling code), ~70 MB more in the first step
DATA_BYTES = 128  # per token of a step's examples held as Python lists (measured 51-77 bytes)
BATCH_BYTES = 32  # per padded token of a collated micro-batch (input ids, labels, mask: int64)
HIDDEN, INTERMEDIATE, SCORES = 12, 5, 4  # float32 values kept per padded token and layer (see the module docstring)
MAX_ACCUMULATION = 64  # passes per step: beyond this a step is hours on a CPU; ask for fewer tokens per step
# loss family -> (share of positions with a vocabulary-wide output, copies of those rows alive at once)
LOGITS: dict[str, tuple[float, int]] = {"mlm": (0.15, 4), "electra": (0.15, 4), "spanbert": (0.2, 4),
                                        "causal": (1.0, 4), "seq2seq": (1.0, 5), "distill": (1.0, 7)}


@dataclass(frozen=True)
class Stack:
    """One transformer stack that runs with gradients; ``tokens``: its positions per input token (a decoder's
    share), ``cross``: whether it attends to the encoder's positions too."""

    layers: int
    hidden: int
    intermediate: int
    heads: int
    tokens: float = 1.0
    cross: bool = False


@dataclass(frozen=True)
class Shape:
    """What the estimate reads from a recipe's config: parameters, stacks, vocabulary and the loss's rows."""

    params: int  # trained (tied weights once)
    frozen: int  # a teacher's weights: no gradients, no optimizer state
    stacks: tuple[Stack, ...]
    vocab: int
    rows: float  # vocabulary-wide outputs per input token
    copies: int


@dataclass(frozen=True)
class Estimate:
    """Peak bytes of one training pass, by part."""

    weights: int
    gradients: int
    optimizer: int
    activations: int
    data: int
    overhead: int

    @property
    def total(self) -> int:
        return self.weights + self.gradients + self.optimizer + self.activations + self.data + self.overhead

    def parts(self) -> str:
        """"weights 6 MB, gradients 6 MB, ..." for a message."""
        return ", ".join(f"{name} {_size(getattr(self, name))}" for name in
                         ("weights", "gradients", "optimizer", "activations", "data", "overhead"))


@dataclass(frozen=True)
class StepPlan:
    """How a step runs within the budget: ``passes`` micro-batches of at most ``micro_tokens`` padded tokens."""

    batch_tokens: int
    seq_len: int
    micro_tokens: int
    passes: int
    one_pass: Estimate  # the whole step in one forward and backward pass
    peak: int  # what the step will take at most (one micro-batch)
    budget: int
    why: str

    @property
    def notice(self) -> str | None:
        """What a user is told when the step is accumulated (None when it runs in one pass)."""
        if self.passes <= 1:
            return None
        return (f"{self.batch_tokens:,} tokens per step need about {_size(self.one_pass.total)} in one pass, more than "
                f"the {_size(self.budget)} allowed here ({self.why}): each step runs as about {self.passes} "
                f"micro-batches of at most {self.micro_tokens:,} tokens (peak about {_size(self.peak)}) and "
                "accumulates their gradients, so it trains on the same tokens per step.")


def _size(n: float) -> str:
    return f"{n / 1e9:,.1f} GB" if n >= 1e9 else f"{n / 1e6:,.0f} MB"


def activation_bytes(shape: Shape, seq_len: int) -> float:
    """Bytes kept for the backward pass per padded input token of ``seq_len``-token windows."""
    values = 0.0
    for s in shape.stacks:
        keys = s.heads * seq_len * (2 if s.cross else 1)  # a decoder layer also scores the encoder's positions
        values += s.tokens * s.layers * (HIDDEN * s.hidden + INTERMEDIATE * s.intermediate + SCORES * keys)
    values += shape.rows * shape.copies * shape.vocab
    return FLOAT * values + BATCH_BYTES


def estimate(shape: Shape, seq_len: int, micro_tokens: int, batch_tokens: int) -> Estimate:
    """Peak bytes of a step of ``batch_tokens`` whose passes hold ``micro_tokens`` padded tokens each."""
    weights = FLOAT * (shape.params + shape.frozen)
    return Estimate(weights, FLOAT * shape.params, 2 * FLOAT * shape.params,
                    int(activation_bytes(shape, seq_len) * micro_tokens), DATA_BYTES * batch_tokens, OVERHEAD_BYTES)


def _padded(batch_tokens: int, seq_len: int) -> int:
    """Padded tokens of a step: full windows, plus the one that tips the count over ``batch_tokens``."""
    return (math.ceil(batch_tokens / seq_len) + 1) * seq_len


def _largest_micro(shape: Shape, seq_len: int, batch_tokens: int, allowed: int) -> int:
    """The most padded tokens one pass may hold within ``allowed`` (0: not even one window)."""
    fixed = estimate(shape, seq_len, 0, batch_tokens).total
    room = (allowed - fixed) / activation_bytes(shape, seq_len)
    return int(room) // seq_len * seq_len if room >= seq_len else 0


def _largest_seq_len(shape: Shape, allowed: int, batch_tokens: int) -> int:
    """The longest window (16 to 512 tokens) of which one fits, or 0."""
    best = 0
    for seq_len in range(16, 513, 16):
        if _largest_micro(shape, seq_len, max(batch_tokens, seq_len), allowed) >= seq_len:
            best = seq_len
    return best


def fit(shape: Shape, batch_tokens: int, seq_len: int, budget: tuple[int, str], what: str = "This step") -> StepPlan:
    """The plan of a step within ``budget`` (bytes, where the figure comes from), or an ExplorerError saying the
    figure and the largest setting that fits."""
    allowed, why = budget
    one_pass = estimate(shape, seq_len, _padded(batch_tokens, seq_len), batch_tokens)
    if one_pass.total <= allowed:  # a pass may hold all that fits: shorter windows padded further still run as one
        micro = max(_padded(batch_tokens, seq_len), _largest_micro(shape, seq_len, batch_tokens, allowed))
        return StepPlan(batch_tokens, seq_len, micro, 1, one_pass, one_pass.total, allowed, why)
    micro = _largest_micro(shape, seq_len, batch_tokens, allowed)
    if _largest_micro(shape, seq_len, seq_len, allowed) < seq_len:  # not even one window, whatever the step
        window = estimate(shape, seq_len, seq_len, seq_len)
        longest = _largest_seq_len(shape, allowed, seq_len)
        hint = (f"the longest window that fits is {longest} tokens" if longest else
                "not even a 16-token window fits: free memory, pick the tiny size, or raise EXPLORER_MEMORY_CAP_GB")
        raise ExplorerError(f"{what} needs about {_size(window.total)} for a single window of {seq_len} tokens "
                            f"({window.parts()}); this machine allows {_size(allowed)} ({why}): {hint}.")
    passes = math.ceil(_padded(batch_tokens, seq_len) / micro) if micro >= seq_len else 0
    if not 1 <= passes <= MAX_ACCUMULATION:  # too many passes, or the step's examples alone fill the memory
        largest = limits(shape, seq_len, budget)["batch_tokens"]
        raise ExplorerError(f"{what}: {batch_tokens:,} tokens per step need about {_size(one_pass.total)} in one pass, "
                            f"and no split into at most {MAX_ACCUMULATION} micro-batches fits the {_size(allowed)} "
                            f"allowed here ({why}). The largest step that fits is {largest:,} tokens "
                            f"of {seq_len}-token windows.")
    peak = estimate(shape, seq_len, micro, batch_tokens).total
    return StepPlan(batch_tokens, seq_len, micro, passes, one_pass, peak, allowed, why)


def _passes(shape: Shape, batch_tokens: int, seq_len: int, allowed: int) -> int:
    """Micro-batches a step needs within ``allowed``; 0 when not even one window fits beside its examples."""
    micro = _largest_micro(shape, seq_len, batch_tokens, allowed)
    return math.ceil(_padded(batch_tokens, seq_len) / micro) if micro >= seq_len else 0


def limits(shape: Shape, seq_len: int, budget: tuple[int, str]) -> dict[str, int]:
    """The largest settings within ``budget``: ``seq_len`` (one window fits), ``one_pass`` (tokens per step
    without accumulation) and ``batch_tokens`` (with up to :data:`MAX_ACCUMULATION` micro-batches); 0 when
    nothing fits. Each is a multiple of ``seq_len``: the first that does not fit is one window more."""
    allowed = budget[0]
    fixed, act = estimate(shape, seq_len, 0, 0).total, activation_bytes(shape, seq_len)
    # one pass of n windows: fixed + DATA x n x T (examples) + act x (n + 1) x T (the window that tips it over)
    windows = int((allowed - fixed - act * seq_len) // (seq_len * (DATA_BYTES + act)))
    one_pass = max(0, windows) * seq_len
    lo, hi = 0, 1
    while 1 <= _passes(shape, hi * seq_len, seq_len, allowed) <= MAX_ACCUMULATION:
        lo, hi = hi, hi * 2
    while hi - lo > 1:  # more tokens only ever need more passes: bisect on the window count
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if 1 <= _passes(shape, mid * seq_len, seq_len, allowed) <= MAX_ACCUMULATION else (lo, mid)
    return {"seq_len": _largest_seq_len(shape, allowed, seq_len), "one_pass": one_pass,
            "batch_tokens": max(one_pass, lo * seq_len)}


# --------------------------------------------------------------------------------------- recipes: shape and budget

def _stacks(config: Any, decoder_tokens: float) -> list[Stack]:
    hidden = modeltypes.config_int(config, "hidden_size", "d_model", "n_embd", "dim") or 0
    inner = modeltypes.config_int(config, "intermediate_size", "d_ff", "n_inner", "encoder_ffn_dim", "hidden_dim")
    heads = modeltypes.num_heads(config) or 1
    layers = modeltypes.num_layers(config) or 0
    out = [Stack(layers, hidden, inner or 4 * hidden, heads)]
    if modeltypes.is_encoder_decoder(config):
        dec_inner = modeltypes.config_int(config, "decoder_ffn_dim") or inner or 4 * hidden
        out.append(Stack(modeltypes.num_layers(config, "decoder") or layers, hidden, dec_inner, heads,
                         tokens=decoder_tokens, cross=True))
    return out


def _models(model: Any) -> list[Any]:
    """The transformers models inside a lab model (itself, or ELECTRA's pair, SpanBERT's masked LM...)."""
    if hasattr(model, "config") and hasattr(model, "save_pretrained"):
        return [model]
    return [child for _, child in model.named_children() if hasattr(child, "config")]


@lru_cache(maxsize=64)
def shape(objective: str, size: str, seq_len: int = 128) -> Shape:
    """The :class:`Shape` of a lab recipe at ``size``, from its config built on the meta device (no memory)."""
    from explorer.training import models, seq2seq, vocab  # torch and transformers: only when a shape is read

    recipe = recipes.get(objective)
    rows, copies = LOGITS.get(recipe.loss, (1.0, 5))
    decoder_tokens = 1.0
    if recipe.loss == "seq2seq":  # T5's targets are a quarter of the input, BART's a bit longer than it
        decoder_tokens = rows = 1.1 * seq2seq.target_ratio(recipe.name, seq_len)
    with models.arch.BUILD_LOCK:  # transformers' lazy imports are not thread-safe (see trainer.start)
        vocab.tokenizer()
        meta = models.arch.instantiate(models.config(recipe, size), recipe.head, "meta")
        frozen = 0
        if recipe.loss == "distill":  # the teacher: a masked LM of the same size, frozen
            teacher = recipes.get("mlm")
            frozen = models.parameters(models.arch.instantiate(models.config(teacher, size), teacher.head, "meta"))
    stacks = [s for m in _models(meta) for s in _stacks(m.config, decoder_tokens)]
    return Shape(models.parameters(meta), frozen, tuple(stacks), len(vocab.tokenizer()), rows, copies)


def budget(device: str = "cpu", request: tuple[int, str] | None = None, share: int = 1) -> tuple[int, str]:
    """The bytes one training may take on ``device``: :func:`explorer.architecture.membudget.memory_budget` (a share of
    what is free, or EXPLORER_MEMORY_CAP_GB), and no more than ``request`` (bytes, where the figure comes from: a
    server request's memory budget; inside a request by default what it may still add,
    :func:`explorer.runtime.cancel.memory_left`), split ``share`` ways when that many trainings may run at once."""
    allowed, why = membudget.memory_budget(device)
    token = cancel.current()
    if request is None and token is not None:
        request = (max(0, token.budget.memory_bytes - token.grown()),
                   f"what this request may still add: {token.budget.why}")
    if request is not None:
        per = request[0] // max(1, share)
        if per < allowed:
            allowed, why = per, request[1] + (f", shared by {share} trainings at once" if share > 1 else "")
    return allowed, why


def step_plan(plan: Any, allowed: tuple[int, str] | None = None) -> StepPlan:
    """:func:`fit` for a trainer :class:`~explorer.training.trainer.Plan` (objective, size, tokens, window, device)."""
    label = recipes.get(plan.objective).label
    return fit(shape(plan.objective, plan.size, plan.seq_len), plan.batch_tokens, plan.seq_len,
               allowed or budget(plan.device), what=f"Training {plan.size} {label}")


def fine_tune_fits(model: Any, batch: int, seq_len: int, what: str, allowed: tuple[int, str] | None = None) -> Estimate:
    """Check, before copying ``model``, that fine-tuning a copy of it with a small classifier (the downstream
    probe, FastBERT's exits) on ``batch`` examples of ``seq_len`` tokens fits: the model's own weights stay, the
    copy gets gradients and AdamW's moments, every layer's activations are kept (no vocabulary-wide rows).
    Refused with the figure and the largest batch that fits; returns the estimate."""
    params = sum(p.numel() for p in model.parameters())
    stacks = tuple(s for m in _models(model) for s in _stacks(m.config, 1.0))
    copy = Shape(params=params, frozen=params, stacks=stacks, vocab=0, rows=0.0, copies=0)
    device = str(next(model.parameters()).device)
    allowed = allowed or budget(device if device.startswith("cuda") else "cpu")
    need = estimate(copy, seq_len, batch * seq_len, batch * seq_len)
    if need.total > allowed[0]:
        most = max(0, _largest_micro(copy, seq_len, seq_len, allowed[0]) // seq_len)
        raise ExplorerError(f"{what} needs about {_size(need.total)} for batches of {batch} examples of {seq_len} "
                            f"tokens ({need.parts()}); this machine allows {_size(allowed[0])} ({allowed[1]}), "
                            f"which holds batches of at most {most} examples. Free memory or use a smaller model.")
    return need

"""The compression methods as offered: one list that the CLI's help, the error messages and the page read.

Each :class:`MethodForm` is a fixed name (``int8``) or a form with a parameter (``prune-N``, ``exit-S``): what it does,
where it runs, and the instances the page lists (any other N or S may be typed). :mod:`explorer.compression.methods`
parses and applies them. This module imports nothing heavy: the CLI builds its ``--help`` from it without torch.

>>> help_text()[:48]
'fp32, bf16, fp16 (GPU only), int8 (CPU only), w8'
>>> offered(exits=False, with_loss=False)[:3], "mheads-25" in offered(exits=False, with_loss=True)
(['bf16', 'fp16', 'int8'], True)
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DEFAULTS", "EXIT_DEFAULTS", "FORMS", "MethodForm", "describe", "help_text", "offered", "valid_names"]

PARAMETERS = {"N": "N a whole percentage from 0 to 99", "S": "S from 0 to 1, lab models with FastBERT exits"}


@dataclass(frozen=True)
class MethodForm:
    """One method as offered: a fixed name (``int8``) or a form with a parameter (``prune-N``, ``exit-S``), what it
    does, where it runs (``hint``, for the CLI's help), and the instances the page lists (any other may be typed)."""

    form: str
    kind: str  # the Method.kind it parses to
    label: str
    hint: str = ""
    offered: tuple[str, ...] = ()
    amount: int = 0  # a fixed name's Method.amount (w8/w4: the bits)
    needs_loss: bool = False  # ranked by the model's own (masked) LM loss: not offered for a model without one

    @property
    def parameter(self) -> str:
        """What the form's parameter takes, in words; "" for a fixed name."""
        return PARAMETERS.get(self.form.rpartition("-")[2], "") if "-" in self.form else ""


# Every method, in the order the CLI's help, the error messages and the page list them: the one list they read.
FORMS = (
    MethodForm("fp32", "cast", "float32 copy (the reference)"),
    MethodForm("bf16", "cast", "bfloat16 cast", offered=("bf16",)),
    MethodForm("fp16", "cast", "float16 cast (GPU only: the CPU has no fast float16 kernels)", "GPU only", ("fp16",)),
    MethodForm("int8", "int8", "dynamic int8 Linear layers (torch quantize_dynamic; CPU only)", "CPU only", ("int8",)),
    MethodForm("w8", "weight-only", "weight-only int8 (torchao IntxWeightOnlyConfig)", "torchao", ("w8",), amount=8),
    MethodForm("w4", "weight-only", "weight-only int4, groups of 32 (torchao; stored unpacked in int8 on the CPU)",
           "torchao", ("w4",), amount=4),
    MethodForm("prune-N", "prune", "N% of every Linear weight set to zero by magnitude (0-99)",
           offered=("prune-30", "prune-50", "prune-90")),
    MethodForm("heads-N", "heads", "the N% least important attention heads switched off (0-99)",
           offered=("heads-25", "heads-50")),
    MethodForm("mheads-N", "mheads", "the same, ranked by Michel et al.'s gradient importance (the model's LM or "
           "masked-LM loss)", offered=("mheads-25", "mheads-50"), needs_loss=True),
    MethodForm("exit-S", "exit", "FastBERT early exit at speed S (0-1; higher exits sooner), lab models with exits",
           offered=("exit-0.2", "exit-0.5", "exit-0.7", "exit-0.8", "exit-0.9", "exit-0.95", "exit-1")),
)
DEFAULTS = ("int8", "bf16", "prune-50")  # what the page starts with
# the lab's students are unsure: most exits are past 0.8
EXIT_DEFAULTS = ("exit-0.5", "exit-0.8", "exit-0.95", "exit-1")

def _listing(hints: bool) -> str:
    """The forms in order, each parameter's range said once after the last form that takes it."""
    parts = []
    for i, f in enumerate(FORMS):
        last_of_its_range = i + 1 == len(FORMS) or FORMS[i + 1].parameter != f.parameter
        notes = [n for n in (f.hint if hints else "", f.parameter if last_of_its_range else "") if n]
        parts.append(f"{f.form} ({'; '.join(notes)})" if notes else f.form)
    return ", ".join(parts)


def valid_names() -> str:
    """The methods one may ask for, in one line (error messages).

    >>> valid_names()[:34]
    'fp32, bf16, fp16, int8, w8, w4, pr'
    """
    return _listing(hints=False)


def help_text() -> str:
    """The CLI's ``--method`` help: every method, where one runs only on some devices or packages, and the ranges."""
    return _listing(hints=True) + "; repeat for several"


def describe() -> str:
    """Every method and what it does, in one line (the page's help)."""
    return " · ".join(f"{f.form}: {f.label}" for f in FORMS)


def offered(exits: bool, with_loss: bool) -> list[str]:
    """The methods the page lists: the exit speeds for a lab model's early exit, else the compressed copies
    (those ranked by the model's own LM loss only ``with_loss``)."""
    return [name for f in FORMS if (f.kind == "exit") == exits and (with_loss or not f.needs_loss)
            for name in f.offered]

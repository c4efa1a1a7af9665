"""The compression methods: what each one is, and how it makes a compressed copy of a loaded model.

A method is named the way the CLI and the page take it: ``fp32``, ``bf16``, ``fp16`` (casts), ``int8``
(dynamic int8 Linear layers, torch's own ``quantize_dynamic``), ``w8``/``w4`` (weight-only 8/4-bit from
torchao; an environment without it is told the pip line), ``prune-N`` (unstructured L1 magnitude pruning of N% of every
Linear weight, ``torch.nn.utils.prune``), ``heads-N`` (structured: the N% least important attention heads
switched off, see :mod:`explorer.compression.heads`; ``mheads-N`` ranks them by Michel et al.'s gradient
importance instead) and ``exit-S`` (FastBERT's early exit at speed S,
0 to 1, on a lab model with trained exits: :mod:`explorer.compression.earlyexit`; not a copy of the model).

Every method works on a **deep copy**: the model the cache shares (:mod:`explorer.runtime.modelcache`) is
never touched, and the copy is refused before it is made when it would not fit the memory budget.

Why torch's ``quantize_dynamic`` for int8 and not torchao: measured on this 2-core CPU (torch 2.13,
torchao 0.18), a 384x1536x384 MLP took 0.37 ms with ``quantize_dynamic`` (fbgemm/x86 int8 kernels),
1.1 ms in float32 and 1.09 ms with torchao's ``Int8DynamicActivationInt8WeightConfig`` in eager mode
(torchao's CPU speed needs ``torch.compile``). Tied output heads (Gemma's ``lm_head`` *is* its embedding
table) are left as they are by int8 and pruning: replacing them would untie them and store the table twice.

>>> parse("prune-50").amount, parse("heads-25").kind, parse(" INT8 ").name, parse("exit-0.30").name
(50, 'heads', 'int8', 'exit-0.3')
>>> parse("prune-100")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
explorer.core.errors.ExplorerError: Sparsity 100% is outside 0 to 99: prune-N and heads-N take a whole percentage ...
"""

from __future__ import annotations

import copy
import importlib.util
import re
import warnings
from dataclasses import dataclass

import torch
from torch.ao.quantization import default_dynamic_qconfig, quantize_dynamic
from torch.nn.utils import prune

from explorer.architecture import membudget
from explorer.compression import heads
from explorer.compression.offer import FORMS, valid_names
from explorer.core.errors import ExplorerError, shorten
from explorer.core.handles import Tokenizer
from explorer.runtime import modelcache

__all__ = ["CASTS", "FIXED", "PATTERNS", "Method", "apply", "available", "canonical", "linear_layers", "masked_scores",
           "parse", "sparsity", "valid_names"]

CASTS = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}
# name -> what it is, in words (a copy's description); kind -> "form: what it is" for the forms with a parameter;
# both from the one list of methods (explorer.compression.offer)
FIXED = {f.form: f.label for f in FORMS if not f.parameter}
PATTERNS = {f.kind: f"{f.form}: {f.label}" for f in FORMS if f.parameter}
_BY_NAME = {f.form: f for f in FORMS if not f.parameter}
_PERCENT_KINDS = "|".join(f.kind for f in FORMS if f.form.endswith("-N"))
_NAME = re.compile(rf"^({_PERCENT_KINDS})-(\d{{1,3}})$")
_EXIT = re.compile(r"^exit-(\d*\.?\d+)$")
MAX_PERCENT = 99
TORCHAO_HINT = "pip install torchao==0.18.0"
MAX_IMPORTANCE_TOKENS = 256  # mheads-N: one forward and backward over this many tokens


@dataclass(frozen=True)
class Method:
    """One parsed method: ``kind`` (cast, int8, weight-only, prune, heads) and its percentage if any."""

    name: str
    kind: str
    amount: int = 0  # percent, for prune and heads; the speed x 100 for exit

    @property
    def speed(self) -> float:
        """FastBERT's speed S of an ``exit-S`` method (0 never exits early, 1 exits at the first layer)."""
        return self.amount / 100

    @property
    def cpu_only(self) -> bool:
        """torch's quantized int8 kernels exist on the CPU only."""
        return self.kind == "int8"

    @property
    def gpu_only(self) -> bool:
        """float16 is refused on the CPU (explorer.runtime.placement's rule)."""
        return self.name == "fp16"


def canonical(text: str) -> str | None:
    """The method's own spelling, or None where :func:`parse` refuses it (a shared link's typed methods).

    >>> canonical(" PRUNE-70 "), canonical("exit-.30"), canonical("prune-150"), canonical("<b>")
    ('prune-70', 'exit-0.3', None, None)
    """
    try:
        return parse(text).name
    except ExplorerError:
        return None


def parse(text: str) -> Method:
    """``"prune-50"`` -> Method("prune-50", "prune", 50); an unknown name lists the valid ones."""
    name = str(text or "").strip().lower()
    if name in _BY_NAME:
        return Method(name, _BY_NAME[name].kind, _BY_NAME[name].amount)
    match = _NAME.match(name)
    if match:
        amount = int(match.group(2))
        if amount > MAX_PERCENT:
            raise ExplorerError(f"Sparsity {amount}% is outside 0 to {MAX_PERCENT}: prune-N and heads-N take a "
                                f"whole percentage from 0 to {MAX_PERCENT} (e.g. prune-50).")
        return Method(f"{match.group(1)}-{amount}", match.group(1), amount)
    exit_match = _EXIT.match(name)
    if exit_match:
        speed = float(exit_match.group(1))
        if speed > 1 or abs(speed * 100 - round(speed * 100)) > 1e-6:
            raise ExplorerError(f"Speed {shorten(exit_match.group(1))} is outside 0 to 1 in steps of 0.01: exit-S "
                                "takes FastBERT's speed, e.g. exit-0.3.")
        return Method(f"exit-{speed:g}", "exit", round(speed * 100))
    if name.startswith("exit-"):
        raise ExplorerError(f"{shorten(name)!r} needs a speed from 0 to 1 after the dash, e.g. exit-0.3.")
    if re.match(rf"^({_PERCENT_KINDS})-", name):
        raise ExplorerError(f"{shorten(name)!r} needs a whole percentage from 0 to {MAX_PERCENT} after the dash, "
                            "e.g. prune-50 or heads-25.")
    raise ExplorerError(f"Unknown compression method {shorten(str(text))!r}: use one of {valid_names()}.")


def available(method: Method, device: str) -> str | None:
    """Why ``method`` cannot run on ``device`` here, or None when it can."""
    if method.gpu_only and not device.startswith("cuda"):
        return (f"{method.name} runs on a GPU only: float16 on the CPU is many times slower than float32 and "
                "some layers have no float16 kernel. Pick bf16 (same size), or run on a CUDA device.")
    if method.cpu_only and device != "cpu":
        return (f"{method.name} (dynamic int8) runs on the CPU only: torch's quantized kernels have no {device} "
                "version. Pick the CPU device for it, or bf16/fp16 on the GPU.")
    if method.kind == "weight-only" and importlib.util.find_spec("torchao") is None:
        return (f"{method.name} needs the package torchao (in requirements.txt), which is not installed here: "
                f"{TORCHAO_HINT}.")
    return None


def linear_layers(model: torch.nn.Module) -> dict[str, torch.nn.Linear]:
    """Every Linear layer whose weight belongs to it alone (a tied output head shares the embedding's)."""
    owners: dict[int, int] = {}
    for module in model.modules():
        for p in module.parameters(recurse=False):
            owners[id(p)] = owners.get(id(p), 0) + 1
    return {name: m for name, m in model.named_modules()
            if isinstance(m, torch.nn.Linear) and owners.get(id(m.weight), 0) == 1}


def _require_linear(model: torch.nn.Module, method: Method) -> dict[str, torch.nn.Linear]:
    layers = linear_layers(model)
    if not layers:
        raise ExplorerError(f"{method.name} works on Linear layers and this model has no Linear layer: pick a cast "
                            "(fp32, bf16) or a transformer model.")
    return layers


def _copy(model: torch.nn.Module, what: str, device: str) -> torch.nn.Module:
    """A deep copy, refused first when it would not fit (the copy costs as much as the model)."""
    n_params = modelcache.model_bytes(model) // 4  # as float32 parameters: the copy is made before any cast
    membudget.require_fits(n_params, f"A copy of {what} for compression", "float32", device)
    return copy.deepcopy(model).eval()


def _int8(model: torch.nn.Module, layers: dict[str, torch.nn.Linear]) -> torch.nn.Module:
    with warnings.catch_warnings():  # torch.ao.quantization says it is deprecated in favour of torchao (see above)
        warnings.simplefilter("ignore")
        spec = dict.fromkeys(layers, default_dynamic_qconfig)
        return quantize_dynamic(model.float(), spec, dtype=torch.qint8, inplace=True)


def _weight_only(model: torch.nn.Module, layers: dict[str, torch.nn.Linear], bits: int) -> torch.nn.Module:
    # optional package: available() checked that it is installed
    from torchao.quantization import IntxWeightOnlyConfig, quantize_
    from torchao.quantization.granularity import PerAxis, PerGroup

    dtype = torch.int8 if bits == 8 else torch.int4  # type: ignore[attr-defined]  # missing from torch's stubs
    config = IntxWeightOnlyConfig(weight_dtype=dtype, granularity=PerAxis(0) if bits == 8 else PerGroup(32))
    names = set(layers)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        quantize_(model, config, filter_fn=lambda m, fqn: fqn in names)
    return model


def _prune(layers: dict[str, torch.nn.Linear], amount: int) -> None:
    for layer in layers.values():
        prune.l1_unstructured(layer, "weight", amount=amount / 100)
        prune.remove(layer, "weight")  # make it permanent: an ordinary weight with zeros, no mask buffers


def sparsity(model: torch.nn.Module) -> float:
    """Share of zeros in the weights of the untied Linear layers (0..1); 0 without any."""
    weights = [m.weight for m in linear_layers(model).values()
               if type(m.weight.data) is torch.Tensor and m.weight.is_floating_point()]  # not quantized subclasses
    total = sum(w.numel() for w in weights)
    return sum(int((w == 0).sum()) for w in weights) / total if total else 0.0


def apply(model: torch.nn.Module, method: Method, device: str, what: str = "the model",
          tokenizer: Tokenizer | None = None, ranked: list[heads.HeadScore] | None = None) -> torch.nn.Module:
    """A compressed copy of ``model`` (on ``device``); ``model`` itself is left exactly as it was.

    ``mheads-N`` measures its importance on a text with ``tokenizer`` and ``model``'s own language-model loss,
    unless ``ranked`` brings one measured elsewhere (an encoder's, on its masked-LM model)."""
    reason = available(method, device)
    if reason:
        raise ExplorerError(reason)
    if method.kind == "exit":
        raise ExplorerError(f"{method.name} does not make a copy of a model: it is measured on a lab model's trained "
                            "exits by explorer.compression.earlyexit (compress lab/NAME --method exit-0.3).")
    if method.kind != "cast":
        _require_linear(model, method)  # before the copy: nothing to compress costs no memory
    if method.kind == "mheads" and ranked is None:  # likewise: a model without its own loss, or no text
        heads.require_lm_loss(model)
        if tokenizer is None:
            raise ExplorerError("mheads-N measures importance on a text and needs the model's tokenizer.")
    out = _copy(model, what, device)
    with torch.no_grad():
        if method.kind == "cast":
            return out.to(dtype=CASTS[method.name])
        layers = _require_linear(out, method)
        if method.kind == "int8":
            return _int8(out, layers)
        if method.kind == "weight-only":
            return _weight_only(out, layers, method.amount)
        if method.kind == "prune":
            _prune(layers, method.amount)
            return out
    if method.kind == "heads":
        ranked = None  # the proxy's ranking
    elif ranked is not None:
        ranked = heads.onto(ranked, out)  # measured on the checkpoint's masked-LM model
    else:
        assert tokenizer is not None  # mheads without a ranking was refused above without one
        ranked = heads.gradient_scores(out, _importance_ids(tokenizer, device, out))
    heads.prune(out, method.amount, ranked)
    return out


def _importance_ids(tokenizer: Tokenizer, device: str, model: torch.nn.Module) -> torch.Tensor:
    """The importance text's ids (1, T), at most ``MAX_IMPORTANCE_TOKENS`` and the model's positions."""
    limit = getattr(getattr(model, "config", None), "max_position_embeddings", None) or MAX_IMPORTANCE_TOKENS
    ids = tokenizer(heads.importance_text(), return_tensors="pt")["input_ids"]
    return ids[:, :min(MAX_IMPORTANCE_TOKENS, int(limit))].to(device)


def masked_scores(model: torch.nn.Module, tokenizer: Tokenizer, device: str) -> list[heads.HeadScore]:
    """Michel et al.'s head importance for an encoder's masked-LM ``model`` (with its MLM head) on the
    importance text, every token predicted once (:func:`explorer.compression.heads.masked_copies`)."""
    mask_id = getattr(tokenizer, "mask_token_id", None)
    if mask_id is None:
        raise ExplorerError("mheads-N masks tokens to measure an encoder's loss, and this tokenizer has no mask "
                            "token. Pick heads-N instead.")
    ids = _importance_ids(tokenizer, device, model)  # (1, T)
    special = torch.tensor(tokenizer.get_special_tokens_mask(ids[0].tolist(), already_has_special_tokens=True),
                           dtype=torch.bool, device=ids.device)[None]  # (1, T): [CLS] and [SEP] are never targets
    masked, labels = heads.masked_copies(ids, mask_id, special)  # (K, T) each
    return heads.gradient_scores(model, masked, labels)

"""FastBERT's early exit (Liu et al., 2020): a classifier after every layer, trained by self-distillation.

A lab model becomes a FastBERT-style classifier in three steps, on the downstream task of
:mod:`explorer.training.sections` ("library reference or narrative docs"):

1. **fine-tune** a copy of the encoder with the *teacher* classifier on its last layer (labels, cross-entropy);
2. **self-distil**: with the encoder and the teacher frozen, train one *student* classifier after each
   earlier layer to match the teacher's distribution (KL divergence; FastBERT needs no labels here);
3. **adaptive inference** at *speed* S: run the layers one by one; after layer i, if the student's
   normalised entropy (:func:`uncertainty`, 0 = certain, 1 = a coin toss) is below S, answer with it
   and skip the rest. S = 0 never exits early (the teacher answers); larger S exits sooner.

What differs from the paper, and why: FastBERT's classifiers each have a small self-attention layer
(128 wide) before the fully connected layers; here each is the pooled hidden state (mean over real
tokens, or the last token of a causal LM, as :mod:`explorer.training.downstream`) through a 128-wide MLP.
The lab's models are 2-4 layers deep, so the attention would cost about as much as a layer.

Adaptive inference really stops computing: a forward hook on each layer scores the student and, when
it is sure, raises an exception that unwinds the encoder's forward, so later layers never run. Which
module list holds the layers is the encoder's anatomy card's (:mod:`explorer.internals.sites`: BERT, RoBERTa,
ELECTRA, ALBERT's shared layer, DistilBERT, GPT-2, and T5's and BART's encoders).

>>> round(float(uncertainty(torch.tensor([0.5, 0.5]))), 3), round(float(uncertainty(torch.tensor([1.0, 0.0]))), 3)
(1.0, 0.0)
"""

from __future__ import annotations

import copy
import json
import math
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, cast

import torch
import torch.nn.functional as F
from torch import nn

from explorer.architecture import anatomy, modeltypes
from explorer.architecture.build import BUILD_LOCK
from explorer.core import persist, userfiles
from explorer.core.errors import ExplorerError, shorten
from explorer.internals import sites
from explorer.training import checkpoint, corpus, downstream, sections, stepmemory, vocab
from explorer.training.corpus import Corpus
from explorer.training.downstream import Encoder, Example

__all__ = ["DEFAULT_SPEC", "FOLDER", "HIDDEN", "Decision", "ExitSpec", "Exits", "Report", "adaptive", "decide",
           "encode", "load", "probabilities", "save", "test_examples", "train", "uncertainty", "wrap"]

HIDDEN = 128  # FastBERT's classifiers work at 128 dimensions
FOLDER = checkpoint.EXITS  # inside a lab checkpoint: exits.pt (encoder + classifiers) and exits.json (the report)
MAX_REPORT_BYTES = 1_000_000
Progress = Callable[[float, str], None]


@dataclass(frozen=True)
class ExitSpec:
    """The budget of both training stages (the same for every model, so their exits compare)."""

    steps: int = 100  # stage 1: encoder + teacher on labels
    distill_steps: int = 100  # stage 2: students on the teacher's distribution
    batch: int = 32
    lr: float = 5e-4
    seq_len: int = 64
    test_examples: int = 512  # +-2 points of standard error at 80%
    seed: int = 0

    def checked(self) -> ExitSpec:
        if not (1 <= self.steps <= 10_000 and 1 <= self.distill_steps <= 10_000 and 2 <= self.batch <= 1024
                and 0 < self.lr < 1 and 16 <= self.seq_len <= 512 and 2 <= self.test_examples <= 100_000):
            raise ExplorerError("Exit training settings out of range: steps and distill_steps 1-10,000, batch "
                                "2-1,024, lr in (0, 1), seq_len 16-512, test_examples 2-100,000.")
        return self


DEFAULT_SPEC = ExitSpec()


def _head(hidden: int, labels: int) -> nn.Module:
    return nn.Sequential(nn.Linear(hidden, HIDDEN), nn.Tanh(), nn.Linear(HIDDEN, labels))


class _Exit(Exception):  # noqa: N818  (control flow, not an error: a student was sure enough)
    def __init__(self, layer: int, probs: torch.Tensor) -> None:
        super().__init__(layer)
        self.layer, self.probs = layer, probs


class Exits(nn.Module):
    """An encoder with a classifier after each of its ``layers`` layers; the last classifier is the teacher."""

    def __init__(self, encoder: Encoder, layers: int, layer_path: str, labels: int = 2) -> None:
        super().__init__()
        self.encoder = encoder.module
        self.pool, self.hidden_size, self.layers, self.layer_path = (encoder.pool, encoder.hidden_size, layers,
                                                                     layer_path)
        self.classifiers = nn.ModuleList([_head(encoder.hidden_size, labels) for _ in range(layers)])

    def teacher_logits(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        """(B, labels): the whole encoder, then the teacher (what the model answers without early exit)."""
        hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state  # (B, T, H)
        return self.classifiers[-1](downstream.pool(hidden, attention_mask, self.pool))

    def layer_logits(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        """(L, B, labels): every classifier on its layer's output (the teacher on the final hidden state)."""
        out = self.encoder(input_ids=input_ids, attention_mask=attention_mask, output_hidden_states=True)
        states = [*out.hidden_states[1:self.layers], out.last_hidden_state]  # layer 1..L-1 outputs, then the final
        return torch.stack([c(downstream.pool(h, attention_mask, self.pool)) for c, h in zip(self.classifiers, states,
                                                                                       strict=True)])

    def layer_modules(self) -> Sequence[nn.Module]:
        layers: Any = self.encoder.get_submodule(self.layer_path)  # an nn.ModuleList (found by _find_layers)
        return list(layers)


def uncertainty(probs: torch.Tensor) -> torch.Tensor:
    """FastBERT's normalised entropy of a distribution over the last dimension: 0 (certain) to 1 (uniform)."""
    p = probs.clamp_min(1e-12)
    return -(p * p.log()).sum(-1) / math.log(probs.shape[-1])


def _find_layers(module: nn.Module) -> tuple[int, str]:
    """(how many layers, the module list holding them), from the encoder's anatomy card; ALBERT's list holds its
    one shared layer, called once per layer. An encoder-decoder's encoder stack (``get_encoder()``) holds its card's
    encoder blocks under the stack's own name."""
    config = getattr(module, "config", None)
    if config is not None and modeltypes.is_encoder_decoder(config):
        blocks = anatomy.card_of(config).stack("encoder").blocks.partition(".")[2]
        return int(modeltypes.num_layers(config, "encoder") or 0), blocks
    found = sites.of(module)
    return found.layers, found.block_t.replace(".{i}", ".0").rpartition(".")[0]


def wrap(model: nn.Module) -> Exits:
    """A fresh :class:`Exits` around a COPY of ``model``'s encoder (the model itself is never modified)."""
    found = downstream.encoder_of(model)
    module = copy.deepcopy(found.module)
    device = next(module.parameters()).device
    layers, path = _find_layers(module)
    if layers < 2:
        raise ExplorerError("Early exit needs at least two layers to choose between; this model has one.")
    return Exits(Encoder(module, found.pool, found.hidden_size), layers, path, len(sections.LABELS)).to(device)


@dataclass(frozen=True)
class Report:
    """What the exits learnt: each classifier's accuracy on the held-out test set (the last is the teacher)."""

    task: str
    layer_accuracy: tuple[float, ...]
    n_train: int
    n_test: int
    seconds: float
    spec: ExitSpec

    def to_dict(self) -> dict[str, object]:
        return {"task": self.task, "labels": list(sections.LABELS),
                "layer_accuracy": [round(a, 4) for a in self.layer_accuracy], "teacher_accuracy":
                round(self.layer_accuracy[-1], 4), "n_train": self.n_train, "n_test": self.n_test,
                "seconds": round(self.seconds, 2), "spec": asdict(self.spec)}


def _fit(exits: Exits, train: Sequence[Example], spec: ExitSpec, report: Progress) -> None:
    """Stage 1: encoder + teacher on the labels."""
    device = next(exits.parameters()).device
    params = [*exits.encoder.parameters(), *exits.classifiers[-1].parameters()]
    optimizer = torch.optim.AdamW(params, lr=spec.lr, weight_decay=0.01)
    # BERT's fine-tuning schedule: linear warm-up over the first 10% of the steps, then linear decay to 0.
    # Without it a 4-layer model pre-trained here collapsed to one class at lr 5e-4 (50% at every layer, measured).
    warm = max(1, spec.steps // 10)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min((s + 1) / warm, max(0.0, (spec.steps - s) / max(1, spec.steps - warm))))
    exits.train()
    for step, chunk in enumerate(downstream.chunks(train, spec.batch, spec.steps)):
        ids, mask, labels = downstream.tensors(chunk, device)
        loss = F.cross_entropy(exits.teacher_logits(ids, mask), labels)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        optimizer.step()
        schedule.step()
        report(0.6 * (step + 1) / spec.steps,
               f"fine-tuning the encoder and its teacher: step {step + 1} of {spec.steps}")


def _distil(exits: Exits, train: Sequence[Example], spec: ExitSpec, report: Progress) -> None:
    """Stage 2: students match the frozen teacher (KL(teacher || student), summed over layers)."""
    device = next(exits.parameters()).device
    students = [p for c in exits.classifiers[:-1] for p in c.parameters()]
    optimizer = torch.optim.AdamW(students, lr=spec.lr, weight_decay=0.01)
    exits.eval()  # the frozen encoder without dropout: the teacher's distribution is the one inference sees
    for step, chunk in enumerate(downstream.chunks(train, spec.batch, spec.distill_steps)):
        ids, mask, _ = downstream.tensors(chunk, device)  # no labels: FastBERT distils on unlabelled text
        with torch.no_grad():
            out = exits.encoder(input_ids=ids, attention_mask=mask, output_hidden_states=True)
            teacher = F.log_softmax(exits.classifiers[-1](downstream.pool(out.last_hidden_state, mask, exits.pool)), -1)
        loss = sum((F.kl_div(F.log_softmax(c(downstream.pool(h, mask, exits.pool)), -1), teacher, log_target=True,
                             reduction="batchmean")
                    for c, h in zip(exits.classifiers[:-1], (out.hidden_states or ())[1:exits.layers], strict=True)),
                   torch.zeros((), device=device))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        report(0.6 + 0.35 * (step + 1) / spec.distill_steps,
               f"self-distilling the {exits.layers - 1} student classifier(s): step {step + 1} of {spec.distill_steps}")


def probabilities(exits: Exits, items: Sequence[Example]) -> torch.Tensor:
    """(L, N, labels) every classifier's distribution for every example (float32, on the CPU)."""
    device = next(exits.parameters()).device
    exits.eval()
    out = []
    with torch.no_grad():
        for lo in range(0, len(items), 64):
            ids, mask, _ = downstream.tensors(items[lo:lo + 64], device)
            out.append(F.softmax(exits.layer_logits(ids, mask).float(), -1).cpu())
    return torch.cat(out, dim=1)


@dataclass(frozen=True)
class Decision:
    """Adaptive inference at one speed: each example's answer and the layer it left at (1-based)."""

    speed: float
    predictions: torch.Tensor  # (N,)
    layers: torch.Tensor  # (N,) 1..L

    def accuracy(self, labels: torch.Tensor) -> float:
        return float((self.predictions == labels).float().mean())

    @property
    def mean_layers(self) -> float:
        return float(self.layers.float().mean())


def decide(probs: torch.Tensor, speed: float) -> Decision:
    """What adaptive inference at ``speed`` answers, from every layer's distribution ``probs`` (L, N, C)."""
    sure = uncertainty(probs[:-1]) < speed  # (L-1, N): a student may answer
    sure = torch.cat([sure, torch.ones_like(sure[:1])])  # the teacher always answers
    first = sure.float().argmax(0)  # (N,) index of the first layer sure enough
    picked = probs[first, torch.arange(probs.shape[1])]  # (N, C)
    return Decision(speed, picked.argmax(-1), first + 1)


def adaptive(exits: Exits, input_ids: torch.Tensor, attention_mask: torch.Tensor,
             speed: float) -> tuple[int, int, float]:
    """One example (batch 1) through the layers until a classifier is sure: (label, layer, uncertainty).

    The later layers do not run: the hook of the layer that exits raises, unwinding the forward."""
    if input_ids.shape[0] != 1:
        raise ExplorerError("Adaptive inference takes one example at a time (each may leave at another layer).")
    seen = [0]

    def hook(_module: nn.Module, _args: Any, output: Any) -> None:
        seen[0] += 1
        if seen[0] >= exits.layers:
            return  # the teacher reads the final hidden state (after any final norm), below
        first = output[0] if isinstance(output, tuple | list) else output
        hidden = cast(torch.Tensor, getattr(first, "last_hidden_state", first))
        probs = F.softmax(exits.classifiers[seen[0] - 1](downstream.pool(hidden, attention_mask, exits.pool)), -1)[0]
        if float(uncertainty(probs)) < speed:
            raise _Exit(seen[0], probs)

    handles = [m.register_forward_hook(hook) for m in exits.layer_modules()]
    try:
        with torch.no_grad():
            probs = F.softmax(exits.teacher_logits(input_ids, attention_mask), -1)[0]
        layer = exits.layers
    except _Exit as out:
        probs, layer = out.probs, out.layer
    finally:
        for h in handles:
            h.remove()
    return int(probs.argmax()), layer, float(uncertainty(probs))


def train(model: nn.Module, spec: ExitSpec = DEFAULT_SPEC, text: Corpus | None = None,
          progress: Progress | None = None) -> tuple[Exits, Report]:
    """Exits for a copy of ``model`` (stages 1 and 2), and each classifier's held-out accuracy."""
    spec = spec.checked()
    report = progress or (lambda _f, _t: None)
    text = text or corpus.bundled()
    tic = time.perf_counter()
    report(0.0, f"Cutting \"{sections.TASK}\" examples from the corpus…")
    stepmemory.fine_tune_fits(model, spec.batch, spec.seq_len, "Training FastBERT's exits")  # before the copy
    train_set = sections.examples(text, "train", spec.steps * spec.batch, spec.seed, spec.seq_len)
    test = sections.examples(text, "heldout", spec.test_examples, spec.seed, spec.seq_len)
    device = next(model.parameters()).device
    with torch.random.fork_rng(devices=[device] if device.type == "cuda" else []):
        torch.manual_seed(spec.seed)  # the classifiers' init and dropout: same seed, same exits
        exits = wrap(model)
        _fit(exits, train_set, spec, report)
        _distil(exits, train_set, spec, report)
    report(0.95, "Scoring every exit on the held-out documents…")
    labels = torch.tensor([e.label for e in test])
    probs = probabilities(exits, test)
    accuracy = tuple(float((p.argmax(-1) == labels).float().mean()) for p in probs)
    report(1.0, "Done.")
    return exits, Report(sections.TASK, accuracy, len(train_set), len(test), time.perf_counter() - tic, spec)


def test_examples(spec: ExitSpec = DEFAULT_SPEC, text: Corpus | None = None) -> list[Example]:
    """The held-out examples ``train`` scored the exits on."""
    return sections.examples(text or corpus.bundled(), "heldout", spec.test_examples, spec.seed, spec.seq_len)


def encode(text: str, seq_len: int, device: torch.device | str) -> tuple[torch.Tensor, torch.Tensor]:
    """(1, T) ids and mask of a passage in the lab's tokenizer, cut to ``seq_len`` tokens."""
    tok = vocab.tokenizer()
    ids = tok(text, truncation=True, max_length=seq_len, return_tensors="pt")["input_ids"].to(device)
    return ids, torch.ones_like(ids)


# ----------------------------------------------------------------------------------------------- saving, loading

def save(exits: Exits, report: Report, checkpoint_dir: str | Path) -> Path:
    """Write the exits into ``checkpoint_dir/fastbert`` atomically (a crash leaves the earlier ones or none)."""
    target = Path(checkpoint_dir) / FOLDER
    if not (Path(checkpoint_dir) / "config.json").is_file():
        raise ExplorerError(f"{shorten(str(checkpoint_dir))} is not a saved model (no config.json): save the lab "
                            "run first, then its exits.")
    work = Path(tempfile.mkdtemp(prefix=f".{FOLDER}.tmp-", dir=checkpoint_dir))
    try:
        torch.save({k: v.detach().cpu() for k, v in exits.state_dict().items()}, work / "exits.pt")
        meta = {**report.to_dict(), "layers": exits.layers, "pool": exits.pool, "hidden_size": exits.hidden_size,
                "layer_path": exits.layer_path}
        (work / "exits.json").write_text(json.dumps(meta, indent=1), encoding="utf-8")
        persist.publish_dir(work, target)
    except OSError as err:
        raise ExplorerError(f"Saving the exits failed ({err.strerror or err}); "
                            "free some space and save again.") from err
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return target


def load(checkpoint_dir: str | Path, device: str = "cpu") -> tuple[Exits, dict[str, Any]]:
    """The exits saved in a lab checkpoint, on ``device``, and their report (``exits.json``)."""
    from transformers import AutoConfig, AutoModel  # a save or a training never needs the Auto classes

    folder = Path(checkpoint_dir) / FOLDER
    if not checkpoint.has_exits(checkpoint_dir):
        raise ExplorerError("This lab model has no early-exit classifiers: train them in the Pretraining lab "
                            "(tick \"FastBERT exits\", then Save) or with `python -m explorer pretrain mlm --exits`.")
    meta = userfiles.loads_json(userfiles.read_path(folder / "exits.json", MAX_REPORT_BYTES, "exits.json"),
                                "exits.json", MAX_REPORT_BYTES)
    if not isinstance(meta, dict) or not {"layers", "pool", "hidden_size", "layer_path"} <= meta.keys():
        raise ExplorerError("exits.json of this lab model is damaged: train the exits again.")
    with BUILD_LOCK:  # from_config patches class-level init state while it builds
        config = AutoConfig.from_pretrained(str(checkpoint_dir))
        base: Any = AutoModel.from_config(config)
    module = base.get_encoder() if modeltypes.is_encoder_decoder(config) else base
    exits = Exits(Encoder(module, str(meta["pool"]), int(meta["hidden_size"])), int(meta["layers"]),
                  str(meta["layer_path"]), len(meta.get("labels") or sections.LABELS))
    state = torch.load(folder / "exits.pt", map_location="cpu", weights_only=True)
    missing, unexpected = exits.load_state_dict(state, strict=False)
    if unexpected or any(not k.startswith("encoder.pooler.") for k in missing):
        raise ExplorerError("The saved exits do not match this lab model's layers: train the exits again.")
    if missing and hasattr(module, "pooler"):  # a masked LM's body has no pooler; ours was built with one
        module.pooler = None
    return exits.to(device).eval(), meta

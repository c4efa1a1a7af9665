"""The lab's downstream probe: "were two adjacent words swapped in this window?", the same for every variant.

ELECTRA's paper compares a discriminator and a masked LM fairly by fine-tuning both on the same
task with the same budget; this is that comparison at the lab's scale. The task is built from the
corpus itself:

- a **positive** is a window in which two adjacent whole words (single WordPiece pieces, letters
  only, different from each other) trade places; a **negative** is an untouched window. Positives
  and negatives come from different windows, so the classifier cannot compare a window with its
  own swap. Each set is exactly balanced and drawn with a seed.
- **train** examples come from the corpus's TRAIN documents, **test** examples from its HELD-OUT
  documents (the ones the trainer evaluates on and never trains on).
- the pre-trained encoder (a COPY: the run's model is never modified) plus a fresh linear
  classifier over the mean-pooled final hidden state (last token for a causal LM) is fine-tuned for
  a fixed number of steps with a fixed batch and learning rate, then scored on the test set.

Mean pooling rather than [CLS]: an MLM-only model never trains its [CLS] vector while BERT's NSP
does, so [CLS] would favour one objective for a reason that is not what the probe measures.

Two references go beside every score: the majority baseline (0.5, the sets are balanced) and the
*floor*, the same probe on a randomly initialised model of the same architecture: a tiny
transformer fine-tuned from scratch already learns something, and only the gap above the floor is
what pre-training bought.

>>> swap(("[CLS]", "the", "list", "is", "sorted", "[SEP]"), 2)
('[CLS]', 'the', 'is', 'list', 'sorted', '[SEP]')
>>> swap_positions(("[CLS]", "a", "list", "##s", "is", "here", "[SEP]"))
[4]
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from explorer.architecture import modeltypes
from explorer.core.errors import ExplorerError
from explorer.training import batches, corpus, lossfamilies, recipes, stepmemory, vocab
from explorer.training.corpus import Corpus

__all__ = ["DEFAULT_SPEC", "TASK", "Encoder", "Example", "ProbeResult", "ProbeSpec", "encoder_of", "examples", "floor",
           "pool", "probe", "chunks", "swap", "swap_positions", "tensors"]

TASK = "swapped adjacent words"
MAJORITY = 0.5  # the sets are exactly balanced


@dataclass(frozen=True)
class ProbeSpec:
    """The fixed fine-tuning budget every variant gets (ELECTRA's fair comparison needs it to be the same)."""

    steps: int = 100
    batch: int = 32
    lr: float = 5e-4
    seq_len: int = 64  # short windows: the probe costs about as much as 30 training steps of a tiny model
    test_examples: int = 512  # about +-2.2 points of standard error at 50%
    seed: int = 0  # draws the examples and the classifier's initial weights

    def checked(self) -> ProbeSpec:
        if not (1 <= self.steps <= 10_000 and 2 <= self.batch <= 1024 and 0 < self.lr < 1
                and 16 <= self.seq_len <= 512 and 2 <= self.test_examples <= 100_000):
            raise ExplorerError("Probe settings out of range: steps 1-10,000, batch 2-1,024, lr in (0, 1), "
                                "seq_len 16-512, test_examples 2-100,000.")
        return self

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


DEFAULT_SPEC = ProbeSpec()


@dataclass(frozen=True)
class Example:
    """One probe example: ``tokens`` (framed window), ``label`` (1 = swapped), ``source`` (the untouched window)."""

    tokens: tuple[str, ...]
    label: int
    source: tuple[str, ...]
    split: str


@dataclass(frozen=True)
class ProbeResult:
    """Test accuracy after the fixed fine-tuning budget, with what it should be read against."""

    task: str
    accuracy: float
    majority: float
    n_train: int
    n_test: int
    seconds: float
    spec: ProbeSpec

    @property
    def stderr(self) -> float:
        """Binomial standard error of the accuracy (the test set's sampling noise)."""
        return math.sqrt(max(self.accuracy * (1 - self.accuracy), 1e-4) / max(self.n_test, 1))

    def to_dict(self) -> dict[str, object]:
        return {"task": self.task, "accuracy": round(self.accuracy, 4), "stderr": round(self.stderr, 4),
                "majority": self.majority, "n_train": self.n_train, "n_test": self.n_test,
                "seconds": round(self.seconds, 2), "spec": self.spec.to_dict()}


def _is_word(token: str) -> bool:
    return token.isalpha() and not token.startswith("##")


def swap_positions(window: Sequence[str]) -> list[int]:
    """Positions ``i`` where tokens ``i`` and ``i+1`` are two different whole words (no ``##`` piece follows)."""
    out = []
    for i in range(1, len(window) - 2):  # never the [CLS] or [SEP] frame
        a, b, after = window[i], window[i + 1], window[i + 2]
        if _is_word(a) and _is_word(b) and a != b and not after.startswith("##"):
            out.append(i)
    return out


def swap(window: Sequence[str], i: int) -> tuple[str, ...]:
    """``window`` with tokens ``i`` and ``i+1`` transposed."""
    out = list(window)
    out[i], out[i + 1] = out[i + 1], out[i]
    return tuple(out)


def examples(text: Corpus, split: str, n: int, seed: int, seq_len: int) -> list[Example]:
    """``n`` balanced examples (``n // 2`` swapped) from distinct windows of ``split``, in a seeded order."""
    windows = batches.windows(text, split, seq_len)
    rng = np.random.default_rng([seed, 0 if split == "train" else 1])
    out: list[Example] = []
    want = n - n % 2
    for index in rng.permutation(len(windows)):
        if len(out) == want:
            break
        window = windows[int(index)]
        label = len(out) % 2  # alternate: exactly half positives
        if label == 0:
            out.append(Example(window, 0, window, split))
            continue
        places = swap_positions(window)
        if places:
            out.append(Example(swap(window, places[int(rng.integers(len(places)))]), 1, window, split))
    out = out[:len(out) - len(out) % 2]  # a short text can run out after a negative: keep the halves equal
    if len(out) < min(want, 2):
        raise ExplorerError(f"The {split} text gives too few probe examples ({len(out)}); give a longer text file.")
    order = rng.permutation(len(out))
    return [out[int(i)] for i in order]


@dataclass(frozen=True)
class Encoder:
    """What the probe fine-tunes: a module ``(input_ids, attention_mask) -> .last_hidden_state`` and how to pool it."""

    module: nn.Module
    pool: str  # "mean" over real tokens, or "last" real token (a causal LM sees the whole window only there)
    hidden_size: int


def _hidden_size(model: nn.Module) -> int:
    config: Any = model.config
    return int(getattr(config, "hidden_size", None) or getattr(config, "d_model", None) or config.n_embd)


def encoder_of(model: nn.Module) -> Encoder:
    """The part of a lab model that a downstream task fine-tunes; recognised by module attribute names.

    - ``discriminator`` (ELECTRA's pair): the discriminator's encoder (the generator is thrown away);
    - ``student`` (a distillation wrapper): the student's encoder;
    - ``mlm`` (SpanBERT: ``model.mlm`` is a BertForMaskedLM): its encoder;
    - an encoder-decoder config (T5, BART): ``get_encoder()``, mean-pooled;
    - a causal LM (``is_decoder`` or a ``*ForCausalLM`` / ``*LMHeadModel`` class): its body, last token;
    - anything else with a transformers ``base_model`` (BERT, RoBERTa, ALBERT, DistilBERT): that, mean-pooled.
    A new family whose model is none of these adds a branch here.
    """
    for name in ("discriminator", "student", "mlm"):
        inner = getattr(model, name, None)
        if isinstance(inner, nn.Module):
            return encoder_of(inner)
    config: Any = getattr(model, "config", None)
    if config is None or not hasattr(model, "base_model"):
        raise ExplorerError(f"The probe cannot find the encoder of a {type(model).__name__}; "
                            "add a branch for it in explorer.training.downstream.encoder_of.")
    hf: Any = model  # a transformers PreTrainedModel: get_encoder / base_model are its methods
    if modeltypes.is_encoder_decoder(config):
        return Encoder(hf.get_encoder(), "mean", _hidden_size(model))
    causal = getattr(config, "is_decoder", False) or type(model).__name__.endswith(("ForCausalLM", "LMHeadModel"))
    return Encoder(hf.base_model, "last" if causal else "mean", _hidden_size(model))


class _Classifier(nn.Module):
    """Encoder + a fresh linear layer over the pooled final hidden state -> 2 logits."""

    def __init__(self, encoder: Encoder) -> None:
        super().__init__()
        self.encoder = encoder.module
        self.pool = encoder.pool
        self.head = nn.Linear(encoder.hidden_size, 2)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state  # (B, T, H)
        return self.head(pool(hidden, attention_mask, self.pool))  # (B, 2)


def pool(hidden: torch.Tensor, attention_mask: torch.Tensor, how: str) -> torch.Tensor:
    """(B, T, H) hidden states -> (B, H) float32: the mean over real tokens, or the last real token (``"last"``)."""
    if how == "last":
        last = attention_mask.sum(1) - 1  # (B,) index of the last real token
        return hidden[torch.arange(hidden.shape[0], device=hidden.device), last].float()  # (B, H)
    mask = attention_mask.unsqueeze(-1).to(hidden.dtype)  # (B, T, 1)
    return ((hidden * mask).sum(1) / mask.sum(1).clamp(min=1.0)).float()  # (B, H)


def chunks(items: Sequence[Example], size: int, steps: int) -> list[Sequence[Example]]:
    """``steps`` consecutive batches of ``size`` examples, wrapping round ``items``."""
    return [items[(s * size) % len(items):][:size] for s in range(steps)]


def tensors(items: Sequence[Example], device: torch.device) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    tok = vocab.tokenizer()
    batch = batches.collate([{"input_ids": tok.convert_tokens_to_ids(list(e.tokens))} for e in items])
    labels = torch.tensor([e.label for e in items])
    return batch["input_ids"].to(device), batch["attention_mask"].to(device), labels.to(device)


def _accuracy(classifier: _Classifier, test: Sequence[Example], device: torch.device) -> float:
    classifier.eval()
    correct = 0
    with torch.no_grad():
        for lo in range(0, len(test), 64):
            ids, mask, labels = tensors(test[lo:lo + 64], device)
            correct += int((classifier(ids, mask).argmax(-1) == labels).sum())
    return correct / len(test)


def probe(model: nn.Module, text: Corpus | None = None, spec: ProbeSpec = DEFAULT_SPEC,
          progress: Callable[[float, str], None] | None = None) -> ProbeResult:
    """Fine-tune a copy of ``model``'s encoder + a linear head on the train split; accuracy on the held-out split.
    ``progress(fraction, text)`` hears of every step."""
    spec = spec.checked()
    stepmemory.fine_tune_fits(model, spec.batch, spec.seq_len, "The downstream probe")  # before the copy
    text = text or corpus.bundled()
    tic = time.perf_counter()
    train = examples(text, "train", spec.steps * spec.batch, spec.seed, spec.seq_len)
    test = examples(text, "heldout", spec.test_examples, spec.seed, spec.seq_len)
    found = encoder_of(model)
    device = next(found.module.parameters()).device
    with torch.random.fork_rng(devices=[device] if device.type == "cuda" else []):
        torch.manual_seed(spec.seed)  # the head's init and dropout: same seed, same accuracy
        classifier = _Classifier(Encoder(copy.deepcopy(found.module), found.pool, found.hidden_size)).to(device)
        classifier.train()
        optimizer = torch.optim.AdamW(classifier.parameters(), lr=spec.lr, weight_decay=0.01)
        for step, chunk in enumerate(chunks(train, spec.batch, spec.steps)):  # the train set is steps x batch long
            if progress:
                progress(0.9 * step / spec.steps, f"step {step + 1:,}/{spec.steps:,}")
            ids, mask, labels = tensors(chunk, device)
            loss = F.cross_entropy(classifier(ids, mask), labels)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(classifier.parameters(), 1.0)
            optimizer.step()
        if progress:
            progress(0.9, f"scoring {len(test):,} held-out examples")
        accuracy = _accuracy(classifier, test, device)
    return ProbeResult(TASK, accuracy, MAJORITY, len(train), len(test), time.perf_counter() - tic, spec)


def floor(objective: str, size: str = "tiny", text: Corpus | None = None, spec: ProbeSpec = DEFAULT_SPEC,
          seed: int = 0, device: str = "cpu") -> ProbeResult:
    """The probe on a randomly initialised model of ``objective``'s architecture: what no pre-training scores."""
    recipe = recipes.get(objective)
    family = lossfamilies.get(recipe.loss)
    # A student (DistilBERT) is initialised from its teacher's layers: from a random teacher it is random too.
    extra = {}
    if family.teacher:
        teacher = recipes.get(family.teacher)
        extra["teacher"] = lossfamilies.get(teacher.loss).build(teacher, size, seed, device)
    return probe(family.build(recipe, size, seed, device, **extra), text, spec)

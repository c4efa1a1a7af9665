"""Training the tuned lens: each layer's translator fitted to the final distribution, and its held-out KL.

Belrose et al. (2023): for every layer ``l`` below the last, minimise ``KL(final || readout(T_l(h_l)))`` over
the tokens of a text, the model frozen. Windows of ``seq_len`` tokens come from the bundled corpus (the Lab's,
:func:`explorer.training.corpus.bundled`) or a user's text file, the training part only; the held-out part
measures each layer's KL under the logit lens (no translator) and the tuned lens, on the same tokens.

Cost: each layer's reading goes through the model's head, ``d x V`` per token (Gemma 3: 640 x 262,144), forward
and backward: the head, not the model, is the work (about 20 layers x 3 x 2 x d x V per token). So the readings
run a chunk of tokens at a time (:data:`READ_BYTES`), and only the translators get gradients
(``torch.autograd.grad``: the model, shared with other requests, never receives a ``.grad``). Stopping early
(Stop, the Lab's time budget) keeps what was trained: it is evaluated and saved as such.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

import torch

from explorer.core.errors import ExplorerError
from explorer.explain import statistics, translator
from explorer.explain.scorer import no_logits
from explorer.explain.translator import Translators
from explorer.internals import hooked, sites
from explorer.runtime import fence
from explorer.runtime.offload import input_device
from explorer.training.corpus import Corpus

if TYPE_CHECKING:  # typing only: no runtime import of the loader's model types
    from explorer.runtime.loading import LoadedModel

__all__ = ["DEFAULT_SPEC", "QUICK_SPEC", "READ_BYTES", "TuneReport", "TuneSpec", "heldout_kl", "train"]

READ_BYTES = 256 * 2**20  # one chunk of readings through the head (logits, their softmax and its gradient)


@dataclass(frozen=True)
class TuneSpec:
    """How long and on what: ``steps`` of ``windows`` windows of ``seq_len`` tokens, Adam at ``lr``;
    ``heldout`` windows measure the KL."""

    # 20 steps of 2 x 32 tokens: on Gemma 3 270M about 15 TFLOP (18 layers x 3 x 2 x 640 x 262,144 per token), some
    # 7 minutes on a 2-core CPU, within the Lab's 30-minute budget (seconds on a GPU); measured, every layer gains
    # from the first step already (tests/test_explain_oracles.py), so more steps refine rather than rescue.
    steps: int = 20
    windows: int = 2
    seq_len: int = 32
    lr: float = 1e-2  # Adam, decayed linearly to a tenth
    heldout: int = 4
    seed: int = 0

    def checked(self) -> TuneSpec:
        for name, lo, hi in (("steps", 1, 100_000), ("windows", 1, 256), ("seq_len", 4, 2048), ("heldout", 1, 1024)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
                raise ExplorerError(f"The tuned lens's {name} must be a whole number from {lo} to {hi:,} "
                                    f"(got {value!r}).")
        return self


DEFAULT_SPEC = TuneSpec()
QUICK_SPEC = TuneSpec(steps=3, windows=2, seq_len=16, heldout=2)  # EXPLORER_LAB_QUICK: the page tests'


@dataclass(frozen=True)
class TuneReport:
    model: str
    corpus: str
    steps: int  # steps trained (fewer than asked when stopped)
    asked: int
    tokens: int  # training tokens read
    seconds: float
    logit_kl: tuple[float, ...]  # held-out KL(final || layer), per layer 0..L (the last is 0)
    tuned_kl: tuple[float, ...]
    folder: str = ""

    def to_dict(self) -> dict[str, object]:
        return {**asdict(self), "logit_kl": list(self.logit_kl), "tuned_kl": list(self.tuned_kl)}


def _stream_ids(loaded: LoadedModel, docs: tuple[tuple[str, ...], ...], wanted: int, seed: int) -> list[int]:
    """About ``wanted`` token ids of the documents, in a shuffled (seeded) order of documents."""
    order = list(range(len(docs)))
    random.Random(seed).shuffle(order)
    ids: list[int] = []
    for i in order:
        ids += [int(t) for t in loaded.tokenizer("\n".join(docs[i]), add_special_tokens=False)["input_ids"]]
        if len(ids) >= wanted:
            break
    if len(ids) < wanted:
        raise ExplorerError(f"The text gives {len(ids):,} tokens; the tuned lens asks for {wanted:,} here: give a "
                            "longer text, or fewer steps or shorter windows.")
    return ids


def _windows(loaded: LoadedModel, ids: list[int], count: int, seq_len: int) -> Iterator[torch.Tensor]:
    """``(count, seq_len)`` batches of consecutive windows, each framed by the tokenizer's own specials."""
    tok = loaded.tokenizer
    framed = [int(i) for i in tok("", add_special_tokens=True)["input_ids"]]
    front = framed[: 1] if framed else []
    back = framed[1:] if len(framed) > 1 else []
    body = seq_len - len(front) - len(back)
    rows = [front + ids[i:i + body] + back for i in range(0, len(ids) - body + 1, body)]
    for start in range(0, len(rows) - count + 1, count):
        yield torch.tensor(rows[start:start + count], device=input_device(loaded.model))


def _inputs(model: torch.nn.Module, found: sites.Sites, ids: torch.Tensor) -> dict[str, object]:
    if found.family == "encoder-decoder":  # the decoder reads the same text, one token later (teacher forcing)
        start = int(getattr(model.config, "decoder_start_token_id", None) or 0)
        dec = torch.cat([torch.full_like(ids[:, :1], start), ids[:, :-1]], 1)
        return {"input_ids": ids, "decoder_input_ids": dec, "use_cache": False}
    if found.family == "decoder":  # its head is read per layer below: none in the forward itself
        return {"input_ids": ids, "use_cache": False, **no_logits(model, ids.device)}
    return {"input_ids": ids}


def _streams(model: torch.nn.Module, found: sites.Sites, ids: torch.Tensor) -> torch.Tensor:
    """Every layer's stream ``(L+1, N, d)`` over the batch's tokens (no gradient: the model is frozen)."""
    with torch.no_grad():  # on the model's view, its lock held (explorer.internals.hooked)
        entered, outs, _ = hooked.streams(model, found, _inputs(model, found, ids))  # type: ignore[arg-type]
    stack = torch.stack([entered, *outs])  # (L+1, B, T, d)
    return stack.reshape(stack.shape[0], -1, stack.shape[-1])


def _chunk(found: sites.Sites, model: torch.nn.Module) -> int:
    """Tokens read through the head at once: their logits, softmax and gradient within :data:`READ_BYTES`."""
    vocab = int(getattr(model.config, "vocab_size", 0) or 50_000)
    return max(1, READ_BYTES // (vocab * 4 * 3))


def _layer_kl(model: torch.nn.Module, found: sites.Sites, hidden: torch.Tensor, final: torch.Tensor,
              maps: Translators | None, layer: int) -> torch.Tensor:
    """Mean ``KL(final || reading of layer)`` over the tokens ``hidden`` ``(N, d)`` (differentiable in ``maps``)."""
    h = maps(layer, hidden) if maps is not None else hidden
    return statistics.kl(final, found.readout(model, h).float().log_softmax(-1)).mean()


def _final(model: torch.nn.Module, found: sites.Sites, last: torch.Tensor, chunk: int) -> torch.Tensor:
    """The model's own log-probabilities ``(N, V)`` float32 of the last layer's stream ``(N, d)``."""
    with torch.no_grad():
        return torch.cat([found.readout(model, last[i:i + chunk]).float().log_softmax(-1)
                          for i in range(0, last.shape[0], chunk)])


def _step(model: torch.nn.Module, found: sites.Sites, maps: Translators, stream: torch.Tensor,
          chunk: int) -> float:
    """One step's gradients into ``maps`` (every layer, a chunk of tokens at a time); the mean KL before it."""
    final = _final(model, found, stream[-1], chunk)
    params = [maps.weight, maps.bias]
    total, grads = 0.0, [torch.zeros_like(p) for p in params]
    count = stream.shape[1]
    for layer in range(found.layers):
        for i in range(0, count, chunk):
            with torch.enable_grad():
                part = _layer_kl(model, found, stream[layer, i:i + chunk], final[i:i + chunk], maps, layer)
                share = part * (min(chunk, count - i) / count)
                for acc, g in zip(grads, torch.autograd.grad(share, params), strict=True):
                    acc += g
            total += float(share.detach())
    for p, g in zip(params, grads, strict=True):
        p.grad = g
    return total / found.layers


def heldout_kl(model: torch.nn.Module, found: sites.Sites, maps: Translators | None,
               batches: list[torch.Tensor]) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """(logit lens, tuned lens) mean KL to the final distribution per layer 0..L over the held-out tokens."""
    chunk = _chunk(found, model)
    logit, tuned = [0.0] * (found.layers + 1), [0.0] * (found.layers + 1)
    tokens = 0
    with torch.no_grad():
        for ids in batches:
            stream = _streams(model, found, ids)
            final = _final(model, found, stream[-1], chunk)
            n = stream.shape[1]
            for layer in range(found.layers):
                for i in range(0, n, chunk):
                    h, f, w = stream[layer, i:i + chunk], final[i:i + chunk], min(chunk, n - i)
                    logit[layer] += float(_layer_kl(model, found, h, f, None, layer)) * w
                    tuned[layer] += float(_layer_kl(model, found, h, f, maps, layer)) * w if maps else 0.0
            tokens += n
    scale = 1.0 / max(1, tokens)
    return tuple(round(v * scale, 6) for v in logit), tuple(round(v * scale, 6) for v in tuned)


def train(loaded: LoadedModel, spec: TuneSpec, corpus: Corpus, *, progress: Callable[[float, str], None] | None = None,
          should_stop: Callable[[], bool] | None = None, out: str | None = None, save: bool = True) -> TuneReport:
    """Train the tuned lens of ``loaded`` on ``corpus`` (see the module docstring), save it beside the model (or in
    ``out``) unless ``save`` is False, and report each layer's held-out KL under both lenses."""
    spec, model, started = spec.checked(), loaded.model, time.perf_counter()
    found = sites.of(model)
    if not found.has_head:
        raise ExplorerError(f"{loaded.key} has no language-model head (like the bundled all-MiniLM-L6-v2): there is "
                            "no final distribution for a tuned lens to match.")
    per_step = spec.windows * spec.seq_len
    train_ids = _stream_ids(loaded, corpus.train, spec.steps * per_step + spec.seq_len, spec.seed)
    held = list(_windows(loaded, _stream_ids(loaded, corpus.heldout, (spec.heldout + 1) * spec.seq_len, spec.seed),
                         1, spec.seq_len))[: spec.heldout]
    maps = Translators(found.layers, found.d_model).to(input_device(model))
    optimizer = torch.optim.Adam(maps.parameters(), lr=spec.lr)
    decay = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda i: 1.0 - 0.9 * i / spec.steps)
    chunk, done = _chunk(found, model), 0
    for step, ids in zip(range(spec.steps), _windows(loaded, train_ids, spec.windows, spec.seq_len), strict=False):
        if should_stop is not None and should_stop():
            break
        stream = _streams(model, found, ids)
        if step == 0:  # each coordinate's spread per layer, once (see explorer.explain.translator)
            maps.scale.copy_(stream[:-1].float().std(dim=1).clamp(min=1e-3))
        mean = _step(model, found, maps, stream, chunk)
        optimizer.step()
        decay.step()
        optimizer.zero_grad(set_to_none=True)
        done = step + 1
        if progress is not None:
            progress(done / spec.steps, f"tuned lens: step {done:,} of {spec.steps:,} (mean KL {mean:.2f} nats)")
    if progress is not None:
        progress(1.0, "tuned lens: measuring each layer's KL on held-out text")
    logit, tuned = heldout_kl(model, found, maps, held)
    report = TuneReport(loaded.key, corpus.name, done, spec.steps, done * per_step,
                        round(time.perf_counter() - started, 2), logit, tuned)
    if save and done:
        folder = translator.save(maps, report.to_dict(), loaded.path, loaded.key, out)
        report = TuneReport(**{**asdict(report), "folder": fence.public(str(folder))})
    return report

"""A local decoder's log-likelihood of continuations, the context run once per example (not once per choice).

Tokens are split as lm-evaluation-harness's ``hf`` model splits them (:func:`encode_pair`): spaces at the end of
the context move to the continuation, the context is encoded on its own (with the tokenizer's special tokens,
Gemma's ``<bos>``), the continuation is what encoding the whole text adds after it, and an empty context is the
``<bos>`` (else ``<eos>``) token. The model then reads ``context + continuation[:-1]`` and the continuation's
tokens are scored, so each example's choices equal lm-eval's for the same weights.

lm-eval runs ``context + choice`` from scratch for every choice and turns every position of the batch into
full-vocabulary log-probabilities (Gemma 3: 262,144 values a position). Here each context runs once, in one of two
ways, and only the positions whose prediction is scored go through the output layer (``logits_to_keep``):

* branched (:mod:`explorer.evaluation.branches`): one sequence per example, its choices branching off its context
  under a mask, several examples a forward: one forward per batch;
* through the KV cache: several examples' contexts in one left-padded forward (positions counted from each one's
  first real token, so a padded context gives the numbers it gives alone); the token after each context scores
  every choice's first token at once, and the choices longer than one token are fed after their context's cache
  rows, right-padded (a causal model's padded tail cannot change the positions before it).

The branched way is taken where it is sure to be right (the model takes a custom mask, the sequences fit its
sliding window, and its scores on a first example equal the KV-cache way's, checked once per model); the KV-cache
way otherwise.

>>> class Tok:  # a toy tokenizer: one token a character, <bos> = 0 first
...     bos_token_id, eos_token_id, bos_token = 0, 1, "<bos>"
...     def __call__(self, text, add_special_tokens=True):
...         return {"input_ids": ([0] if add_special_tokens else []) + [ord(c) for c in text]}
>>> encode_pair(Tok(), "ab ", "c")  # the context's trailing space moves to the continuation
([0, 97, 98], [32, 99])
>>> encode_pair(Tok(), "", "cd")  # an empty context: <bos> alone
([0], [99, 100])
"""

from __future__ import annotations

import copy
import weakref
from collections.abc import Sequence
from dataclasses import dataclass

import torch
from transformers.cache_utils import Cache, DynamicCache

from explorer.core.errors import ExplorerError
from explorer.core.handles import Tokenizer
from explorer.core.locks import lock_of
from explorer.evaluation import branches
from explorer.evaluation.score import Group, Score, where_fields
from explorer.runtime import cancel
from explorer.runtime.loading import LoadedModel
from explorer.runtime.offload import input_device
from explorer.runtime.placement import ran_on
from explorer.tasks.generation.nexttoken import takes_logits_to_keep

__all__ = ["DecoderScorer", "context_window", "encode_pair", "prefix_token"]

MAX_ROWS = 64  # choices fed in one forward after their contexts (more are split; each split copies the cache rows)
# contexts run in one forward: each forward reads every weight once (Gemma 3's 262,144 x 640 output layer alone is
# 671 MB), so on a CPU a few short contexts cost little more than one
EXAMPLES = 8
# per model: do its branched scores (explorer.evaluation.branches) equal the KV-cache path's? Checked once.
_BRANCHES_AGREE: weakref.WeakKeyDictionary[torch.nn.Module, bool] = weakref.WeakKeyDictionary()
WINDOW_CAP = 2048  # the longest input scored at once by default: one window's attention stays small on a CPU
METHOD = ("summed log-likelihood of the continuation's tokens (lm-eval's loglikelihood); the context runs once "
          "per example and its KV cache is shared by the choices")


def prefix_token(tok: Tokenizer) -> int:
    """The token an empty context is (lm-eval's ``prefix_token_id``): ``<bos>``, else ``<eos>``."""
    bos = getattr(tok, "bos_token_id", None)
    eos = tok.eos_token_id
    return int(bos if bos is not None else eos if eos is not None else 0)


def _ids(tok: Tokenizer, text: str, specials: bool = True) -> list[int]:
    with lock_of(tok):  # a fast tokenizer is not safe to call from two threads at once
        return [int(i) for i in tok(text, add_special_tokens=specials)["input_ids"]]


def encode_pair(tok: Tokenizer, context: str, continuation: str) -> tuple[list[int], list[int]]:
    """(context ids, continuation ids) exactly as lm-eval's ``_encode_pair`` for a causal model."""
    spaces = len(context) - len(context.rstrip())
    if spaces:
        context, continuation = context[:-spaces], context[-spaces:] + continuation
    if not context:
        cont = _ids(tok, continuation, specials=False)
        first = prefix_token(tok)
        return ([first], cont) if not cont or cont[0] != first else (cont[:1], cont[1:])
    bos_text = getattr(tok, "bos_token", None)
    specials = not (isinstance(bos_text, str) and bos_text and context.startswith(bos_text))
    whole = _ids(tok, context + continuation, specials)
    ctx = _ids(tok, context, specials)
    return ctx, whole[len(ctx):]


def context_window(config: object, cap: int = WINDOW_CAP) -> int:
    """Tokens a decoder reads at once: its positions (``max_position_embeddings``, ``n_positions``...), at most
    ``cap``."""
    for name in ("max_position_embeddings", "n_positions", "n_ctx", "seq_length"):
        value = getattr(config, name, None)
        if isinstance(value, int) and value > 0:
            return min(value, cap)
    return cap


def _fork(cache: Cache) -> Cache:
    """A cache of the same tensors whose layers can be re-bound without touching ``cache``: a dynamic cache's
    forward and row selection re-bind each layer's ``keys``/``values`` (new tensors, never written in place), so
    copying the layer objects is enough; any other cache is copied whole."""
    if not isinstance(cache, DynamicCache):
        return copy.deepcopy(cache)
    fork = copy.copy(cache)
    fork.layers = [copy.copy(layer) for layer in cache.layers]
    return fork


def _logprobs(logits: torch.Tensor) -> torch.Tensor:
    return torch.log_softmax(logits.to(torch.float32), dim=-1)


@dataclass(frozen=True)
class _Contexts:
    """A batch of examples' contexts run once: the next token's log-probabilities, the cache, its padding mask."""

    first: torch.Tensor  # (B, V) log p of the token after each context
    cache: Cache  # keys and values of the left-padded contexts
    mask: torch.Tensor  # (B, P) 1 on real tokens, 0 on the left padding


class DecoderScorer:
    """Continuations scored by a local causal LM (``loaded``: a :class:`LoadedModel` loaded as ``causal-lm``).

    ``examples``: contexts run in one forward (left-padded, positions counted from each one's first real token);
    ``max_rows``: choices of those examples fed in one forward after them (each row a copy of its example's cache
    rows, right-padded)."""

    family = "decoder"
    method = METHOD

    def __init__(self, loaded: LoadedModel, max_rows: int = MAX_ROWS, examples: int = EXAMPLES) -> None:
        self.loaded, self.key, self.max_rows = loaded, loaded.key, max(1, max_rows)
        self.examples = max(1, examples)
        self.untrained = bool(loaded.untrained)
        self.window = context_window(loaded.model.config, max(WINDOW_CAP, 1))
        self._keeps = takes_logits_to_keep(loaded.model)

    def where(self) -> dict[str, str]:
        return where_fields(ran_on(self.loaded))

    def check(self, groups: Sequence[Group]) -> None:
        """Nothing to refuse before the tokenizer runs: an empty continuation is found when it is encoded."""

    def score(self, groups: Sequence[Group]) -> list[list[Score]]:
        """Every group's scores: ``examples`` contexts a forward, then their choices ``max_rows`` a forward."""
        out: list[list[Score]] = []
        for start in range(0, len(groups), self.examples):
            cancel.check()  # a stopped request frees its worker between batches
            out.extend(self._batch(groups[start:start + self.examples]))
        return out

    def example(self, context: str, continuations: Sequence[str]) -> list[Score]:
        """Every continuation of one context."""
        return self._batch([(context, tuple(continuations))])[0]

    def _encoded(self, context: str, continuations: Sequence[str]) -> tuple[list[int], list[list[int]]]:
        pairs = [encode_pair(self.loaded.tokenizer, context, c) for c in continuations]
        conts = [cont for _, cont in pairs]
        if any(not c for c in conts):
            raise ExplorerError("A continuation adds no token after its context (it is empty or only merges "
                                "with the context's last word): give it words of its own.")
        longest = max(len(c) for c in conts)
        return pairs[0][0][-max(1, self.window - longest + 1):], conts  # left-truncated as lm-eval does

    def _batch(self, groups: Sequence[Group]) -> list[list[Score]]:
        encoded = [self._encoded(ctx, conts) for ctx, conts in groups]
        seqs = [branches.branch(ctx, conts) for ctx, conts in encoded]
        if self._branching(seqs, encoded[0]):
            return branches.score_batch(self.loaded.model, seqs, prefix_token(self.loaded.tokenizer),
                                        input_device(self.loaded.model))
        return self._cached(encoded)

    def _branching(self, seqs: list[branches.Branched], sample: tuple[list[int], list[list[int]]]) -> bool:
        """Whether this batch can go as one branched sequence per example: the model takes a custom mask and
        ``logits_to_keep``, the sequences fit its local-attention window, and (checked once per model, on this
        batch's first example) the branched scores equal the KV-cache path's."""
        model = self.loaded.model
        if not self._keeps or not all(branches.fits(model.config, len(s.ids)) for s in seqs):
            return False
        if model not in _BRANCHES_AGREE:
            got = branches.score_batch(model, seqs[:1], prefix_token(self.loaded.tokenizer), input_device(model))[0]
            want = self._cached([sample])[0]
            tol = 1e-3 if next(model.parameters()).dtype == torch.float32 else 5e-2
            _BRANCHES_AGREE[model] = all(abs(a.logprob - b.logprob) <= tol * max(1.0, abs(b.logprob))
                                         for a, b in zip(got, want, strict=True))
        return _BRANCHES_AGREE[model]

    def _cached(self, encoded: list[tuple[list[int], list[list[int]]]]) -> list[list[Score]]:
        """The KV-cache path: the contexts in one left-padded forward, then the choices after their cache rows."""
        ran = self._contexts([ctx for ctx, _ in encoded])
        rows = [(b, cont) for b, (_, conts) in enumerate(encoded) for cont in conts]
        flat: list[Score] = []
        for start in range(0, len(rows), self.max_rows):
            flat.extend(self._choices(ran, rows[start:start + self.max_rows]))
        out, at = [], 0
        for _, conts in encoded:
            out.append(flat[at:at + len(conts)])
            at += len(conts)
        return out

    def _contexts(self, ctxs: list[list[int]]) -> _Contexts:
        """The contexts left-padded into one forward (B, P); positions count from each one's first real token."""
        model, width = self.loaded.model, max(len(c) for c in ctxs)
        device, pad = input_device(model), prefix_token(self.loaded.tokenizer)
        x = torch.tensor([[pad] * (width - len(c)) + c for c in ctxs], device=device)  # (B, P)
        mask = torch.tensor([[0] * (width - len(c)) + [1] * len(c) for c in ctxs], device=device)  # (B, P)
        kwargs: dict[str, int] = {"logits_to_keep": 1} if self._keeps else {}
        with torch.inference_mode():
            out = model(input_ids=x, attention_mask=mask, position_ids=(mask.cumsum(1) - 1).clamp(min=0),
                        use_cache=True, **kwargs)
        return _Contexts(_logprobs(out.logits[:, -1]), out.past_key_values, mask)  # (B, V)

    def _choices(self, ran: _Contexts, rows: list[tuple[int, list[int]]]) -> list[Score]:
        """Scores of ``rows`` (example, continuation ids): the first token from its context's prediction, the
        rest from one forward of the multi-token ones after copies of their contexts' cache rows."""
        first = ran.first
        lead = torch.stack([first[b, c[0]] for b, c in rows]).cpu()  # (R,)
        tops = first.argmax(1).tolist()  # (B,)
        lead_greedy = [tops[b] == c[0] for b, c in rows]
        longer = [i for i, (_, c) in enumerate(rows) if len(c) > 1]
        picked: dict[int, tuple[float, bool]] = {}
        if longer:
            picked = self._rest([rows[i] for i in longer], ran, longer)
        return [Score(float(lead[i]) + picked.get(i, (0.0, True))[0], lead_greedy[i] and picked.get(i, (0.0, True))[1],
                      len(c)) for i, (_, c) in enumerate(rows)]

    def _rest(self, rows: list[tuple[int, list[int]]], ran: _Contexts, ids: list[int]) -> dict[int, tuple[float, bool]]:
        """Sum of log p of each row's tokens after its first, and whether each was the argmax: one forward."""
        model, device = self.loaded.model, ran.first.device
        width = max(len(c) for _, c in rows) - 1
        x = torch.tensor([[*c[:-1], *[c[0]] * (width + 1 - len(c))] for _, c in rows], device=device)  # (R, W)
        real = torch.tensor([[w + 1 < len(c) for w in range(width)] for _, c in rows], device=device)  # (R, W)
        targets = torch.tensor([c[w + 1] for _, c in rows for w in range(len(c) - 1)], device=device)  # (N,)
        which = torch.tensor([b for b, _ in rows], device=device)  # (R,) each row's example
        cache = _fork(ran.cache)
        cache.batch_select_indices(which)
        mask = torch.cat([ran.mask[which], torch.ones_like(x)], dim=1)  # (R, P + W)
        positions = ran.mask.sum(1)[which][:, None] + torch.arange(width, device=device)  # (R, W)
        with torch.inference_mode():
            kwargs = {"logits_to_keep": real} if self._keeps else {}
            logits = model(input_ids=x, past_key_values=cache, attention_mask=mask, position_ids=positions,
                           **kwargs).logits  # (N, V) with logits_to_keep, else (R, W, V)
            lp = _logprobs(logits if self._keeps else logits[real])
            got = lp.gather(1, targets[:, None])[:, 0].cpu()  # (N,)
            hits = (lp.argmax(1) == targets).cpu()  # (N,)
        out, at = {}, 0
        for i, (_, c) in zip(ids, rows, strict=True):
            n = len(c) - 1
            out[i] = (float(got[at:at + n].sum()), bool(hits[at:at + n].all()))
            at += n
        return out

"""A local decoder's log-likelihood of continuations, the context run once per example (not once per choice).

Tokens are split as lm-evaluation-harness's ``hf`` model splits them (:func:`encode_pair`): spaces at the end of
the context move to the continuation, the context is encoded on its own (with the tokenizer's special tokens,
Gemma's ``<bos>``), the continuation is what encoding the whole text adds after it, and an empty context is the
``<bos>`` (else ``<eos>``) token. The model then reads ``context + continuation[:-1]`` and the continuation's
tokens are scored, so each example's choices equal lm-eval's for the same weights.

lm-eval runs ``context + choice`` from scratch for every choice and turns every position of the batch into
full-vocabulary log-probabilities (Gemma 3: 262,144 values a position). Here the context runs once with its KV
cache and projects only its last position (``logits_to_keep``); the cache is copied to one row per choice and
only the choices' own tokens are fed, right-padded (a causal model's padded tail cannot change the positions
before it), with only their real positions projected.

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
from collections.abc import Sequence

import torch
from transformers.cache_utils import Cache

from explorer.core.errors import ExplorerError
from explorer.core.handles import Tokenizer
from explorer.core.locks import lock_of
from explorer.evaluation.score import Group, Score, where_fields
from explorer.runtime import cancel
from explorer.runtime.loading import LoadedModel
from explorer.runtime.offload import input_device
from explorer.runtime.placement import ran_on
from explorer.tasks.generation.nexttoken import takes_logits_to_keep

__all__ = ["DecoderScorer", "context_window", "encode_pair", "prefix_token"]

MAX_ROWS = 32  # choices fed in one forward after the shared context (more are split; each split copies the cache)
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


def _logprobs(logits: torch.Tensor) -> torch.Tensor:
    return torch.log_softmax(logits.to(torch.float32), dim=-1)


class DecoderScorer:
    """Continuations scored by a local causal LM (``loaded``: a :class:`LoadedModel` loaded as ``causal-lm``)."""

    family = "decoder"
    method = METHOD

    def __init__(self, loaded: LoadedModel, max_rows: int = MAX_ROWS) -> None:
        self.loaded, self.key, self.max_rows = loaded, loaded.key, max(1, max_rows)
        self.untrained = bool(loaded.untrained)
        self.window = context_window(loaded.model.config, max(WINDOW_CAP, 1))
        self._keeps = takes_logits_to_keep(loaded.model)

    def where(self) -> dict[str, str]:
        return where_fields(ran_on(self.loaded))

    def check(self, groups: Sequence[Group]) -> None:
        """Nothing to refuse before the tokenizer runs: an empty continuation is found when it is encoded."""

    def score(self, groups: Sequence[Group]) -> list[list[Score]]:
        out = []
        for context, continuations in groups:
            cancel.check()  # a stopped request frees its worker between examples
            out.append(self.example(context, continuations))
        return out

    def example(self, context: str, continuations: Sequence[str]) -> list[Score]:
        """Every continuation of one context: the context once, the choices in batches of ``max_rows``."""
        pairs = [encode_pair(self.loaded.tokenizer, context, c) for c in continuations]
        conts = [cont for _, cont in pairs]
        if any(not c for c in conts):
            raise ExplorerError("A continuation adds no token after its context (it is empty or only merges "
                                "with the context's last word): give it words of its own.")
        longest = max(len(c) for c in conts)
        ctx = pairs[0][0][-max(1, self.window - longest + 1):]  # left-truncated as lm-eval does past the window
        first, cache = self._context(ctx)
        scores: list[Score] = []
        for start in range(0, len(conts), self.max_rows):
            scores.extend(self._choices(first, cache, conts[start:start + self.max_rows]))
        return scores

    def _context(self, ctx: list[int]) -> tuple[torch.Tensor, Cache]:
        """log p of the token after the context (V,), and the context's KV cache."""
        model = self.loaded.model
        x = torch.tensor([ctx], device=input_device(model))  # (1, P)
        kwargs: dict[str, int] = {"logits_to_keep": 1} if self._keeps else {}
        with torch.inference_mode():
            out = model(input_ids=x, use_cache=True, **kwargs)
        return _logprobs(out.logits[0, -1]), out.past_key_values  # (V,)

    def _choices(self, first: torch.Tensor, cache: Cache, conts: list[list[int]]) -> list[Score]:
        """Scores of ``conts`` after the cached context: one forward of their tokens but the last (B, W)."""
        width = max(len(c) for c in conts) - 1
        lead = first[torch.tensor([c[0] for c in conts], device=first.device)].cpu()  # (B,)
        lead_greedy = [int(first.argmax()) == c[0] for c in conts]
        if width == 0:  # one-token choices: the context's own prediction scores them all
            return [Score(float(lp), g, 1) for lp, g in zip(lead.tolist(), lead_greedy, strict=True)]
        model, device = self.loaded.model, first.device
        x = torch.tensor([[*c[:-1], *[c[0]] * (width + 1 - len(c))] for c in conts], device=device)  # (B, W)
        real = torch.tensor([[w + 1 < len(c) for w in range(width)] for c in conts], device=device)  # (B, W)
        targets = torch.tensor([c[w + 1] for c in conts for w in range(len(c) - 1)], device=device)  # (N,)
        rows = copy.deepcopy(cache)  # every forward re-binds the cache's tensors: never touch the shared one
        rows.batch_repeat_interleave(len(conts))
        with torch.inference_mode():
            if self._keeps:  # the model projects only the real positions through its output layer
                logits = model(input_ids=x, past_key_values=rows, logits_to_keep=real).logits  # (N, V)
            else:
                logits = model(input_ids=x, past_key_values=rows).logits[real]  # (N, V)
            lp = _logprobs(logits)
            picked = lp.gather(1, targets[:, None])[:, 0].cpu()  # (N,)
            hits = (lp.argmax(1) == targets).cpu()  # (N,)
        return self._collect(conts, lead, lead_greedy, picked, hits)

    @staticmethod
    def _collect(conts: list[list[int]], lead: torch.Tensor, lead_greedy: list[bool], picked: torch.Tensor,
                 hits: torch.Tensor) -> list[Score]:
        """Per choice: its first token's score plus its own share of the flat (N,) rest, in row order."""
        out, at = [], 0
        for i, c in enumerate(conts):
            n = len(c) - 1
            out.append(Score(float(lead[i]) + float(picked[at:at + n].sum()),
                             lead_greedy[i] and bool(hits[at:at + n].all()), len(c)))
            at += n
        return out

"""One loaded masked LM's answer: its top-k words for every blank, the MLM head run on the masked rows only.

Speed: the encoder runs over the whole prompt, but the vocabulary projection (the MLM head, (H -> V) with
V ~ 30-50k) runs only on the masked rows: for a short prompt that head over every position is most of the work.
Scores equal ``transformers.pipeline("fill-mask")`` on the same weights (softmax over the full vocabulary).

>>> window(list(range(10)), masks=[8], budget=4)[0]  # a 4-token window centred on the mask
6
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import torch

from explorer.architecture.modeltypes import max_input_tokens
from explorer.core.errors import ExplorerError
from explorer.core.locks import lock_of
from explorer.core.notices import Notice
from explorer.runtime import placement
from explorer.runtime.loading import LoadedModel
from explorer.runtime.offload import input_device
from explorer.tasks.fillmask.prompt import clean_text, model_prompt
from explorer.tasks.fillmask.result import MaskResult, ModelFill, Prediction

if TYPE_CHECKING:  # typing only: transformers loads with the first model
    from transformers import PreTrainedModel

__all__ = ["MAX_TOP_K", "check_top_k", "encode", "encode_many", "fill_clean", "fill_one", "frame", "mask_logits",
           "max_tokens", "mlm_head", "specials_around", "to_model_fill", "whole_word", "window", "word_context"]

MAX_TOP_K = 50


def _lock(tokenizer) -> threading.RLock:
    """The tokenizer's own lock (explorer.core.locks): the Rust backend keeps truncation/padding state
    on the shared object, so concurrent calls must not interleave."""
    return lock_of(tokenizer)


def encode(tokenizer, text: str, specials: bool = False) -> list[int]:
    """Token ids, without special tokens unless ``specials`` (locked per tokenizer)."""
    with _lock(tokenizer):
        return list(tokenizer(text, add_special_tokens=specials, truncation=False)["input_ids"])


def encode_many(tokenizer, texts: Sequence[str]) -> list[list[int]]:
    """:func:`encode` for many texts in one call (the Rust backend splits them over its threads);
    the same ids as encoding them one by one."""
    if not texts:
        return []
    with _lock(tokenizer):
        return [list(ids) for ids in tokenizer(list(texts), add_special_tokens=False, truncation=False)["input_ids"]]


def specials_around(tokenizer) -> tuple[list[int], list[int]]:
    """(special ids the tokenizer puts before, after) a single sequence, e.g. [CLS] / [SEP].

    transformers 5 dropped build_inputs_with_special_tokens from fast tokenizers, so the
    frame is read off a probe: encoded with and without special tokens.
    """
    with_sp, bare = encode(tokenizer, "a", specials=True), encode(tokenizer, "a")
    for lead in range(len(with_sp) - len(bare) + 1):
        if with_sp[lead:lead + len(bare)] == bare:
            return with_sp[:lead], with_sp[lead + len(bare):]
    return [], []


def max_tokens(lm: LoadedModel) -> int:
    """Longest input the model takes, special tokens included (positions it has embeddings for)."""
    limit = max_input_tokens(lm.model.config) or 512  # RoBERTa-style position offsets taken off
    tok_limit = lm.tokenizer.model_max_length
    return min(limit, int(tok_limit)) if tok_limit and tok_limit < 1e6 else limit


def window(body: list[int], masks: list[int], budget: int) -> tuple[int, Notice | None]:
    """Start of a ``budget``-token window of ``body`` centred on the masks, and a notice if it cuts.

    ``masks`` are positions in ``body`` (at least one). Raises if the masks span more than the budget.
    """
    if len(body) <= budget:
        return 0, None
    span = masks[-1] - masks[0] + 1
    if span > budget:
        raise ExplorerError(f"The masks are {span} tokens apart but the model reads at most {budget}: "
                            "move them closer together or shorten the prompt.")
    start = max(0, min(masks[0] - (budget - span) // 2, len(body) - budget))
    return start, Notice("truncated", f"The prompt is {len(body)} tokens; the model reads at most {budget}, "
                         f"so only tokens {start}-{start + budget} around the mask(s) were used.")


# ---- the model side ------------------------------------------------------------------
def mlm_head(model: torch.nn.Module) -> Callable[[torch.Tensor], torch.Tensor] | None:
    """The MLM head of known architectures as a function (M, H) -> (M, V), else None.

    Only classes whose forward is exactly ``head(base_model(...)[0])`` are listed, so the
    shortcut cannot change results; anything else takes the full forward (still correct).
    """
    name = type(model).__name__
    m: Any = model  # attributes follow the class name, which a type checker cannot follow
    heads: dict[str, Callable[[], Callable[[torch.Tensor], torch.Tensor]]] = {
        "BertForMaskedLM": lambda: m.cls, "BigBirdForMaskedLM": lambda: m.cls,
        "RobertaForMaskedLM": lambda: m.lm_head, "XLMRobertaForMaskedLM": lambda: m.lm_head,
        "CamembertForMaskedLM": lambda: m.lm_head, "MPNetForMaskedLM": lambda: m.lm_head,
        "AlbertForMaskedLM": lambda: m.predictions,
        "DistilBertForMaskedLM": lambda: lambda h: m.vocab_projector(
            m.vocab_layer_norm(m.activation(m.vocab_transform(h)))),
        "ElectraForMaskedLM": lambda: lambda h: m.generator_lm_head(m.generator_predictions(h)),
        "DebertaV2ForMaskedLM": lambda: m.cls if m.legacy else (
            lambda h: m.lm_predictions(h, m.deberta.embeddings.word_embeddings)),
    }
    return heads[name]() if name in heads else None


def mask_logits(model: PreTrainedModel, ids: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
    """Vocabulary logits at the mask positions only, in float32.

    ids: (1, T) token ids; positions: (M,) indices into T. Returns (M, V).
    """
    attention = torch.ones_like(ids)
    with torch.inference_mode():
        head = mlm_head(model)
        if head is None:  # unknown class: full forward, then pick the rows
            logits = model(input_ids=ids, attention_mask=attention).logits  # (1, T, V)
            return logits[0, positions.to(logits.device)].float()
        hidden = model.base_model(input_ids=ids, attention_mask=attention)[0]  # (1, T, H)
        return head(hidden[0, positions.to(hidden.device)]).float()  # (M, H) -> (M, V)


def _word_scheme(tokenizer) -> str:
    """How a tokenizer marks word boundaries: "##" continues a word, or "Ġ"/"▁" starts one."""
    probe = tokenizer.convert_ids_to_tokens(encode(tokenizer, "unbelievably tokenization"))
    if any(t.startswith("##") for t in probe):
        return "##"
    return "▁" if any(t.startswith("▁") for t in probe) else "Ġ"


def _continues(token: str, scheme: str) -> bool:
    """Whether ``token`` continues the word before it."""
    if scheme == "##":
        return token.startswith("##")
    return not token.startswith(scheme) and token.replace(scheme, "").isalnum()


def whole_word(tokenizer, tokens: list[str], pos: int, scheme: str, specials: set[str]) -> str:
    """The word the token at ``pos`` belongs to, joined from its neighbouring pieces."""
    start, end = pos, pos + 1
    while start > 0 and tokens[start - 1] not in specials and _continues(tokens[start], scheme):
        start -= 1
    while end < len(tokens) and tokens[end] not in specials and _continues(tokens[end], scheme):
        end += 1
    return tokenizer.convert_tokens_to_string(tokens[start:end]).strip()


def frame(lm: LoadedModel, body: list[int], around: tuple[list[int], list[int]]) -> tuple[list[int], list[int],
                                                                                       Notice | None]:
    """(input ids with specials, mask positions in them, truncation notice) for the prompt body ``body``
    (token ids without specials); ``around`` is :func:`specials_around` of the model's tokenizer."""
    tok = lm.tokenizer
    masks = [i for i, t in enumerate(body) if t == tok.mask_token_id]
    if not masks:  # the marker vanished in tokenization (should not happen): say so, do not guess
        raise ExplorerError(f"{lm.name} did not see a mask token in the prompt: use [MASK] or ___ between words.")
    before, after = around
    budget = max_tokens(lm) - len(before) - len(after)
    start, notice = window(body, masks, budget)
    ids = before + body[start:start + budget] + after
    return ids, [len(before) + m - start for m in masks], notice


def word_context(tokenizer) -> tuple[str, set[str]]:
    """(word-boundary scheme, special tokens) that :func:`to_model_fill` joins whole words with."""
    return _word_scheme(tokenizer), set(tokenizer.all_special_tokens)


def to_model_fill(lm: LoadedModel, ids: list[int], positions: list[int], scores: list[list[float]],
                  token_ids: list[list[int]], notice: Notice | None, latency_ms: float,
                  words: tuple[str, set[str]]) -> ModelFill:
    """One model's column from its top-k: ``scores`` and ``token_ids`` are (M, k) lists, one row per
    mask position; ``words`` comes from :func:`word_context`."""
    tok, (scheme, specials) = lm.tokenizer, words
    # Special tokens (including a neighbouring mask) end a word: "[MASK]##ly" is not one word.
    tokens, masks, best = tok.convert_ids_to_tokens(ids), [], list(ids)
    for m, pos in enumerate(positions):
        preds = []
        for score, tid in zip(scores[m], token_ids[m], strict=True):
            piece = tok.convert_ids_to_tokens(tid)  # None: a padding row of the embedding beyond the vocab
            word = whole_word(tok, tokens[:pos] + [piece] + tokens[pos + 1:], pos, scheme, specials) \
                if piece is not None else f"[id {tid}]"
            preds.append(Prediction(tid, tok.decode([tid]), word, score))
        masks.append(MaskResult(m, pos, tuple(preds)))
        best[pos] = preds[0].token_id
    ran = placement.ran_on(lm)
    return ModelFill(lm.key, lm.name, lm.untrained, lm.device, tok.decode(ids, skip_special_tokens=False),
                     tuple(masks), tok.decode(best, skip_special_tokens=True), len(ids),
                     ((notice,) if notice else ()) + lm.notices, latency_ms, ran["device_name"], ran["dtype"])


def check_top_k(top_k: int) -> int:
    """``top_k`` as an int, or an ExplorerError saying the range."""
    if not 1 <= int(top_k) <= MAX_TOP_K:
        raise ExplorerError(f"top-k must be between 1 and {MAX_TOP_K}, not {top_k}.")
    return int(top_k)


def fill_one(lm: LoadedModel, prompt: str, top_k: int = 5) -> ModelFill:
    """Top-k predictions of one loaded masked LM for every mask of ``prompt`` (checked here: a direct call)."""
    return fill_clean(lm, clean_text(prompt), check_top_k(top_k))


def fill_clean(lm: LoadedModel, text: str, top_k: int) -> ModelFill:
    """:func:`fill_one` for a prompt already through :func:`clean_text` and a checked ``top_k``."""
    begin, tok = time.perf_counter(), lm.tokenizer
    body = encode(tok, model_prompt(text, tok, lm.name))
    ids, positions, notice = frame(lm, body, specials_around(tok))
    x = torch.tensor([ids], device=input_device(lm.model))  # (1, T)
    logits = mask_logits(lm.model, x, torch.tensor(positions, device=x.device))  # (M, V) float32
    values, indices = logits.softmax(-1).topk(top_k, dim=-1)  # (M, k) each
    return to_model_fill(lm, ids, positions, values.cpu().tolist(), indices.cpu().tolist(), notice,
                         (time.perf_counter() - begin) * 1000, word_context(tok))

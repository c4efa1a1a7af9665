"""The seq2seq family: T5 span corruption and BART text infilling, trained as encoder-decoders.

The corruption is the strategy's own (:func:`explorer.training.examples.draw`, the function the
Objectives page draws); this module only decides what the lab feeds and scores:

- **T5** (strategy ``t5``) runs on the window as T5 frames a text, ``x [SEP]`` (T5's ``x </s>``),
  so its target is exactly the strategy's: ``<extra_id_0> span <extra_id_1> ... <extra_id_k> [SEP]``.
  (On the lab's ``[CLS] x [SEP]`` frame the strategy would end the target with ``[CLS] [SEP]``.)
  The encoder input is that corrupted text with ``[CLS]`` in front, because the lab tokenizer
  (the one saved with a checkpoint) frames every text ``[CLS] ... [SEP]``: the Spans page feeds
  a trained checkpoint exactly what it trained on.
- **BART** (strategy ``bart-infill``, ``[MASK]`` for each span) keeps the ``[CLS] x [SEP]`` frame;
  its target is the whole original window.

The decoder reads the target shifted right by the model's own ``decoder_start_token_id``
(``[CLS]`` = 2, :data:`explorer.training.models.SPECIAL_IDS`), as ``model(..., labels=...)`` does;
``[SEP]`` = 3 ends a target. The loss is the decoder's cross-entropy over target tokens, equal to
transformers' own (``tests/test_seq2seq.py``). **Accuracy** is target-token accuracy under teacher
forcing: it is not comparable to a masked LM's masked-token accuracy. BART predicts the whole
text, most of it copied from its input (so its accuracy runs high); T5 predicts only the dropped
spans and their sentinels.

The **token budget** (:func:`explorer.training.batches.fill`, ``tokens_seen``) counts encoder
input tokens. Compute per encoder token (:func:`forward_flops`) is the cost model's encoder part
plus its decoder part times the decoder tokens per encoder token that the strategy gives (about
0.24 for T5 at 128 tokens, 1.2 for BART): see :func:`flops_split`.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from explorer.architecture import cost
from explorer.core.handles import Tokenizer
from explorer.objectives.base import Seq2SeqResult, Vocab
from explorer.training import examples, models, recipes, vocab
from explorer.training.examples import IGNORE
from explorer.training.losses import Loss
from explorer.training.recipes import Recipe

__all__ = ["build", "flops_split", "features", "forward_flops", "frame", "loss", "target_ratio"]

# A model's config says which recipe trained it (forward_flops gets only the model).
_RECIPE_OF_TYPE = {"t5": "t5", "bart": "bart"}


def frame(recipe: Recipe, window: Sequence[str]) -> list[str]:
    """The tokens the strategy corrupts: T5 frames a text ``x [SEP]`` (no [CLS]); BART keeps the window."""
    tokens = list(window)
    if recipe.strategy == "t5" and tokens[:1] == ["[CLS]"]:
        return tokens[1:]
    return tokens


def features(recipe: Recipe, window: Sequence[str], seed: int, index: int, epoch: int, tok: Tokenizer,
             vocab: Vocab) -> dict[str, Any]:
    """``input_ids`` (the corrupted input, ``[CLS]``-framed) and ``labels`` (the target's ids)."""
    result = examples.draw(recipe, recipe.strategy, frame(recipe, window), seed, index, epoch, vocab)
    assert isinstance(result, Seq2SeqResult)
    inp = list(result.input_tokens)
    if inp[:1] != ["[CLS]"]:  # T5: the lab tokenizer puts [CLS] in front of every text it encodes
        inp = ["[CLS]", *inp]
    return {"input_ids": examples.ids(tok, inp), "labels": examples.ids(tok, result.target_tokens)}


def build(recipe: Recipe, size: str, seed: int, device: str = "cpu") -> nn.Module:
    """The model of :func:`explorer.training.models.build`, with BART's forced end token set to the lab's [SEP].

    BART's config forces ``</s>`` (id 2 in BART's vocabulary) as the last generated token; in the
    lab's vocabulary id 2 is ``[CLS]``, so generation would end every answer with ``[CLS]``.
    """
    model = models.build(recipe, size, seed, device)
    eos = models.SPECIAL_IDS["eos_token_id"]
    config: Any = model.config
    for cfg in (config, getattr(model, "generation_config", None)):
        if cfg is not None and getattr(cfg, "forced_eos_token_id", None) is not None:
            cfg.forced_eos_token_id = eos
    return model


def loss(model: nn.Module, batch: dict[str, torch.Tensor]) -> Loss:
    """Decoder cross-entropy over target tokens (mean), with target-token accuracy."""
    labels = batch["labels"]  # (B, U), IGNORE on padding
    body: Any = model  # T5/BART ForConditionalGeneration: the shift is the model's own
    decoder_input_ids = body.prepare_decoder_input_ids_from_labels(labels=labels)  # (B, U)
    logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"],
                   decoder_input_ids=decoder_input_ids).logits  # (B, U, V)
    where = labels != IGNORE  # (B, U)
    if not bool(where.any()):
        return Loss(logits.sum() * 0.0, {"seq2seq": 0.0})
    target = labels[where]  # (N,)
    picked = logits[where]  # (N, V)
    total = F.cross_entropy(picked.float(), target)
    correct = int((picked.argmax(-1) == target).sum())
    return Loss(total, {"seq2seq": float(total.detach())}, int(target.numel()), correct)


@lru_cache(maxsize=16)
def target_ratio(recipe_name: str, seq_len: int) -> float:
    """Decoder tokens per encoder token this recipe feeds, over 8 draws of a ``seq_len`` window."""
    recipe, tok = recipes.get(recipe_name), vocab.tokenizer()
    window = ["[CLS]", *(["the"] * (seq_len - 2)), "[SEP]"]
    lab_vocab = vocab.objective_vocab()
    made = [features(recipe, window, 0, i, 0, tok, lab_vocab) for i in range(8)]
    return sum(len(m["labels"]) for m in made) / sum(len(m["input_ids"]) for m in made)


def flops_split(model: nn.Module, seq_len: int) -> tuple[float, float]:
    """(encoder, decoder) forward FLOPs per token, from :func:`explorer.architecture.cost.per_token`.

    ``per_token`` on a T5 or BART config counts every matrix weight of both stacks and the LM
    head once, plus attention over ``seq_len`` keys in every encoder and decoder self-attention
    layer and every cross-attention layer: the cost of one encoder token plus one decoder token.
    The encoder's share is its own weights and self-attention; the rest is the decoder's.
    """
    cfg: Any = model.config
    body: Any = model
    total = cost.per_token(model, cfg, seq_len).total
    self_layers, cross_layers, d_model = cost.layer_counts(cfg)  # self: encoder + decoder layers
    encoder = cost.matmul_flops(body.get_encoder(), cfg) + 4 * d_model * (self_layers - cross_layers) * seq_len
    return float(encoder), float(total - encoder)


def forward_flops(model: nn.Module, seq_len: int) -> float:
    """Forward FLOPs per encoder input token: encoder + decoder x (decoder tokens per encoder token)."""
    encoder, decoder = flops_split(model, seq_len)
    cfg: Any = model.config
    name = _RECIPE_OF_TYPE.get(str(getattr(cfg, "model_type", "")))
    ratio = target_ratio(name, seq_len) if name else 1.0
    return encoder + ratio * decoder

"""An encoder-decoder's log-likelihood of a continuation, scored as its output given the context as its input.

As lm-evaluation-harness's ``hf`` model does for seq2seq models: the encoder reads the context (with the
tokenizer's special tokens: T5's ``</s>``), the decoder is given the continuation's tokens as labels (encoded
without special tokens) and their log-probabilities are summed. The encoder runs once per example; its output is
repeated for the choices, which the decoder reads in one padded batch (labels of padding are -100, so they
neither score nor shift the others).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from transformers.modeling_outputs import BaseModelOutput

from explorer.core.errors import ExplorerError
from explorer.core.locks import lock_of
from explorer.evaluation.score import Group, Score, each_example, where_fields
from explorer.runtime.loading import LoadedModel
from explorer.runtime.offload import input_device
from explorer.runtime.placement import ran_on

__all__ = ["METHOD", "Seq2SeqScorer"]

METHOD = ("summed log-likelihood of the continuation as the decoder's output, the context as the encoder's input "
          "(lm-eval's seq2seq loglikelihood); the encoder runs once per example")


class Seq2SeqScorer:
    """Continuations scored by a local encoder-decoder (T5, BART) loaded as ``seq2seq``."""

    family = "encoder-decoder"
    method = METHOD

    def __init__(self, loaded: LoadedModel) -> None:
        self.loaded, self.key, self.untrained = loaded, loaded.key, bool(loaded.untrained)
        tok_max = int(getattr(loaded.tokenizer, "model_max_length", 512) or 512)
        self.limit = min(tok_max, 4096)

    def where(self) -> dict[str, str]:
        return where_fields(ran_on(self.loaded))

    def check(self, groups: Sequence[Group]) -> None:
        """Nothing to refuse before tokenizing."""

    def score(self, groups: Sequence[Group]) -> list[list[Score]]:
        return each_example(self.example, groups)

    def _ids(self, text: str, specials: bool) -> list[int]:
        tok = self.loaded.tokenizer
        with lock_of(tok):
            return [int(i) for i in tok(text, add_special_tokens=specials)["input_ids"]]

    def example(self, context: str, continuations: Sequence[str]) -> list[Score]:
        """Every continuation of one context: the encoder once, the decoder over all choices at once."""
        spaces = len(context) - len(context.rstrip())
        head, moved = (context[:-spaces], context[-spaces:]) if spaces else (context, "")
        enc = self._ids(head, True)[-self.limit:]
        labels = [self._ids(moved + c, False)[: self.limit] for c in continuations]
        if any(not ids for ids in labels):
            raise ExplorerError("A continuation encodes to no token for this encoder-decoder: give it words.")
        model = self.loaded.model
        device = input_device(model)
        width = max(len(ids) for ids in labels)
        lab = torch.full((len(labels), width), -100, dtype=torch.long)  # (C, L)
        for r, ids in enumerate(labels):
            lab[r, :len(ids)] = torch.tensor(ids)
        with torch.inference_mode():
            x = torch.tensor([enc], device=device)  # (1, S)
            hidden = model.get_encoder()(input_ids=x).last_hidden_state  # (1, S, D)
            states = BaseModelOutput(last_hidden_state=hidden.expand(len(labels), -1, -1))  # (C, S, D)
            logits = model(encoder_outputs=states, labels=lab.to(device)).logits  # (C, L, V)
            lp = torch.log_softmax(logits.float(), dim=-1).cpu()
        real = lab != -100  # (C, L)
        picked = lp.gather(2, lab.clamp(min=0)[..., None])[..., 0]  # (C, L)
        hits = lp.argmax(-1) == lab  # (C, L)
        return [Score(float(picked[r][real[r]].sum()), bool(hits[r][real[r]].all()), int(real[r].sum()))
                for r in range(len(labels))]

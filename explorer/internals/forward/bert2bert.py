"""BERT2BERT (transformers' ``EncoderDecoderModel`` of two BERTs): a BERT encoder, then a BERT decoder whose layers
attend causally to themselves and then, through a cross-attention block BERT's layer gains for it
(``crossattention``), to the encoder's output, each sublayer post-LN; the decoder's masked-LM head reads its start
token's prediction.

Everything is BERT's (:mod:`explorer.internals.forward.bert`): the embeddings of each stack, the post-LN block
(with its cross-attention, which the card names), the head. The card's stacks live under ``encoder.`` and
``decoder.bert.`` of the composite model."""

from __future__ import annotations

from explorer.internals.forward.bert import Bert

__all__ = ["BERT2BERT", "Bert2Bert"]


class Bert2Bert(Bert):
    """BERT's walk over two stacks: the shared framework runs the encoder, then the decoder against it."""


BERT2BERT = Bert2Bert()

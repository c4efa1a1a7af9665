"""Pretraining objectives as pure, seeded functions, and the registry the page and CLI use.

Every strategy maps (tokens, numpy Generator, Vocab) to a frozen result with ``to_dict()``:
token-level ones (input aligned with the original, ``targets`` per position), sequence to
sequence ones (corrupted input, separate target sequence) and sentence-pair classification.
``STRATEGIES`` names them; ``run(name, tokens, seed, vocab)`` is the one entry point. A
strategy also declares what a page needs to offer it: its widget ``options``, the help of its
rate metric and whether epochs are its defining contrast.

>>> from explorer.objectives import text
>>> p = text.prepare("The cat sat on the mat.", "bert-base-uncased", "bert")
>>> r = run("bert", p.tokens, seed=0, vocab=p.vocab)
>>> len(r.input_tokens) == len(p.tokens), r.n_predicted  # 15% of 7 words, rounded
(True, 1)
>>> [o.keyword for o in STRATEGIES["electra"].options]
['p_original']
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from explorer.core.errors import ExplorerError, shorten
from explorer.objectives import bart, decoding, electra, mlm, sentence, spans, xlm
from explorer.objectives.base import ObjectiveResult, Option, Vocab

GROUPS = (
    "token masking", "spans", "replaced-token detection", "seq2seq denoising",
    "cross-lingual", "sentence-level", "causal & decoding",
)


@dataclass(frozen=True)
class Strategy:
    """One objective: how to run it and what a learner should know about it.

    ``kind``: "token" | "seq2seq" | "sentence". ``frame``: how text becomes tokens
    ("bert": [CLS] x [SEP]; "roberta": <s> x </s> with GPT-2 pieces; "t5": x </s>;
    "albert": [CLS] x [SEP] with SentencePiece pieces; "gpt2": bare pieces).
    """

    name: str
    label: str
    group: str
    kind: str
    tokenizer: str
    frame: str
    description: str
    tokenizer_note: str
    fn: Callable[..., ObjectiveResult]
    pair: bool = False  # needs a sentence and its translation (TLM)
    options: tuple[Option, ...] = ()  # keyword options of ``fn`` a page offers as widgets
    rate_help: str = ""  # why the realised selection rate may differ from the budget
    shows_epochs: bool = False  # static vs dynamic masking over epochs is its defining contrast

    def to_dict(self) -> dict[str, object]:
        return {k: getattr(self, k) for k in ("name", "label", "group", "kind", "tokenizer", "description",
                                              "tokenizer_note", "pair")}


def _s(name, label, group, kind, tokenizer, frame, fn, description, note="", pair=False, **page: Any) -> Strategy:
    return Strategy(name, label, group, kind, tokenizer, frame, description,
                    note or f"{tokenizer} tokenizer, as the original model.", fn, pair, **page)


_ELECTRA_OPTION = Option("p_original", "Generator proposes the original token", "slider", electra.P_ORIGINAL,
                         (0.0, 1.0, 0.05),
                         "A trained generator is often right; a correct guess is labelled original (0).")
_COMPOSE_OPTION = Option("noises", "Noisings, in order", "multiselect", ("permute", "infill"), tuple(bart.NOISES))
_SUBST_XLM = "XLM's own 95k BPE is not shipped; BERT's uncased WordPiece stands in."
STRATEGIES: dict[str, Strategy] = {s.name: s for s in (
    _s("bert", "BERT MLM (static)", "token masking", "token", "bert-base-uncased", "bert", mlm.bert_mlm,
       "15% of tokens selected (exact count); of those 80% [MASK], 10% random token, 10% unchanged. Masks are fixed "
       "when the data is written.", shows_epochs=True),
    _s("wwm", "Whole-word masking", "token masking", "token", "bert-base-uncased", "bert", mlm.whole_word_mlm,
       "Same 15% budget, but every piece of a chosen word is selected together (no '##ing' alone).",
       rate_help="wwm: the budget; a word that would overshoot it is skipped, so the rate can fall short."),
    _s("roberta", "RoBERTa dynamic masking", "token masking", "token", "gpt2", "roberta", mlm.roberta_mlm,
       "A fresh 15% mask (80/10/10) every time a sequence is fed: seed derived from (seed, epoch).",
       "RoBERTa uses GPT-2's byte-level BPE pieces with <s> … </s> and <mask>.", shows_epochs=True),
    _s("spanbert", "SpanBERT spans + SBO", "spans", "token", "bert-base-cased", "bert", spans.spanbert,
       "Whole-word spans, lengths ~ Geometric(0.2) clipped at 10 words (mean 3.8), until 15% of tokens; 80/10/10 per "
       "span; the span boundary objective predicts each target from the two tokens just outside its span plus its "
       "position inside it.",
       rate_help="SpanBERT: the token budget; completing the last word of a span can overshoot it."),
    _s("t5", "T5 span corruption", "spans", "seq2seq", "t5", "t5", spans.t5_span_corruption,
       "15% of tokens in spans of mean length 3; each span becomes one sentinel <extra_id_N>; the target lists the "
       "sentinels with the dropped spans and ends with a final sentinel."),
    _s("electra", "ELECTRA replaced-token detection", "replaced-token detection", "token", "bert-base-uncased", "bert",
       electra.electra,
       "15% masked; a generator (here: a vocabulary sampler that proposes the original 25% of the time) fills them; "
       "the discriminator labels every token original (0) or replaced (1); a correct guess counts as original.",
       options=(_ELECTRA_OPTION,)),
    _s("bart-mask", "BART token masking", "seq2seq denoising", "seq2seq", "gpt2", "roberta", bart.token_masking,
       "30% of tokens become <mask>; the decoder rewrites the whole document."),
    _s("bart-delete", "BART token deletion", "seq2seq denoising", "seq2seq", "gpt2", "roberta", bart.token_deletion,
       "30% of tokens are deleted: the model must also find where something is missing."),
    _s("bart-infill", "BART text infilling", "seq2seq denoising", "seq2seq", "gpt2", "roberta", bart.text_infilling,
       "Spans with Poisson(3) lengths cover 30% of tokens; each span becomes ONE <mask>; zero-length spans insert a "
       "<mask>."),
    _s("bart-permute", "BART sentence permutation", "seq2seq denoising", "seq2seq", "gpt2", "roberta",
       bart.sentence_permutation,
       "Sentences (split at . ! ?) are shuffled."),
    _s("bart-rotate", "BART document rotation", "seq2seq denoising", "seq2seq", "gpt2", "roberta",
       bart.document_rotation,
       "The document is rotated to start at a random token; the model must find the real start."),
    _s("bart-compose", "BART permutation + infilling", "seq2seq denoising", "seq2seq", "gpt2", "roberta", bart.compose,
       "BART's final recipe: sentence permutation, then text infilling.", options=(_COMPOSE_OPTION,)),
    _s("xlm-clm", "XLM causal LM (CLM)", "cross-lingual", "token", "bert-base-uncased", "bert", xlm.xlm_clm,
       "Predict every next token; a language embedding is added to every token.", _SUBST_XLM),
    _s("xlm-mlm", "XLM masked LM (MLM)", "cross-lingual", "token", "bert-base-uncased", "bert", xlm.xlm_mlm,
       "Each token masked independently with probability 15% (80/10/10) on streams of text.", _SUBST_XLM),
    _s("xlm-tlm", "XLM translation LM (TLM)", "cross-lingual", "token", "bert-base-uncased", "bert", xlm.xlm_tlm,
       "A sentence and its translation concatenated, masked in both; language ids 0/1 and positions restart at 0 for "
       "the translation, so a masked word can be read off the other language.",
       _SUBST_XLM, pair=True),
    _s("nsp", "BERT next-sentence prediction", "sentence-level", "sentence", "bert-base-uncased", "bert", sentence.nsp,
       "[CLS] A [SEP] B [SEP]: B is the true next sentence (50%) or a sentence from another document (50%)."),
    # The catalog's stand-in for ALBERT (assets/catalog.json "tokenizer"): one choice everywhere in the app.
    _s("sop", "ALBERT sentence-order prediction", "sentence-level", "sentence", "bert-base-uncased", "bert",
       sentence.sop,
       "Two consecutive segments of the same document, swapped 50% of the time: topic cannot give the answer away.",
       "ALBERT's own 30k SentencePiece model is not shipped; BERT's uncased WordPiece stands in, as everywhere in "
       "the app (ALBERT frames its input with the same [CLS]/[SEP])."),
    _s("structbert-word", "StructBERT word structural", "sentence-level", "token", "bert-base-uncased", "bert",
       sentence.structbert_word,
       "5% of trigrams are shuffled; the model restores the original order (predicts the original token at each "
       "shuffled position)."),
    _s("structbert-sentence", "StructBERT sentence structural", "sentence-level", "sentence", "bert-base-uncased",
       "bert", sentence.structbert_sentence,
       "B is the next sentence, the previous one or a random one (1/3 each): a 3-way classification."),
    _s("gpt-clm", "GPT causal LM", "causal & decoding", "token", "gpt2", "gpt2", decoding.causal_lm,
       "No corruption: every position predicts the next token, the causal mask hides the future."),
)}


def get_strategy(name: str) -> Strategy:
    """The strategy called ``name``; an unknown name lists the valid ones."""
    if name not in STRATEGIES:
        raise ExplorerError(f"Unknown strategy {shorten(name)!r}. Choose one of: {', '.join(STRATEGIES)} (python -m "
                            "explorer mask --list).")
    return STRATEGIES[name]


def run(name: str, tokens: Sequence[str], seed: int, vocab: Vocab, epoch: int = 0, **options: Any) -> ObjectiveResult:
    """Run strategy ``name`` on ``tokens`` with a generator seeded from (seed, epoch)."""
    strategy = get_strategy(name)
    return strategy.fn(list(tokens), mlm.epoch_rng(seed, epoch), vocab, **options)


__all__ = ["GROUPS", "STRATEGIES", "ObjectiveResult", "Strategy", "get_strategy", "run"]

"""Tiny random models with PEAKED heads, and a :class:`LoadedModel` of one on a chosen device and dtype.

A random head gives near-uniform scores: half-precision rounding then reorders a top-k, and a comparison
of rankings says nothing. Here the output layer is scaled (or given a large seeded bias) so neighbouring
top scores are far apart compared with bf16's rounding, while every score still depends on the input.
"""

from __future__ import annotations

from pathlib import Path

import torch

from explorer.architecture.build import BUILD_LOCK
from explorer.runtime.loading import LoadedModel

TASKS = {"bert": "masked-lm", "roberta": "masked-lm", "distilbert-qa": "question-answering",
         "electra-generator": "masked-lm", "electra-discriminator": "electra-discriminator", "t5": "seq2seq",
         "bart": "seq2seq", "gemma": "causal-lm", "bert-base": "base"}
SCALE = 100.0  # output weights x100: top logits units apart (bf16 moves them by ~0.1)


def _build(kind: str):
    from tests import tiny_models

    if kind != "gemma":
        return tiny_models._build(kind)
    from transformers import Gemma3ForCausalLM

    from explorer.tokenization import load_tokenizer
    from tests.tiny_gemma import tiny_gemma_config

    tok = load_tokenizer("gpt2")
    config = tiny_gemma_config(len(tok), tok.eos_token_id)
    config.tie_word_embeddings = False  # a head of its own, scaled without touching the input embedding
    return Gemma3ForCausalLM(config), tok


def _peak(model: torch.nn.Module, kind: str) -> None:
    """Scale the layer that makes the scores (in place, before saving)."""
    with torch.no_grad():
        if kind == "distilbert-qa":
            model.qa_outputs.weight.mul_(SCALE)
        elif kind == "electra-discriminator":
            model.discriminator_predictions.dense_prediction.weight.mul_(SCALE)
        elif kind == "bert-base":
            return  # no head: hidden states are compared
        else:
            out = model.get_output_embeddings()
            if getattr(out, "bias", None) is not None:  # masked LMs: a seeded spread of ~10 units per token
                out.bias.copy_(torch.randn(out.bias.shape, generator=torch.Generator().manual_seed(1)) * 10)
            if kind == "gemma":
                out.weight.mul_(SCALE)


def save_peaked(kind: str, directory: Path) -> Path:
    """Build, peak and save ``kind`` (model + tokenizer) into ``directory``."""
    with BUILD_LOCK, torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        model, tok = _build(kind)
        _peak(model.eval(), kind)
    model.save_pretrained(directory)
    tok.save_pretrained(directory)
    return directory


def place(directory: Path, device: str, dtype: torch.dtype, kind: str) -> LoadedModel:
    """The saved model on ``device`` in ``dtype``, as a LoadedModel (the library's functions take it)."""
    from transformers import AutoTokenizer

    from explorer.runtime.offload import auto_class

    task = TASKS[kind]
    with BUILD_LOCK:
        model = auto_class(task).from_pretrained(str(directory), dtype=dtype, local_files_only=True)
    tok = AutoTokenizer.from_pretrained(str(directory), local_files_only=True)
    return LoadedModel(kind, kind, model.to(device).eval(), tok, device, str(dtype).removeprefix("torch."),
                       str(directory), "path", False, 0.0)


def same_ranking(ours: list[tuple[int, float]], ref: list[tuple[int, float]], tol: float) -> None:
    """Top-k (id, score) lists equal: scores within ``tol`` position by position, ids equal except where the
    reference's own scores are within ``tol`` of each other (a true tie in that dtype, either order is right).

    A tie can straddle the cut: an id missing from the reference's k may be its (k+1)-th, so it is accepted
    where its score is within ``tol`` of the reference's last (seen in bfloat16 on an H200 at rank 4 of 5)."""
    assert len(ours) == len(ref)
    for i, ((oid, osc), (rid, rsc)) in enumerate(zip(ours, ref, strict=True)):
        assert abs(osc - rsc) <= tol, f"rank {i}: score {osc} vs reference {rsc} (tolerance {tol})"
        if oid != rid:
            tied = {t for t, s in ref if abs(s - rsc) <= tol}
            past_the_cut = oid not in {t for t, _ in ref} and abs(osc - ref[-1][1]) <= tol
            assert oid in tied or past_the_cut, f"rank {i}: id {oid} vs reference {rid}, not a tie within {tol}"

"""What a compressed model still gets right, measured against the unmodified model on bundled text.

Encoders (all-MiniLM-L6-v2): sentence embeddings (mean pooling, normalised, as Sentence-BERT) of the 80
sentences of ``assets/compression/sentence_pairs.tsv``:

- **cosine agreement**: mean cosine between each sentence's compressed and original embedding (1 = same);
- **Spearman**: rank correlation of the 40 pairs' similarity scores with the original's scores;
- **probes**: for a few queries, is the candidate ranked first still the original's first?

Decoders (Gemma 3 270M): the held-out paragraphs of ``assets/compression/heldout.txt``:

- **perplexity** of the text (exp of the mean next-token loss) beside the original's;
- **top-1 agreement**: share of positions whose most likely next token is the original's;
- **probes**: for a few prompts, is the greedy continuation the original's?

The texts were written for this project (``assets/ATTRIBUTION.md``). For the bundled Gemma the "original"
is itself the dequantised Q4_K_M GGUF: every figure is relative to that 4-bit model, not to Google's bf16 one.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F

from explorer.core.correlation import spearman
from explorer.core.handles import Tokenizer
from explorer.core.notices import Notice

__all__ = ["ASSETS", "Quality", "Reference", "answer", "heldout_text", "measure", "pair_grades", "probes",
           "prompt_used", "reference", "sentence_pairs"]

ASSETS = Path(__file__).resolve().parents[2] / "assets" / "compression"
MAX_TOKENS = 256  # held-out tokens scored per forward: enough for a stable perplexity, one forward on 2 cores
PROBE_TOKENS = 4  # greedy tokens a decoder probe compares
ANSWER_TOKENS = 12  # greedy tokens of the one-prompt answer shown beside the original's
BATCH = 16


@lru_cache(maxsize=1)
def _pair_rows() -> list[list[str]]:
    lines = (ASSETS / "sentence_pairs.tsv").read_text(encoding="utf-8").splitlines()
    return [ln.split("\t") for ln in lines if ln.strip() and not ln.startswith("#")]


def sentence_pairs() -> tuple[tuple[str, str], ...]:
    """The bundled sentence pairs (first, second); comment lines skipped."""
    return tuple((row[0], row[1]) for row in _pair_rows())


def pair_grades() -> tuple[float, ...]:
    """How close in meaning each bundled pair is, graded by hand on STS's 0-5 scale (the file's third column)."""
    return tuple(float(row[2]) for row in _pair_rows())


@lru_cache(maxsize=1)
def heldout_text() -> str:
    return (ASSETS / "heldout.txt").read_text(encoding="utf-8").strip()


@lru_cache(maxsize=1)
def probes() -> dict[str, Any]:
    """{"encoder": [{"query", "candidates"}], "decoder": [prompt, ...]}."""
    return json.loads((ASSETS / "probes.json").read_text(encoding="utf-8"))


@dataclass(frozen=True)
class Reference:
    """The unmodified model's outputs that every compressed copy is compared with."""

    decoder: bool
    embeddings: torch.Tensor | None = None  # (N, D) normalised, encoders
    pair_scores: tuple[float, ...] = ()  # cosine of each pair, encoders
    top1: torch.Tensor | None = None  # (T-1,) argmax next token, decoders
    perplexity: float = 0.0
    probe_answers: tuple[str, ...] = ()


@dataclass(frozen=True)
class Quality:
    """One model's quality: the headline ``metric`` (its value and the original's), and the others."""

    metric: str
    value: float
    baseline_value: float
    extra: dict[str, float] = field(default_factory=dict)
    probes_kept: int = 0
    probes_total: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"metric": self.metric, "value": _round(self.value), "baseline_value": _round(self.baseline_value),
                "extra": {k: _round(v) for k, v in self.extra.items()}, "probes_kept": self.probes_kept,
                "probes_total": self.probes_total}


def _round(x: float) -> float | None:
    return round(float(x), 6) if math.isfinite(x) else None


def _embed(model: torch.nn.Module, tokenizer: Tokenizer, texts: list[str], device: str) -> torch.Tensor:
    """(N, D) mean-pooled, L2-normalised embeddings in float32."""
    out = []
    for i in range(0, len(texts), BATCH):
        enc = tokenizer(texts[i:i + BATCH], return_tensors="pt", padding=True, truncation=True, max_length=256)
        inputs = {k: v.to(device) for k, v in enc.items()}
        with torch.inference_mode():
            h = model(**inputs).last_hidden_state.float()  # (B, T, D)
        mask = inputs["attention_mask"].unsqueeze(-1).float()  # (B, T, 1)
        out.append(F.normalize((h * mask).sum(1) / mask.sum(1).clamp(min=1e-9), dim=1).cpu())
    return torch.cat(out)


def _flat_sentences() -> list[str]:
    return [s for pair in sentence_pairs() for s in pair]


def _pair_scores(emb: torch.Tensor) -> list[float]:
    return (emb[0::2] * emb[1::2]).sum(-1).tolist()  # (pairs,) cosine of normalised vectors


def _ranking(model: torch.nn.Module, tokenizer: Tokenizer, query: str, candidates: list[str], device: str) -> list[int]:
    """Candidate indices, most similar to ``query`` first."""
    emb = _embed(model, tokenizer, [query, *candidates], device)
    return (emb[1:] @ emb[0]).argsort(descending=True).tolist()


def _ids(tokenizer: Tokenizer, text: str, device: str, cap: int = MAX_TOKENS) -> torch.Tensor:
    return tokenizer(text, return_tensors="pt")["input_ids"][:, :cap].to(device)  # (1, T)


def _logits(model: torch.nn.Module, ids: torch.Tensor) -> torch.Tensor:
    with torch.inference_mode():
        return model(input_ids=ids).logits[0].float()  # (T, vocab)


def _greedy(model: torch.nn.Module, tokenizer: Tokenizer, prompt: str, n: int, device: str) -> str:
    ids = _ids(tokenizer, prompt, device)
    for _ in range(n):
        nxt = _logits(model, ids)[-1].argmax().view(1, 1)
        ids = torch.cat([ids, nxt.to(ids.device)], dim=1)
    return tokenizer.decode(ids[0, -n:].tolist(), skip_special_tokens=True)


def _probe_answers(model: torch.nn.Module, tokenizer: Tokenizer, decoder: bool, device: str) -> tuple[str, ...]:
    if decoder:
        return tuple(_greedy(model, tokenizer, p, PROBE_TOKENS, device) for p in probes()["decoder"])
    return tuple(item["candidates"][_ranking(model, tokenizer, item["query"], item["candidates"], device)[0]]
                 for item in probes()["encoder"])


def reference(model: torch.nn.Module, tokenizer: Tokenizer, decoder: bool, device: str) -> Reference:
    """The unmodified model's outputs on the bundled texts."""
    answers = _probe_answers(model, tokenizer, decoder, device)
    if decoder:
        ids = _ids(tokenizer, heldout_text(), device)
        logits = _logits(model, ids)
        return Reference(True, top1=logits[:-1].argmax(-1).cpu(), perplexity=_perplexity(logits, ids),
                         probe_answers=answers)
    emb = _embed(model, tokenizer, _flat_sentences(), device)
    return Reference(False, embeddings=emb, pair_scores=tuple(_pair_scores(emb)), probe_answers=answers)


def _perplexity(logits: torch.Tensor, ids: torch.Tensor) -> float:
    """exp(mean next-token cross-entropy); logits (T, vocab), ids (1, T)."""
    loss = F.cross_entropy(logits[:-1], ids[0, 1:].to(logits.device))
    return float(torch.exp(loss))


def measure(model: torch.nn.Module, tokenizer: Tokenizer, ref: Reference, device: str) -> Quality:
    """The quality of ``model`` against ``ref`` (the original's outputs)."""
    answers = _probe_answers(model, tokenizer, ref.decoder, device)
    kept = sum(a == b for a, b in zip(answers, ref.probe_answers, strict=True))
    if ref.decoder:
        assert ref.top1 is not None
        ids = _ids(tokenizer, heldout_text(), device)
        logits = _logits(model, ids)
        agree = float((logits[:-1].argmax(-1).cpu() == ref.top1).float().mean())
        return Quality("perplexity", _perplexity(logits, ids), ref.perplexity, {"top1_agreement": agree},
                       kept, len(answers))
    assert ref.embeddings is not None
    emb = _embed(model, tokenizer, _flat_sentences(), device)
    cosine = float((emb * ref.embeddings).sum(-1).mean())
    rho = spearman(_pair_scores(emb), list(ref.pair_scores))
    return Quality("cosine agreement", cosine, 1.0, {"spearman_vs_original": rho}, kept, len(answers))


def answer(model: torch.nn.Module, tokenizer: Tokenizer, decoder: bool, prompt: str, candidates: list[str],
           device: str) -> str:
    """The model's answer to one prompt: a decoder's greedy continuation, or an encoder's candidates
    ranked by similarity to the prompt (best first, joined by " > ")."""
    if decoder:
        return _greedy(model, tokenizer, prompt, ANSWER_TOKENS, device)
    order = _ranking(model, tokenizer, prompt, candidates, device)
    return " > ".join(candidates[i] for i in order)


def prompt_used(text: str | None, example: str, limit: int) -> tuple[str, tuple[Notice, ...]]:
    """The prompt the side-by-side answers use, and what was done to it: none given (None) is the ``example``;
    an empty one typed is the example too and a long one its first ``limit`` characters, each said in a notice.

    >>> prompt_used(None, "A man is playing a guitar.", 500)
    ('A man is playing a guitar.', ())
    >>> prompt_used("  ", "A man is playing a guitar.", 500)[1][0].kind
    'fallback'
    >>> text, said = prompt_used("word " * 200, "", 500)
    >>> len(text), said[0].kind
    (500, 'truncated')
    """
    if text is None:
        return example, ()
    given = text.strip()
    if not given:
        return example, (Notice("fallback", f"The prompt was empty, so the answers use the example: {example}"),)
    if len(given) <= limit:
        return given, ()
    return given[:limit], (Notice("truncated", f"The prompt has {len(given):,} characters; the answers use its "
                                               f"first {limit:,}."),)

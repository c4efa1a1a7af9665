"""Beam search one expansion at a time, with transformers' exact rules (same ids as ``generate``).

This follows ``GenerationMixin._beam_search`` of transformers 5.23 for one prompt with its
defaults (``length_penalty=1.0``, ``early_stopping=False``, no sampling): keep the best
``K = max(2, 1 + #eos) * B`` continuations over all beams, let the best B unfinished ones run
on, move hypotheses that end (end-of-sequence or max length) among the top B into the finished
set with score ``sum log p / generated_length ** length_penalty``, and stop when no running beam
can still beat the worst finished one. The same tensor operations in the same order keep the
scores bit-identical, so ties break the same way.

One difference, for speed only: the prompt is run once (batch 1) and its KV cache copied to
the B beams, where ``generate`` runs B identical copies of the prompt.
"""

from __future__ import annotations

from typing import Any

import torch

from explorer.runtime import cancel
from explorer.tasks.generation.nexttoken import forward_last
from explorer.tasks.generation.settings import DecodingSettings
from explorer.tasks.generation.steps import Step, alternatives, eos_ids, make_step

__all__ = ["EARLY_STOPPING", "LENGTH_PENALTY", "BeamDecoder"]

LENGTH_PENALTY = 1.0  # transformers' default: scores are averaged over the generated length
EARLY_STOPPING = False  # transformers' default heuristic (see _check_early_stop_heuristic)
_NEG = -1.0e9


class BeamDecoder:
    """Beam search of one prompt, advanced one token (one expansion of every beam) per :meth:`step`."""

    def __init__(self, model: torch.nn.Module, tokenizer: Any, prompt_ids: tuple[int, ...],
                 settings: DecodingSettings) -> None:
        self.model, self.tokenizer = model, tokenizer
        self.settings = settings.validated()
        self.beams = self.settings.beams
        eos = eos_ids(model)
        self._eos = torch.tensor(eos, dtype=torch.long)
        self._keep = max(2, 1 + len(eos)) * self.beams  # K candidates per step
        self._prompt_len = len(prompt_ids)
        self._cur_len = self._prompt_len
        self._max_len = self._prompt_len + self.settings.max_new_tokens
        self._pending = torch.tensor([prompt_ids], dtype=torch.long)  # (1, T), then (B, 1)
        self._cache: Any = None
        self._running: list[list[Step]] = [[] for _ in range(self.beams)]
        self._running_scores = torch.full((1, self.beams), _NEG)  # (1, B): only beam 0 is live at first
        self._running_scores[:, 0] = 0.0
        self._finished: list[list[Step]] = [[] for _ in range(self.beams)]
        self._finished_scores = torch.full((1, self.beams), _NEG)  # (1, B)
        self._is_finished = torch.zeros((1, self.beams), dtype=torch.bool)
        self._improvable = torch.ones((1, 1), dtype=torch.bool)  # running beams may still win
        self.finished = False

    @property
    def steps(self) -> list[Step]:
        """The best hypothesis so far: the best finished one at the end, else the best running beam."""
        return list(self._finished[0] if self.finished else self._running[0])

    @property
    def token_ids(self) -> list[int]:
        return [s.token_id for s in self.steps]

    @property
    def score(self) -> float:
        """Length-normalised log-probability of the returned hypothesis (once finished)."""
        return float(self._finished_scores[0, 0])

    def _log_probs(self) -> torch.Tensor:
        """log p(next | beam) for every beam (B, V); the first call runs the prompt once."""
        logits, self._cache = forward_last(self.model, self._pending, self._cache)  # (1 or B, V)
        return torch.log_softmax(logits, dim=-1).expand(self.beams, -1)  # (B, V)

    def _top_continuations(self, log_probs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(scores (1, K), source beam (K,), token (K,)) of the K best continuations over all beams."""
        vocab = log_probs.shape[-1]
        scores = (log_probs + self._running_scores[0, :, None]).reshape(1, -1)  # (1, B*V)
        top_scores, top_index = torch.topk(scores, k=self._keep)
        return top_scores, top_index[0] // vocab, top_index[0] % vocab

    def _records(self, log_probs: torch.Tensor, beam: torch.Tensor, token: torch.Tensor) -> list[list[Step]]:
        """The history of each of the K candidates, each extended by its new step."""
        probs = log_probs.exp()  # (B, V)
        tops = {b: alternatives(self.tokenizer, probs[b]) for b in set(beam.tolist())}
        return [self._running[b] + [make_step(self.tokenizer, probs[b], t, tops[b])]
                for b, t in zip(beam.tolist(), token.tolist(), strict=True)]

    def _hits(self, token: torch.Tensor) -> torch.Tensor:
        """(1, K) candidates that end here: end-of-sequence, or the maximum length reached."""
        at_max = self._cur_len + 1 >= self._max_len
        ends = torch.isin(token, self._eos) if self._eos.numel() else torch.zeros_like(token, dtype=torch.bool)
        return (ends | at_max)[None, :]

    def _advance_running(self, scores: torch.Tensor, hits: torch.Tensor, beam: torch.Tensor,
                         records: list[list[Step]]) -> torch.Tensor:
        """Keep the B best unfinished candidates; returns the beam each came from (B,)."""
        running_scores = scores + hits.to(torch.float32) * _NEG
        chosen = torch.topk(running_scores, k=self.beams)[1][0]  # (B,)
        self._running = [records[i] for i in chosen.tolist()]
        self._running_scores = running_scores[:, chosen]
        return beam[chosen]

    def _update_finished(self, scores: torch.Tensor, hits: torch.Tensor, records: list[list[Step]]) -> None:
        """Merge the candidates that just ended (among the top B) into the B best finished ones."""
        top_b = torch.arange(self._keep) < self.beams
        just_done = hits & top_b[None, :]
        final = scores / ((self._cur_len + 1 - self._prompt_len) ** LENGTH_PENALTY)
        full = torch.all(self._is_finished, dim=-1, keepdim=True) & (EARLY_STOPPING is True)
        final = final + full.to(torch.float32) * _NEG
        final = final + (~self._improvable).to(torch.float32) * _NEG
        final = final + (~just_done) * _NEG
        merged_scores = torch.cat((self._finished_scores, final), dim=1)  # (1, B + K)
        merged = self._finished + records
        merged_done = torch.cat((self._is_finished, just_done), dim=1)
        best = torch.topk(merged_scores, k=self.beams)[1]  # (1, B)
        self._finished = [merged[i] for i in best[0].tolist()]
        self._finished_scores = torch.take_along_dim(merged_scores, best, dim=1)
        self._is_finished = torch.take_along_dim(merged_done, best, dim=1)

    def _check_stop(self, hits: torch.Tensor) -> None:
        """Stop when no running beam can beat the worst finished one, or nothing can continue."""
        best_possible = self._running_scores[:, :1] / ((self._cur_len - self._prompt_len) ** LENGTH_PENALTY)
        worst_done = torch.where(self._is_finished, torch.min(self._finished_scores, dim=1, keepdim=True)[0], _NEG)
        self._improvable = self._improvable & torch.any(best_possible > worst_done, dim=-1, keepdim=True)
        open_beam = ~(torch.all(self._is_finished) & (EARLY_STOPPING is True))
        go_on = torch.any(self._improvable) & open_beam & ~torch.all(hits)
        self.finished = not bool(go_on)

    def step(self) -> Step | None:
        """Expand every beam by one token; returns the newest step of the best hypothesis."""
        if self.finished:
            return None
        cancel.check()  # stop here when this server request is out of budget or its page is gone
        with torch.inference_mode():
            log_probs = self._log_probs()  # (B, V)
            scores, beam, token = self._top_continuations(log_probs)
            records = self._records(log_probs, beam, token)
            hits = self._hits(token)
            source = self._advance_running(scores, hits, beam, records)
            self._update_finished(scores, hits, records)
            self._cache.reorder_cache(source)  # each running beam continues from its parent's cache
            self._pending = torch.tensor([[r[-1].token_id] for r in self._running], dtype=torch.long)  # (B, 1)
            self._cur_len += 1
            self._check_stop(hits)
        steps = self.steps
        return steps[-1] if steps else None

    def run(self, until: int | None = None) -> list[Step]:
        """Step until finished (or ``until`` expansions); returns the best hypothesis."""
        target = self.settings.max_new_tokens if until is None else min(until, self.settings.max_new_tokens)
        while not self.finished and self._cur_len - self._prompt_len < target:
            self.step()
        return self.steps

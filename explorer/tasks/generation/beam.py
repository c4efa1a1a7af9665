"""Beam search one expansion at a time, with transformers' exact rules (same ids as ``generate``).

This follows ``GenerationMixin._beam_search`` of transformers 5.23 for one prompt with its
defaults (``length_penalty=1.0``, ``early_stopping=False``, no sampling): keep the best
``K = max(2, 1 + #eos) * B`` continuations over all beams, let the best B unfinished ones run
on, move hypotheses that end (end-of-sequence or max length) among the top B into the finished
set with score ``sum log p / generated_length ** length_penalty``, and stop when no running beam
can still beat the worst finished one. The same tensor operations in the same order keep the
scores bit-identical, so ties break the same way.

Where it runs: every score, ``topk`` and index of the bookkeeping stays on the device the logits
come out on (a GPU's (B, V) logits never cross to the CPU); each step ends with **one** small
transfer (:func:`_StepNumbers.fetch`: the K candidates' beams and tokens, the chosen indices, the
stop flag and the B x 5 alternatives, a few dozen numbers) from which the readable history of
tokens is kept on the CPU. The KV cache is reordered on the device (``Cache.reorder_cache`` with an
index tensor already there), never rebuilt.

One difference, for speed only: the prompt is run once (batch 1) and its KV cache copied to
the B beams, where ``generate`` runs B identical copies of the prompt.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from explorer.core.handles import Tokenizer
from explorer.runtime import cancel, capacity
from explorer.tasks.generation.nexttoken import forward_last, token_text
from explorer.tasks.generation.steps import Alternative, Step, eos_ids
from explorer.tasks.generation.strategy import TOP_ALTERNATIVES, DecodingSettings

__all__ = ["EARLY_STOPPING", "LENGTH_PENALTY", "BeamDecoder"]

LENGTH_PENALTY = 1.0  # transformers' default: scores are averaged over the generated length
EARLY_STOPPING = False  # transformers' default heuristic (see _check_early_stop_heuristic)
_NEG = -1.0e9


@dataclass(frozen=True)
class _StepNumbers:
    """What one expansion tells the CPU (everything else stays on the device)."""

    beam: list[int]  # (K,) source beam of each candidate
    token: list[int]  # (K,) its token
    prob: list[float]  # (K,) the model's probability of that token from that beam
    alt_ids: list[list[int]]  # (B, 5) most likely tokens of each running beam
    alt_probs: list[list[float]]  # (B, 5)
    running: list[int]  # (B,) candidates kept running, best first
    finished: list[int]  # (B,) indices into finished + candidates kept finished
    go_on: bool

    @classmethod
    def fetch(cls, beam: torch.Tensor, token: torch.Tensor, prob: torch.Tensor, alt_ids: torch.Tensor,
              alt_probs: torch.Tensor, running: torch.Tensor, finished: torch.Tensor,
              go_on: torch.Tensor) -> _StepNumbers:
        """One device -> CPU copy of every number above, packed in float32: token ids are below 2**24
        (2,000,000 at most: explorer.architecture.membudget.FIELD_RANGES), so they survive exactly; not float64
        because Apple's MPS has no float64."""
        k, b, a = beam.numel(), running.numel(), alt_ids.shape[-1]
        parts = (beam, token, running, finished, go_on.reshape(1), alt_ids.reshape(-1), prob, alt_probs.reshape(-1))
        flat = torch.cat([p.to(torch.float32) for p in parts]).cpu().tolist()
        ints = [int(x) for x in flat[:2 * k + 2 * b + 1 + b * a]]
        floats = flat[2 * k + 2 * b + 1 + b * a:]
        alt_i, alt_p = ints[2 * k + 2 * b + 1:], floats[k:]
        return cls(ints[:k], ints[k:2 * k], floats[:k], [alt_i[i * a:(i + 1) * a] for i in range(b)],
                   [alt_p[i * a:(i + 1) * a] for i in range(b)], ints[2 * k:2 * k + b],
                   ints[2 * k + b:2 * k + 2 * b], bool(ints[2 * k + 2 * b]))


class BeamDecoder:
    """Beam search of one prompt, advanced one token (one expansion of every beam) per :meth:`step`."""

    def __init__(self, model: torch.nn.Module, tokenizer: Tokenizer, prompt_ids: tuple[int, ...],
                 settings: DecodingSettings) -> None:
        self.model, self.tokenizer = model, tokenizer
        eos = eos_ids(model)
        # the new-token cap of the model's device; K = max(2, 1 + #eos) x B candidates per step
        self._start(settings.validated(capacity.model_facts(model)), eos, max(2, 1 + len(eos)), len(prompt_ids))
        self._pending = torch.tensor([prompt_ids], dtype=torch.long)  # (1, T), then (B, 1) on the device
        self._cache: Any = None
        self._texts: dict[int, str] = {}  # token id -> text, decoded once per decoder

    def _start(self, settings: DecodingSettings, eos: tuple[int, ...] | list[int], per_beam: int,
               prompt_len: int) -> None:
        """The search's starting state (one home: a subclass that asks elsewhere for its distributions too)."""
        self.settings, self.beams = settings, settings.beams
        self._eos = torch.tensor(eos, dtype=torch.long)
        self._keep = per_beam * self.beams  # K candidates per step
        self._prompt_len = self._cur_len = prompt_len
        self._max_len = prompt_len + settings.max_new_tokens
        self._running: list[list[Step]] = [[] for _ in range(self.beams)]
        self._running_scores = torch.full((1, self.beams), _NEG)  # (1, B): only beam 0 is live at first
        self._running_scores[:, 0] = 0.0
        self._finished: list[list[Step]] = [[] for _ in range(self.beams)]
        self._finished_scores = torch.full((1, self.beams), _NEG)  # (1, B)
        self._is_finished = torch.zeros((1, self.beams), dtype=torch.bool)
        self._improvable = torch.ones((1, 1), dtype=torch.bool)  # running beams may still win
        self._top_b = torch.arange(self._keep) < self.beams  # (K,) the first B candidates
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

    def _to(self, device: torch.device) -> None:
        """Move the bookkeeping to where the logits are (once, after the first forward)."""
        for name in ("_eos", "_running_scores", "_finished_scores", "_is_finished", "_improvable", "_top_b"):
            setattr(self, name, getattr(self, name).to(device))

    def _log_probs(self) -> torch.Tensor:
        """log p(next | beam) for every beam (B, V) on the logits' device; the first call runs the prompt once."""
        logits, self._cache = forward_last(self.model, self._pending, self._cache, on_device=True)  # (1 or B, V)
        if logits.device != self._running_scores.device:
            self._to(logits.device)
        return torch.log_softmax(logits, dim=-1).expand(self.beams, -1)  # (B, V)

    def _continue(self, source: torch.Tensor, tokens: torch.Tensor) -> None:
        """Each running beam continues from its parent ``source`` (B,) with ``tokens`` (B,): the KV cache is
        reordered on the device and only the new tokens are fed next (a subclass that asks elsewhere for its
        distributions keeps its own prefixes instead)."""
        self._cache.reorder_cache(source)
        self._pending = tokens[:, None]  # (B, 1)

    def _top_continuations(self, log_probs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(scores (1, K), source beam (K,), token (K,)) of the K best continuations over all beams."""
        vocab = log_probs.shape[-1]
        scores = (log_probs + self._running_scores[0, :, None]).reshape(1, -1)  # (1, B*V)
        top_scores, top_index = torch.topk(scores, k=self._keep)
        return top_scores, top_index[0] // vocab, top_index[0] % vocab

    def _hits(self, token: torch.Tensor) -> torch.Tensor:
        """(1, K) candidates that end here: end-of-sequence, or the maximum length reached."""
        at_max = self._cur_len + 1 >= self._max_len
        ends = torch.isin(token, self._eos) if self._eos.numel() else torch.zeros_like(token, dtype=torch.bool)
        return (ends | at_max)[None, :]

    def _advance_running(self, scores: torch.Tensor, hits: torch.Tensor) -> torch.Tensor:
        """Keep the B best unfinished candidates; returns their indices among the K (B,)."""
        running_scores = scores + hits.to(torch.float32) * _NEG
        chosen = torch.topk(running_scores, k=self.beams)[1][0]  # (B,)
        self._running_scores = running_scores[:, chosen]
        return chosen

    def _update_finished(self, scores: torch.Tensor, hits: torch.Tensor) -> torch.Tensor:
        """Merge the candidates that just ended (among the top B) into the B best finished ones;
        returns the kept indices (B,) into finished + candidates."""
        just_done = hits & self._top_b[None, :]
        final = scores / ((self._cur_len + 1 - self._prompt_len) ** LENGTH_PENALTY)
        full = torch.all(self._is_finished, dim=-1, keepdim=True) & (EARLY_STOPPING is True)
        final = final + full.to(torch.float32) * _NEG
        final = final + (~self._improvable).to(torch.float32) * _NEG
        final = final + (~just_done) * _NEG
        merged_scores = torch.cat((self._finished_scores, final), dim=1)  # (1, B + K)
        merged_done = torch.cat((self._is_finished, just_done), dim=1)
        best = torch.topk(merged_scores, k=self.beams)[1]  # (1, B)
        self._finished_scores = torch.take_along_dim(merged_scores, best, dim=1)
        self._is_finished = torch.take_along_dim(merged_done, best, dim=1)
        return best[0]

    def _check_stop(self, hits: torch.Tensor) -> torch.Tensor:
        """Whether to go on (a 0-d bool on the device): not when no running beam can beat the worst
        finished one, or nothing can continue."""
        best_possible = self._running_scores[:, :1] / ((self._cur_len - self._prompt_len) ** LENGTH_PENALTY)
        worst_done = torch.where(self._is_finished, torch.min(self._finished_scores, dim=1, keepdim=True)[0], _NEG)
        self._improvable = self._improvable & torch.any(best_possible > worst_done, dim=-1, keepdim=True)
        open_beam = ~(torch.all(self._is_finished) & (EARLY_STOPPING is True))
        return torch.any(self._improvable) & open_beam & ~torch.all(hits)

    def _text(self, token_id: int) -> str:
        if token_id not in self._texts:
            self._texts[token_id] = token_text(self.tokenizer, token_id)
        return self._texts[token_id]

    def _record(self, got: _StepNumbers) -> None:
        """The CPU's readable histories: each candidate is its beam's history plus its new step."""
        tops = [tuple(Alternative(self._text(i), i, p) for i, p in zip(ids, probs, strict=True))
                for ids, probs in zip(got.alt_ids, got.alt_probs, strict=True)]
        records = [self._running[b] + [Step(self._text(t), t, p, tops[b])]
                   for b, t, p in zip(got.beam, got.token, got.prob, strict=True)]
        merged = self._finished + records
        self._running = [records[i] for i in got.running]
        self._finished = [merged[i] for i in got.finished]
        self.finished = not got.go_on

    def step(self) -> Step | None:
        """Expand every beam by one token; returns the newest step of the best hypothesis."""
        if self.finished:
            return None
        cancel.check()  # stop here when this server request is out of budget or its page is gone
        with torch.inference_mode():
            log_probs = self._log_probs()  # (B, V)
            scores, beam, token = self._top_continuations(log_probs)
            alt_logp, alt_ids = log_probs.topk(min(TOP_ALTERNATIVES, log_probs.shape[-1]))  # (B, 5)
            hits = self._hits(token)
            chosen = self._advance_running(scores, hits)
            best = self._update_finished(scores, hits)
            self._continue(beam[chosen], token[chosen])  # (B,) each running beam's parent and new token
            self._cur_len += 1
            go_on = self._check_stop(hits)
            got = _StepNumbers.fetch(beam, token, log_probs[beam, token].exp(), alt_ids, alt_logp.exp(), chosen,
                                     best, go_on)
        self._record(got)
        steps = self.steps
        return steps[-1] if steps else None

    def run(self, until: int | None = None) -> list[Step]:
        """Step until finished (or ``until`` expansions); returns the best hypothesis."""
        target = self.settings.max_new_tokens if until is None else min(until, self.settings.max_new_tokens)
        while not self.finished and self._cur_len - self._prompt_len < target:
            self.step()
        return self.steps

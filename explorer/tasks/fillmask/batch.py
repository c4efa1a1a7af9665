"""Fill-mask for many prompts at once: one prompt per line, every model, batched forward passes.

The page (several lines in the prompt box) and ``python -m explorer fill-mask --text-file FILE`` call
:func:`fill_mask_many`. Each prompt gets the same :class:`~explorer.tasks.fillmask.result.FillMaskResult` that
:func:`explorer.tasks.fillmask.run.fill_mask` gives for it alone; the answers equal the one-prompt path (and
``transformers.pipeline("fill-mask")``) up to float rounding from padding.

Why it is faster than a loop: a masked LM tokenizes every prompt in one call, sorts the prompts by
length and runs them in batches (at most :data:`MAX_BATCH` prompts and :data:`TOKEN_BUDGET` padded
tokens each, so a batch pads little and its activations stay bounded), and projects onto the
vocabulary only the hidden states at the mask positions: (n_masks, H) -> (n_masks, V), not
(B, T, V). Top-k runs on the model's device; only (n_masks, k) numbers come back. A decoder (the
causal column) answers prompt by prompt: its beam over candidates is its own loop
(:mod:`explorer.tasks.causal.fill`), so it is looped here, with the same result as alone.

>>> plan_batches([5, 3, 9, 3], max_batch=2, token_budget=100)
[[1, 3], [0, 2]]
>>> plan_batches([5, 3, 9, 3], max_batch=8, token_budget=12)
[[1, 3], [0], [2]]
"""

from __future__ import annotations

import dataclasses
import functools
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch

from explorer.core.errors import ExplorerError
from explorer.core.notices import Notice, texts
from explorer.runtime import activations, cancel, footprint, placement
from explorer.runtime.loading import LoadedModel, load_model
from explorer.runtime.offload import input_device
from explorer.runtime.resolve import ModelRef
from explorer.tasks.fillmask import masked, prompt, run
from explorer.tasks.fillmask.result import FillMaskResult, ModelFill

if TYPE_CHECKING:  # typing only: transformers loads with the first model
    from transformers import PreTrainedModel

__all__ = ["MAX_BATCH", "MAX_FILE_PROMPTS", "STREAM_CHUNK", "fill_mask_stream", "MAX_PROMPTS", "MAX_PROMPTS_GPU",
           "TOKEN_BUDGET", "BatchFill", "PromptFill", "batch_logits", "fill_batch", "fill_mask_many", "is_batch",
           "page_prompt_limit", "plan_batches", "prompt_lines", "refuse_binary"]

MAX_PROMPTS = 64  # prompts one page request runs on a CPU: 64 short prompts x 3 base models ~ 2-4 s
MAX_PROMPTS_GPU = 512  # on a GPU a batch of 64 takes milliseconds; the table, not the model, is the limit
MAX_FILE_PROMPTS = 10_000  # a CLI file (itself at most userfiles.MAX_TEXT_BYTES): a batch job, not a page
MAX_BATCH = 64  # prompts per forward pass
STREAM_CHUNK = 256  # prompts answered (and printed) together by the CLI's streaming run
TOKEN_BUDGET = 16_384  # padded tokens per forward: BERT-base attention at 512 tokens x 32 prompts ~ 0.4 GB
_SHOWN = 80  # characters of a refused line quoted back


@dataclass(frozen=True)
class PromptFill:
    """One line of the input: its answers, or why the line was not run."""

    line: int  # 1-based line number in the text as given (blank lines counted)
    prompt: str  # the line as cleaned; a refused line cut to 80 characters
    result: FillMaskResult | None  # every model's answer (None when the line was refused)
    error: str | None = None  # why the line was refused (no mask, a T5 sentinel, ...)

    def to_dict(self) -> dict:
        """The one-prompt JSON (``FillMaskResult.to_dict``) with the line number first, or the refusal."""
        if self.result is None:
            return {"line": self.line, "prompt": self.prompt, "error": self.error}
        return {"line": self.line, **self.result.to_dict()}


@dataclass(frozen=True)
class BatchFill:
    """Every line's answers in input order, and what was cut."""

    prompts: tuple[PromptFill, ...]
    notices: tuple[Notice, ...]  # e.g. "only the first 64 prompts ran"

    def to_list(self) -> list[dict]:
        """JSON-able: one entry per prompt, in input order."""
        return [p.to_dict() for p in self.prompts]

    def answered(self) -> list[PromptFill]:
        return [p for p in self.prompts if p.result is not None]

    def model_errors(self) -> list[tuple[str, str]]:
        """(model, message) once each: a model that failed to load fails for every prompt alike."""
        return list(dict.fromkeys(e for p in self.prompts if p.result is not None for e in p.result.errors))

    def rows(self) -> list[dict]:
        """One row per (prompt, model, mask, rank): the CSV export."""
        return [{"line": p.line, "prompt": p.prompt, "model": f.name, "untrained": f.untrained, "mask": m.index + 1,
                 "rank": r + 1, "word": c.word, "token": c.token, "token_id": c.token_id, "probability": c.score,
                 "notice": " ".join(texts(f.notices))}
                for p in self.prompts if p.result is not None for f in p.result.models for m in f.masks
                for r, c in enumerate(m.predictions)]

    def summary(self, shown: int = 3) -> list[dict]:
        """One row per prompt, one column per model: its ``shown`` best words per mask ("a 0.412, b 0.12"),
        masks separated by " | "; a refused line shows its reason."""
        out, notes = [], any(p.error for p in self.prompts)
        for p in self.prompts:
            row: dict = {"line": p.line, "prompt": p.prompt, **({"note": p.error or ""} if notes else {})}
            for f in p.result.models if p.result else ():
                row[_column(row,
                            f.name)] = " | ".join(", ".join(f"{c.word} {c.score:.3g}" for c in m.predictions[:shown])
                                                       for m in f.masks)
            out.append(row)
        return out


def _column(row: dict, name: str) -> str:
    """A column title not yet in ``row`` (two directories may both be called "bert")."""
    title, n = name, 2
    while title in row:
        title, n = f"{name} ({n})", n + 1
    return title


def is_batch(text: object) -> bool:
    """Whether ``text`` holds more than one prompt (non-blank line): the page then shows one row per prompt."""
    return isinstance(text, str) and sum(1 for line in text.splitlines() if line.strip()) > 1


def refuse_binary(text: str, what: str) -> str:
    """``text`` read from a file, unless it holds NUL bytes: valid UTF-8, but a binary file (an image, a
    model's weights) rather than prompts, which would otherwise come back as lines without a mask."""
    if "\x00" in text:
        raise ExplorerError(f"{what} holds NUL bytes, so it looks like a binary file: give a UTF-8 text file with "
                            "one prompt per line.")
    return text


def page_prompt_limit(device: str) -> int:
    """How many prompts one page request runs on ``device`` ("cuda", "mps" or "cpu")."""
    return MAX_PROMPTS_GPU if device == "cuda" else MAX_PROMPTS


def prompt_lines(text: object, limit: int = MAX_PROMPTS) -> tuple[list[tuple[int, str]], tuple[Notice, ...]]:
    """(line number, line) for each non-blank line, at most ``limit`` of them, and a notice when cut.

    Raises ExplorerError for no text or only blank lines (control characters in a line are blanked by
    :func:`explorer.tasks.fillmask.clean_text` as for one prompt; a file is checked by :func:`refuse_binary`).
    """
    if not isinstance(text, str):
        raise ExplorerError(f"The prompts must be text, not {type(text).__name__}.")
    lines = [(n, line.strip()) for n, line in enumerate(text.splitlines(), start=1) if line.strip()]
    if not lines:
        raise ExplorerError("There are no prompts: write one sentence per line with [MASK] (or ___) where a word "
                            "is missing.")
    if len(lines) <= limit:
        return lines, ()
    return lines[:limit], (Notice("truncated", f"{len(lines):,} prompts were given; only the first {limit:,} ran "
                                  f"(up to line {lines[limit - 1][0]:,}). Run the rest as another batch."),)


def plan_batches(lengths: Sequence[int], max_batch: int = MAX_BATCH,
                 token_budget: int = TOKEN_BUDGET) -> list[list[int]]:
    """:func:`explorer.runtime.activations.plan_batches` with this module's defaults."""
    return activations.plan_batches(lengths, max_batch, token_budget)


def batch_logits(model: PreTrainedModel, ids: torch.Tensor, attention: torch.Tensor, rows: torch.Tensor,
                 cols: torch.Tensor, mask_only: bool = True) -> torch.Tensor:
    """Vocabulary logits at the mask positions of a padded batch, in the model's dtype.

    ids, attention: (B, T) on the model's input device; rows, cols: (M,) batch row and position of each
    mask. Returns (M, V). With ``mask_only`` and a head :func:`explorer.tasks.fillmask.masked.mlm_head` can split off,
    only the M mask rows go through the head; otherwise the full (B, T, V) logits are computed and picked.
    """
    with torch.inference_mode():
        head = masked.mlm_head(model) if mask_only else None
        # Indices go where the output is: under accelerate's offloading the last layer may run elsewhere.
        if head is None:
            logits = model(input_ids=ids, attention_mask=attention).logits  # (B, T, V)
            return logits[rows.to(logits.device), cols.to(logits.device)]  # (M, V)
        hidden = model.base_model(input_ids=ids, attention_mask=attention)[0]  # (B, T, H)
        return head(hidden[rows.to(hidden.device), cols.to(hidden.device)])  # (M, H) -> (M, V)


def _batch_topk(lm: LoadedModel, framed: list[tuple[list[int], list[int]]], top_k: int,
                mask_only: bool) -> list[tuple[list[list[float]], list[list[int]]]]:
    """Top-k (probabilities, token ids), each (M_i, k), for every prompt of one batch: ``framed`` holds
    (input ids, mask positions) per prompt. One forward, one transfer back."""
    device, pad = input_device(lm.model), lm.tokenizer.pad_token_id or 0  # masked by attention anyway
    width = max(len(ids) for ids, _ in framed)
    # Right padding, as the tokenizer pads: absolute positions of the real tokens are unchanged.
    ids = torch.tensor([x + [pad] * (width - len(x)) for x, _ in framed])  # (B, T)
    attention = torch.tensor([[1] * len(x) + [0] * (width - len(x)) for x, _ in framed])  # (B, T)
    rows = torch.tensor([b for b, (_, pos) in enumerate(framed) for _ in pos])  # (M,)
    cols = torch.tensor([p for _, pos in framed for p in pos])  # (M,)
    logits = batch_logits(lm.model, ids.to(device), attention.to(device), rows.to(device), cols.to(device),
                          mask_only)  # (M, V)
    top = logits.float().softmax(-1).topk(top_k, dim=-1)  # (M, k) each, on the model's device
    values: list[list[float]] = top.values.cpu().tolist()
    indices: list[list[int]] = top.indices.cpu().tolist()
    out, start = [], 0
    for _, pos in framed:
        out.append((values[start:start + len(pos)], indices[start:start + len(pos)]))
        start += len(pos)
    return out


def _dtype_bytes(lm: LoadedModel) -> int:
    return next((p.element_size() for p in lm.model.parameters()), 4)


def fill_batch(lm: LoadedModel, texts: Sequence[str], top_k: int = 5, *, max_batch: int = MAX_BATCH,
               token_budget: int = TOKEN_BUDGET, mask_only: bool = True) -> list[ModelFill | ExplorerError]:
    """One loaded masked LM's column for each of ``texts`` (cleaned prompts with at least one mask), in
    input order; a prompt this model cannot take (masks farther apart than it reads) gets its
    ExplorerError in its place. ``latency_ms`` is the whole call's time shared out per prompt.
    A tokenizer without a mask token raises (the model answers no prompt)."""
    begin, tok = time.perf_counter(), lm.tokenizer
    bodies = masked.encode_many(tok, [prompt.model_prompt(t, tok, lm.name) for t in texts])
    around = masked.specials_around(tok)
    framed: list[tuple[list[int], list[int], Notice | None] | ExplorerError] = []
    for body in bodies:
        try:
            framed.append(masked.frame(lm, body, around))  # (ids, positions, notice)
        except ExplorerError as err:
            framed.append(err)
    ready = {i: f for i, f in enumerate(framed) if not isinstance(f, ExplorerError)}
    ok = list(ready)
    tops: dict[int, tuple[list[list[float]], list[list[int]]]] = {}
    lengths = [len(ready[i][0]) for i in ok]
    # the fixed budget, or less where this model's activations at the longest prompt would not fit one forward
    token_budget = min(token_budget, activations.tokens_per_forward(lm.model.config, max(lengths, default=1),
                                                                    dtype_bytes=_dtype_bytes(lm)))
    for batch in plan_batches(lengths, max_batch, token_budget):
        cancel.check()  # a server request out of its time or memory budget stops before the next batch
        members = [ok[j] for j in batch]
        tops.update(zip(members, _batch_topk(lm, [ready[i][:2] for i in members], int(top_k), mask_only),
                        strict=True))
    words = masked.word_context(tok)
    out: list[ModelFill | ExplorerError] = [  # input order; a refused prompt keeps its error
        f if isinstance(f, ExplorerError) else masked.to_model_fill(lm, f[0], f[1], *tops[i], f[2], 0.0, words)
        for i, f in enumerate(framed)]
    share = (time.perf_counter() - begin) * 1000 / max(1, len(ok))
    return [f if isinstance(f, ExplorerError) else dataclasses.replace(f, latency_ms=share) for f in out]


def _model_answers(ref: ModelRef, texts: list[str], top_k: int,
                   loader: Callable[..., LoadedModel], answer_tokens: int) -> list[ModelFill | ExplorerError]:
    """One model's answer (or error) for every prompt: a masked LM in batches, a decoder prompt by prompt."""
    kind = ref.task("masked-lm")
    if kind != "masked-lm":  # the decoder's beam is a loop of its own: same result as alone, one prompt at a time
        out: list[ModelFill | ExplorerError] = []
        for text in texts:
            try:
                out.append(run.FILLERS[kind](ref, text, top_k, loader, answer_tokens))
            except ExplorerError as err:
                out.append(err)
        return out
    try:
        lm = loader(ref, "masked-lm")
        return fill_batch(lm, texts, top_k)
    except ExplorerError as err:  # not loadable, or no mask token: every prompt gets the one message
        return [err] * len(texts)


def fill_mask_many(models: Sequence[str | ModelRef], text: str, top_k: int = 5, *, limit: int = MAX_PROMPTS,
                   **options: Any) -> BatchFill:
    """Every model's top-k for every mask of every line of ``text`` (one prompt per line), in input order.

    Options as :func:`explorer.tasks.fillmask.run.fill_mask` (``random_weights``, ``allow_random``, ``models_dir``,
    ``loader``, ``answer_tokens``, ``device``, ``dtype``). Blank lines are skipped; a line without a mask (or
    otherwise refused) gets its own message and the others still run; past ``limit`` prompts the rest
    is cut with a notice. Raises ExplorerError only when nothing can run (no prompts, no models).
    """
    lines, notices = prompt_lines(text, limit)
    return _fill_lines(models, lines, notices, top_k, **options)


def fill_mask_stream(models: Sequence[str | ModelRef], text: str, top_k: int = 5, *, chunk: int = STREAM_CHUNK,
                     limit: int = MAX_FILE_PROMPTS, **options: Any) -> Iterator[BatchFill]:
    """:func:`fill_mask_many` in chunks of ``chunk`` prompts, each yielded as soon as it is answered, so a file
    of 10,000 prompts gives its first results in seconds and its memory stays that of one chunk (the models are
    loaded once: the model cache keeps them). Line numbers are the text's; the first chunk carries the notice
    of a cut. Input errors (no prompts, no models, a bad top-k) are raised before any model loads."""
    lines, notices = prompt_lines(text, limit)
    refs = run.resolved(models, top_k, options.get("models_dir"), random_weights=options.pop("random_weights", False),
                       allow_random=options.pop("allow_random", False))  # once, before the first chunk loads anything
    for start in range(0, len(lines), max(1, chunk)):
        yield _fill_lines(refs, lines[start:start + chunk], notices if start == 0 else (), top_k, **options)


def _fill_lines(models: Sequence[str | ModelRef], lines: list[tuple[int, str]], notices: tuple[Notice, ...], top_k: int,
                *, random_weights: bool = False, allow_random: bool = False, models_dir: str | None = None,
                loader: Callable[..., LoadedModel] = load_model, answer_tokens: int = 1, device: str | None = None,
                dtype: str | None = None) -> BatchFill:
    """Every model's answers for these (line number, prompt) lines."""
    refs = {r.spec: r for r in run.resolved(models, top_k, models_dir, random_weights=random_weights,
                                           allow_random=allow_random)}
    chosen = placement.Placement.parse(device, dtype)
    chosen.resolve()  # a device this machine lacks is one message, not one per model
    loader = functools.partial(loader, **chosen.kwargs())  # every model's load honours the choice
    checked: list[tuple[int, str, str | None]] = []  # (line, cleaned or cut text, refusal)
    for n, line in lines:
        try:
            checked.append((n, prompt.clean_text(line), None))
        except ExplorerError as err:
            checked.append((n, line if len(line) <= _SHOWN else line[:_SHOWN] + "...", str(err)))
    texts = [t for _, t, error in checked if error is None]
    # a server request loads only the models that fit its memory budget (explorer.runtime.footprint); the others are
    # named
    specs, dropped, left = footprint.fit_request(list(refs.values()), {s: r.task("masked-lm") for s, r in refs.items()},
                                                 chosen.resolve()[1])
    if dropped:
        notices = (*notices, Notice("dropped", footprint.skipped_message(dropped, left)))
    answers = {spec: _model_answers(refs[spec], texts, int(top_k), loader, answer_tokens)
               for spec in specs} if texts else {}
    out, i = [], 0
    for n, t, error in checked:
        if error is not None:
            out.append(PromptFill(n, t, None, error))
            continue
        mine = [(spec, answers[spec][i]) for spec in specs]
        out.append(PromptFill(n, t, FillMaskResult(
            t, len(prompt.MARKER.findall(t)), tuple(a for _, a in mine if not isinstance(a, ExplorerError)),
            tuple((s, str(a)) for s, a in mine if isinstance(a, ExplorerError)))))
        i += 1
    return BatchFill(tuple(out), notices)

"""Each task's question as a :class:`~explorer.explain.frame.Frame`: the rows the model reads, the tokens shown,
the log-probabilities summed (see :mod:`explorer.explain.frame` for the shape).

- a decoder reads ``text + target`` (and ``text + foil``); a fill-in also scores the words after the blank,
  the Fill-mask page's whole-text ranking;
- a masked LM reads the text with one mask per target token, each scored at its own mask;
- T5 reads the text with ``<extra_id_0>`` and its decoder writes ``<extra_id_0> target``; BART reads it with
  ``<mask>`` and its decoder rewrites the words before the blank, then the target;
- a sentence encoder reads the two sentences, one row each.

Without a target the model's own top prediction is explained (one forward finds it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from explorer.core.errors import ExplorerError
from explorer.core.handles import Tokenizer
from explorer.core.limits import EXPLAIN_TEXT_CHARS
from explorer.core.userinput import split_blanks
from explorer.explain import target as targets
from explorer.explain import task as tasks
from explorer.explain.frame import Frame, Shown, Term
from explorer.explain.target import Target
from explorer.runtime.offload import input_device
from explorer.tasks.generation.prompt import decoder_ids

if TYPE_CHECKING:  # typing only: no runtime import of the loader
    from explorer.runtime.loading import LoadedModel

__all__ = ["MAX_TOKENS", "build", "top_token"]

MAX_TOKENS = 256  # tokens in one row: every token is one occlusion pass and one more row of every gradient
SENTINEL = "<extra_id_0>"


def _cap(ids: list[int], what: str) -> list[int]:
    if len(ids) > MAX_TOKENS:
        raise ExplorerError(f"The {what} is {len(ids):,} tokens; at most {MAX_TOKENS} are explained (every token is "
                            "one more pass of the attribution methods): shorten it.")
    return ids


def _baseline(tok: Tokenizer) -> int:
    """Padding's id (the usual 'no token' baseline), else the unknown token's, else end of text's."""
    for i in (tok.pad_token_id, tok.unk_token_id, tok.eos_token_id):
        if i is not None:
            return int(i)
    return 0


def _context(tok: Tokenizer, text: str) -> list[int]:
    """A decoder's ids of ``text`` with the tokenizer's own start token (GPT-2-style tokenizers add none: then
    their end-of-text token starts it, so the first word is predicted too)."""
    ids = decoder_ids(tok, text) if text else list(tok("", add_special_tokens=True)["input_ids"])
    start = next((i for i in (tok.bos_token_id, tok.eos_token_id, tok.cls_token_id) if i is not None), None)
    if start is not None and (not ids or ids[0] != start):
        ids.insert(0, int(start))
    return ids


def _words(tok: Tokenizer, ids: list[int], row: int, part: int = 0, skip: frozenset[int] = frozenset(),
           offset: int = 0) -> list[Shown]:
    """The non-special tokens of ``ids`` (not at ``skip`` positions) as shown tokens of ``row``."""
    special = set(tok.all_special_ids)
    return [Shown(_piece(tok, t), part, ((row, offset + i),)) for i, t in enumerate(ids)
            if t not in special and (offset + i) not in skip]


def _piece(tok: Tokenizer, token: int) -> str:
    """A token as read (`` Paris``), or as the vocabulary spells it when it reads as nothing (T5's ``▁``)."""
    return tok.decode([token]) or str(tok.convert_ids_to_tokens(token) or f"<{token}>")


def _tied(first: list[Shown], second: list[Shown]) -> tuple[Shown, ...]:
    """Shown tokens of the target's row joined with the same tokens of the foil's row (their places summed)."""
    if not second:
        return tuple(first)
    return tuple(Shown(a.text, a.part, a.places + b.places) for a, b in zip(first, second, strict=True))


def _objective(task: str, target: Target, foil: Target | None) -> str:
    said = {"next-token": "log p({}) after the text", "fill-in": "log p({} and the words after it | the words "
            "before)", "masked": "log p({} at the blank)", "span": "log p({} as the blank's span)"}[task]
    text = said.format(repr(target.scored))
    return text + (f" minus the same for {foil.scored!r}" if foil is not None else "")


def _causal(tok: Tokenizer, task: str, left: str, right: str, scored: list[Target]) -> dict:
    ctx = _cap(_context(tok, left.rstrip() if left.strip() else ""), "text")
    rest = [int(i) for i in tok(right, add_special_tokens=False)["input_ids"]] if right else []
    rows = [tuple(ctx + list(t.ids) + rest) for t in scored]
    terms = [Term(r, len(ctx) + j, tok_id, 1.0 if r == 0 else -1.0)
             for r, t in enumerate(scored) for j, tok_id in enumerate([*t.ids, *rest])]
    shown = [_words(tok, ctx, r) + _words(tok, rest, r, offset=len(ctx) + len(t.ids)) for r, t in enumerate(scored)]
    return {"rows": rows, "terms": terms, "shown": _tied(*shown) if len(shown) > 1 else tuple(shown[0]),
            "focus": len(ctx) - 1}


def _masked(tok: Tokenizer, left: str, right: str, scored: list[Target]) -> dict:
    if tok.mask_token is None or tok.mask_token_id is None:
        raise ExplorerError("This model's tokenizer has no mask token, so it cannot fill a blank: pick a masked LM.")
    rows, terms, shown = [], [], []
    for r, t in enumerate(scored):
        ids = _cap([int(i) for i in tok(left + tok.mask_token * len(t.ids) + right)["input_ids"]], "text")
        masks = [i for i, x in enumerate(ids) if x == tok.mask_token_id]
        if len(masks) != len(t.ids):
            raise ExplorerError("The text holds a mask token besides its blank: leave exactly one blank.")
        rows.append(tuple(ids))
        terms += [Term(r, at, x, 1.0 if r == 0 else -1.0) for at, x in zip(masks, t.ids, strict=True)]
        shown.append(_words(tok, ids, r, skip=frozenset(masks)))
    return {"rows": rows, "terms": terms, "shown": _tied(*shown) if len(shown) > 1 else tuple(shown[0]),
            "focus": terms[0].at}


def _seq2seq(loaded: LoadedModel, left: str, right: str, scored: list[Target]) -> dict:
    tok, config = loaded.tokenizer, loaded.model.config
    start = int(getattr(config, "decoder_start_token_id", None) or tok.pad_token_id or 0)
    if SENTINEL in tok.get_vocab():  # T5: the decoder writes "<extra_id_0> span"
        enc = [int(i) for i in tok(left + SENTINEL + right)["input_ids"]]
        prefix = [start, tok.get_vocab()[SENTINEL]]
    elif tok.mask_token is not None:  # BART: the decoder rewrites the text, the words before the blank first
        enc = [int(i) for i in tok(left + tok.mask_token + right)["input_ids"]]
        before = [int(i) for i in tok(left.rstrip())["input_ids"]]
        prefix = [start] + (before[:-1] if before and before[-1] == tok.eos_token_id else before)
    else:
        raise ExplorerError("This encoder-decoder's tokenizer has neither T5's sentinels nor a mask token, so it "
                            "cannot fill a blank.")
    _cap(enc, "text")
    terms = [Term(r, len(prefix) + j, x, 1.0 if r == 0 else -1.0) for r, t in enumerate(scored)
             for j, x in enumerate(t.ids)]
    shown = [_words(tok, enc, r) for r in range(len(scored))]
    return {"rows": [tuple(enc)] * len(scored), "decoder": [tuple(prefix + list(t.ids)) for t in scored],
            "terms": terms, "shown": _tied(*shown) if len(shown) > 1 else tuple(shown[0]), "focus": len(prefix) - 1}


def _pair(tok: Tokenizer, first: str, second: str) -> Frame:
    rows = [_cap([int(i) for i in tok(s)["input_ids"]], f"sentence {n}") for n, s in ((1, first), (2, second))]
    shown = tuple(_words(tok, rows[0], 0, part=0) + _words(tok, rows[1], 1, part=1))
    return Frame("similarity", "pair", tuple(tuple(r) for r in rows), (), (), shown, _baseline(tok),
                 "cosine similarity of the two sentences' embeddings")


def _pieces(text: str, task: str) -> tuple[str, str]:
    if task == "next-token":
        return text, ""
    left, right = split_blanks(text, max_blanks=1, max_chars=EXPLAIN_TEXT_CHARS, marker=tasks.blank_marker(task),
                               why_cap="one blank is explained at a time")
    return left, right


def _frame(loaded: LoadedModel, task: str, left: str, right: str, target: Target, foil: Target | None) -> Frame:
    scored = [target] + ([foil] if foil is not None else [])
    tok = loaded.tokenizer
    if task in ("next-token", "fill-in"):
        parts, kind = _causal(tok, task, left, right, scored), "causal"
    elif task == "masked":
        parts, kind = _masked(tok, left, right, scored), "masked"
    else:
        parts, kind = _seq2seq(loaded, left, right, scored), "seq2seq"
    notices = target.notices() + (foil.notices("foil") if foil is not None else ())
    return Frame(task, kind, tuple(parts["rows"]), tuple(parts.get("decoder", ())), tuple(parts["terms"]),
                 parts["shown"], _baseline(tok), _objective(task, target, foil), target, foil, notices,
                 parts["focus"])


def top_token(loaded: LoadedModel, frame: Frame) -> int:
    """The model's own most likely token where the frame's target goes (row 0 at its focus), special tokens
    excepted."""
    model, device = loaded.model, input_device(loaded.model)
    row = torch.tensor([frame.rows[0]], device=device)  # (1, T)
    with torch.inference_mode():
        if frame.kind == "seq2seq":
            dec = torch.tensor([frame.decoder[0][: (frame.focus or 0) + 1]], device=device)
            out, at = model(input_ids=row, decoder_input_ids=dec), -1
        elif frame.kind == "causal":
            out, at = model(input_ids=row[:, : (frame.focus or 0) + 1]), -1
        else:
            out, at = model(input_ids=row), int(frame.focus or 0)
    if getattr(out, "logits", None) is None:
        raise ExplorerError(f"{loaded.key} has no language-model head (it was saved without one, like the bundled "
                            "all-MiniLM-L6-v2), so it predicts no token: compare two sentences with it instead.")
    logits = out.logits[0, at].float().clone()  # (V,)
    logits[[i for i in loaded.tokenizer.all_special_ids if i < logits.shape[0]]] = float("-inf")
    return int(logits.argmax())


def build(loaded: LoadedModel, task: str, text: str, target: str | None = None, foil: str | None = None,
          pair: str | None = None) -> Frame:
    """The frame of ``task`` on ``text`` (its blank, if the task has one), for ``target`` (None or blank: the
    model's own prediction) against an optional ``foil``; ``pair`` is a similarity's second sentence."""
    tok = loaded.tokenizer
    text = targets.check_text(text, tok, None if task == "next-token" else tasks.blank_marker(task))
    if task == "similarity":
        second = pair if pair is not None and str(pair).strip() else target
        return _pair(tok, text, targets.check_text(second, tok, what="second sentence"))
    left, right = _pieces(text, task)
    aim = targets.resolve(tok, target, left) if target is not None and str(target).strip() else None
    against = targets.resolve(tok, foil, left, "foil") if foil is not None and str(foil).strip() else None
    if aim is None:
        probe = _frame(loaded, task, left, right, targets.Target("", "", (_baseline(tok),), ("",)), None)
        aim = targets.own(tok, top_token(loaded, probe))
    if against is not None and against.ids == aim.ids:
        raise ExplorerError(targets.FOIL_IS_TARGET)
    frame = _frame(loaded, task, left, right, aim, against)
    if not frame.shown:
        raise ExplorerError(targets.NOTHING_TO_ATTRIBUTE.format(why="the model reads none of its words besides its "
                                                                    "blank and its own special tokens"))
    return frame

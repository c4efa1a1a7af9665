"""A served model's own tokenizer, asked of its server: the ids it reads, each token's text, where each sits.

No OpenAI route tokenizes, so each engine has its own (checked against the real servers where they run here):

======================  ===============================  ===========================================
engine                  tokenize                         one token back to text
======================  ===============================  ===========================================
llama-cpp-python        ``POST /extras/tokenize``        ``POST /extras/detokenize``
vLLM, SGLang            ``POST /tokenize`` (``prompt``)  ``POST /detokenize`` (answers ``prompt``)
llama.cpp llama-server  ``POST /tokenize`` (``content``)  ``POST /detokenize`` (answers ``content``)
TGI                     ``POST /tokenize`` (``inputs``)  (each token's text comes with it)
======================  ===============================  ===========================================

The probe tries the engine's own style first, then the others (:func:`find_style`). Each token's text is its
own detokenization (one request per distinct token, in parallel within the endpoint's bound), and its place in the
text is found by walking the text: a token that is not there (``<bos>``, or part of a character split across tokens)
is marked special or placed where the walk stands, so counts and fertility stay exact.

A character outside the vocabulary is split into byte tokens (``<0xEA>``...). llama-cpp-python 0.3.36 cannot
detokenize one alone (its server answers 500, "'utf-8' codec can't decode byte 0xea"), so that answer is read as
the byte it names and the token shown as ``<0xEA>``, as transformers names such pieces, placed where the walk
stands; any other failure still fails.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from explorer.core.errors import ExplorerError
from explorer.core.notices import Notice
from explorer.serving import answers, client
from explorer.serving.client import ServedError
from explorer.serving.endpoints import Endpoint

if TYPE_CHECKING:  # the tokenization package imports transformers: the probe needs none of it
    from explorer.tokenization.split import Tokenization

__all__ = ["MAX_PIECES", "STYLES", "ServedTokens", "find_style", "tokenize"]

MAX_PIECES = 512  # tokens whose text is asked (each distinct one once); a longer text is counted in full, shown to here
LOOK_AHEAD = 32  # characters a token may be found past the walk's place (typed special tokens left behind)
_UNDECODABLE = re.compile(r"can't decode byte 0x([0-9a-fA-F]{2}) in position 0")  # a lone byte token's 500
_BYTE_PIECE = re.compile(r"<0x[0-9A-F]{2}>")


@dataclass(frozen=True)
class Style:
    """One engine's tokenize/detokenize routes and how to read their answers."""

    name: str
    path: str  # tokenize, at the server's root (not under /v1)
    body: Callable[[str, str], dict[str, object]]  # (model, text) -> request
    back: str = ""  # detokenize path ("" when tokenize returns each token's text: TGI)
    back_body: Callable[[str, list[int]], dict[str, object]] | None = None
    back_fields: tuple[str, ...] = ()  # where the detokenize answer holds the text, first found wins


def _with_model(model: str, body: dict[str, object]) -> dict[str, object]:
    return {"model": model, **body} if model else body


STYLES: dict[str, Style] = {
    "llama-cpp-python": Style(
        "llama-cpp-python", "/extras/tokenize", lambda m, t: _with_model(m, {"input": t}), "/extras/detokenize",
        lambda m, ids: _with_model(m, {"tokens": ids}), ("text",)),
    "vLLM": Style(
        "vLLM", "/tokenize", lambda m, t: _with_model(m, {"prompt": t}), "/detokenize",
        lambda m, ids: _with_model(m, {"tokens": ids}), ("prompt", "text")),
    "llama.cpp": Style(
        "llama.cpp", "/tokenize", lambda m, t: {"content": t}, "/detokenize", lambda m, ids: {"tokens": ids},
        ("content",)),
    "TGI": Style("TGI", "/tokenize", lambda m, t: {"inputs": t}),
}
_OWN_STYLE = {"SGLang": "vLLM"}  # engines that share another's routes


def _ask(ep: Endpoint, style: Style, text: str, timeout: float | None = None) -> tuple[list[int], list[str] | None,
                                                                                    int]:
    """The server's ids for ``text``, each token's text where the route gives it, and the model's context where
    it says (vLLM's ``max_model_len``; 0 unknown), or a ServedError naming what is wrong."""
    answer = client.call(ep, "POST", style.path, style.body(ep.model, text), root=True, timeout=timeout)
    what = f"{style.path} ({style.name} style)"
    if not style.back:
        pieces = answers.read(ep, answers.Pieces, answer, what).root
        return [p.id for p in pieces], [p.text for p in pieces], 0
    said = answers.read(ep, answers.TokenIds, answer, what)
    return said.ids(), None, said.context()


def find_style(ep: Endpoint, engine: str, sample: str, left: Callable[[], float]) -> tuple[str, str | None]:
    """The tokenize style ``ep`` answers (its engine's own tried first), or ("", why none works). Only a route
    that answers ids for ``sample`` counts: a 200 with anything else does not. ``left()``: seconds the next try
    may take (a ServedError "timeout" when none are left: the probe's deadline)."""
    first = _OWN_STYLE.get(engine, engine)
    order = [first] if first in STYLES else []
    order += [name for name in STYLES if name not in order]
    reasons = []
    for name in order:
        try:
            ids, _, _ = _ask(ep, STYLES[name], sample, left())
        except ServedError as err:
            if err.kind in ("refused", "timeout", "dropped"):
                return "", str(err)
            reasons.append(f"{STYLES[name].path}: {err.status or err.kind}")
            continue
        if ids:
            return name, None
        reasons.append(f"{STYLES[name].path}: no ids")
    return "", ("the server offers none of the tokenize routes engines use (" + "; ".join(reasons)[:200] + ")")


def _texts(ep: Endpoint, style: Style, ids: list[int]) -> list[str]:
    """Each token's own text: one detokenize request per distinct token (a long text repeats most of its tokens: 512
    pieces of "word word ..." are three ids), in parallel within the endpoint's bound."""
    body = style.back_body
    if body is None:
        raise ServedError(f"{style.name} gives each token's text with its ids; nothing to ask.", "missing")

    def one(token: int) -> str:
        try:
            answer = client.call(ep, "POST", style.back, body(ep.model, [token]), root=True)
        except ServedError as err:
            if err.status == 500 and (byte := _UNDECODABLE.search(str(err))):
                return f"<0x{byte.group(1).upper()}>"  # a byte of a character the vocabulary lacks
            raise
        said = answers.read(ep, answers.Detokenized, answer, f"{style.back} ({style.name} style)")
        text = next((got for name in style.back_fields if (got := getattr(said, name)) is not None), None)
        if text is None:
            raise ServedError(f"{ep.shown} answered {style.back} without its text ({' or '.join(style.back_fields)}).",
                              "garbage")
        return text
    distinct = list(dict.fromkeys(ids))
    texts = dict(zip(distinct, client.parallel(ep, one, distinct), strict=True))
    return [texts[token] for token in ids]


def _place(text: str, pieces: list[str]) -> tuple[list[tuple[int, int]], list[bool]]:
    """Each piece's character span in ``text`` and whether it is special (not in the text at all).

    The walk keeps its place: a piece is matched where the walk stands, or a little further on (a typed
    ``<bos>`` read as the special token leaves its characters behind; a detokenizer may drop a leading space);
    an empty piece, or one like ``<...>`` that is not in the text, is special; any other piece not found gets an
    empty span where the walk stands (part of a character split across tokens).

    >>> _place("Hi you", ["", "Hi", " you"])
    ([(0, 0), (0, 2), (2, 6)], [True, False, False])
    >>> _place("<bos>hi", ["", "", "hi"])
    ([(0, 0), (0, 0), (5, 7)], [True, True, False])
    >>> _place("a ꙮ", ["a", " ", "<0xEA>", "<0x99>", "<0xAE>"])  # a character's bytes: where the walk stands
    ([(0, 1), (1, 2), (2, 2), (2, 2), (2, 2)], [False, False, False, False, False])
    """
    spans: list[tuple[int, int]] = []
    special: list[bool] = []
    at = 0
    for piece in pieces:
        found = -1
        for form in dict.fromkeys((piece, piece.lstrip())):  # as given, then without a leading space
            if form and (found := text.find(form, at, at + len(form) + LOOK_AHEAD)) >= 0:
                spans.append((found, found + len(form)))
                special.append(False)
                at = found + len(form)
                break
        if found >= 0:
            continue
        is_special = not piece or (piece.startswith("<") and piece.endswith(">") and not _BYTE_PIECE.fullmatch(piece))
        spans.append((0, 0) if is_special else (at, at))
        special.append(is_special)
    return spans, special


@dataclass(frozen=True)
class ServedTokens:
    """A text as a served model's own tokenizer splits it (at most :data:`MAX_PIECES` tokens shown)."""

    tokenization: Tokenization
    total: int  # every token of the text, shown or not
    style: str
    notices: tuple[Notice, ...] = ()


def tokenize(ep: Endpoint, text: str, style: str) -> ServedTokens:
    """``text`` through the server's tokenizer (``style`` from the endpoint's probe: ``Capabilities.tokenizer``)."""
    from explorer.tokenization.split import assemble, check_text

    check_text(text)
    if style not in STYLES:
        raise ExplorerError(f"{ep.shown} does not tokenize through any route this explorer knows.")
    chosen = STYLES[style]
    ids, texts, context = _ask(ep, chosen, text)
    total, shown = len(ids), ids[:MAX_PIECES]
    pieces = texts[:MAX_PIECES] if texts is not None else _texts(ep, chosen, shown)
    spans, special = _place(text, pieces)
    pieces = [p or f"<special {i}>" for p, i in zip(pieces, shown, strict=True)]  # said, not an empty chip
    notices: tuple[Notice, ...] = ()
    if total > MAX_PIECES:
        notices = (Notice("truncated", f"The server split this text into {total:,} tokens; the first {MAX_PIECES:,} "
                                       "are shown (the text of each distinct one is asked of the server)."),)
        text = text[:max((e for _, e in spans), default=0)]
    name = f"served:{ep.name}"
    result = assemble(name, text, shown, pieces, spans, special, context, pieces=pieces)
    return ServedTokens(result, total, chosen.name, notices)

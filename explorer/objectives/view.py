"""What a page or report shows of an objective: readable pieces, hover notes, rows, options, notices.

The page asks these functions instead of branching on strategy names or probing results with
``getattr``: every result type answers the same questions (its chips' kinds, the note per position,
the per-token table, the SpanBERT span table, what the generator saw); token-level results add
their own columns and notes (``columns()``, ``notes(i)``). Widget options, rate help and the
epochs view are declared by each :class:`~explorer.objectives.Strategy`.

>>> from explorer.objectives import text, run
>>> p = text.prepare("The cat sat on the mat.", "bert-base-uncased", "bert")
>>> r = run("spanbert", p.tokens, 0, p.vocab)
>>> [row["position"] for row in token_rows(r, "bert-base-cased")][:3]
[0, 1, 2]
>>> display_tokens(["Ġworld", "<mask>"], "gpt2")
['␣world', '<mask>']
"""

from __future__ import annotations

from collections.abc import Sequence

from explorer.core.notices import Notice
from explorer.objectives.base import MaskedLMResult, ObjectiveResult, SentencePairResult, is_special
from explorer.objectives.electra import ElectraResult
from explorer.objectives.spans import SpanMaskResult
from explorer.objectives.text import MAX_TOKENS, Prepared

__all__ = ["chip_kinds", "display_tokens", "generator_kinds", "hover_notes", "span_rows", "token_rows",
           "truncation_notice"]


def display_tokens(tokens: Sequence[str], tokenizer: str) -> list[str]:
    """Pieces as a learner reads them (GPT-2's byte alphabet decoded: "Ġworld" -> "␣world")."""
    if tokenizer != "gpt2":
        return list(tokens)
    from explorer.tokenization.pieces import readable_piece

    return [t if t.startswith("<mask") or is_special(t) else readable_piece("gpt2", t, False) for t in tokens]


def chip_kinds(result: ObjectiveResult) -> tuple[str, ...]:
    """The colour class of every input chip: per original position for token-level results."""
    if isinstance(result, MaskedLMResult):
        return result.kinds
    return result.input_kinds


def hover_notes(result: ObjectiveResult) -> list[str] | None:
    """Hover text per input chip (target and what defines it); sentence pairs give segment ids."""
    if isinstance(result, SentencePairResult):
        return [f"segment {g}" for g in result.segment_ids]
    if not isinstance(result, MaskedLMResult):
        return None
    return [", ".join(([f"target: {t}"] if t is not None else []) + result.notes(i))
            for i, t in enumerate(result.targets)]


def generator_kinds(result: ObjectiveResult) -> tuple[str, ...] | None:
    """ELECTRA: chip kinds of what the generator saw (masked where it had to propose); else None."""
    return result.generator_kinds() if isinstance(result, ElectraResult) else None


def token_rows(result: ObjectiveResult, tokenizer: str) -> list[dict[str, object]]:
    """The per-token table of a token-level result (empty for seq2seq and sentence results)."""
    if not isinstance(result, MaskedLMResult):
        return []
    show = display_tokens
    original, inp = show(result.original_tokens, tokenizer), show(result.input_tokens, tokenizer)
    extra = result.columns()
    return [{"position": i, "original": original[i], "input": inp[i],
             "target": show([t], tokenizer)[0] if t else "", "kind": result.kinds[i],
             **{name: values[i] for name, values in extra.items()}} for i, t in enumerate(result.targets)]


def span_rows(result: ObjectiveResult, tokenizer: str) -> list[dict[str, object]]:
    """SpanBERT: every span with the two boundary tokens SBO predicts it from (empty otherwise)."""
    if not isinstance(result, SpanMaskResult) or not result.boundaries:
        return []
    tokens = display_tokens(result.original_tokens, tokenizer)
    return [{"span": " ".join(tokens[a:b]), "left boundary x(s-1)": tokens[left] if left >= 0 else "",
             "right boundary x(e+1)": tokens[right] if right < len(tokens) else "", "length (tokens)": b - a}
            for (a, b), (left, right) in zip(result.spans, result.boundaries, strict=True)]


def truncation_notice(prepared: Prepared) -> Notice | None:
    """A notice when the text is longer than the model's window (the model sees only the start)."""
    if not prepared.truncated:
        return None
    return Notice("truncated", f"The text has {prepared.n_text_tokens:,} tokens; only the first {MAX_TOKENS} "
                               "positions (special tokens included) are used, as the model would.")

"""A clean and a corrupted prompt, checked for patching: equally long, different, read at the same place.

Activation patching copies a value from the clean run into the corrupted run *position by position*, so both prompts
must have the same number of tokens for the model's tokenizer; a corrupted prompt is the clean one with one entity
changed for another of the same length in tokens ("The Eiffel Tower is in the city of ___" -> "The Colosseum is
in the city of ___": 9 tokens each for Gemma 3). Unequal lengths are refused with both counts and both token lists.

>>> first_difference((1, 2, 3, 4), (1, 2, 9, 4))
2
"""

from __future__ import annotations

from dataclasses import dataclass

from explorer.core.errors import ExplorerError, shorten
from explorer.core.handles import Tokenizer
from explorer.core.notices import Notice
from explorer.interventions import prompts
from explorer.interventions.prompts import Prompt

__all__ = ["HOW_TO_CORRUPT", "Pair", "first_difference", "make_pair", "token_texts"]

HOW_TO_CORRUPT = ("Make the corrupted prompt from the clean one by changing one entity for another of the same "
                  "length in tokens (a city for a city, a name for a name), so that the answer changes: "
                  "'The Eiffel Tower is in the city of ___' -> 'The Colosseum is in the city of ___'.")
SHOWN_TOKENS = 24  # tokens quoted back in a message


@dataclass(frozen=True)
class Pair:
    """Two prompts a patching grid compares, and the answers it scores."""

    clean: Prompt
    corrupt: Prompt
    tokens: tuple[str, ...]  # the clean prompt's tokens on the patched stack: the grid's positions
    corrupt_tokens: tuple[str, ...]
    target_id: int
    target: str  # the target's token as it reads
    foil_id: int | None
    foil: str | None
    first_difference: int  # the first position where the patched stack's inputs differ
    notices: tuple[Notice, ...] = ()  # an answer of several tokens scored by its first, said


def token_texts(tokenizer: Tokenizer, ids: tuple[int, ...]) -> tuple[str, ...]:
    """Each token as it reads (special tokens kept)."""
    return tuple(tokenizer.decode([int(i)], skip_special_tokens=False, clean_up_tokenization_spaces=False)
                 for i in ids)


def first_difference(a: tuple[int, ...], b: tuple[int, ...]) -> int:
    """The first position where two equally long id sequences differ (their length when none does)."""
    return next((i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y), len(a))


def _quoted(tokens: tuple[str, ...]) -> str:
    shown = " | ".join(tokens[:SHOWN_TOKENS]) + (" | ..." if len(tokens) > SHOWN_TOKENS else "")
    return shorten(shown, 400)


def _check_lengths(tokenizer: Tokenizer, clean: Prompt, corrupt: Prompt) -> None:
    if len(clean.ids) != len(corrupt.ids):
        raise ExplorerError(
            f"The clean prompt has {len(clean.ids)} tokens and the corrupted one {len(corrupt.ids)} for this model's "
            "tokenizer; patching swaps activations position by position, so both need the same number of tokens. "
            f"{HOW_TO_CORRUPT} Clean: {_quoted(token_texts(tokenizer, clean.ids))}. Corrupted: "
            f"{_quoted(token_texts(tokenizer, corrupt.ids))}.")
    if len(clean.ids) > prompts.MAX_TOKENS:
        raise ExplorerError(f"The prompts have {len(clean.ids)} tokens; a patching grid takes at most "
                            f"{prompts.MAX_TOKENS} (each is a patched copy of the forward per layer): shorten them.")
    if clean.ids == corrupt.ids:
        raise ExplorerError(f"The clean and corrupted prompts give the same tokens: there is nothing to patch. "
                            f"{HOW_TO_CORRUPT}")
    if clean.readout != corrupt.readout or clean.blank != corrupt.blank:
        raise ExplorerError("The blank is at a different token in the clean and corrupted prompts: put it at the "
                            f"same place in both. {HOW_TO_CORRUPT}")


def make_pair(tokenizer: Tokenizer, config: object, family: str, stack: str, clean: object, corrupt: object,
              target: object, foil: object = None) -> Pair:
    """The two prompts as a model of ``family`` reads them, checked (see the module docstring); the grid's positions
    are those of ``stack`` ("encoder" or "decoder"). ``foil`` may be None (the prob and kl metrics)."""
    clean_text = prompts.check_prompt(clean, "clean prompt")
    corrupt_text = prompts.check_prompt(corrupt, "corrupted prompt")
    a = prompts.read(tokenizer, config, clean_text, family, decoder_from=clean_text)
    b = prompts.read(tokenizer, config, corrupt_text, family, decoder_from=clean_text)
    _check_lengths(tokenizer, a, b)
    target_id = prompts.answer_id(tokenizer, a, target, "target")
    foil_id = None if foil is None or not str(foil).strip() else prompts.answer_id(tokenizer, b, foil, "foil")
    if foil_id is not None and foil_id == target_id:
        raise ExplorerError("The target and the foil are the same token for this tokenizer: type two different "
                            "answers (e.g. Paris and Rome).")
    on_decoder = family == "encoder-decoder" and stack == "decoder"
    ids_a = a.decoder_ids if on_decoder and a.decoder_ids is not None else a.ids
    ids_b = b.decoder_ids if on_decoder and b.decoder_ids is not None else b.ids
    said = tuple(n for n in (prompts.phrase_notice(tokenizer, a, target, "target"),
                             prompts.phrase_notice(tokenizer, b, foil, "foil")) if n is not None)
    return Pair(a, b, token_texts(tokenizer, ids_a), token_texts(tokenizer, ids_b), target_id,
                token_texts(tokenizer, (target_id,))[0], foil_id,
                None if foil_id is None else token_texts(tokenizer, (foil_id,))[0], first_difference(ids_a, ids_b),
                said)

"""ELECTRA's replaced-token detection: the generator fills blanks, the discriminator spots them.

As in ELECTRA's pretraining, a small masked-LM generator samples a word for each masked token;
the discriminator (``ElectraForPreTraining``) then reads the corrupted sentence and gives every
token a probability of having been replaced. Blanks the user typed are what the generator fills;
without any, a seeded share of the tokens is masked.

>>> r = ReplacedTokens("gen", "disc", False, ("a", "b"), ("a", "c"), (False, True), (False, True),
...                    (0.1, 0.9), (), 1.0)
>>> r.accuracy, r.to_dict()["notice"]
(1.0, '')
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass

import torch

from explorer.architecture import catalog
from explorer.core.errors import ExplorerError
from explorer.core.notices import Notice, texts
from explorer.runtime.loading import LoadedModel, load_model
from explorer.runtime.placement import ran_on
from explorer.runtime.resolve import ModelRef
from explorer.tasks.fillmask import clean_text
from explorer.tasks.fillmask.masked import encode, mask_logits, max_tokens, specials_around
from explorer.tasks.fillmask.prompt import model_prompt

__all__ = ["ReplacedTokens", "detect", "electra_pairs", "electra_replaced", "pair_named"]


@dataclass(frozen=True)
class ReplacedTokens:
    """ELECTRA's replaced-token detection over one sentence (special tokens left out)."""

    generator: str
    discriminator: str
    untrained: bool  # either model in random-weight mode
    original: tuple[str, ...]  # the sentence's tokens ("[MASK]" where the user left a blank)
    tokens: tuple[str, ...]  # what the discriminator read, after the generator's replacements
    masked: tuple[bool, ...]  # positions the generator filled
    replaced: tuple[bool, ...]  # truth: the token differs from the original
    probability: tuple[float, ...]  # discriminator's P(replaced) per token
    notices: tuple[Notice, ...]  # truncation, GPU fallback
    latency_ms: float
    device: str = "cpu"  # what ran (the discriminator's; both models share the placement)
    device_name: str = "cpu"
    dtype: str = "float32"

    def to_dict(self) -> dict:
        """JSON-able; the notices as one ``notice`` sentence."""
        out = {}
        for key, value in asdict(self).items():
            out["notice" if key == "notices" else key] = " ".join(texts(self.notices)) if key == "notices" else value
        return out

    @property
    def accuracy(self) -> float:
        """Share of tokens the discriminator classifies right at a 0.5 threshold."""
        hits = [(p > 0.5) == r for p, r in zip(self.probability, self.replaced, strict=True)]
        return sum(hits) / max(1, len(hits))


def _pick_positions(body: list[int], mask_id: int, fraction: float, seed: int) -> list[int]:
    """The user's masks if any, else a seeded random ``fraction`` of the tokens (ELECTRA uses 15%)."""
    user = [i for i, t in enumerate(body) if t == mask_id]
    if user or fraction <= 0:
        return user
    count = max(1, round(fraction * len(body)))
    order = torch.randperm(len(body), generator=torch.Generator().manual_seed(seed))
    return sorted(order[:count].tolist())


def _corrupt(gen: LoadedModel, frame: tuple[list[int], list[int]], body: list[int],
              positions: list[int], seed: int) -> list[int]:
    """``body`` with the generator's samples at ``positions`` (as in ELECTRA's pretraining)."""
    if not positions:
        return list(body)
    before, after = frame
    masked = [gen.tokenizer.mask_token_id if i in positions else t for i, t in enumerate(body)]
    ids = torch.tensor([before + masked + after], device=gen.device)
    probs = mask_logits(gen.model, ids, torch.tensor([len(before) + p for p in positions])).softmax(-1)
    picks = torch.multinomial(probs.cpu(), 1, generator=torch.Generator().manual_seed(seed))[:, 0]  # (M,)
    out = list(body)
    for p, tid in zip(positions, picks.tolist(), strict=True):
        out[p] = tid
    return out


def _discriminate(disc: LoadedModel, frame: tuple[list[int], list[int]], body: list[int]) -> list[float]:
    """P(replaced) for every body token: sigmoid of ElectraForPreTraining's (1, T) logits."""
    before, after = frame
    ids = torch.tensor([before + body + after], device=disc.device)
    with torch.inference_mode():
        logits = disc.model(input_ids=ids, attention_mask=torch.ones_like(ids)).logits  # (1, T)
    return torch.sigmoid(logits[0, len(before):len(before) + len(body)].float()).tolist()


def electra_replaced(gen: LoadedModel, disc: LoadedModel, text: str, mask_fraction: float = 0.15,
                     seed: int = 0) -> ReplacedTokens:
    """Corrupt ``text`` with the generator, then ask the discriminator which tokens were replaced.

    Blanks the user typed ([MASK], ___) are what the generator fills; with none, a seeded
    ``mask_fraction`` of the tokens is masked (0 = just run the discriminator on the text).
    """
    begin = time.perf_counter()
    if len(gen.tokenizer) != len(disc.tokenizer) or gen.tokenizer.mask_token_id != disc.tokenizer.mask_token_id:
        raise ExplorerError(f"{gen.name} and {disc.name} use different vocabularies: pick a matching ELECTRA pair.")
    if not 0 <= mask_fraction <= 0.5:
        raise ExplorerError("The share of masked tokens must be between 0 and 0.5.")
    text = model_prompt(clean_text(text, require_mask=False), gen.tokenizer, gen.name)
    body, tok = encode(gen.tokenizer, text), gen.tokenizer
    frame = specials_around(tok)
    budget = min(max_tokens(gen), max_tokens(disc)) - len(frame[0]) - len(frame[1])
    notices = () if len(body) <= budget else (
        Notice("truncated", f"Only the first {budget} of {len(body)} tokens were used."),)
    body = body[:budget]
    assert tok.mask_token_id is not None  # an ELECTRA generator is a masked LM: its tokenizer has [MASK]
    positions = _pick_positions(body, tok.mask_token_id, mask_fraction, seed)
    corrupted = _corrupt(gen, frame, body, positions, seed)
    probs = _discriminate(disc, frame, corrupted)
    return ReplacedTokens(
        gen.key, disc.key, gen.untrained or disc.untrained, tuple(tok.convert_ids_to_tokens(body)),
        tuple(tok.convert_ids_to_tokens(corrupted)), tuple(i in positions for i in range(len(body))),
        tuple(a != b for a, b in zip(body, corrupted, strict=True)), tuple(probs),
        notices + gen.notices + disc.notices, (time.perf_counter() - begin) * 1000, **ran_on(disc))




def detect(generator: ModelRef, discriminator: ModelRef, text: str, mask_fraction: float = 0.15, seed: int = 0, *,
           loader: Callable[..., LoadedModel] = load_model, device: str | None = None,
           dtype: str | None = None) -> ReplacedTokens:
    """Load an ELECTRA pair, each resolved once (untrained when :func:`explorer.runtime.resolve.resolve` allowed it
    and its weights are missing), and run :func:`electra_replaced`; if either model runs untrained, both do, so
    their vocabularies match."""
    if generator.random_weights or discriminator.random_weights:
        generator, discriminator = generator.as_untrained(), discriminator.as_untrained()
    gen = loader(generator, "masked-lm", device=device, dtype=dtype)
    disc = loader(discriminator, "electra-discriminator", device=device, dtype=dtype)
    return electra_replaced(gen, disc, text, mask_fraction, seed)


def electra_pairs() -> dict[str, tuple[str, str]]:
    """ELECTRA pair keys -> (generator key, discriminator key), from the catalog's ``extra``."""
    return {v.key: (str(v.extra["generator"]), str(v.extra["discriminator"])) for v in catalog.load_catalog().values()
            if v.model_type == "electra" and {"generator", "discriminator"} <= set(v.extra)}


def pair_named(names: Iterable[str], pairs: Mapping[str, tuple[str, str]]) -> str | None:
    """The ELECTRA pair a list of model names points at, by its pair key or its discriminator (a discriminator
    fills no mask: links that name one belong to replaced-token detection), else None.

    >>> pair_named(["bert-base", "electra-small-discriminator"], {"electra-small": ("electra-small-generator",
    ...            "electra-small-discriminator")})
    'electra-small'
    >>> pair_named(["electra-small-generator"], {"electra-small": ("electra-small-generator", "d")}) is None
    True
    """
    wanted = set(names)
    return next((key for key, (_, disc) in pairs.items() if {key, disc} & wanted), None)

"""The kind of a model (encoder, decoder, encoder-decoder, which head) and the message when it is the wrong one.

Loading ``sentence-bert`` as a causal LM fails deep in transformers, with the package's absolute path and
missing parameter names. :func:`check` answers before any weight is read, from the catalog
family or the directory's config.json, in words a user can act on. :func:`is_decoder` is the one answer
to "does this load as a decoder?" that every task asks before choosing how to load a model:

>>> check("sentence-bert", "causal-lm", purpose="the Decoding lab")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
explorer.core.errors.ExplorerError: sentence-bert is an encoder: the Decoding lab needs a decoder (gemma3-270m, ...
>>> check("gpt2", "causal-lm") is None
True
>>> is_decoder("gemma3-270m"), is_decoder("bert-base"), is_decoder("t5-small")
(True, False, False)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from explorer.architecture import catalog
from explorer.architecture.modeltypes import is_encoder_decoder
from explorer.core.errors import ExplorerError, shorten
from explorer.runtime import fence

__all__ = ["NEEDS", "check", "config_family", "family_of", "is_decoder", "read_config", "refuse"]

# task -> (what it needs, examples a user can type)
NEEDS: dict[str, tuple[str, str]] = {
    "causal-lm": ("a decoder", "gemma3-270m, gpt2, …"),
    "masked-lm": ("a masked language model", "bert-base, roberta-base, distilbert, … or a decoder such as "
                                              "gemma3-270m"),
    "seq2seq": ("a T5 or BART model, or a decoder", "t5-small, bart-base, gemma3-270m, …"),
    "question-answering": ("a question-answering (SQuAD) checkpoint, or the bundled decoder",
                           "distilbert/distilbert-base-cased-distilled-squad, gemma3-270m, …"),
}
ARTICLE = {"encoder": "an encoder", "decoder": "a decoder", "encoder-decoder": "an encoder-decoder"}


def _mapping(name: str) -> Any:
    from transformers.models.auto import modeling_auto

    return getattr(modeling_auto, name)


def config_family(config: dict[str, object]) -> str:
    """"encoder", "decoder" or "encoder-decoder" from a config.json's contents."""
    model_type = str(config.get("model_type") or "")
    if is_encoder_decoder(config) or model_type in _mapping("MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES"):
        return "encoder-decoder"
    if model_type in _mapping("MODEL_FOR_MASKED_LM_MAPPING_NAMES") \
            or model_type not in _mapping("MODEL_FOR_CAUSAL_LM_MAPPING_NAMES"):
        return "encoder"  # BERT has a causal-LM class too, but it is an encoder first
    return "decoder"


def read_config(path: Path | None) -> dict[str, Any]:
    """The config.json of a weights folder as a dict ({} when missing or unreadable)."""
    try:
        data = json.loads((path / "config.json").read_text(encoding="utf-8")) if path else {}
    except (OSError, ValueError):  # missing or unreadable: loading says what is wrong with it
        return {}
    return data if isinstance(data, dict) else {}


def family_of(name: str, path: Path | None = None) -> tuple[str | None, dict[str, Any]]:
    """(family or None when unknown, config.json contents) of a catalog key or a weights directory."""
    config = read_config(path)
    if config.get("model_type"):
        return config_family(config), config
    variant = catalog.load_catalog().get(name)
    if variant is None:
        return None, {}
    config = {"model_type": variant.model_type}
    return getattr(variant, "family", None) or config_family(config), config


def is_decoder(name: str, path: str | Path | None = None) -> bool:
    """Whether ``name`` loads as a decoder (a causal LM such as gpt2 or gemma3-270m).

    ``path`` is its resolved weights directory (:attr:`explorer.runtime.resolve.ModelRef.path`): its config.json
    decides, so a folder holding a decoder is a decoder on every page; without one, the catalog family does.
    Unknown: False (the load that follows says what is wrong).
    """
    return family_of(name, Path(path) if path else None)[0] == "decoder"


def _mismatch(task: str, family: str, config: dict[str, Any]) -> str | None:
    """Why a model of this family and config cannot serve ``task`` (None: it can, as far as we can tell)."""
    model_type = str(config.get("model_type") or "")
    heads = [str(a) for a in config.get("architectures") or []]
    bare = bool(heads) and all(h.endswith("Model") for h in heads)  # saved without any head (a sentence encoder)
    if task == "causal-lm" and family != "decoder":
        return ARTICLE[family]
    if task == "seq2seq" and family != "encoder-decoder":
        return ARTICLE[family]
    if task == "masked-lm":
        if family == "decoder" or (model_type and model_type not in _mapping("MODEL_FOR_MASKED_LM_MAPPING_NAMES")):
            return ARTICLE[family]
        return f"{ARTICLE[family]} saved without a masked-language-model head" if bare else None
    if task == "question-answering":
        if model_type and model_type not in _mapping("MODEL_FOR_QUESTION_ANSWERING_MAPPING_NAMES"):
            return ARTICLE[family]
        if heads and not any("QuestionAnswering" in h for h in heads):
            return f"{ARTICLE[family]} without a question-answering head"
    return None


def check(name: str, task: str, path: str | Path | None = None, purpose: str | None = None) -> None:
    """Refuse, in words, a model whose kind cannot do ``task`` (e.g. an encoder in the Decoding lab).

    ``path`` is its resolved weights directory (its config.json decides), else the catalog family does;
    an unknown kind passes (loading reports whatever is wrong). ``purpose`` names the page or command.
    """
    if task in NEEDS:
        refuse(name, task, *family_of(name, Path(path) if path else None), path, purpose)


def refuse(name: str, task: str, family: str | None, config: dict[str, object], path: str | Path | None = None,
           purpose: str | None = None) -> None:
    """:func:`check` for a model whose family and config are known already
    (:class:`explorer.runtime.resolve.ModelRef`)."""
    why = _mismatch(task, family, config) if family and task in NEEDS else None
    if why:
        need, examples = NEEDS[task]
        where = f"{purpose} needs" if purpose else "this needs"
        raise ExplorerError(f"{_shown(name, path)} is {why}: {where} {need} ({examples}).")


def _shown(name: str, path: str | Path | None) -> str:
    """A typed directory as :func:`explorer.runtime.fence.public` shows it (never a server's absolute path); a key
    or hub id as typed."""
    if path is None or name in catalog.load_catalog() or "/" not in name.replace("\\", "/"):
        return shorten(name)
    try:
        typed_dir = Path(name).expanduser().is_dir()
    except (OSError, ValueError):
        typed_dir = False
    return shorten(fence.public(path) if typed_dir else name)

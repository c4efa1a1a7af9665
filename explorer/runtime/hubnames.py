"""What a typed model name means on the Hugging Face hub: an ``owner/name`` id, or a legacy name without an owner.

The hub still resolves the first checkpoints' names without their organisation (``bert-base-uncased`` is
``google-bert/bert-base-uncased``, ``gpt2`` is ``openai-community/gpt2``, ``t5-small`` is ``google-t5/t5-small``):
the names every old tutorial types. Offline nobody can ask the hub which of those exist, so any text the hub
accepts as a repository name is taken as a hub id, and the catalog's keys are named when the text is the name
of one of their reference checkpoints (with or without its owner).

>>> hub_id_text("google-bert/bert-base-uncased"), hub_id_text("bert-base-uncased"), hub_id_text("no such thing")
(True, True, False)
>>> hub_id_text("a--b"), hub_id_text("-x"), hub_id_text("<b>x</b>")
(False, False, False)
>>> repo_name("google-bert/bert-base-uncased"), repo_name("gpt2")
('bert-base-uncased', 'gpt2')
"""

from __future__ import annotations

import difflib
import re

from explorer.architecture import catalog

__all__ = ["HUB_ID", "LEGACY_NAME", "canonical", "close_keys", "hub_id_text", "keys_for", "repo_name"]

HUB_ID = re.compile(r"[\w.-]+/[\w.-]+")  # owner/name, as the hub allows them
# A repository name alone, as the hub spells them: letters, digits, "-", "_", "."; at most 96 characters; neither
# starting nor ending with "-" or "."; no "--" or ".." (the hub's own rules for a name).
LEGACY_NAME = re.compile(r"(?!.*(--|\.\.))[A-Za-z0-9](?:[\w.-]{0,94}[A-Za-z0-9_])?")


def hub_id_text(name: str) -> bool:
    """Whether ``name`` is spelled like a hub id: ``owner/name``, or a name alone (the hub's legacy ids)."""
    if "/" in name:
        return HUB_ID.fullmatch(name) is not None and all(LEGACY_NAME.fullmatch(part) for part in name.split("/"))
    return LEGACY_NAME.fullmatch(name) is not None


def repo_name(hub_id: str) -> str:
    """The name part of a hub id (a legacy id is all name)."""
    return hub_id.rsplit("/", 1)[-1]


def keys_for(name: str) -> list[str]:
    """Catalog keys whose reference checkpoint is ``name``: the same id, or (for a name without an owner, or one
    whose owner moved) the same repository name; catalog order, the catalog's own key first."""
    wanted = repo_name(name).lower()
    found = [v.key for v in catalog.load_catalog().values()
             if v.reference_checkpoint and repo_name(v.reference_checkpoint).lower() == wanted]
    return sorted(found, key=lambda k: k != name)


def canonical(name: str) -> str:
    """The id to ask the hub for: a legacy name of a catalog checkpoint becomes that checkpoint's ``owner/name``
    (where the hub has moved it); any other name is asked for as typed (the hub redirects the rest)."""
    if "/" in name:
        return name
    keys = keys_for(name)
    checkpoint = catalog.get_variant(keys[0]).reference_checkpoint if keys else None
    return checkpoint or name


def close_keys(name: str) -> list[str]:
    """Catalog keys spelled like ``name`` (a typo of a key), best first."""
    return difflib.get_close_matches(name.lower(), list(catalog.load_catalog()), n=2, cutoff=0.8)

"""The models interventions act on: named once, loaded with the head their family answers with.

A page or command names the model once, at its edge (:func:`local_ref`: a served name refused in words, then
:func:`explorer.runtime.resolve.resolve`, which looks on disk and loads nothing); every function below takes that
:class:`~explorer.runtime.resolve.ModelRef` and asks nothing about the model again. A decoder answers with its
next token (causal LM), an encoder with its masked-LM head, an encoder-decoder with its decoder (seq2seq); the model
comes from :func:`explorer.runtime.loading.load_model`, the process-wide cache every page shares (interventions wrap
a view of it, :mod:`explorer.interventions.engine`). A served model is refused in words: an engine's API answers
with tokens and log-probabilities, never with its layers.

>>> BUNDLED
'gemma3-270m'
>>> check_local("served:llama")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
explorer.core.errors.ExplorerError: served:llama is served by an inference engine, ...
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from explorer.core.errors import ExplorerError, shorten
from explorer.runtime import resolve
from explorer.tasks import attention

if TYPE_CHECKING:  # typing only: the loader imports torch at its top
    from explorer.runtime.loading import LoadedModel
    from explorer.runtime.resolve import ModelRef

__all__ = ["BUNDLED", "PURPOSE", "SERVED_PREFIX", "check_local", "load", "local_ref", "options"]

BUNDLED = "gemma3-270m"  # ships with the app: a real decoder, offline
SERVED_PREFIX = "served:"
PURPOSE = "Interventions"


def check_local(spec: str) -> str:
    """``spec`` stripped, or an ExplorerError when it names a served model (no internals to reach)."""
    name = (spec or "").strip()
    if name.startswith(SERVED_PREFIX):
        raise ExplorerError(f"{shorten(name)} is served by an inference engine, whose API answers with tokens and "
                            "log-probabilities only: its layers, heads and neurons cannot be read or changed from "
                            f"here. Pick a local model, e.g. {BUNDLED} (bundled).")
    return name


def local_ref(spec: str, models_dir: str | None = None, *, random_weights: bool = False) -> ModelRef:
    """``spec`` (a catalog key, ``lab/NAME`` or a directory) resolved once, for a page or command to pass down; a
    served name is refused in words first (:func:`check_local`). Nothing is loaded: weights that are missing or
    broken make a ref that is not ready, and :func:`load` raises its reason."""
    return resolve.resolve(check_local(spec), models_dir, random_weights=random_weights)


def load(ref: ModelRef, *, device: str | None = None, dtype: str | None = None) -> LoadedModel:
    """The shared loaded model ``ref`` names, with its family's head (a model not ready raises its reason)."""
    from explorer.runtime import loading

    check_local(ref.spec)  # a served name resolved by a caller without local_ref still gets the words, not "unknown"
    return loading.load_model(ref, ref.head_task(), device=device, dtype=dtype, purpose=PURPOSE)


def _bare(key: str, models_dir: str | None) -> bool:
    """A checkpoint saved without any head (all-MiniLM-L6-v2 as a BertModel): nothing to read answers from."""
    ref = resolve.resolve(key, models_dir)
    return bool(ref.architectures) and all(a.endswith("Model") for a in ref.architectures)


def options(random_weights: bool, models_dir: str | None = None) -> list[tuple[str, str]]:
    """``(key, label)`` of the models the page offers: the bundled Gemma first, then every ready model with a
    language-model head (catalog keys, the Lab's ``lab/NAME``); with ``random_weights``, every variant small enough
    to initialise here."""
    if random_weights:
        return attention.model_options(True)
    ready = [(k, label) for k, label in attention.model_options(False, models_dir)
             if k != BUNDLED and not _bare(k, models_dir)]
    return [(BUNDLED, "Gemma 3 270M (bundled)"), *ready]

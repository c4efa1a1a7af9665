"""A model named once: what the user typed, resolved into every answer the layers below need about it.

A page or command names a model by a catalog key, a hub id, ``lab/NAME`` or a directory. Where are its weights,
are they the right architecture, is it a decoder, which loading task does a page use for it, what stamp keys its
cached results, are untrained weights used instead: :func:`resolve` answers each once, from one look on disk, and
the :class:`ModelRef` goes down to the task and the loader (:func:`explorer.runtime.loading.load_model` takes it in
place of the name and asks nothing again).

>>> ref = resolve("bert-base", None, allow_random=True)  # no weights on this machine's disk for bert-base
>>> ref.spec, ref.family, ref.decoder, ref.task("masked-lm")
('bert-base', 'encoder', False, 'masked-lm')
>>> resolve("gemma3-270m", None).task("masked-lm")  # a decoder fills masks by scoring, as a causal LM
'causal-lm'
>>> bad = resolve("<b>nope</b>", None)
>>> bad.ready, bad.family, "neither a catalog key" in bad.reason
(False, None, True)
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from explorer.architecture import catalog
from explorer.core.errors import ExplorerError
from explorer.runtime import modelkind, weights
from explorer.runtime.weights import WeightsStatus

__all__ = ["ModelRef", "resolve"]


@dataclass(frozen=True)
class ModelRef:
    """One model as resolved for a request (hashable: pages key their caches on it, the stamp included)."""

    spec: str  # as typed (stripped)
    status: WeightsStatus | None  # where its weights are; None when the name resolves to nothing
    ready: bool  # real weights on disk, of the right architecture
    random_weights: bool  # untrained weights are used (asked for, or allowed and none on disk)
    stamp: str  # changes when the weights on disk change (part of every result cache key)
    reason: str  # one line: where the weights are, or what is wrong and how to fix it
    missing: bool = False  # not ready only because nothing is on disk yet: a download fixes it
    family: str | None = None  # "encoder", "decoder", "encoder-decoder"; None when unknown
    model_type: str = ""
    architectures: tuple[str, ...] = ()
    models_dir: str | None = None  # the models folder it was resolved against (the bundled decoder converts into it)

    @property
    def path(self) -> str | None:
        """The folder real weights load from; None when they are not used (missing, broken, or untrained)."""
        return self.status.path if self.status is not None and self.ready else None

    @property
    def weights_dir(self) -> str | None:
        """The folder its name points at, used or not (a folder without weights, or real weights passed over for
        untrained ones): what a size estimate reads."""
        return self.status.path if self.status is not None else None

    @property
    def decoder(self) -> bool:
        return self.family == "decoder"

    def as_untrained(self) -> ModelRef:
        """The same model with untrained weights (built from its catalog config, whatever is on disk)."""
        return self if self.random_weights else replace(self, ready=False, random_weights=True, stamp="random")

    def task(self, encoder_task: str) -> str:
        """The loading task a page uses for this model: a decoder always loads as a causal LM (it answers
        fill-mask and span prompts by scoring), any other model with ``encoder_task``."""
        return "causal-lm" if self.decoder else encoder_task

    @property
    def predicts_tokens(self) -> bool:
        """Whether it has a head that predicts tokens: a decoder, an encoder-decoder, or an encoder saved with its
        masked-LM head (a sentence encoder saved bare, all-MiniLM-L6-v2 as ``BertModel``, has none)."""
        if self.family in ("decoder", "encoder-decoder"):
            return True
        try:
            self.check("masked-lm")
        except ExplorerError:
            return False
        return True

    def head_task(self, head_optional: bool = False) -> str:
        """The loading task of a page that asks this model for tokens (the one family-to-task rule): a decoder as a
        causal LM, an encoder-decoder as seq2seq, an encoder with its masked-LM head (``head_optional``: as it is
        when it has none, for pages that read its layers too)."""
        if self.family == "encoder-decoder":
            return "seq2seq"
        if self.decoder:
            return "causal-lm"
        return "masked-lm" if not head_optional or self.predicts_tokens else "base"

    def config(self) -> dict[str, Any]:
        """Its configuration as a dict, read without building or loading anything (what checks of layer, head and
        neuron numbers read before any work): the catalog variant's for untrained weights, else its folder's
        config.json, else the catalog's; {} when neither is known."""
        on_disk = modelkind.read_config(Path(self.weights_dir)) if self.weights_dir else {}
        if on_disk and not self.random_weights:
            return on_disk
        try:
            return catalog.variant_config(self.spec)
        except ExplorerError:
            return on_disk

    def check(self, task: str, purpose: str | None = None) -> None:
        """Refuse, in words, a model whose kind cannot do ``task`` (:func:`explorer.runtime.modelkind.check`)."""
        modelkind.refuse(self.spec, task, self.family, {"model_type": self.model_type,
                                                        "architectures": list(self.architectures)},
                         self.path, purpose)


def _kind(spec: str, path: str | None) -> tuple[str | None, str, tuple[str, ...]]:
    family, config = modelkind.family_of(spec, Path(path) if path else None)
    return family, str(config.get("model_type") or ""), tuple(str(a) for a in config.get("architectures") or ())


def resolve(spec: str, models_dir: str | None = None, *, allow_random: bool = False,
            random_weights: bool = False) -> ModelRef:
    """``spec`` resolved: real weights when present (and of the right architecture), untrained ones when
    ``random_weights`` or (``allow_random`` and none on disk). Never raises for user input: a name that resolves
    to nothing is a ref that is not ready, whose ``reason`` says why."""
    name = (spec or "").strip()
    try:
        status = weights.locate(name, models_dir)
    except ExplorerError as err:
        return ModelRef(name, None, False, random_weights, "unresolved", str(err), models_dir=models_dir)
    if status.status == "ready" and status.path is not None:
        wrong = weights.architecture_error(name, Path(status.path))
        if wrong:
            return ModelRef(name, status, False, random_weights, "wrong architecture", wrong, False,
                            *_kind(name, None), models_dir=models_dir)
        stamp = f"{status.path}@{weights.weights_stamp(status.path)}"
        return ModelRef(name, status, not random_weights, random_weights, "random" if random_weights else stamp,
                        status.message, False, *_kind(name, status.path), models_dir=models_dir)
    # untrained weights are built from a catalog config: a hub id or a lab name without weights says how to get them
    untrained = random_weights or (allow_random and status.status == "not present" and weights.variant_hub_id(name)[0])
    return ModelRef(name, status, False, untrained, "random" if untrained else status.status, status.message,
                    status.status in ("not present", "downloading"), *_kind(name, None), models_dir=models_dir)

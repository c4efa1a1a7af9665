"""What a fill-mask column returns: the same shape for a masked LM and a decoder.

:mod:`explorer.tasks.fillmask` (masked LMs) and :mod:`explorer.tasks.causal.column` (decoders) both answer
with a :class:`ModelFill`; :class:`FillMaskResult` holds every model's column for one prompt.
Kept apart from both so neither imports the other to share the types.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from explorer.core.notices import Notice, texts

__all__ = ["FillMaskResult", "MaskResult", "ModelFill", "Prediction"]


@dataclass(frozen=True)
class Prediction:
    """One candidate for one mask."""

    token_id: int
    token: str  # tokenizer.decode([id]), as pipeline("fill-mask") shows it
    word: str  # the whole word the piece forms in context ("##ly" after "quick" -> "quickly")
    score: float  # softmax probability over the full vocabulary


@dataclass(frozen=True)
class MaskResult:
    index: int  # 0-based number of the mask in the prompt
    position: int  # token position in the model's input
    predictions: tuple[Prediction, ...]


@dataclass(frozen=True)
class ModelFill:
    """One model's answer to one prompt."""

    model: str  # key or path as asked
    name: str
    untrained: bool
    device: str
    text: str  # the prompt with this model's mask token
    masks: tuple[MaskResult, ...]
    filled: str  # the prompt with every mask replaced by its top prediction
    n_tokens: int
    notices: tuple[Notice, ...]  # e.g. truncation around the mask, GPU fallback
    latency_ms: float  # tokenize + forward + top-k, model already loaded
    device_name: str = "cpu"  # what ran, as people know it: "cuda:0 (NVIDIA H100 80GB HBM3)"
    dtype: str = "float32"  # the precision that ran (a GPU out of memory falls back to cpu float32)

    def to_dict(self) -> dict:
        """JSON-able; the notices as one ``notice`` sentence (the CLI's JSON keeps its shape)."""
        out = {}
        for key, value in asdict(self).items():  # "notices" becomes "notice" in place: same key order
            out["notice" if key == "notices" else key] = " ".join(texts(self.notices)) if key == "notices" else value
        return out


@dataclass(frozen=True)
class FillMaskResult:
    """Every model's answer to one prompt (failures listed, the others still answer)."""

    prompt: str
    n_masks: int
    models: tuple[ModelFill, ...]
    errors: tuple[tuple[str, str], ...]  # (model, one-line message)
    skipped: tuple[str, ...] = ()  # models not loaded to stay within a server request's memory (in errors too)

    def to_dict(self) -> dict:
        return {"prompt": self.prompt, "n_masks": self.n_masks, "models": [m.to_dict() for m in self.models],
                "errors": [{"model": m, "error": e} for m, e in self.errors]}

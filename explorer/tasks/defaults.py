"""What the live pages offer and start with: the model lists of the Fill-mask and Spans pages.

Task modules (:mod:`explorer.tasks.fillmask`, :mod:`explorer.tasks.infill`) answer for any model they
are given; which catalog variants a page offers, which it starts with (those whose weights are on
disk, the bundled decoder first) and how many it shows at most are decided here, in one place.
"""

from __future__ import annotations

from explorer.architecture import catalog
from explorer.runtime import bundled, capacity, weights
from explorer.tasks.infill import BART_TYPES, T5_TYPES
from explorer.training import checkpoint

__all__ = ["BUNDLED_DECODERS", "DEFAULT_MLMS", "MAX_PAGE_MODELS", "SPANS_MODELS", "fill_keys", "fill_mask_defaults",
           "infill_keys", "lab_models", "mlm_keys", "spans_defaults"]

BUNDLED_DECODERS = (bundled.KEY,)  # real decoders that ship offline (explorer.runtime.bundled): a causal column
# the Fill-mask page's masked LMs once their weights are there
DEFAULT_MLMS = ("bert-base", "roberta-base", "distilbert")
MAX_PAGE_MODELS = capacity.CPU_PAGE_MODELS  # the CPU cap; explorer.runtime.capacity.page_models gives the device's
SPANS_MODELS = (bundled.KEY, "t5-small", "bart-base")  # the Spans page's models once their weights are there


# ---- Fill-mask -------------------------------------------------------------------------
def fill_keys(models_dir: str | None = None) -> list[str]:
    """What the Fill-mask page offers: the bundled decoder first (a real model, labelled causal), then
    the masked-LM encoders, then the models the pretraining lab trained here (``lab/NAME``)."""
    return [*BUNDLED_DECODERS, *mlm_keys(), *lab_models("fill", models_dir)]


def fill_mask_defaults(models_dir: str | None = None) -> list[str]:
    """What the Fill-mask page starts with: the bundled decoder (real weights offline) and the masked LMs
    whose weights are on disk; with none on disk, BERT-base beside the decoder (untrained unless
    downloaded, and labelled so) so that a masked LM reading both sides is there to compare with."""
    return [*BUNDLED_DECODERS, *(weights.ready_keys(DEFAULT_MLMS, models_dir) or DEFAULT_MLMS[:1])]


def mlm_keys() -> list[str]:
    """Catalog encoders with a masked-LM head (ELECTRA discriminators and pairs excluded)."""
    # lazy: transformers takes seconds to import; the catalog alone does not need it
    from transformers.models.auto.modeling_auto import MODEL_FOR_MASKED_LM_MAPPING_NAMES

    return [v.key for v in catalog.load_catalog().values()
            if v.family == "encoder" and v.model_type in MODEL_FOR_MASKED_LM_MAPPING_NAMES
            and v.head in ("mlm", "pretraining") and not (v.model_type == "electra" and v.head != "mlm")]


# ---- Spans -----------------------------------------------------------------------------
def infill_keys(models_dir: str | None = None) -> list[str]:
    """Catalog variants the Spans page offers for infilling: the bundled decoder first (real weights
    offline), then T5 (sentinels) and BART (<mask>), then the lab's T5, BART and decoders."""
    return [bundled.KEY, *(v.key for v in catalog.load_catalog().values() if v.model_type in T5_TYPES + BART_TYPES),
            *lab_models("infill", models_dir)]


def spans_defaults(models_dir: str | None = None) -> list[str]:
    """The models the Spans page starts with: those of the decoder, T5-small and BART-base whose weights
    are on disk (the bundled decoder, out of the box); the decoder alone when none is (it says how)."""
    return weights.ready_keys(SPANS_MODELS, models_dir) or [bundled.KEY]


# ---- Models the pretraining lab trained here -------------------------------------------------
def _serves(model: checkpoint.Trained, use: str) -> bool:
    masked = any(h.endswith(("ForMaskedLM", "ForPreTraining")) for h in model.heads) and model.model_type != "electra"
    if use == "fill":  # a masked-LM head (ELECTRA's discriminator has none), or a decoder's causal column
        return model.family == "decoder" or (model.family == "encoder" and masked)
    if use == "infill":  # the Spans page: T5 sentinels, BART <mask>, or a decoder
        return model.family == "decoder" or model.model_type in T5_TYPES + BART_TYPES
    if use == "encoder":  # sentence vectors (Similarity): any encoder
        return model.family == "encoder"
    if use == "exits":  # the Compression lab's early exit: FastBERT exits trained and saved with the model
        return checkpoint.has_exits(model.path)
    return True


def lab_models(use: str = "any", models_dir: str | None = None) -> dict[str, str]:
    """``{"lab/NAME": "lab/NAME: trained here (N steps on M words)"}`` of the models the pretraining lab saved
    in the models folder that can serve ``use`` ("fill", "infill", "encoder", "exits" or "any"), newest first."""
    return {m.spec: f"{m.spec}: {m.label}" for m in checkpoint.trained(models_dir) if _serves(m, use)}

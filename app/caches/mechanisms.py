"""Cached wrappers of the mechanisms page (DeBERTa's split, distillation losses, text-to-text layouts).

The models are built once per process inside the library (random weights, never mutated); results
are ``st.cache_data`` keyed by the typed text and the settings, so moving a slider back is instant.
Distillation results hold two (L, 30,522) logit matrices, hence the small ``max_entries``.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from app.caches.anytime import cache_complete
from explorer.papers.mechanisms import deberta, distillation, text2text
from explorer.papers.mechanisms import sift as sift_mechanism
from explorer.runtime import workers
from explorer.runtime.loading import load_model
from explorer.runtime.resolve import resolve


@cache_complete(max_entries=8, show_spinner="Splitting DeBERTa's attention…")
@workers.queued  # model work waits its turn (explorer.runtime.workers); cache hits do not
def deberta_split(key: str, text: str, device: str = "auto", dtype: str = "auto") -> deberta.DisentangledSplit:
    """Layer-0 scores of ``text`` split into c2c + c2p + p2c, checked against the model (on the sidebar's
    device and precision: the real module runs there)."""
    return deberta.split_attention(key, text, device=device, dtype=dtype)


@st.cache_data(max_entries=4, show_spinner=False)
def deberta_buckets(key: str) -> tuple[np.ndarray, np.ndarray, int]:
    """(distances, buckets, exact range) of the variant's relative-position buckets."""
    return deberta.variant_buckets(key)


@cache_complete(max_entries=4, show_spinner="Running BERT-base and DistilBERT…")
@workers.queued  # model work waits its turn (explorer.runtime.workers); cache hits do not
def triple(text: str, seed: int, temperature: float, device: str = "auto",
           dtype: str = "auto") -> distillation.TripleLoss:
    """DistilBERT's three losses on ``text`` masked with ``seed`` (models on the sidebar's device and precision)."""
    return distillation.triple_loss(text, seed, temperature, device=device, dtype=dtype)


@cache_complete(max_entries=4, show_spinner=False)
@workers.queued  # model work waits its turn (explorer.runtime.workers); cache hits do not
def temperature_curve(text: str, seed: int, device: str = "auto",
                      dtype: str = "auto") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(soft loss, KL alone, teacher entropy) at ``distillation.CURVE_TEMPERATURES`` from the same logits."""
    res = triple(text, seed, distillation.DISTILBERT_TEMPERATURE, device, dtype)
    return res.curve(distillation.CURVE_TEMPERATURES)


@cache_complete(max_entries=4, show_spinner="Running BERT-base and TinyBERT…")
@workers.queued  # model work waits its turn (explorer.runtime.workers); cache hits do not
def layerwise(text: str, seed: int, device: str = "auto", dtype: str = "auto") -> distillation.LayerwiseLoss:
    """TinyBERT's layer-wise losses on ``text`` masked with ``seed`` (on the sidebar's device and precision)."""
    return distillation.layerwise_loss(text, seed, device=device, dtype=dtype)


@st.cache_data(max_entries=1, show_spinner=False)
def sizes() -> distillation.Sizes:
    """Parameter counts of the teacher and the two students as built."""
    return distillation.model_sizes()


@st.cache_data(max_entries=32, show_spinner=False)
def t5(task: str, text: str, target: str) -> text2text.T5Framing:
    """One task example in T5's framing, tokenized."""
    return text2text.t5_frame(task, text, target)


@st.cache_data(max_entries=32, show_spinner=False)
def ctrl(code: str, text: str) -> text2text.CtrlFraming:
    """A text after a CTRL control code, tokenized."""
    return text2text.ctrl_frame(code, text)


@st.cache_data(max_entries=32, show_spinner=False)
def m2m(source_lang: str, target_lang: str, source: str, target: str) -> text2text.M2MFraming:
    """One translation pair in M2M-100's layout."""
    return text2text.m2m_frame(source_lang, target_lang, source, target)


@cache_complete(max_entries=16, show_spinner="Finding the adversarial direction…")
@workers.queued  # model work waits its turn (explorer.runtime.workers); cache hits do not
def sift(model: str, text: str, epsilon: float, device: str = "auto", dtype: str = "auto") -> sift_mechanism.SiftResult:
    """SiFT's and a uniform perturbation of ``text``'s embeddings in a bundled real model, compared."""
    ref = resolve(model)  # a decoder loads with its output layer (a causal LM): the next-token distribution moves
    loaded = load_model(ref, ref.task("base"), device=device, dtype=dtype)
    return sift_mechanism.perturb(loaded, text, epsilon)

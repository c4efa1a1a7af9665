"""Knowledge distillation losses computed on real teacher and student modules built from their configs.

- DistilBERT's triple loss (Sanh et al. 2019, §2): soft-target cross-entropy ``L_ce`` (KL between the
  teacher's and the student's softmax at temperature ``T``, times ``T²``), the masked-LM loss ``L_mlm`` and
  the cosine embedding loss ``L_cos`` between the last hidden states, combined with the weights of the
  released training command (``--alpha_ce 5.0 --alpha_mlm 2.0 --alpha_cos 1.0``, temperature 2.0:
  transformers' examples/research_projects/distillation README §B and train.py). As in its ``distiller.py``,
  ``L_ce`` averages over every non-padding position (``restrict_ce_to_mask`` off) and ``L_mlm`` over the
  masked ones.
- TinyBERT's layer-wise losses (Jiao et al. 2020, §3.1, eq. 6-10): student layer ``m`` learns from teacher
  layer ``g(m) = m · N / M`` (0 = embeddings): MSE between the unnormalised attention scores, MSE between
  the student's hidden states projected by ``W_h`` (312 -> 768) and the teacher's, the embedding MSE
  through ``W_e``, and the soft cross-entropy of the prediction layer.

All three models (BERT-base teacher 110M, DistilBERT 67M, TinyBERT 14.5M with their MLM heads) are built
once per process with **random weights**: the point is the arithmetic of the losses, which is the same for
any weights; trained weights would only change the numbers. ``W_h``/``W_e`` are at their initialisation
(N(0, 0.02), as the released TinyBERT code initialises its ``fit_dense``); training learns them.

Where: ``device``/``dtype`` (:mod:`explorer.runtime.placement`, as the other mechanisms) say where the
models run; unlike the DeBERTa split the default is the CPU in float32 (the Mechanisms page promises the
CPU until it passes its sidebar's choice; ``None``/"auto" is the usual auto rule, as the CLI's flags). They are
initialised on the CPU whatever the device (the same weights everywhere), then moved; every loss is computed in float32
from the models' outputs, on the device, and the tensors kept for the charts come back as float32 numpy. On the CPU in
float32 nothing is cast or moved, so the numbers are exactly those of the CPU-only version.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
import torch.nn.functional as F

from explorer.architecture import build
from explorer.core.errors import ExplorerError, shorten
from explorer.core.limits import DISTILLATION_SENTENCE_CHARS
from explorer.core.userinput import require_text
from explorer.runtime import placement

if TYPE_CHECKING:  # typing only: transformers loads with the first model
    from transformers import PreTrainedModel

__all__ = ["CURVE_TEMPERATURES", "DISTILBERT_WEIGHTS", "DISTILBERT_TEMPERATURE", "MaskedInput", "Sizes", "TripleLoss",
           "LayerwiseLoss", "layer_map", "layerwise_loss", "masked_input", "model_sizes", "soft_loss", "triple_loss"]

TEACHER, DISTIL_STUDENT, TINY_STUDENT = "bert-base", "distilbert", "tinybert"
# transformers/examples/research_projects/distillation: README "B. Training" and train.py's --temperature default
DISTILBERT_WEIGHTS = {"ce": 5.0, "mlm": 2.0, "cos": 1.0}
DISTILBERT_TEMPERATURE = 2.0
CURVE_TEMPERATURES = (1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0)  # the temperature chart's x values
MASK_PROB = 0.15  # BERT's masking rate; every chosen token becomes [MASK] here (no 80/10/10) to keep it readable
MAX_TOKENS = 64
INIT_STD = 0.02  # initializer_range of the configs, used for W_h and W_e


@dataclass(frozen=True)
class MaskedInput:
    """One tokenized sentence with some tokens replaced by [MASK]; the same input for teacher and student."""

    tokens: tuple[str, ...]  # after masking
    original: tuple[str, ...]  # before masking
    input_ids: np.ndarray  # (L,)
    labels: np.ndarray  # (L,) original id at masked positions, -100 elsewhere (ignored by the MLM loss)

    @property
    def masked(self) -> tuple[int, ...]:
        return tuple(int(i) for i in np.flatnonzero(self.labels >= 0))


@dataclass(frozen=True)
class Sizes:
    """Parameter counts of the three models as built here (MLM heads included, tied weights once)."""

    teacher: int
    distilbert: int
    tinybert: int

    def to_dict(self) -> dict[str, int]:
        return {"teacher": self.teacher, "distilbert": self.distilbert, "tinybert": self.tinybert}


def masked_input(text: str, seed: int = 0) -> MaskedInput:
    """``text`` through BERT's WordPiece, with 15% of its word pieces (at least one) masked, seeded."""
    from explorer.tokenization import load_tokenizer  # imports transformers at its top

    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or not 0 <= seed < 2**32:
        raise ExplorerError(f"The seed must be a whole number from 0 to {2**32 - 1:,}, not {shorten(seed)}.")
    text = require_text(text, what="sentence", empty_hint="type a short sentence.",
                        max_chars=DISTILLATION_SENTENCE_CHARS,
                        limit_note=f"the models here read at most {MAX_TOKENS} tokens")
    tok = load_tokenizer("bert-base-uncased")  # the teacher's, DistilBERT's and TinyBERT's vocabulary
    ids = np.asarray(tok(text, truncation=True, max_length=MAX_TOKENS)["input_ids"], dtype=np.int64)
    inner = np.arange(1, len(ids) - 1)  # never [CLS] / [SEP]
    rng = np.random.default_rng(seed)
    chosen = (rng.choice(inner, size=max(1, round(MASK_PROB * len(inner))), replace=False) if len(inner)
              else np.zeros(0, dtype=np.int64))  # (M,) positions to mask
    labels = np.full_like(ids, -100)
    labels[chosen] = ids[chosen]
    masked = ids.copy()
    masked[chosen] = tok.mask_token_id
    return MaskedInput(tuple(tok.convert_ids_to_tokens(masked.tolist())),
                       tuple(tok.convert_ids_to_tokens(ids.tolist())), masked, labels)


@functools.lru_cache(maxsize=3)  # the three models of one placement: a second placement rebuilds (seeded)
def _model(key: str, device: str = "cpu", dtype: torch.dtype = torch.float32) -> PreTrainedModel:
    """The catalog variant with an MLM head, random weights (seeded), eager attention, eval mode, on ``device``
    in ``dtype`` (never mutate)."""
    from transformers import PreTrainedModel

    torch.manual_seed(0)
    model = build.build(key, head="mlm", device="cpu")  # initialised on the CPU: the same weights everywhere
    assert isinstance(model, PreTrainedModel)  # the teacher and students are transformers' own MLM classes
    model.set_attn_implementation("eager")  # sdpa returns no attention matrices
    return model.eval().to(device=device, dtype=dtype)  # a no-op on the CPU in float32


def _where(device: str | None, dtype: str | None) -> tuple[str, torch.dtype]:
    return placement.Placement.parse(device, dtype).resolve()


def _ran(where: tuple[str, torch.dtype]) -> dict[str, str]:
    return {"device": where[0], "device_name": placement.device_name(where[0]),
            "dtype": placement.dtype_name(where[1])}


def _np(t: torch.Tensor) -> np.ndarray:
    """A tensor from any device and dtype as float32 numpy (numpy has no bfloat16)."""
    return t.detach().to(device="cpu", dtype=torch.float32).numpy()


def model_sizes() -> Sizes:
    """Parameters of teacher and students as built (110M, 67M, 14.5M for the published configs).

    Counted on the meta device: no weights, and the three real models in ``_model``'s cache stay there (built
    through it, the sizes took three entries of their own, so every call rebuilt all three: 3 s)."""
    return Sizes(*(sum(p.numel() for p in build.build(k, head="mlm").parameters())  # tied weights once
                   for k in (TEACHER, DISTIL_STUDENT, TINY_STUDENT)))


def _run(key: str, inp: MaskedInput, where: tuple[str, torch.dtype] = ("cpu", torch.float32)) -> Any:
    ids = torch.from_numpy(inp.input_ids)[None].to(where[0])  # (1, L)
    with torch.inference_mode():
        return _model(key, *where)(input_ids=ids, attention_mask=torch.ones_like(ids),
                                   output_hidden_states=True, output_attentions=True)


def soft_loss(teacher_logits: np.ndarray, student_logits: np.ndarray, temperature: float) -> float:
    """``T² · KL(softmax(z_t/T) || softmax(z_s/T))`` averaged over rows (distiller.py's KLDivLoss batchmean)."""
    t, s = torch.from_numpy(teacher_logits), torch.from_numpy(student_logits)  # (N, V)
    kl = F.kl_div(F.log_softmax(s / temperature, -1), F.softmax(t / temperature, -1), reduction="batchmean")
    return float(kl) * temperature**2


def _entropy(logits: np.ndarray, temperature: float) -> float:
    """Mean entropy (nats) of softmax(logits / T): how soft the teacher's targets are."""
    logp = F.log_softmax(torch.from_numpy(logits) / temperature, -1)
    return float(-(logp.exp() * logp).sum(-1).mean())


@dataclass(frozen=True)
class TripleLoss:
    """DistilBERT's three losses on one masked input, with the tensors they were computed from."""

    inp: MaskedInput
    temperature: float
    ce: float  # soft-target loss, already times T²
    mlm: float  # cross-entropy of the student at the masked positions
    cos: float  # 1 - cos(student, teacher) of the last hidden states, mean over positions
    teacher_entropy: float  # nats, of the soft targets at this temperature
    teacher_logits: np.ndarray  # (L, V)
    student_logits: np.ndarray  # (L, V)
    teacher_hidden: np.ndarray  # (L, 768) last layer
    student_hidden: np.ndarray  # (L, 768) last layer
    device: str = "cpu"  # where the models ran (explorer.runtime.placement)
    device_name: str = "cpu"
    dtype: str = "float32"

    @property
    def weighted(self) -> dict[str, float]:
        """Each loss times its weight in the released training command."""
        return {name: DISTILBERT_WEIGHTS[name] * getattr(self, name) for name in DISTILBERT_WEIGHTS}

    @property
    def total(self) -> float:
        return sum(self.weighted.values())

    def curve(self, temperatures: tuple[float, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(soft loss T²·KL, the KL alone, teacher entropy) at each temperature, from the same logits.

        The KL shrinks about as 1/T² once the targets are soft; the T² factor keeps the loss (and its
        gradients) on the same scale whatever T is (Hinton et al. 2015, §2).
        """
        losses = np.array([soft_loss(self.teacher_logits, self.student_logits, t) for t in temperatures])
        return (losses, losses / np.square(temperatures),
                np.array([_entropy(self.teacher_logits, t) for t in temperatures]))

    def to_dict(self) -> dict[str, object]:
        return {"tokens": list(self.inp.tokens), "masked": list(self.inp.masked), "temperature": self.temperature,
                "losses": {"ce": self.ce, "mlm": self.mlm, "cos": self.cos}, "weights": dict(DISTILBERT_WEIGHTS),
                "weighted": self.weighted, "total": self.total, "teacher_entropy": self.teacher_entropy,
                "device": self.device, "device_name": self.device_name, "dtype": self.dtype}


def triple_loss(text: str, seed: int = 0, temperature: float = DISTILBERT_TEMPERATURE, *,
                device: str | None = "cpu", dtype: str | None = "float32") -> TripleLoss:
    """BERT-base teacher and DistilBERT student on the same masked ``text``: ``L_ce``, ``L_mlm``, ``L_cos``;
    the models run on ``device`` in ``dtype``."""
    if not 0.5 <= float(temperature) <= 20:
        raise ExplorerError(f"Temperature {temperature} is outside 0.5-20: DistilBERT trained with T = 2.")
    where = _where(device, dtype)
    inp = masked_input(text, seed)
    t_out, s_out = _run(TEACHER, inp, where), _run(DISTIL_STUDENT, inp, where)
    t_logits, s_logits = t_out.logits[0].float(), s_out.logits[0].float()  # (L, V); float() is a no-op in float32
    t_hidden, s_hidden = t_out.hidden_states[-1][0].float(), s_out.hidden_states[-1][0].float()  # (L, 768)
    labels = torch.from_numpy(inp.labels).to(where[0])
    mlm = F.cross_entropy(s_logits, labels, ignore_index=-100)
    cos = F.cosine_embedding_loss(s_hidden, t_hidden, torch.ones(len(inp.input_ids), device=where[0]))  # target 1
    t_np, s_np = _np(t_logits), _np(s_logits)
    return TripleLoss(inp, float(temperature), soft_loss(t_np, s_np, temperature), float(mlm), float(cos),
                      _entropy(t_np, temperature), t_np, s_np, _np(t_hidden), _np(s_hidden), **_ran(where))


def layer_map(n_teacher: int, n_student: int) -> tuple[int, ...]:
    """TinyBERT's uniform mapping ``g(m) = m · N / M`` for student layers ``m = 0..M`` (0 = embeddings).

    >>> layer_map(12, 4)
    (0, 3, 6, 9, 12)
    """
    if not 1 <= n_student <= n_teacher:
        raise ValueError(f"need 1 <= student layers ({n_student}) <= teacher layers ({n_teacher})")
    return tuple(m * n_teacher // n_student for m in range(n_student + 1))


@dataclass(frozen=True)
class LayerwiseLoss:
    """TinyBERT's losses per mapped layer pair, with the tensors they were computed from."""

    inp: MaskedInput
    mapping: tuple[int, ...]  # teacher layer g(m) for student layer m = 0..M
    n_teacher: int
    attention: tuple[float, ...]  # per student layer 1..M: MSE of unnormalised scores
    hidden: tuple[float, ...]  # per student layer 1..M: MSE(H_s W_h, H_t)
    embedding: float  # MSE(E_s W_e, E_t)
    prediction: float  # soft cross-entropy of the MLM logits at the masked positions (t = 1)
    score_check: float  # max |softmax(our scores) - the models' own attention probabilities|
    student_scores: np.ndarray  # (M, H, L, L)
    teacher_scores: np.ndarray  # (M, H, L, L) of the mapped teacher layers
    student_hidden: np.ndarray  # (M + 1, L, 312), 0 = embeddings
    teacher_hidden: np.ndarray  # (M + 1, L, 768) of the mapped teacher layers
    w_h: np.ndarray  # (312, 768)
    w_e: np.ndarray  # (312, 768)
    student_logits: np.ndarray  # (masked, V)
    teacher_logits: np.ndarray  # (masked, V)
    device: str = "cpu"  # where the models ran (explorer.runtime.placement)
    device_name: str = "cpu"
    dtype: str = "float32"

    @property
    def total(self) -> float:
        """Sum over layers with every λ = 1 (eq. 11)."""
        return sum(self.attention) + sum(self.hidden) + self.embedding + self.prediction

    def to_dict(self) -> dict[str, object]:
        return {"tokens": list(self.inp.tokens), "mapping": list(self.mapping), "n_teacher": self.n_teacher,
                "attention": list(self.attention), "hidden": list(self.hidden), "embedding": self.embedding,
                "prediction": self.prediction, "total": self.total, "score_check": self.score_check,
                "device": self.device, "device_name": self.device_name, "dtype": self.dtype}


def _scores(model: torch.nn.Module, hidden_in: torch.Tensor, layer: int) -> torch.Tensor:
    """(H, L, L) unnormalised attention ``Q K^T / sqrt(d)`` of one BERT layer from its input (no padding)."""
    bert: Any = model  # a BertForMaskedLM: its submodules are looked up by name
    att = bert.bert.encoder.layer[layer].attention.self
    shape = (hidden_in.shape[0], -1, att.attention_head_size)  # (L, H, d)
    q = att.query(hidden_in).view(shape).transpose(0, 1)  # (H, L, d)
    k = att.key(hidden_in).view(shape).transpose(0, 1)
    return q @ k.transpose(-1, -2) * att.scaling


def _projection(seed: int, d_in: int, d_out: int) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(d_in, d_out, generator=gen) * INIT_STD  # (d', d)


def layerwise_loss(text: str, seed: int = 0, *, device: str | None = "cpu",
                   dtype: str | None = "float32") -> LayerwiseLoss:
    """BERT-base teacher (N = 12) and TinyBERT student (M = 4) on the same masked ``text``, eq. 7-10; the models
    run on ``device`` in ``dtype``, the losses are taken in float32 (``float()`` is a no-op in float32)."""
    where = _where(device, dtype)
    inp = masked_input(text, seed)
    t_out, s_out = _run(TEACHER, inp, where), _run(TINY_STUDENT, inp, where)
    teacher, student = _model(TEACHER, *where), _model(TINY_STUDENT, *where)
    n, m = len(t_out.attentions), len(s_out.attentions)
    g = layer_map(n, m)
    with torch.inference_mode():
        s_sc = torch.stack([_scores(student, s_out.hidden_states[i][0], i) for i in range(m)]).float()  # (M, H, L, L)
        t_sc = torch.stack([_scores(teacher, t_out.hidden_states[g[i] - 1][0], g[i] - 1)
                            for i in range(1, m + 1)]).float()
        check = max(max(float((torch.softmax(s_sc[i], -1) - s_out.attentions[i][0].float()).abs().max()),
                        float((torch.softmax(t_sc[i], -1) - t_out.attentions[g[i + 1] - 1][0].float()).abs().max()))
                    for i in range(m))  # our scores are the ones both models softmax
        s_h = torch.stack([s_out.hidden_states[i][0] for i in range(m + 1)]).float()  # (M+1, L, 312)
        t_h = torch.stack([t_out.hidden_states[g[i]][0] for i in range(m + 1)]).float()  # (M+1, L, 768)
        w_h, w_e = (_projection(k, s_h.shape[-1], t_h.shape[-1]).to(where[0]) for k in (1, 2))
        masked = torch.as_tensor(inp.masked, device=where[0])
        z_s, z_t = s_out.logits[0, masked].float(), t_out.logits[0, masked].float()  # (masked, V)
        pred = -(F.softmax(z_t, -1) * F.log_softmax(z_s, -1)).sum(-1).mean()
    return LayerwiseLoss(
        inp, g, n, tuple(float(F.mse_loss(s_sc[i], t_sc[i])) for i in range(m)),
        tuple(float(F.mse_loss(s_h[i] @ w_h, t_h[i])) for i in range(1, m + 1)),
        float(F.mse_loss(s_h[0] @ w_e, t_h[0])), float(pred), check, _np(s_sc), _np(t_sc),
        _np(s_h), _np(t_h), _np(w_h), _np(w_e), _np(z_s), _np(z_t), **_ran(where))

"""DistilBERT's family: a half-depth student learns from a trained, frozen BERT-MLM teacher.

Sanh et al. (2019): the student has the teacher's width and every other one of its layers
(it starts from those layers' weights, and the teacher's embeddings and MLM head), and trains
on the teacher's masked windows (the ``bert`` strategy) with the triple loss

    5.0 x T^2 KL(teacher_T || student_T) + 2.0 x MLM cross-entropy + 1.0 x (1 - cos(h_student, h_teacher))

at temperature T = 2 (the weights of the paper's released training script). The soft term is
:func:`explorer.objectives.distill.distill_loss`'s ``kl_scaled`` (one home for the formula; the
tests check the two agree), averaged over every real token as the released code does by
default; the cosine term aligns the last hidden states of every real token.

The teacher is frozen (no gradients, eval mode) and held *outside* the student's module tree
(:class:`Teacher`), so the optimizer, ``state_dict``, ``.train()`` and ``save_pretrained`` see the
student alone: a saved run is a plain DistilBERT checkpoint. Where the teacher comes from is the
trainer's business (:func:`explorer.training.trainer.start`): a given run, a saved lab checkpoint
directory (``Plan.teacher``), or, if neither, a BERT-MLM teacher trained first with the plan's own
budget. Reported accuracy is the student's masked-token accuracy.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from explorer.architecture import build as arch
from explorer.architecture import cost
from explorer.core.errors import ExplorerError, shorten
from explorer.runtime import fence
from explorer.training import models, vocab
from explorer.training.examples import IGNORE
from explorer.training.losses import Loss
from explorer.training.recipes import Recipe

__all__ = ["ALPHA_CE", "ALPHA_COS", "ALPHA_MLM", "TEMPERATURE", "Teacher", "build", "forward_flops",
           "init_from_teacher", "load_teacher", "loss", "soft_kl", "student_config", "teacher_of"]

ALPHA_CE, ALPHA_MLM, ALPHA_COS = 5.0, 2.0, 1.0  # the paper's released run: soft targets weigh most
TEMPERATURE = 2.0


@dataclass(frozen=True)
class Teacher:
    """The frozen teacher, kept off the student's module tree (a plain attribute, not a submodule)."""

    model: nn.Module


def teacher_of(student: nn.Module) -> nn.Module:
    """The teacher attached to ``student`` by :func:`build`."""
    held = getattr(student, "lab_teacher", None)
    if not isinstance(held, Teacher):
        raise ExplorerError("This model has no distillation teacher; build it with the distilbert objective.")
    return held.model


def _checked(model: nn.Module) -> nn.Module:
    """A lab BERT masked LM (the teacher the student's layers and head are copied from), else a clear error."""
    from transformers import BertForMaskedLM

    if not isinstance(model, BertForMaskedLM):
        raise ExplorerError(f"A DistilBERT teacher must be a BERT masked LM from the lab (objective mlm), not "
                            f"{type(model).__name__}. Train one with `pretrain mlm --out DIR`.")
    if model.config.vocab_size != len(vocab.tokenizer()):
        raise ExplorerError(f"The teacher's vocabulary has {model.config.vocab_size} pieces, not the lab's "
                            f"{len(vocab.tokenizer())}: pick a teacher trained in the lab.")
    return model


def load_teacher(source: nn.Module | str | Path) -> nn.Module:
    """A frozen copy of the teacher: a model (a finished run's) or a saved lab checkpoint directory."""
    if isinstance(source, nn.Module):
        model = copy.deepcopy(source)  # freezing must not touch the teacher's own run
    else:
        path = fence.check(fence.check_path_text(str(source), "teacher directory"))
        if not (path / "config.json").is_file():
            raise ExplorerError(f"No saved model in {shorten(str(source))!r} (config.json missing): give the --out "
                                "directory of a finished `pretrain mlm` run.")
        from transformers import BertForMaskedLM

        try:
            with arch.BUILD_LOCK:
                model = BertForMaskedLM.from_pretrained(str(path))
        except (OSError, ValueError, KeyError) as err:
            raise ExplorerError(f"The teacher in {shorten(str(source))!r} does not load as a BERT masked LM "
                                f"({shorten(str(err))}). Give a directory saved by `pretrain mlm`.") from err
    model = _checked(model).eval()
    model.requires_grad_(False)
    return model


def student_config(recipe: Recipe, size: str, teacher: nn.Module) -> Any:
    """The catalog's DistilBERT config with the teacher's width, heads, FFN and positions, half its layers."""
    t: Any = teacher.config
    cfg = models.config(recipe, size)
    cfg.dim, cfg.hidden_dim, cfg.n_heads = t.hidden_size, t.intermediate_size, t.num_attention_heads
    cfg.n_layers = max(1, t.num_hidden_layers // 2)
    cfg.vocab_size, cfg.max_position_embeddings = t.vocab_size, t.max_position_embeddings
    cfg.dropout, cfg.attention_dropout = t.hidden_dropout_prob, t.attention_probs_dropout_prob
    arch.validate(cfg)
    return cfg


def _copy(dst: nn.Module, src: nn.Module) -> None:
    dst.load_state_dict(src.state_dict())


def init_from_teacher(student: nn.Module, teacher: nn.Module, stride: int = 2) -> None:
    """Copy the teacher into the student: embeddings, layers ``0, stride, 2 x stride, ...``, MLM head.

    BERT adds token type 0's vector to every token; DistilBERT has no token types, so that vector
    is folded into the position table and the student's embedding output equals the teacher's.
    """
    s: Any = student
    t: Any = teacher
    with torch.no_grad():
        s.distilbert.embeddings.word_embeddings.weight.copy_(t.bert.embeddings.word_embeddings.weight)
        s.distilbert.embeddings.position_embeddings.weight.copy_(
            t.bert.embeddings.position_embeddings.weight + t.bert.embeddings.token_type_embeddings.weight[0])
        _copy(s.distilbert.embeddings.LayerNorm, t.bert.embeddings.LayerNorm)
        for block, layer in zip(s.distilbert.transformer.layer, t.bert.encoder.layer[::stride], strict=False):
            for dst, src in ((block.attention.q_lin, layer.attention.self.query),
                             (block.attention.k_lin, layer.attention.self.key),
                             (block.attention.v_lin, layer.attention.self.value),
                             (block.attention.out_lin, layer.attention.output.dense),
                             (block.sa_layer_norm, layer.attention.output.LayerNorm),
                             (block.ffn.lin1, layer.intermediate.dense), (block.ffn.lin2, layer.output.dense),
                             (block.output_layer_norm, layer.output.LayerNorm)):
                _copy(dst, src)
        head = t.cls.predictions
        _copy(s.vocab_transform, head.transform.dense)
        _copy(s.vocab_layer_norm, head.transform.LayerNorm)
        s.vocab_projector.bias.copy_(head.decoder.bias)  # its weight is the (tied, copied) token table


def build(recipe: Recipe, size: str, seed: int, device: str = "cpu",
          teacher: nn.Module | str | None = None) -> nn.Module:
    """The student (train mode) initialised from ``teacher``, which rides along frozen as ``lab_teacher``."""
    if teacher is None:
        raise ExplorerError("DistilBERT needs a teacher: a finished mlm run or its saved directory.")
    frozen = load_teacher(teacher)
    cfg = student_config(recipe, size, frozen)
    with arch.BUILD_LOCK:  # seeding and init must not interleave with another thread's build
        torch.manual_seed(seed)
        student = arch.instantiate(cfg, recipe.head, "cpu")
    init_from_teacher(student, frozen)
    held: Any = student
    held.lab_teacher = Teacher(frozen.to(device))  # a plain attribute: not a parameter, not saved
    return student.to(device).train()


def soft_kl(student_logits: torch.Tensor, teacher_logits: torch.Tensor,
            temperature: float = TEMPERATURE) -> torch.Tensor:
    """T^2 KL(softmax(teacher/T) || softmax(student/T)), mean over positions: (N, V), (N, V) -> scalar.

    Per position this is ``explorer.objectives.distill.distill_loss(...).kl_scaled``.
    """
    log_s = F.log_softmax(student_logits.float() / temperature, dim=-1)  # (N, V)
    log_t = F.log_softmax(teacher_logits.float() / temperature, dim=-1)  # (N, V)
    return F.kl_div(log_s, log_t, reduction="batchmean", log_target=True) * temperature**2


def _student_logits(student: Any, hidden: torch.Tensor) -> torch.Tensor:
    """(M, H) -> (M, V): DistilBertForMaskedLM's own head, on the rows given only."""
    return student.vocab_projector(student.vocab_layer_norm(student.activation(student.vocab_transform(hidden))))


def loss(model: nn.Module, batch: dict[str, torch.Tensor]) -> Loss:
    """The triple loss; ``parts``: ``ce`` (T^2 KL), ``mlm``, ``cos``, each before its weight.

    ``total = ALPHA_CE x ce + ALPHA_MLM x mlm + ALPHA_COS x cos``; accuracy = the student's on masked tokens.
    """
    student: Any = model
    teacher: Any = teacher_of(model)
    ids, mask, labels = batch["input_ids"], batch["attention_mask"], batch["labels"]  # (B, T) each
    real = mask.bool()  # (B, T)
    s_hidden = student.distilbert(input_ids=ids, attention_mask=mask).last_hidden_state[real]  # (M, H)
    with torch.no_grad():
        t_hidden = teacher.bert(input_ids=ids, attention_mask=mask).last_hidden_state[real]  # (M, H)
        t_logits = teacher.cls(t_hidden)  # (M, V)
    s_logits = _student_logits(student, s_hidden)  # (M, V)
    ce = soft_kl(s_logits, t_logits)
    target = labels[real]  # (M,)
    masked = target != IGNORE  # (M,): the strategy's selection
    if masked.any():
        mlm = F.cross_entropy(s_logits[masked].float(), target[masked])
        correct = int((s_logits[masked].argmax(-1) == target[masked]).sum())
    else:  # nothing masked in this batch: the soft and cosine terms still teach
        mlm, correct = s_logits.sum() * 0.0, 0
    cos = (1.0 - F.cosine_similarity(s_hidden.float(), t_hidden.float(), dim=-1)).mean()
    total = ALPHA_CE * ce + ALPHA_MLM * mlm + ALPHA_COS * cos
    parts = {"ce": float(ce.detach()), "mlm": float(mlm.detach()), "cos": float(cos.detach())}
    return Loss(total, parts, int(masked.sum()), correct)


def forward_flops(model: nn.Module, seq_len: int) -> float:
    """Per-token FLOPs of the student's forward plus a third of the teacher's.

    The trainer counts 3 x forward (forward + backward); the teacher only runs forward, so a
    third of its forward here makes the total student x 3 + teacher x 1.
    """
    student: Any = model
    teacher: Any = teacher_of(model)
    return float(cost.per_token(model, student.config, seq_len).total
                 + cost.per_token(teacher, teacher.config, seq_len).total / 3.0)

"""Token encoders for late interaction: a real ColBERT checkpoint, or the labelled MiniLM stand-in.

- A ColBERT checkpoint is BERT plus a bias-free linear layer to 128 dims (``linear.weight`` in the
  checkpoint), with ColBERT's own input format: ``[unused0]``/``[unused1]`` markers, queries padded
  with ``[MASK]`` to 32 tokens (query augmentation), punctuation dropped from documents.
- Otherwise the bundled all-MiniLM-L6-v2's token vectors stand in, labelled everywhere as such: it was
  trained for mean pooling, not for MaxSim, so its scores show the mechanism, not ColBERT's quality.

:func:`checkpoint_key` decides which catalog key serves ColBERT (weights on disk *and* a projection);
:func:`encoder_ref` resolves it, or the stand-in, once (a page keys its cached results on that ref, so a checkpoint
downloaded later is a new key, not the stand-in's answer again); :func:`load_encoder` loads the ref it is given.

>>> import torch
>>> from types import SimpleNamespace
>>> fake = SimpleNamespace(name="demo", model=SimpleNamespace(config=SimpleNamespace(hidden_size=8)))
>>> enc = TokenEncoder(fake, projection=None, label="stand-in: demo token vectors")
>>> enc.stand_in
True
"""

from __future__ import annotations

import string
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import torch
import torch.nn.functional as F

from explorer.core.errors import ExplorerError
from explorer.core.handles import Tokenizer
from explorer.core.limits import COLBERT_QUERY_CHARS
from explorer.core.notices import Notice
from explorer.runtime import cancel, loading
from explorer.runtime.offload import input_device
from explorer.runtime.resolve import ModelRef, resolve
from explorer.tasks.similarity import BI_ENCODER, tidy

if TYPE_CHECKING:  # typing only: no runtime import of the loader
    from explorer.runtime.loading import LoadedModel

__all__ = [
    "COLBERT_KEYS", "DOC_MARKER", "DOC_MAXLEN", "PROJECTION_NAMES", "QUERY_MARKER",
    "QUERY_MAXLEN", "STAND_IN_NOTE", "TokenEmbeddings", "TokenEncoder", "checkpoint_key", "checkpoint_ref",
    "encode_collection", "encode_tokens", "encoder_ref", "limits", "load_encoder", "make_encoder", "read_projection",
    "truncation_notices",
]

QUERY_MARKER, DOC_MARKER = "[unused0]", "[unused1]"  # ColBERT's [Q] and [D] tokens
# colbert-ir checkpoints call the projection ``linear``; this project's heads.ColBert ``colbert_projection``.
PROJECTION_NAMES = frozenset({"linear.weight", "colbert_projection.weight", "model.linear.weight"})
QUERY_MAXLEN, DOC_MAXLEN = 32, 180  # ColBERT defaults: queries are padded to 32 with [MASK]
COLBERT_KEYS = ("colbertv2", "colbert")  # catalog keys a ColBERT checkpoint may be filed under
STAND_IN_NOTE = ("Stand-in: no ColBERT checkpoint is present, so these are all-MiniLM-L6-v2 token vectors "
                 "(trained for mean pooling, not for MaxSim). The mechanism is real; the scores are not "
                 "ColBERT's. Get one with `python -m explorer download colbertv2`.")


@dataclass(frozen=True)
class TokenEncoder:
    """What turns text into token vectors: the loaded model, plus ColBERT's projection if any."""

    loaded: LoadedModel
    projection: torch.Tensor | None  # (128, hidden) ColBERT ``linear.weight``; None = stand-in
    label: str  # shown next to every score

    @property
    def stand_in(self) -> bool:
        return self.projection is None


@dataclass(frozen=True, eq=False)
class TokenEmbeddings:
    """One text as token vectors: tokens[i] goes with vectors[i] (unit length, (T, D))."""

    text: str
    kind: str  # "query" | "document"
    tokens: tuple[str, ...]
    vectors: torch.Tensor  # (T, D) float32

    def to_dict(self) -> dict[str, object]:
        return {"text": self.text, "kind": self.kind, "tokens": list(self.tokens),
                "dim": int(self.vectors.shape[1])}


def read_projection(path: str | None) -> torch.Tensor | None:
    """ColBERT's ``linear.weight`` (out=128, in=hidden) from a checkpoint's safetensors, or None.

    ``AutoModel`` drops this layer (it is not part of BertModel), so it is read from the file
    directly; pickled ``.bin`` files are never opened here (unsafe to unpickle).
    """
    if not path:
        return None
    from safetensors import safe_open

    for file in sorted(Path(path).glob("*.safetensors")):
        with safe_open(str(file), framework="pt") as f:
            for name in f.keys():  # noqa: SIM118 (safe_open has no __iter__)
                if name in PROJECTION_NAMES:
                    return f.get_tensor(name).float()
    return None


def checkpoint_key(models_dir: str | None = None) -> str | None:
    """The first ColBERT key whose weights are on disk AND carry the 128-d projection, else None."""
    ref = checkpoint_ref(models_dir)
    return ref.spec if ref is not None else None


def checkpoint_ref(models_dir: str | None = None) -> ModelRef | None:
    """The first ColBERT model whose weights are on disk AND carry the 128-d projection, resolved; else None.

    The projection is checked before loading: "colbert" may resolve to plain bert-base weights
    (its reference checkpoint), which have no projection and would be a useless 440 MB load.
    """
    for key in COLBERT_KEYS:
        ref = resolve(key, models_dir)  # a key this installation lacks is a ref that is not ready
        if ref.path is not None and read_projection(ref.path) is not None:
            return ref
    return None


def make_encoder(loaded: LoadedModel) -> TokenEncoder:
    """A ColBERT encoder if the checkpoint carries a projection, else the labelled stand-in."""
    proj = read_projection(getattr(loaded, "path", None))
    hidden = int(loaded.model.config.hidden_size)
    if proj is not None and proj.shape[1] != hidden:
        raise ExplorerError(f"ColBERT projection expects {proj.shape[1]}-d input but the model is {hidden}-d: "
                            "the checkpoint is inconsistent; download it again.")
    name = str(getattr(loaded, "name", None) or getattr(loaded, "key", "model"))
    label = f"ColBERT ({name})" if proj is not None else f"stand-in: {name} token vectors"
    return TokenEncoder(loaded, proj, label)


def encoder_ref(models_dir: str | None = None) -> ModelRef:
    """The model late interaction encodes with, resolved once: the ColBERT checkpoint when one is on disk
    (:func:`checkpoint_ref`), else the bi-encoder stand-in. Nothing is loaded."""
    return checkpoint_ref(models_dir) or resolve(BI_ENCODER, models_dir)


def load_encoder(ref: ModelRef, *, device: str | None = None, dtype: str | None = None) -> TokenEncoder:
    """The token encoder of ``ref`` (:func:`encoder_ref`) on ``device`` in ``dtype``
    (:mod:`explorer.runtime.placement`): ColBERT when its weights carry the projection, else the labelled
    stand-in."""
    return make_encoder(loading.load_model(ref, device=device, dtype=dtype))


def limits(enc: TokenEncoder) -> tuple[int, int]:
    """(query, document) length in tokens, special tokens included, never beyond the model's positions."""
    cfg, tok = enc.loaded.model.config, enc.loaded.tokenizer
    positions = min(int(getattr(cfg, "max_position_embeddings", 512) or 512), int(tok.model_max_length), 512)
    if enc.stand_in:
        return positions, positions
    return min(QUERY_MAXLEN, positions), min(DOC_MAXLEN, positions)


def _colbert_ids(tok: Tokenizer, text: str, kind: str, limit: int) -> tuple[list[int], list[int]]:
    """ColBERT input ids and attention mask: [CLS] marker text [SEP] (+ [MASK] padding for queries)."""
    marker = QUERY_MARKER if kind == "query" else DOC_MARKER
    body = tok(text, add_special_tokens=False, truncation=True, max_length=limit - 3)["input_ids"]
    ids = [tok.cls_token_id, tok.convert_tokens_to_ids(marker), *body, tok.sep_token_id]
    mask = [1] * len(ids)
    if kind == "query":  # query augmentation: [MASK] slots the model fills with extra query "terms";
        pad = limit - len(ids)  # ColBERTv2 does not let other tokens attend to them (mask 0)
        ids, mask = ids + [tok.mask_token_id] * pad, mask + [0] * pad
    return ids, mask


def _keep(tok: Tokenizer, ids: list[int], kind: str) -> list[int]:
    """Positions whose vectors are kept: documents drop punctuation (ColBERT's skiplist)."""
    if kind == "query":
        return list(range(len(ids)))
    skip = {tok.convert_tokens_to_ids(p) for p in string.punctuation}
    return [i for i, t in enumerate(ids) if t not in skip]


def encode_tokens(enc: TokenEncoder, text: str, kind: str = "document") -> TokenEmbeddings:
    """Token vectors of one text: (T, D) unit rows, D = 128 for ColBERT, hidden size for the stand-in."""
    clean = tidy(text)
    if not clean:
        raise ExplorerError(f"The {kind} is empty: type some text.")
    cancel.check()  # one forward per text: a server request out of budget (or whose page closed) stops between them
    tok, model = enc.loaded.tokenizer, enc.loaded.model
    q_limit, d_limit = limits(enc)
    limit = q_limit if kind == "query" else d_limit
    if enc.stand_in:
        ids = tok(clean, truncation=True, max_length=limit)["input_ids"]
        mask = [1] * len(ids)
    else:
        ids, mask = _colbert_ids(tok, clean, kind, limit)
    device = input_device(model)  # where the model is, whatever ``loaded`` claims
    with torch.inference_mode():
        batch = {"input_ids": torch.tensor([ids], device=device),
                 "attention_mask": torch.tensor([mask], device=device)}
        hidden = model(**batch).last_hidden_state[0].float().cpu()  # (T, hidden)
    # (T, 128) for ColBERT (stand_in: None)
    vecs = hidden if enc.projection is None else hidden @ enc.projection.float().T
    keep = _keep(tok, ids, kind)
    tokens = tuple(tok.convert_ids_to_tokens([ids[i] for i in keep]))
    return TokenEmbeddings(clean, kind, tokens, F.normalize(vecs[keep], dim=-1))


def encode_collection(enc: TokenEncoder, query: str, docs: tuple[str, ...]
                      ) -> tuple[TokenEmbeddings, list[TokenEmbeddings]]:
    """The query and every document as token vectors."""
    if len(" ".join(str(query).split())) > COLBERT_QUERY_CHARS:
        raise ExplorerError(f"The query is longer than {COLBERT_QUERY_CHARS:,} characters: shorten it.")
    return encode_tokens(enc, query, "query"), [encode_tokens(enc, d, "document") for d in docs]


def truncation_notices(enc: TokenEncoder, query: str, docs: tuple[str, ...]) -> tuple[Notice, ...]:
    """Say which texts were cut: ColBERT keeps 32 query and 180 document tokens, the stand-in 512
    (fewer if the model has fewer positions)."""
    tok = enc.loaded.tokenizer
    specials = 2 if enc.stand_in else 3  # [CLS] (marker) ... [SEP]
    q_limit, d_limit = (n - specials for n in limits(enc))
    counts = [len(x) for x in tok([query, *docs], add_special_tokens=False)["input_ids"]]
    notes = [f"The query has {counts[0]} tokens; only the first {q_limit} are used."] if counts[0] > q_limit else []
    notes += [f"Document {i} has {n} tokens; only the first {d_limit} are used."
              for i, n in enumerate(counts[1:], start=1) if n > d_limit]
    return tuple(Notice("truncated", n) for n in notes)

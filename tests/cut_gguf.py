"""The bundled Gemma 3 270M GGUF with its vocabulary cut, for tests that compare a served model with the same weights
in process.

Why: llama-cpp-python 0.3.36 sorts the whole vocabulary in Python for every position it echoes with log-probabilities
(`Llama._create_completion`), about half a second a token for Gemma's 262,144 pieces on two cores; scoring a
20-token text took 9 s. An oracle of the form "the engine's numbers equal the in-process model's on the same weights"
holds for any weights, so these tests use the same model with 8,610 pieces: the first 8,192 (special tokens, bytes,
the commonest merges) and the single characters below U+0250 plus the word-start mark "▁", every one with its own
embedding row. All 18 layers are kept as they are (4-bit), so its text and scores are Gemma's over that vocabulary
(the same echo takes 0.15 s). llama.cpp and transformers split the bundled task texts the same way with this
vocabulary (105 of 105 checked when it was made); the cut keeps what a merge needs (transformers rebuilds merges
from pairs of pieces that are both in the vocabulary, llama.cpp merges characters it need not list).

Built once per machine into the explorer's cache (about 30 s: reading the GGUF, writing the cut, converting it with
the same code as the bundled model), published as the bundled conversion is (``persist.publish_dir``) under a lock
file, so parallel workers and interrupted runs are safe.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

VOCAB_HEAD = 8192  # the first pieces kept as they are
SINGLES_BELOW = 0x250  # and every single character below this code point (Latin), with "▁" (a word's start)
RECIPE = {"recipe": 1, "vocab_head": VOCAB_HEAD, "singles_below": SINGLES_BELOW, "layers": "all"}
NAME = "gemma3-270m-cut-vocab"
GGUF = "model.gguf"
MARKER = "recipe.json"


def kept_ids(tokens: list[str]) -> list[int]:
    """The piece ids kept, in their new order (the first :data:`VOCAB_HEAD`, then the single characters)."""
    singles = [i for i, t in enumerate(tokens[VOCAB_HEAD:], VOCAB_HEAD)
               if len(t) == 1 and (ord(t) < SINGLES_BELOW or t == "\u2581")]
    return list(range(min(VOCAB_HEAD, len(tokens)))) + singles


def write_cut(source: Path, target: Path) -> int:
    """The GGUF at ``source`` written to ``target`` with only :func:`kept_ids` pieces; returns the vocabulary size."""
    import numpy as np
    from gguf import GGMLQuantizationType, GGUFReader, GGUFValueType, GGUFWriter

    reader = GGUFReader(source)
    arch = reader.fields["general.architecture"].contents()
    keep = kept_ids(reader.fields["tokenizer.ggml.tokens"].contents())
    per_token = {"tokenizer.ggml.tokens", "tokenizer.ggml.scores", "tokenizer.ggml.token_type"}
    writer = GGUFWriter(target, arch)
    for key, field in reader.fields.items():
        if key.startswith("GGUF.") or key == "general.architecture":
            continue  # written by the writer itself
        kind = field.types[0]
        if kind == GGUFValueType.ARRAY:
            values = field.contents()
            writer.add_key_value(key, [values[i] for i in keep] if key in per_token else values, kind, field.types[-1])
        else:
            writer.add_key_value(key, field.contents(), kind)
    for tensor in reader.tensors:
        data = tensor.data[keep] if tensor.name == "token_embd.weight" else tensor.data  # rows: whole blocks
        plain = tensor.tensor_type in (GGMLQuantizationType.F32, GGMLQuantizationType.F16)
        writer.add_tensor(tensor.name, np.ascontiguousarray(data), raw_dtype=None if plain else tensor.tensor_type)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return len(keep)


def _built(target: Path, recipe: dict[str, object]) -> bool:
    try:
        found = json.loads((target / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    found.pop("vocab", None)
    return bool(found == recipe)


def ensure(cache: Path, source: Path) -> Path:
    """The directory holding the cut GGUF (:data:`GGUF`) and its conversion, built once from ``source`` (one
    builder at a time per machine: a lock file; the others wait and find it built)."""
    import fcntl

    from explorer.core import persist
    from explorer.runtime import bundled

    target = cache / NAME
    recipe: dict[str, object] = {**RECIPE, "source_bytes": source.stat().st_size}
    if _built(target, recipe):
        return target
    cache.mkdir(parents=True, exist_ok=True)
    with (cache / f".{NAME}.lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _built(target, recipe):
            return target
        work = Path(tempfile.mkdtemp(prefix=f".{NAME}.tmp-", dir=cache))
        try:
            built = work / NAME
            built.mkdir()
            vocab = write_cut(source, built / GGUF)
            bundled.convert_gguf(built / GGUF, built)
            (built / MARKER).write_text(json.dumps({**recipe, "vocab": vocab}), encoding="utf-8")  # last: the mark
            persist.publish_dir(built, target)  # an older recipe's is moved aside
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return target

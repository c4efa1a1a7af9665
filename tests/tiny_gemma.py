"""A tiny random Gemma-3 decoder with a real tokenizer, saved locally (test fixture).

Three layers (two sliding-window layers of 4 tokens, one global), 32 wide, GPT-2's shipped
byte-level BPE as its vocabulary: the same code paths as Gemma 3 270M in well under a second.

    path = save_tiny_gemma(tmp_path / "gemma")        # then explorer.runtime.loading.load_model(str(path), "causal-lm")
"""

from __future__ import annotations

from pathlib import Path

import torch

from explorer.runtime.resolve import resolve

SEED = 0


def tiny_gemma_config(vocab_size: int, eos: int):
    from transformers import Gemma3TextConfig

    return Gemma3TextConfig(
        vocab_size=vocab_size, hidden_size=32, intermediate_size=64, num_hidden_layers=3, num_attention_heads=2,
        num_key_value_heads=1, head_dim=16, sliding_window=4, max_position_embeddings=256,
        layer_types=["sliding_attention", "sliding_attention", "full_attention"],
        bos_token_id=eos, eos_token_id=eos, pad_token_id=eos, tie_word_embeddings=True)


def save_tiny_gemma(directory: Path, eos_token_id: int | None = None) -> Path:
    """Save a tiny Gemma3ForCausalLM + GPT-2 tokenizer into ``directory``; returns it.

    ``eos_token_id`` overrides the end-of-sequence token in the generation config (tests that
    need generation to stop early pick a token the model likes).
    """
    from transformers import Gemma3ForCausalLM

    from explorer.architecture.build import BUILD_LOCK
    from explorer.tokenization import load_tokenizer

    tok = load_tokenizer("gpt2")
    config = tiny_gemma_config(len(tok), tok.eos_token_id)
    with BUILD_LOCK, torch.random.fork_rng(devices=[]):
        torch.manual_seed(SEED)
        model = Gemma3ForCausalLM(config).eval()
    if eos_token_id is not None:
        model.generation_config.eos_token_id = eos_token_id
    directory.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(directory)
    tok.save_pretrained(directory)
    return directory


def load_tiny_gemma(directory: Path, eos_token_id: int | None = None, device: str | None = None):
    """Save (if needed) and load through the app's loader: a ``LoadedModel`` on ``device`` (None: the
    app's choice, CUDA in half precision on a GPU machine; "cpu" for tests of float32 numbers)."""
    from explorer.runtime import loading

    if not (directory / "config.json").exists():
        save_tiny_gemma(directory, eos_token_id)
    return loading.load_model(resolve(str(directory)), "causal-lm", device=device)

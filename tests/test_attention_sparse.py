"""explorer.tasks.attention.sparse: Longformer's windowed rows and BigBird's padded blocks onto the square."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.core.errors import ExplorerError
from explorer.tasks.attention import sparse


def test_longformer_to_square_rejects_an_inconsistent_width() -> None:
    with pytest.raises(ExplorerError, match="width"):
        sparse.longformer_to_square(np.zeros((2, 10, 11)), None, (0,))  # 11 - 1 global - 1 self is odd


def test_longformer_to_square_places_band_and_global_weights() -> None:
    # 1 head, 5 tokens, window 1 each side (width 1 global + 3), token 0 global
    local = np.zeros((1, 5, 4), dtype=np.float32)
    local[0, :, 0] = 0.2  # everyone -> the global token
    local[0, 1:, 1] = 0.3  # key i-1
    local[0, 1:, 2] = 0.5  # key i (itself)
    global_rows = np.full((1, 6, 1), 0.2, dtype=np.float32)  # (H, padded L, n_global): token 0 -> every key
    square = sparse.longformer_to_square(local, global_rows, (0,))[0]
    assert square.shape == (5, 5)
    np.testing.assert_allclose(square[0], 0.2)  # the global token's own row comes from global_attn
    np.testing.assert_allclose(square[3], [0.2, 0.0, 0.3, 0.5, 0.0])
    assert all((square[i, i + 1:] == 0).all() for i in range(1, 5))  # slot i+1 was empty: no later key


class _Out:
    def __init__(self, *layers):
        self.attentions = layers


def test_stack_layers_crops_padding_and_refuses_empty_output() -> None:
    import torch

    class Model:
        class config:  # noqa: N801  (stands in for a PretrainedConfig)
            _attn_implementation = "sdpa"

    padded = torch.rand(1, 2, 8, 8)  # BigBird pads to a multiple of block_size inside
    stack = sparse.stack_layers((padded, padded), Model(), "attention", (6, 6))
    assert stack.shape == (2, 2, 6, 6) and stack.dtype == np.float32
    np.testing.assert_allclose(stack[1], padded[0, :, :6, :6].numpy())
    with pytest.raises(ExplorerError, match="eager"):
        sparse.stack_layers((), Model(), "attention", (6, 6))
    with pytest.raises(ExplorerError, match="do not fit"):
        sparse.stack_layers((padded,), Model(), "attention", (9, 9))


@pytest.mark.parametrize(("length", "expected"), [(16 * 9, "bigbird-full"), (16 * 9 + 1, "bigbird-block-sparse")])
def test_bigbird_runner_decides_before_the_forward_and_shares_weights(length: int, expected: str) -> None:
    import torch
    from transformers import BigBirdConfig, BigBirdModel

    torch.manual_seed(0)
    cfg = BigBirdConfig(vocab_size=100, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=37, block_size=16, num_random_blocks=2, max_position_embeddings=512)
    model = BigBirdModel(cfg).eval()
    runner, fmt = sparse.bigbird_runner(model, length)  # (5 + 2 * 2) * 16 = 144: the fallback limit
    assert fmt == expected and runner is not model and model.attention_type == "block_sparse"
    assert runner.embeddings.word_embeddings.weight.data_ptr() == model.embeddings.word_embeddings.weight.data_ptr()

"""ELECTRA's replaced-token detection per device and dtype: the probabilities equal the discriminator's own
forward on the same weights and dtype; the generator's draws stay seeded on every device."""

from __future__ import annotations

import pytest
import torch

from explorer.runtime.offload import input_device
from explorer.tasks import discriminator as dsc
from tests.gpu.conftest import PLACES, TOLERANCE
from tests.gpu.peaked import place

TEXT = "The chef cooked the meal and everyone enjoyed it very much."


@pytest.mark.parametrize("where", PLACES)
def test_probabilities_equal_the_discriminators_forward(peaked_dir, where) -> None:
    gen = place(peaked_dir("electra-generator"), *where, "electra-generator")
    disc = place(peaked_dir("electra-discriminator"), *where, "electra-discriminator")
    r = dsc.electra_replaced(gen, disc, TEXT, mask_fraction=0.3, seed=1)
    tok = disc.tokenizer
    ids = torch.tensor([[tok.cls_token_id, *tok.convert_tokens_to_ids(list(r.tokens)), tok.sep_token_id]],
                       device=input_device(disc.model))
    with torch.inference_mode():
        direct = torch.sigmoid(disc.model(input_ids=ids).logits[0, 1:-1].float()).tolist()
    assert list(r.probability) == pytest.approx(direct, abs=TOLERANCE[where[1]])
    again = dsc.electra_replaced(gen, disc, TEXT, mask_fraction=0.3, seed=1)
    assert again.tokens == r.tokens  # the same seed, the same corruption

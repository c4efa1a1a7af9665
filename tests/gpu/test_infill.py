"""Span infilling per device and dtype (T5 sentinels, BART <mask>, a decoder): the library's generation equals
``model.generate`` with the same arguments on the same weights and dtype."""

from __future__ import annotations

import pytest
import torch

from explorer.runtime.offload import input_device
from explorer.tasks import infill
from tests.gpu.conftest import PLACES
from tests.gpu.peaked import place

PROMPT = "The cat ___ on the mat ___ today."


def _enc(lm, text: str) -> dict[str, torch.Tensor]:
    enc = lm.tokenizer(text, return_tensors="pt")
    return {k: enc[k].to(input_device(lm.model)) for k in ("input_ids", "attention_mask")}


@pytest.mark.parametrize("where", PLACES)
def test_t5_equals_generate_with_the_forced_first_sentinel(peaked_dir, where) -> None:
    lm = place(peaked_dir("t5"), *where, "t5")
    res = infill.infill(lm, PROMPT, max_new_tokens=4)
    tok = lm.tokenizer
    start = [[lm.model.config.decoder_start_token_id, tok.convert_tokens_to_ids("<extra_id_0>")]]
    with torch.inference_mode():
        out = lm.model.generate(**_enc(lm, res.model_input), decoder_input_ids=torch.tensor(start, device=input_device(
            lm.model)), max_new_tokens=4 * 2 + 3, num_beams=1, do_sample=False)
    assert res.raw_output == tok.decode(out[0], skip_special_tokens=False) and res.device == where[0]


@pytest.mark.parametrize("where", PLACES)
def test_bart_equals_generate_with_four_beams(peaked_dir, where) -> None:
    lm = place(peaked_dir("bart"), *where, "bart")
    res = infill.infill(lm, PROMPT, max_new_tokens=4)
    enc = _enc(lm, res.model_input)
    with torch.inference_mode():
        out = lm.model.generate(**enc, max_new_tokens=enc["input_ids"].shape[1] + 4 * 2 + 3, num_beams=4,
                                early_stopping=True, do_sample=False)
    assert res.raw_output == lm.tokenizer.decode(out[0], skip_special_tokens=False)


@pytest.mark.parametrize("where", PLACES)
def test_a_decoder_fills_every_blank_on_the_device(peaked_dir, where) -> None:
    res = infill.infill(place(peaked_dir("gemma"), *where, "gemma"), PROMPT, max_new_tokens=2)
    assert res.family == "causal" and len(res.spans) == 2 and "___" not in res.filled and res.device == where[0]

"""The decoder's fill-mask column has the masked LMs' shape and shows both rankings."""

from __future__ import annotations

import json

import pytest

from explorer.runtime.resolve import resolve
from explorer.tasks.causal.column import fill_causal_lm
from tests.tiny_gemma import load_tiny_gemma, save_tiny_gemma


def test_column_has_the_fillmask_shape(tmp_path):
    path = save_tiny_gemma(tmp_path / "gemma")
    load_tiny_gemma(path)
    col = fill_causal_lm(resolve(str(path)), "The cat sat on the [MASK].", 3,
                         lambda spec, task, **kw: load_tiny_gemma(path))
    out = json.loads(json.dumps(col.to_dict()))
    assert len(out["masks"]) == 1 and len(out["masks"][0]["predictions"]) == 3
    assert out["notice"].startswith("Causal model: it reads left to right")
    scores = [p["score"] for p in out["masks"][0]["predictions"]]
    assert scores == sorted(scores, reverse=True) and "[MASK]" not in out["filled"]


def test_fill_mask_routes_catalog_decoders_here(tmp_path):
    from explorer.tasks import fillmask

    path = save_tiny_gemma(tmp_path / "gemma")
    tasks = [resolve(k, None).task("masked-lm") for k in ("gemma3-270m", "bert-base")]
    assert tasks == ["causal-lm", "masked-lm"]
    out = fillmask.fill_mask(["gemma3-270m"], "Paris is the [MASK] of France.", 4,
                             loader=lambda spec, task, **kw: load_tiny_gemma(path))
    assert not out.errors and out.models[0].notices[0].text.startswith("Causal model")


def test_decoder_answers_of_several_tokens_reach_the_column(tmp_path):
    from explorer.tasks import fillmask

    path = save_tiny_gemma(tmp_path / "gemma")
    out = fillmask.fill_mask(["gemma3-270m"], "It costs [MASK] dollars.", 50, answer_tokens=3,
                             loader=lambda spec, task, **kw: load_tiny_gemma(path))
    preds = out.models[0].masks[0].predictions
    assert not out.errors and len(preds) > 5  # a beam of 3 x 5 over 3 steps: more answers than 5 first tokens
    tok = load_tiny_gemma(path).tokenizer
    assert any(len(tok(p.token, add_special_tokens=False)["input_ids"]) > 1 for p in preds)  # past one token
    assert sum(p.score for p in preds) <= 1 + 1e-6 and all(0 <= p.score <= 1 for p in preds)
    bad = fillmask.fill_mask(["gemma3-270m"], "It costs [MASK] dollars.", 5, answer_tokens=9,
                             loader=lambda spec, task, **kw: load_tiny_gemma(path))
    assert not bad.models and "answer tokens" in bad.errors[0][1]  # refused by the decoder, with the range


@pytest.mark.slow
def test_real_gemma_finds_numbers_and_names_of_several_tokens(bundled_decoder):
    from explorer.tasks import fillmask

    year = fillmask.fill_mask(["gemma3-270m"], "Albert Einstein was born in the year [MASK].", 5, answer_tokens=5)
    assert year.models[0].masks[0].predictions[0].word == "1879"  # " ", "1", "8", "7", "9": five tokens
    name = fillmask.fill_mask(["gemma3-270m"], "The Eiffel Tower was designed by the engineer [MASK].", 5,
                              answer_tokens=4)
    assert name.models[0].masks[0].predictions[0].word == "Gustave Eiffel"

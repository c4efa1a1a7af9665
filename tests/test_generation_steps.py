"""Step records and the end-of-sequence ids as generate reads them."""

from __future__ import annotations

import torch

from explorer.tasks.generation.steps import Step, eos_ids, make_step, step_table
from explorer.tokenization import load_tokenizer


class _Cfg:
    eos_token_id = 5


class _Gen:
    eos_token_id: object = None


class _Model:
    config = _Cfg()
    generation_config = _Gen()


def test_eos_ids_prefer_the_generation_config_and_accept_lists() -> None:
    model = _Model()
    assert eos_ids(model) == (5,)
    model.generation_config.eos_token_id = [1, 106]
    assert eos_ids(model) == (1, 106)


def test_make_step_reads_probability_and_top_alternatives() -> None:
    tok = load_tokenizer("gpt2")
    probs = torch.zeros(50257)
    probs[[10, 20, 30, 40, 50, 60]] = torch.tensor([0.4, 0.3, 0.1, 0.1, 0.05, 0.05])
    step = make_step(tok, probs, 20)
    assert step.token_id == 20 and abs(step.probability - 0.3) < 1e-7
    assert [a.token_id for a in step.top][:2] == [10, 20] and len(step.top) == 5
    assert step.to_dict()["top"][0] == {"token": tok.decode([10]), "probability": round(float(probs[10]), 8)}


def test_step_table_rows() -> None:
    rows = step_table([Step("a", 1, 0.5, ()), Step("<b>", 2, 0.25, ())])
    assert [r["position"] for r in rows] == [1, 2] and rows[1]["token"] == "<b>"

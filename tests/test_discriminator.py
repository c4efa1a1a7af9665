"""explorer.tasks.discriminator: ELECTRA's generator corrupts, the discriminator scores every token."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from explorer.core.errors import ExplorerError
from explorer.runtime.loading import load_model
from explorer.runtime.offload import input_device
from explorer.runtime.resolve import resolve
from explorer.tasks import discriminator as dsc
from tests.tiny_models import save_tiny


@pytest.fixture(scope="module")
def dirs(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("disc")
    return {k: save_tiny(k, root / k) for k in ("electra-generator", "electra-discriminator", "roberta")}


def _lm(dirs, kind: str):
    task = "electra-discriminator" if kind == "electra-discriminator" else "masked-lm"
    return load_model(resolve(str(dirs[kind])), task)


def test_electra_generator_and_discriminator(dirs) -> None:
    gen, disc = _lm(dirs, "electra-generator"), _lm(dirs, "electra-discriminator")
    text = "The chef cooked the meal and everyone enjoyed it very much."
    r = dsc.electra_replaced(gen, disc, text, mask_fraction=0.3, seed=1)
    assert sum(r.masked) == round(0.3 * len(r.original)) and r.to_dict()["probability"]
    assert r.replaced == tuple(a != b for a, b in zip(r.original, r.tokens, strict=True))
    assert not any(r.replaced[i] for i, m in enumerate(r.masked) if not m)  # only masked positions change
    tok = disc.tokenizer
    ids = torch.tensor([[tok.cls_token_id, *tok.convert_tokens_to_ids(list(r.tokens)), tok.sep_token_id]],
                       device=input_device(disc.model))
    with torch.inference_mode():  # the very forward the library runs, on the model's device and in its dtype
        logits = disc.model(input_ids=ids, attention_mask=torch.ones_like(ids)).logits
    direct = torch.sigmoid(logits[0, 1:-1].float()).tolist()
    assert list(r.probability) == pytest.approx(direct, abs=1e-6)
    plain = dsc.electra_replaced(gen, disc, text, mask_fraction=0)
    assert not any(plain.replaced) and not any(plain.masked)
    blank = dsc.electra_replaced(gen, disc, "The chef [MASK] the meal.")
    assert blank.masked == (False, False, True, False, False, False) and blank.replaced[2]

def test_electra_pair_must_share_vocab(dirs) -> None:
    with pytest.raises(ExplorerError, match="different vocabularies"):
        dsc.electra_replaced(_lm(dirs, "roberta"), _lm(dirs, "electra-discriminator"), "A sentence.")


def test_detect_loads_the_pair_and_long_text_is_cut_with_a_notice(dirs) -> None:
    text = "<script>x</script> " + "word " * 400
    r = dsc.detect(resolve(str(dirs["electra-generator"])), resolve(str(dirs["electra-discriminator"])), text, 0.1)
    assert len(r.tokens) == 126 and [n.kind for n in r.notices] == ["truncated"]
    assert "Only the first 126" in r.to_dict()["notice"] and not r.untrained


def test_one_untrained_model_makes_the_pair_untrained(dirs) -> None:
    """Random weights for one and real ones for the other would not share a vocabulary: both go untrained."""
    asked = []

    def loader(ref, task, **kw):
        asked.append((ref.spec, ref.random_weights, ref.ready))
        return _lm(dirs, "electra-generator" if task == "masked-lm" else "electra-discriminator")

    real = resolve(str(dirs["electra-discriminator"]))
    dsc.detect(resolve("electra-small-generator", random_weights=True), real, "A sentence.", loader=loader)
    assert asked == [("electra-small-generator", True, False), (str(dirs["electra-discriminator"]), True, False)]


def test_bad_fraction_and_empty_text(dirs) -> None:
    gen, disc = _lm(dirs, "electra-generator"), _lm(dirs, "electra-discriminator")
    with pytest.raises(ExplorerError, match="between 0 and 0.5"):
        dsc.electra_replaced(gen, disc, "A sentence.", 0.9)
    with pytest.raises(ExplorerError, match="empty"):
        dsc.electra_replaced(gen, disc, "   ")


def test_catalog_pairs_name_a_generator_and_a_discriminator() -> None:
    pairs = dsc.electra_pairs()
    assert pairs and all("generator" in g and "discriminator" in d for g, d in pairs.values())

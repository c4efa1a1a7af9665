"""Pretraining budgets: every record sourced, nothing filled in, derived numbers marked as derived."""

from __future__ import annotations

import json
import math

import pytest

from explorer.architecture import budgets, catalog
from explorer.core.errors import ExplorerError

RAW = {r["key"]: r for r in json.loads(budgets.BUDGETS_FILE.read_text(encoding="utf-8"))}


def test_at_least_twenty_variants_each_with_a_source_and_where_it_was_read():
    found = budgets.budgets()
    assert len(found) >= 20
    for b in found:
        assert b.key in catalog.keys()
        assert b.source and b.checked, b.key
        assert any(getattr(b, f) is not None for f in budgets.FIELDS), b.key  # a record says something


def test_numbers_are_the_sources_not_invented():
    bert = budgets.budget("bert-base")
    assert (bert.steps, bert.batch, bert.seq_len, bert.days, bert.corpus_gb) == (1_000_000, 256, 512, 4, 13)
    assert "16 TPU chips" in bert.hardware
    gpt3 = budgets.budget("gpt3")
    assert gpt3.train_flops == 3.14e23 and gpt3.train_flops_source.startswith("reported")
    assert budgets.budget("distilbert").days == 3.75  # "approximately 90 hours"
    assert budgets.budget("gpt-j").tokens == 4.02e11 and budgets.budget("gpt-j").steps == 383_500


def test_tokens_from_steps_batch_and_length_are_marked():
    longformer = budgets.budget("longformer")
    assert longformer.tokens == 65_000 * 64 * 4096 and longformer.tokens_source == "steps x batch x seq_len"
    assert RAW["longformer"]["tokens"] is None  # computed here, not stored as if the paper said it


def test_six_n_d_estimate_is_marked_estimated():
    bert = budgets.budget("bert-base")
    assert bert.train_flops == pytest.approx(6 * 110e6 * 1.28e11)
    assert bert.train_flops_source.startswith("estimated: 6 x N x D")


def test_blank_fields_stay_blank():
    bart = budgets.budget("bart-large")  # Sec. 5.1 gives batch and steps, no sequence length
    assert bart.seq_len is None and bart.tokens is None and bart.train_flops is None
    assert bart.missing == ("seq_len",)
    assert budgets.compare_columns("bart-large") == {"train_flops": None, "train_flops_source": "not recorded"}


def test_a_variant_without_a_record_says_so_and_an_unknown_key_is_an_error():
    t5 = budgets.budget("mobilebert")  # no record (T5 has one)
    assert t5.train_flops is None and t5.source == budgets.NOT_RECORDED and "no source" in t5.note
    with pytest.raises(ExplorerError, match="Unknown variant"):
        budgets.budget("no-such-model")


def test_to_dict_has_the_documented_fields():
    d = budgets.budget("gpt3").to_dict()
    assert {"key", "corpus", "corpus_gb", "tokens", "steps", "batch", "seq_len", "batch_tokens", "hardware", "days",
            "train_flops", "train_flops_source", "missing"} <= set(d)
    assert budgets.budget("colbert").to_dict()["missing"] == ["seq_len", "published_params"]  # a list, not a tuple
    json.dumps(d)


def test_electra_budgets_are_table_1s_reported_flops():
    # Clark et al. 2020, Table 1: 1.4e18 (4d on 1 V100 GPU) and 6.4e19 (4d on 16 TPUv3s); Sec. 3.3: 1M x 128 x 128.
    for key in ("electra-small", "electra-small-discriminator"):
        b = budgets.budget(key)
        assert (b.train_flops, b.days, b.steps, b.batch, b.seq_len) == (1.4e18, 4, 1_000_000, 128, 128)
        assert b.train_flops_source.startswith("reported: Clark et al. 2020 (ELECTRA), Table 1")
        assert b.tokens_source == "steps x batch x seq_len"  # derived here, never stored as if reported
    for key in ("electra-base", "electra-base-discriminator"):
        b = budgets.budget(key)
        assert (b.train_flops, b.hardware) == (6.4e19, "16 TPUv3s")



def _derivable(record: dict) -> bool:
    return all(record.get(f) is not None for f in ("steps", "batch", "seq_len")) or all(
        record.get(f) is not None for f in ("steps", "batch_tokens"))


@pytest.mark.parametrize("key", list(RAW))
def test_every_record_with_steps_and_a_batch_size_has_tokens_and_flops_marked_derived(key: str) -> None:
    """A budget without tokens lacks them because its record lacks a field, never because the derivation
    skips it. Every record that can be multiplied out is, every derived number says so, and
    every record that cannot names the fields it lacks, each of them blank in the file."""
    raw, b = RAW[key], budgets.budget(key)
    params = catalog.get_variant(key).published_params
    if raw["tokens"] is not None:
        assert b.tokens == raw["tokens"] and b.tokens_source == "reported"
    elif _derivable(raw):
        assert b.tokens is not None and b.tokens_source in ("steps x batch_tokens", "steps x batch x seq_len")
        factors = b.tokens_source.split(" x ")
        assert b.tokens == pytest.approx(math.prod(raw[f] for f in factors))
    else:
        fields = [f for f in b.missing if f != "published_params"]
        assert b.tokens is None and fields and all(f in budgets.FIELDS and raw.get(f) is None for f in fields)
    if raw["train_flops"] is not None:
        assert b.train_flops == raw["train_flops"] and b.train_flops_source.startswith("reported: ")
    elif b.tokens is not None and params is not None:
        assert b.train_flops == pytest.approx(6 * params * b.tokens)
        assert b.train_flops_source.startswith("estimated: 6 x N x D")
    else:
        assert b.train_flops is None
    assert (b.tokens is not None and b.train_flops is not None) == (not b.missing)
    assert ("published_params" in b.missing) == (b.train_flops is None and params is None)


def test_albert_sequence_length_gives_tokens_and_a_lower_bound_estimate():
    """Lan et al. 2020, Sec. 4.1: batch 4096, 125,000 steps, 'We always limit the maximum input length to 512'.
    The layers share one set of weights, so 6·N·D with the published N (12M for base) undercounts by the
    number of layers each token passes through."""
    for key, layers in (("albert-base", 12), ("albert-large", 24), ("albert-xxlarge", 12)):
        b = budgets.budget(key)
        assert (b.steps, b.batch, b.seq_len) == (125_000, 4096, 512) and RAW[key]["tokens"] is None
        assert b.tokens == 125_000 * 4096 * 512 and b.tokens_source == "steps x batch x seq_len"
        assert b.train_flops_source.startswith("estimated: 6 x N x D")
        assert "a lower bound" in b.train_flops_source and f"{layers} times" in b.train_flops_source
    assert "a lower bound" not in budgets.budget("bert-base").train_flops_source  # no sharing, no caveat


def test_electra_base_steps_from_table_6_agree_with_table_1s_flops():
    """ELECTRA Table 6 (as configure_pretraining.py points to it): ELECTRA-Base 766K steps of 256 x 512.
    Table 1's 6.4e19 FLOPs, read independently, is what 6·N·D gives for those tokens with N = 110M (the
    generator adds a little, so the reported count is not exact): the two readings agree within 5%."""
    for key in ("electra-base", "electra-base-discriminator"):
        b = budgets.budget(key)
        assert (b.steps, b.batch, b.seq_len) == (766_000, 256, 512)
        assert b.tokens == 766_000 * 256 * 512 and b.tokens_source == "steps x batch x seq_len"
        assert b.train_flops == 6.4e19 and b.train_flops_source.startswith("reported")
    assert 6 * 110e6 * budgets.budget("electra-base-discriminator").tokens == pytest.approx(6.4e19, rel=0.05)


def test_gpt3_batch_is_table_2_1s_tokens_for_the_175b_model_the_catalog_builds():
    gpt3, variant = budgets.budget("gpt3"), catalog.get_variant("gpt3")
    assert variant.published_params == 175_000_000_000  # the catalog's gpt3 key is Table 2.1's GPT-3 175B row
    assert catalog.variant_config("gpt3")["num_layers"] == 96
    assert (gpt3.batch_tokens, gpt3.seq_len, gpt3.batch, gpt3.tokens) == (3.2e6, 2048, None, 3e11)
    assert gpt3.tokens_source == "reported" and "Table 2.1" in gpt3.source


def test_bert_tokens_are_derived_from_its_tokens_per_batch():
    bert = budgets.budget("bert-base")  # App. A.2: 128,000 tokens/batch for 1,000,000 steps; no total given
    assert RAW["bert-base"]["tokens"] is None and bert.batch_tokens == 128_000
    assert bert.tokens == 1_000_000 * 128_000 and bert.tokens_source == "steps x batch_tokens"


def test_t5_and_ctrl_rows_say_where_they_were_read():
    """The T5 and CTRL rows are read in sources, and each checked line names its source."""
    for key in ("t5-small", "t5-base", "t5-11b"):
        t5 = budgets.budget(key)  # Sec. 3.7: 1M steps x 2^11 sequences x 512 tokens, 'about 1 trillion'
        assert (t5.steps, t5.batch, t5.seq_len, t5.corpus_gb) == (1_000_000, 2 ** 11, 512, 750)
        assert t5.tokens == pytest.approx(1e12, rel=0.05) and t5.tokens_source == "steps x batch x seq_len"
        assert "text-to-text-transfer-transformer README" in t5.checked and "issue 27" not in t5.checked
    ctrl = budgets.budget("ctrl")  # Sec. 3.2: batch 1024 for 800k iterations, about 2 weeks, lengths 256 and 512
    assert (ctrl.batch, ctrl.steps, ctrl.days, ctrl.corpus_gb) == (1024, 800_000, 14, 140)
    assert "Cloud TPU v3 Pod" in ctrl.hardware and "issue 27" not in ctrl.checked
    assert ctrl.seq_len is None and ctrl.tokens is None and ctrl.missing == ("seq_len",)  # 256 or 512: not said


def test_records_that_cannot_be_multiplied_out_name_what_they_lack():
    assert budgets.budget("colbert").missing == ("seq_len", "published_params")  # triples, no passage length
    assert budgets.budget("gpt2").missing == ("steps",)
    assert budgets.budget("distilbert").missing == ("steps", "seq_len")
    assert budgets.budget("mobilebert").missing == ("record",)  # no record at all

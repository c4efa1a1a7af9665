"""Pretraining budgets: every record sourced, nothing filled in, derived numbers marked as derived."""

from __future__ import annotations

import json

import pytest

from explorer.architecture import catalog
from explorer.core.errors import ExplorerError
from explorer.papers import budgets

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
    albert = budgets.budget("albert-base")
    assert albert.seq_len is None and albert.tokens is None and albert.train_flops is None
    assert budgets.compare_columns("albert-base") == {"train_flops": None, "train_flops_source": "not recorded"}


def test_a_variant_without_a_record_says_so_and_an_unknown_key_is_an_error():
    t5 = budgets.budget("mobilebert")  # no record (T5 has one since issue 27)
    assert t5.train_flops is None and t5.source == budgets.NOT_RECORDED and "no source" in t5.note
    with pytest.raises(ExplorerError, match="Unknown variant"):
        budgets.budget("no-such-model")


def test_to_dict_has_the_documented_fields():
    d = budgets.budget("gpt3").to_dict()
    assert {"key", "corpus", "corpus_gb", "tokens", "steps", "batch", "seq_len", "hardware", "days", "train_flops",
            "train_flops_source"} <= set(d)
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
        assert (b.train_flops, b.hardware, b.steps) == (6.4e19, "16 TPUv3s", None)

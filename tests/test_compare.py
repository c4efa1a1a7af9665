"""explorer.architecture.compare: several variants side by side, rows equal to each one's own analysis."""

from __future__ import annotations

import pytest

from explorer.architecture import analysis, compare
from explorer.core.errors import ExplorerError


def test_rows_match_the_single_analyses_and_duplicates_collapse() -> None:
    c = compare.compare(["bert-base", "albert-base", "bert-base"], seq_len=128, lengths=(512, 1024))
    assert [r["key"] for r in c.rows] == ["bert-base", "albert-base"]
    bert = analysis.analyse_variant("bert-base", seq_len=128)
    assert c.rows[0]["params"] == bert.base_params or c.rows[0]["params"] == bert.params
    assert set(c.components) == {"BERT-base", "ALBERT-base"}
    assert all(len(v) == 2 for v in c.flops.values())
    assert c.attention_memory["BERT-base"][1] == 4 * c.attention_memory["BERT-base"][0]
    d = c.to_dict()
    assert d["lengths"] == [512, 1024] and len(d["rows"]) == 2


def test_albert_shares_layers_same_compute_fewer_parameters() -> None:
    c = compare.compare(["bert-base", "albert-base"], seq_len=128, lengths=(512,))
    bert, albert = c.rows
    assert albert["params"] < bert["params"] / 5
    ratio = c.flops["ALBERT-base"][0] / c.flops["BERT-base"][0]
    assert 0.75 < ratio < 1.0  # every layer still runs; only the factorised 128-d embedding path is cheaper


def test_bad_input() -> None:
    with pytest.raises(ExplorerError, match="at least one"):
        compare.compare([])
    with pytest.raises(ExplorerError):
        compare.compare(["no-such-model"])


def test_rows_carry_the_pretraining_budget_one_type_per_column():
    from explorer.architecture import budgets, compare

    result = compare.compare(["bert-base", "mobilebert"], seq_len=128)  # MobileBERT: no budget recorded
    bert, mobile = result.rows
    assert bert["train_flops"] == budgets.train_flops("bert-base") and isinstance(bert["train_flops"], float)
    assert mobile["train_flops"] is None and mobile["train_flops_source"] == budgets.NOT_RECORDED
    assert bert["train_flops_source"].startswith("estimated")


def _arrow_table(rows):
    """What st.dataframe does with the rows: pandas, then Arrow (ArrowInvalid on a column of mixed types)."""
    import pandas as pd
    import pyarrow as pa

    return (pa.Table.from_pandas(pd.DataFrame(list(rows))),
            pa.Table.from_pandas(pd.DataFrame(list(rows)).convert_dtypes()))


def test_every_catalog_variant_summary_has_one_type_per_column() -> None:
    """One type per column: Layers as 12 for BERT but "6+6" for T5 make each /compare load log ArrowInvalid."""
    from explorer.architecture import build, catalog

    summaries = [compare.config_summary(build.make_config(key)) for key in catalog.keys()]
    _arrow_table(summaries)
    for s in summaries:
        assert isinstance(s["layers"], int) and (s["decoder_layers"] is None or isinstance(s["decoder_layers"], int))


def test_a_table_of_every_family_converts_to_arrow() -> None:
    c = compare.compare(["bert-base", "t5-small", "bert2bert", "gpt2", "bart-base"], seq_len=128, lengths=(512,))
    table, _ = _arrow_table(c.rows)
    by_key = {r["key"]: r for r in c.rows}
    assert by_key["t5-small"]["layers"] == by_key["t5-small"]["decoder_layers"] == 6
    assert by_key["bart-base"]["decoder_layers"] == 6 and by_key["gpt2"]["decoder_layers"] is None
    assert table.num_rows == 5


@pytest.mark.slow
def test_the_whole_catalog_compared_converts_to_arrow() -> None:
    from explorer.architecture import catalog

    _arrow_table(compare.compare(catalog.keys(), seq_len=128, lengths=(512,)).rows)

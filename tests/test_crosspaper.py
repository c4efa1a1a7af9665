"""GLUE across papers: the papers' own cells under common task columns, with every non-default metric named."""

from __future__ import annotations

import pytest

from explorer.core.errors import ExplorerError
from explorer.papers import crosspaper, results


def _row(records, model, paper_part, split="test"):
    found = [r for r in records if r["model"] == model and paper_part in r["paper"] and r["split"] == split]
    assert len(found) == 1, (model, paper_part, found)
    return found[0]


def test_cells_are_the_papers_own():
    records = crosspaper.glue_view()
    bert = _row(records, "BERT-large", "(BERT)")
    assert (bert["MNLI-m"], bert["CoLA"], bert["GLUE score"]) == (86.7, 60.5, 82.1)
    assert "average without WNLI" in bert["metrics"] and "QQP: F1" in bert["metrics"]
    tiny = _row(records, "TinyBERT4", "(TinyBERT)")
    assert (tiny["MNLI-m"], tiny["catalog"]) == (82.5, "tinybert")
    roberta = _row(records, "RoBERTa-large (dev, single model, single-task)", "(RoBERTa)", "dev")
    assert roberta["RTE"] == 86.6 and "QQP: metric not named" in roberta["metrics"]


def test_the_families_the_issue_names_are_all_there():
    papers = " ".join(r["paper"] for r in crosspaper.glue_view())
    for family in ("BERT", "RoBERTa", "ALBERT", "ELECTRA", "DistilBERT", "MobileBERT", "TinyBERT", "BART"):
        assert f"({family})" in papers, family


def test_splits_settings_and_order():
    records = crosspaper.glue_view()
    assert [r["split"] for r in records] == sorted((r["split"] for r in records), key=lambda s: s != "test")
    assert {r["setting"] for r in records} == {"single model", "ensemble", "human"}
    assert all(r["split"] == "dev" for r in crosspaper.glue_view("dev"))
    with pytest.raises(ExplorerError, match="Unknown split"):
        crosspaper.glue_view("<b>train</b>")


def test_non_glue_averages_never_become_a_glue_score():
    rows = [results.Row("X", None, "squad-mnli-sst2-race-dev", "avg", 90.0, "A et al. 2020 (X), T1"),
            results.Row("X", None, "squad-mnli-sst2-race-dev", "mnli", 85.0, "A et al. 2020 (X), T1"),
            results.Row("Y", None, "xnli", "en", 85.0, "A et al. 2020 (Y), T1")]
    (only,) = crosspaper.glue_view(rows=rows)
    assert only["GLUE score"] is None and only["MNLI-m"] == 85.0 and only["tasks_reported"] == 1


def test_f1_is_preferred_over_accuracy_and_spearman_over_pearson():
    records = crosspaper.glue_view("test")
    struct = _row(records, "StructBERT-large", "(StructBERT)")
    assert (struct["MRPC"], struct["STS-B"]) == (92.0, 89.4)  # 92.0/89.3 F1/acc, 90.3/89.4 Pearson/Spearman


def test_split_of():
    assert crosspaper.split_of("glue-dev") == "dev" and crosspaper.split_of("xnli") is None

"""AppTest: the Results page (cross-paper GLUE view, single tables, efficiency chart, budgets and scaling
laws, URL state, the speed button)."""

from __future__ import annotations

from explorer.papers import crosspaper, results, speed
from tests.pages.conftest import assert_clean, figures, page_app, plotly_array, shown


def test_default_view_is_glue_across_papers_with_the_notes():
    at = page_app("results.py").run()
    assert_clean(at)
    assert at.query_params["view"] == "glue"
    table = at.dataframe[0].value
    assert {"BERT", "TinyBERT", "MobileBERT", "StructBERT"} <= {p.split("(")[-1].rstrip(")") for p in table["paper"]}
    assert set(table["split"]) == {"test"}  # test by default; dev one click away
    assert len(figures(at)) == 1
    assert any("Dev and test are different sets" in m.value for m in at.markdown)


def test_glue_view_both_splits_and_another_task():
    at = page_app("results.py").run()
    at.radio(key="res_split").set_value("both").run()
    at.selectbox(key="res_task").set_value("CoLA").run()
    assert_clean(at)
    assert set(at.dataframe[0].value["split"]) == {"dev", "test"}
    assert "CoLA" in figures(at)[0]["layout"]["title"]["text"]


def test_paper_view_has_table_chart_and_url_state():
    at = page_app("results.py", view="paper").run()
    assert_clean(at)
    assert len(figures(at)) == 1
    assert at.query_params["benchmark"] == results.benchmarks()[0]
    assert {"metric", "x", "speed"} <= set(at.query_params)
    assert len(at.dataframe) == 2  # the paper's table, then the pretraining lab's claims at the foot of the page


def test_score_against_pretraining_compute():
    at = page_app("results.py", benchmark="glue-test", metric="glue_score", x="train_flops").run()
    assert_clean(at)
    fig = figures(at)[0]
    assert "pretraining FLOPs" in fig["layout"]["xaxis"]["title"]["text"]
    assert len(plotly_array(fig["data"][1]["x"])) >= 1  # BERT-base / -large have a 6ND estimate


def test_budgets_view_shows_the_table_and_both_scaling_figures():
    at = page_app("results.py", view="budgets").run()
    assert_clean(at)
    assert len(at.dataframe[0].value) >= 20
    titles = [f["layout"]["title"]["text"] for f in figures(at)]
    assert any("Kaplan" in t for t in titles) and any("compute-optimal" in t for t in titles)
    captions = [c.value.replace("\\", "") for c in at.caption]
    assert any("Besiroglu et al. 2024" in c for c in captions)  # the printed constants' known bias, said
    assert any(c.startswith("Not placed: albert-base") and "80x" in c for c in captions)


def test_selection_from_the_url_and_not_reported_rows():
    at = page_app("results.py", benchmark="long-document-qa-dev", metric="nq_la", x="flops").run()
    assert_clean(at)
    table = at.dataframe[0].value
    assert "not reported" in set(table["nq_la"])
    fig = figures(at)[0]
    assert "FLOPs" in fig["layout"]["xaxis"]["title"]["text"]
    assert len(plotly_array(fig["data"][1]["y"])) == 1  # only BigBird-ITC reported NQ
    assert any("not reported" in c.value and "Longformer" in c.value for c in at.caption)


def test_garbage_in_the_url_falls_back():
    at = page_app("results.py", benchmark="<script>alert(1)</script>", metric="nope", x="zzz").run()
    assert_clean(at)
    assert at.query_params["benchmark"] == results.benchmarks()[0]
    at = page_app("results.py", view="<b>nope</b>").run()
    assert_clean(at)
    assert at.query_params["view"] == "glue" and len(crosspaper.glue_view("test")) == len(at.dataframe[0].value)


def test_a_claim_in_words_shows_as_text_with_no_number_and_no_chart():
    at = page_app("results.py", benchmark="m2m100-non-english-bleu-claim").run()
    assert_clean(at)
    table = at.dataframe[0].value
    assert "gains of more than 10 BLEU" in table["claim"][0]
    assert table["bleu_gain_non_english_directions"][0] == results.NOT_REPORTED
    assert not figures(at) and "metric" not in at.query_params  # nothing to chart, so no metric picker
    assert any("holds no number" in c.value for c in at.caption)


def test_ctrl_source_attribution_perplexities_are_lower_is_better():
    at = page_app("results.py", benchmark="ctrl-source-attribution-perplexity").run()
    assert_clean(at)
    assert len(at.dataframe[0].value) == 15 and set(at.dataframe[0].value["catalog"]) == {"ctrl"}
    assert not figures(at)  # one model at one cost: a frontier would mean nothing
    assert any("no frontier is drawn" in i.value and "Lower is better" in i.value for i in at.info)


def test_inference_time_frontier_prefers_lower_seconds():
    at = page_app("results.py", benchmark="cpu-inference", metric="inference_seconds").run()
    assert_clean(at)
    fig = figures(at)[0]
    assert list(plotly_array(fig["data"][0]["y"])) == [410.0]  # DistilBERT alone: cheaper and faster
    assert any("Lower is better" in c.value for c in at.caption)


def test_speed_button_shows_both_models_and_the_ratio(monkeypatch):
    fake = speed.Speed(("bert-base", "distilbert"), (90.0, 50.0), 32, 20)
    monkeypatch.setattr(speed, "measure", lambda keys, seq_len, runs: fake)
    at = page_app("results.py", speed="bert-base,distilbert").run()
    at.button(key="speed_go").click().run()
    assert_clean(at)
    assert [m.value for m in at.metric] == ["90.0 ms / example", "50.0 ms / example", "1.80x"]
    bars = figures(at)[-1]["data"][0]
    assert list(plotly_array(bars["y"]))[0] == 668 / 410


def _lab_section(at):
    """The pretraining lab's claims table: the dataframe whose columns include 'verdict'."""
    return next(d.value for d in at.dataframe if "verdict" in d.value.columns)


def test_pretraining_claims_section_reads_the_committed_measurement():
    from explorer.papers import claims

    at = page_app("results.py").run()
    assert_clean(at)
    assert "Reproduced here (pretraining lab)" in [s.value for s in at.subheader]
    table = _lab_section(at)
    assert len(table) == len(claims.load().rows) == 4
    assert set(table["verdict"]) <= set(claims.VERDICTS)
    budget = claims.load().measurement
    assert any(budget.date in m.value and f"{budget.budget_steps} steps" in m.value for m in at.markdown)


def test_pretraining_claims_section_says_what_is_not_reproduced_and_why(monkeypatch):
    from explorer.papers import claims
    from tests.test_claims import fake

    m = fake(variants={k: v for k, v in fake().variants.items() if k != "electra"}, missing={"electra": "electra"})
    monkeypatch.setattr(claims, "load", lambda path=None: claims.report(m))
    monkeypatch.setattr(claims, "stamp", lambda path=None: 123456789)  # a cache key no other test uses
    at = page_app("results.py").run()
    assert_clean(at)
    assert list(_lab_section(at)["verdict"]) == ["not measured", "reproduced", "reproduced", "reproduced"]
    notes = next(x.value for x in at.markdown if "does not reproduce" in x.value)
    assert "electra family" in notes and "2025-01-01" in " ".join(x.value for x in at.markdown)


def test_pretraining_claims_section_without_results_says_how_to_make_them(monkeypatch, tmp_path):
    from explorer.papers import claims

    monkeypatch.setattr(claims, "RESULTS_JSON", tmp_path / "none.json")
    at = page_app("results.py").run()
    assert_clean(at, errors_expected=True)
    assert any("pretrain_claims.py" in text for text in shown(at.error))


def test_unreported_glue_cells_show_a_dash_not_none():
    at = page_app("results.py").run()
    assert_clean(at)
    table = at.dataframe[0]
    assert table.value.isna().any().any()  # some papers leave tasks out
    assert table.proto.placeholder == "—"  # what the browser draws in a missing cell (its default is "None")


def test_the_intro_says_which_rows_cite_a_readme_an_abstract_or_a_card_not_a_table():
    at = page_app("results.py").run()
    intro = next(m.value for m in at.markdown if "as the papers report them" in m.value).replace("\\", "")
    assert "every row names its paper and table" not in intro
    for kind, works in results.sources_by_kind().items():
        assert kind in intro and all(w in intro for w in works), (kind, works)
    assert {"ALBERT", "CTRL", "M2M-100"} <= {w for ws in results.sources_by_kind().values() for w in ws}

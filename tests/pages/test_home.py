"""AppTest: the Overview (params by publication month, the lineage tree, opening a variant)."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from explorer.architecture import catalog
from tests.pages.conftest import assert_clean, figures, page_app, plotly_array

ROOT = Path(__file__).resolve().parents[2]


def test_overview_renders_both_charts():
    at = page_app("home.py").run()
    assert_clean(at)
    by_date, tree = figures(at)
    ticks = by_date["layout"]["xaxis"]["ticktext"]
    assert all(t.isdigit() and len(t) == 4 for t in ticks)  # whole years, never "2,018.5"
    encoders = by_date["data"][0]
    xs = dict(zip(encoders["customdata"], plotly_array(encoders["x"]), strict=True))
    assert xs["bert-base"] == 2018 + 9 / 12 and xs["roberta-base"] == 2019 + 6 / 12
    nodes = [k for trace in tree["data"] if trace.get("customdata") for k in trace["customdata"]]
    assert sorted(nodes) == sorted(catalog.keys())


def test_family_filter_keeps_the_lineage_whole():
    at = page_app("home.py").run()
    at.segmented_control(key="home_family").set_value(["decoder"]).run()
    assert_clean(at)
    by_date = figures(at)[0]
    assert [len(t.get("customdata") or []) for t in by_date["data"]][0] == 0  # no encoder points left


def test_open_button_switches_to_the_architecture_explorer():
    at = AppTest.from_file(str(ROOT / "app" / "main.py"), default_timeout=240).run()
    at.selectbox(key="home_open").set_value("albert-base")
    at.button(key="home_open_go").click().run()
    assert_clean(at)
    assert at.query_params["model"] == "albert-base"
    assert at.title[0].value == "Architecture explorer"

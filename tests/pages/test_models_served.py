"""Models page: the operator's served endpoints with what each can do, one typed on a private machine, none typed
on a shared one (AppTest, the real engine on 127.0.0.1)."""

from __future__ import annotations

from tests.pages.conftest import assert_clean, page_app, shown


def _table(at):
    return next(d.value for d in at.dataframe if "model key" in d.value.columns)


def test_configured_and_typed_endpoints_are_listed_with_their_capabilities(served_engine, monkeypatch) -> None:
    monkeypatch.setenv("EXPLORER_ENDPOINT_URL", served_engine.endpoint.base_url)
    monkeypatch.setenv("EXPLORER_ENDPOINT_NAME", "gemma")
    at = page_app("models.py").run()
    assert_clean(at)
    row = _table(at).iloc[0]
    assert row["model key"] == "served:gemma" and row["engine"] == "llama-cpp-python 0.3.36"
    assert (row["top-k per token"], row["scores whole texts"], row["embeddings"]) == ("yes", "yes", "no")
    at.text_input(key="served_name").set_value("again")
    at.text_input(key="served_url").set_value(served_engine.endpoint.base_url.removesuffix("/v1"))
    at.button[[b.label for b in at.button].index("Add for this session")].click().run()
    assert_clean(at)
    assert list(_table(at)["model key"]) == ["served:gemma", "served:again"]
    at.text_input(key="served_url").set_value("<script>alert(1)</script>")
    at.button[[b.label for b in at.button].index("Add for this session")].click().run()
    assert_clean(at, errors_expected=True)
    assert "not an http(s) URL" in shown(at.error)[0] and len(_table(at)) == 2


def test_a_shared_server_offers_no_url_box(monkeypatch) -> None:
    monkeypatch.setenv("EXPLORER_RESTRICT_PATHS", "1")
    at = page_app("models.py").run()
    assert_clean(at)
    assert "served_url" not in [t.key for t in at.text_input]
    assert any("only calls the endpoints its operator configured" in c.value for c in at.caption)

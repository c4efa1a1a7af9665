"""app.ui helpers that need no running app."""

from __future__ import annotations

from app.ui import markdown_safe


def test_markdown_is_escaped_outside_code_spans_only() -> None:
    text = "No folder /tmp/*a*_b_ with $x$ <b>: run `python -m explorer download my_key`"
    out = markdown_safe(text)
    assert "\\*a\\*\\_b\\_" in out and "\\$x\\$" in out and "\\<b\\>" in out
    assert out.endswith("`python -m explorer download my_key`")


def test_last_resort_shows_a_reference_not_a_traceback() -> None:
    from streamlit.testing.v1 import AppTest

    def app() -> None:
        from app import ui

        with ui.last_resort():
            raise ZeroDivisionError("secret /server/path")

    at = AppTest.from_function(app).run()
    assert not at.exception
    assert len(at.error) == 1 and "reference" in at.error[0].value and "secret" not in at.error[0].value


def test_url_selection_is_clipped_to_the_widget_limit() -> None:
    from streamlit.testing.v1 import AppTest

    def app() -> None:
        from app import ui

        ui.pick_variants("Variants", param="models", max_selections=12, key="m")

    at = AppTest.from_function(app)
    at.query_params["models"] = ",".join(["bert-base"] * 13 + ["gpt2", "t5-small"] * 7 + ["roberta-base"] * 3
                                         + [f"nope{i}" for i in range(20)])
    at.run()
    assert not at.exception
    assert at.multiselect(key="m").value == ["bert-base", "gpt2", "t5-small", "roberta-base"]
    at2 = AppTest.from_function(app)
    from explorer.architecture import catalog

    at2.query_params["models"] = ",".join(catalog.keys()[:20])
    at2.run()
    assert not at2.exception and len(at2.multiselect(key="m").value) == 12 and at2.info

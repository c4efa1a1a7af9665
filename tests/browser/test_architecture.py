"""Real browser: overview, architecture explorer and comparator in headless Chromium."""

from __future__ import annotations

import pytest

from tests.browser.conftest import assert_clean, wait_idle, wait_url

pytestmark = pytest.mark.browser


def test_home_renders_the_catalog(open_page) -> None:
    page = open_page("")
    page.get_by_text("Transformer Explorer").first.wait_for()
    page.locator("[data-testid='stPlotlyChart']").first.wait_for(timeout=60_000)
    assert_clean(page, "home")


def test_architecture_explorer_variant_tabs_and_invalid_heads(open_page) -> None:
    page = open_page("architecture?model=albert-base")
    page.get_by_text("used 12x").first.wait_for()
    page.get_by_role("tab", name="Treemap").click()
    wait_idle(page)
    page.get_by_role("tab", name="Text view").click()
    page.get_by_text("Change the architecture").click()
    heads = page.get_by_role("spinbutton", name="Heads", exact=True)
    heads.fill("5")
    heads.press("Enter")
    wait_idle(page)
    page.get_by_text("not divisible by 5 heads").first.wait_for()
    assert_clean(page, "architecture", errors_expected=True)  # the heads mistake is provoked on purpose


def test_architecture_explorer_picks_a_variant_from_the_list(open_page) -> None:
    page = open_page("architecture")
    page.locator("[data-testid='stSelectbox']").first.click()
    page.keyboard.type("T5-11B")
    page.keyboard.press("Enter")
    wait_idle(page)
    wait_url(page, "model=t5-11b")
    page.get_by_text("11.3B").first.wait_for()
    assert_clean(page, "architecture-t5-11b")


def test_comparator_from_a_shared_link(open_page) -> None:
    page = open_page("compare?models=bert-base,longformer,gpt3")
    page.locator("[data-testid='stPlotlyChart']").nth(3).wait_for(timeout=60_000)
    page.get_by_text("GPT-3").first.wait_for()
    page.get_by_text("Download CSV").first.wait_for()
    assert_clean(page, "compare")


def test_comparator_link_with_too_many_models_still_renders(open_page) -> None:
    # 13 keys, then one key 13 times: either, passed on whole, crashes the multiselect
    # (StreamlitSelectionCountExceedsMaxError)
    from explorer.architecture import catalog

    for models in (",".join(catalog.keys()[:13]), ",".join(["gpt2"] * 13)):
        page = open_page(f"compare?models={models}")
        page.locator("[data-testid='stPlotlyChart']").nth(3).wait_for(timeout=90_000)
        assert_clean(page, "compare")


def _upload(page, name: str, data: bytes) -> None:
    page.locator("[data-testid='stFileUploaderDropzoneInput']").set_input_files(
        files=[{"name": name, "mimeType": "application/json", "buffer": data}])
    page.wait_for_timeout(500)
    wait_idle(page)


def test_uploading_configs_good_and_bad(open_page) -> None:
    page = open_page("architecture")
    page.get_by_text("Upload config.json").click()
    wait_idle(page)
    _upload(page, "broken.json", b'{"model_type": "bert", <b>oops</b>')
    page.get_by_text("not valid JSON").first.wait_for()
    _upload(page, "heads.json", b'{"model_type": "bert", "hidden_size": 100, "num_attention_heads": 3}')
    page.get_by_text("not divisible by 3 heads").first.wait_for()
    good = b'{"model_type": "gpt2", "n_layer": 4, "n_embd": 256, "n_head": 4, "vocab_size": 5000}'
    _upload(page, "tiny-gpt2.json", good)
    page.get_by_text("GPT2LMHeadModel").first.wait_for()
    assert page.locator("b:has-text('oops')").count() == 0
    assert_clean(page, "architecture-upload")

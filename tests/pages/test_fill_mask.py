"""Fill-mask page (AppTest): side-by-side columns, local directories, bad input, cache (ELECTRA: test_electra.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.pages.conftest import shown
from tests.tiny_models import save_tiny

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "pages" / "fill_mask.py")
SMALL = "electra-small-generator"  # the smallest catalog MLM: random weights build fast


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("fmpage")
    return {k: save_tiny(k, root / k) for k in ("bert", "roberta")}


def _app(models: str = SMALL) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=240)
    at.query_params["models"] = models
    return at


def _names(at: AppTest) -> list[str]:
    """Column titles as shown (the page escapes markdown in model names)."""
    return [s.value.replace("\\", "") for s in at.subheader]


def _clean(at: AppTest) -> None:
    assert not at.exception, at.exception[0].message if at.exception else ""


def _errors(at: AppTest) -> list[str]:
    """Error boxes as the user reads them (the page escapes markdown in messages)."""
    return [e.value.replace("\\", "") for e in at.error]


@pytest.fixture(scope="module")
def default_run() -> AppTest:
    return _app().run()


@pytest.fixture(scope="module")
def two_models(tiny) -> AppTest:
    at = _app().run()
    at.text_input(key="fm_paths").set_value(str(tiny["bert"])).run()
    assert len(at.subheader) == 2
    return at


def test_default_answers_with_untrained_label(default_run) -> None:
    at = default_run
    _clean(at)
    assert _names(at) == ["ELECTRA-small generator"]
    assert any(w.value.startswith("Untrained weights") and w.icon == ":material/casino:" for w in at.warning)
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert len(spec["data"]) == 1 and spec["data"][0]["orientation"] == "h"
    assert len(at.get("plotly_chart")) == 1  # the top-k bars; ELECTRA's strip is on its own page
    assert "el_text" not in [t.key for t in at.text_input]
    assert any(c.value.endswith("Replaced-token detection") for c in at.caption)  # the link there


def test_local_directories_side_by_side_with_two_masks(tiny) -> None:
    at = _app().run()
    at.text_input(key="fm_paths").set_value(f"{tiny['bert']}, {tiny['roberta']}")
    at.text_area(key="fm_text").set_value("The [MASK] sat on the ___.").run()
    _clean(at)
    assert _names(at) == ["ELECTRA-small generator", "bert", "roberta"]
    assert at.radio(key="fm_mask").options == ["mask 1", "mask 2"]
    tables = [d.value for d in at.dataframe][:6]  # 3 models x 2 masks
    assert all(len(t) == 5 and t["probability"].between(0, 1).all() for t in tables)
    at.slider(key="fm_topk").set_value(3).run()
    assert len(at.dataframe[0].value) == 3


@pytest.mark.parametrize(("prompt", "message"), [
    ("", "empty"), ("   ", "empty"), ("No blank at all.", "no mask"), ("The <extra_id_0> sat.", "sentinel"),
])
def test_bad_prompts_show_a_message(two_models, prompt: str, message: str) -> None:
    at = two_models
    at.text_area(key="fm_text").set_value(prompt).run()
    _clean(at)
    assert [message in e for e in _errors(at)] == [True]  # once, not once per model


@pytest.mark.parametrize("prompt", [
    "Emoji 🤖 [MASK] 🎉", "هذا [MASK] جميل", "<script>alert(1)</script><b>[MASK]</b>", "a\x00b\x1b [MASK]",
    "word " * 5_000 + "[MASK] " + "word " * 5_000,
])
def test_odd_prompts_answer(default_run, prompt: str) -> None:
    at = default_run
    at.text_area(key="fm_text").set_value(prompt).run()
    _clean(at)
    assert not at.error and len(at.subheader) == 1
    if len(prompt) > 40_000:  # truncated around the mask, visibly: a warning (app.ui.NOTICE_STYLE)
        cut = [w for w in at.warning if w.icon == ":material/content_cut:"]
        assert any("reads at most" in w for w in shown(cut))


def test_missing_directory_does_not_stop_the_others(tiny) -> None:
    at = _app().run()
    at.text_input(key="fm_paths").set_value(f"/no/such/dir, {tiny['bert']}").run()
    _clean(at)
    assert any("does not exist" in e for e in _errors(at))
    assert _names(at) == ["ELECTRA-small generator", "bert"]


def test_a_huge_typed_directory_is_echoed_cut_in_its_error() -> None:
    at = _app().run()
    at.text_input(key="fm_paths").set_value("x" * 5000).run()
    _clean(at)
    errors = _errors(at)
    assert errors and all(len(e) < 600 for e in errors), [len(e) for e in errors]
    assert any("(5,000 characters)" in e for e in errors)


def test_an_unusable_models_directory_is_a_message_not_a_crash(monkeypatch) -> None:
    """The models folder typed on the Models page lives in the session: 5,000 characters there made this
    page fail before its first widget (the defaults looked in it)."""
    monkeypatch.delenv("EXPLORER_RESTRICT_PATHS", raising=False)
    at = AppTest.from_file(PAGE, default_timeout=240)
    at.session_state["models_dir"] = "y" * 5000
    at.run()
    _clean(at)
    assert any("models directory cannot exist" in e and "(5,000 characters)" in e for e in _errors(at)), _errors(at)


def test_second_identical_request_is_served_from_cache(tiny, monkeypatch) -> None:
    from explorer.tasks.fillmask import run

    calls = []
    real = run.fill_clean  # what every masked LM's column runs
    monkeypatch.setattr(run, "fill_clean", lambda *a, **k: calls.append(1) or real(*a, **k))
    at = _app(SMALL)
    at.run()
    at.text_input(key="fm_paths").set_value(str(tiny["bert"]))
    at.text_area(key="fm_text").set_value("A unique prompt for the cache [MASK].").run()
    first = len(calls)
    at.run()
    _clean(at)
    assert first >= 1 and len(calls) == first


def test_bundled_minilm_says_it_has_no_mlm_head() -> None:
    at = _app().run()
    at.text_input(key="fm_paths").set_value("sentence-bert").run()
    _clean(at)
    assert any("sentence-bert is an encoder saved without a masked-language-model head: Fill-mask needs a masked"
               in e.replace("\\", "") for e in _errors(at))


def test_page_and_cli_share_one_library_call_one_request_per_model(tiny, monkeypatch) -> None:
    import explorer.tasks.fillmask

    calls = []
    real = explorer.tasks.fillmask.fill_mask
    monkeypatch.setattr(explorer.tasks.fillmask, "fill_mask", lambda *a, **k: calls.append(a[0]) or real(*a, **k))
    at = _app(SMALL).run()
    at.text_input(key="fm_paths").set_value(str(tiny["roberta"]))
    at.text_area(key="fm_text").set_value("One path for the [MASK].").run()
    _clean(at)
    # the CLI's call, one model a request: each column answers as soon as its model is done
    assert [tuple(r.spec for r in c) for c in calls[-2:]] == [(SMALL,), (str(tiny["roberta"]),)]


def test_missing_weights_without_random_mode_are_a_warning(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf"))  # no real checkpoint from a developer's cache
    monkeypatch.setenv("EXPLORER_MODELS_DIR", str(tmp_path / "models"))
    at = _app().run()
    at.toggle(key="fm_random").set_value(False).run()
    _clean(at)
    assert not at.error  # weights not downloaded yet is a state, not a failure
    warned = [w.value.replace("\\", "") for w in at.warning]
    assert any(f"python -m explorer download {SMALL}" in w for w in warned)


def test_a_link_with_twenty_models_is_clipped_to_the_page_limit() -> None:
    from explorer.tasks import defaults

    at = AppTest.from_file(PAGE, default_timeout=240)
    at.query_params["models"] = ",".join(defaults.mlm_keys() * 3)
    at.session_state["fm_random"] = False  # nothing is loaded: only the selection is under test
    at.run()
    assert not at.exception
    assert len(at.multiselect(key="fm_models").value) == defaults.MAX_PAGE_MODELS
    assert any("showing the first" in i.value for i in at.info)


@pytest.mark.slow
def test_out_of_the_box_the_bundled_decoder_answers_beside_a_masked_lm(bundled_decoder, monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf"))
    monkeypatch.setenv("EXPLORER_MODELS_DIR", str(tmp_path / "models"))
    at = AppTest.from_file(PAGE, default_timeout=300).run()  # no ?models=: the page's own defaults
    _clean(at)
    assert at.multiselect(key="fm_models").value == ["gemma3-270m", "bert-base"]
    assert _names(at)[0] == "Gemma 3 270M"
    causal = [i for i in shown(at.info) if i.startswith("Causal model: it reads left to right")]
    assert causal  # both rankings: the left-context candidates named in the notice
    decoder_table = at.dataframe[0].value
    assert decoder_table["probability"].between(0, 1).all() and decoder_table.iloc[0]["token"].strip() == "Paris"
    assert not at.error


def test_decoder_answer_length_shows_only_with_a_decoder(monkeypatch) -> None:
    from app.caches import models as cache_models

    at = _app().run()  # electra-small-generator only: no decoder, no slider
    assert "fm_decoder_tokens" not in [s.key for s in at.slider]
    seen = []
    real = cache_models.fill

    def spy(*args):
        seen.append(args[-1])  # answer_tokens (the sidebar's device and dtype are the backend's)
        return real(*args)

    monkeypatch.setattr(cache_models, "fill", spy)
    at = _app("gemma3-270m").run()
    assert "fm_decoder_tokens" in [s.key for s in at.slider] and seen == [1]  # one token unless asked


# ---- several prompts, one per line ---------------------------------------------------
def _table(at: AppTest):
    return next(d.value for d in at.dataframe if "prompt" in d.value.columns)


def test_several_prompts_give_one_row_each_and_per_line_messages(tiny) -> None:
    at = _app().run()
    at.text_input(key="fm_paths").set_value(f"{tiny['bert']}, {tiny['roberta']}")
    at.text_area(key="fm_text").set_value("The [MASK] sat on the ___.\n\nNo blank on this line.\n"
                                          "<b>Hi</b> [MASK] 🤖\nThe cat <extra_id_0> the mat.").run()
    _clean(at)
    assert not at.error and not at.subheader  # no per-model columns: one table
    table = _table(at)
    assert list(table["line"]) == [1, 3, 4, 5] and table["prompt"][2] == "<b>Hi</b> [MASK] 🤖"  # shown as text
    assert {"ELECTRA-small generator", "bert", "roberta"} <= set(table.columns)
    assert list(table.columns[:3]) == ["line", "prompt", "note"] and "no mask" in table["note"][1]
    assert " | " in table["bert"][0] and table["bert"][1] == ""  # two masks in one cell; a refused line: empty
    boxes = [w.value.replace("\\", "") for w in at.warning]
    assert any("Line 3: There is no mask" in w and "Line 5:" in w and "sentinel" in w for w in boxes)
    assert any(b.proto.label.startswith("Download CSV (every prompt") for b in at.get("download_button"))
    assert not at.get("plotly_chart")  # the top-k chart is for one prompt


def test_too_many_prompts_are_cut_with_a_notice(tiny) -> None:
    from explorer.tasks.fillmask import batch as fillbatch

    at = _app(SMALL).run()
    at.text_area(key="fm_text").set_value("\n".join(f"Line {i} is a [MASK]." for i in range(fillbatch.MAX_PROMPTS + 6)))
    at.run()
    _clean(at)
    assert len(_table(at)) == fillbatch.MAX_PROMPTS
    assert any(f"70 prompts were given; only the first {fillbatch.MAX_PROMPTS} ran" in w for w in shown(at.warning))


def test_several_lines_none_with_a_mask_is_no_page_error(default_run) -> None:
    at = default_run
    at.text_area(key="fm_text").set_value("First line.\nSecond line.\n\x00").run()
    _clean(at)
    assert not at.error and not any("prompt" in d.value.columns for d in at.dataframe)
    boxes = [w.value.replace("\\", "") for w in at.warning]
    assert any("Line 1: There is no mask" in w and "Line 3:" in w for w in boxes)


def test_several_prompts_come_from_the_cache_the_second_time(tiny, monkeypatch) -> None:
    import explorer.tasks.fillmask.batch

    calls = []
    real = explorer.tasks.fillmask.batch.fill_batch
    monkeypatch.setattr(explorer.tasks.fillmask.batch, "fill_batch", lambda *a, **k: calls.append(1) or real(*a, **k))
    at = _app(SMALL).run()
    at.text_input(key="fm_paths").set_value(str(tiny["bert"]))
    at.text_area(key="fm_text").set_value("A unique batch [MASK].\nAnd its second [MASK].").run()
    first = len(calls)
    at.run()
    _clean(at)
    assert first == 2 and len(calls) == first  # one batched call per masked LM, then the cache


def test_model_cap_follows_the_device_and_says_why() -> None:
    at = _app().run()
    # explorer.runtime.capacity.page_models: 8 on a CPU (more where a GPU's free memory allows), with the reason
    assert at.multiselect(key="fm_models").help.startswith("At most 8 models a request (cpu")


def test_a_model_trained_in_the_lab_is_offered_labelled_and_answers(tiny, monkeypatch, tmp_path) -> None:
    import shutil

    # a lab checkpoint as explorer.training.checkpoint.save leaves it (a real 20-step run: tests/test_checkpoint.py)
    folder = tmp_path / "models" / "lab" / "mlm-tiny-20steps-seed0"
    shutil.copytree(tiny["bert"], folder)
    (folder / "lab.json").write_text(json.dumps({"objective": "mlm", "steps": 20, "corpus": {"words": 950947}}))
    monkeypatch.setenv("EXPLORER_MODELS_DIR", str(tmp_path / "models"))
    at = _app("lab/mlm-tiny-20steps-seed0").run()
    _clean(at)
    picker = at.multiselect(key="fm_models")
    assert picker.value == ["lab/mlm-tiny-20steps-seed0"]
    assert "lab/mlm-tiny-20steps-seed0: trained here (20 steps on 950,947 words)" in picker.options
    assert _names(at) == ["mlm-tiny-20steps-seed0"] and not _errors(at)  # its column, named like any folder


def test_a_prompt_resolves_each_model_once_through_every_layer(tiny, monkeypatch) -> None:
    """Page -> cached wrapper -> library -> loader: each model is looked up on disk and its kind read once, and
    the prompt is checked once (a resolved ModelRef goes down; nothing below asks again)."""
    import os
    import traceback
    from collections import Counter

    from explorer.runtime import modelkind, weights
    from explorer.tasks import fillmask

    calls: Counter[str] = Counter()

    def counted(real, name: str):
        def call(*a, **k):
            # only this page's calls: a background job an earlier test left running (a Lab run, a tuned lens)
            # may look models up in the same process meanwhile
            if any(f.filename.endswith(os.path.join("pages", "fill_mask.py")) for f in traceback.extract_stack()):
                calls.update([name])
            return real(*a, **k)
        return call

    for module, name in ((weights, "locate"), (modelkind, "family_of"), (fillmask, "clean_text"),
                         (fillmask.run, "clean_text")):  # the page's check, and the library's
        monkeypatch.setattr(module, name, counted(getattr(module, name), name))
    at = _app().run()
    calls.clear()
    at.text_input(key="fm_paths").set_value(f"{tiny['bert']}")
    at.text_area(key="fm_text").set_value("Counted once, this [MASK] is.").run()  # not in the cache yet
    _clean(at)
    assert len(at.subheader) == 2 and not _errors(at)  # both models answered
    # two models: one look on disk and one config read each; the prompt is checked by the page (one message before
    # any spinner) and by the library's entry (the CLI's too) in each model's request, never again below
    assert calls == {"locate": 2, "family_of": 2, "clean_text": 1 + 2}


def test_a_legacy_hub_name_says_its_weights_are_not_downloaded(monkeypatch, tmp_path) -> None:
    """``bert-base-uncased``, the name of every old tutorial, is a hub id: not downloaded, how to get it, and the
    catalog key naming the same checkpoint; never "neither a catalog key, a hub id nor a directory"."""
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf"))
    monkeypatch.setenv("EXPLORER_MODELS_DIR", str(tmp_path / "models"))
    at = _app().run()
    at.text_input(key="fm_paths").set_value("bert-base-uncased").run()
    _clean(at)
    assert not at.error  # weights not downloaded yet is a state, not a failure, with untrained weights allowed too
    warned = [w for w in shown(at.warning) if w.startswith("bert-base-uncased:")]
    assert warned and "python -m explorer download bert-base-uncased" in warned[0]
    assert "The catalog key 'bert-base' names the same checkpoint" in warned[0]
    assert _names(at) == ["ELECTRA-small generator"]  # the other model still answers


def test_each_column_answers_on_its_own_and_the_slow_one_is_cut_in_its_own(tiny, monkeypatch, tmp_path) -> None:
    """Each model is a request of its own: a decoder whose budget runs out keeps the candidates it scored, with the
    notice in its column, and the masked LM beside it still answers (one request for all used to stop the page
    after the decoder with one page-wide "stopped" and no answer)."""
    import itertools

    from explorer.runtime import cancel, workers
    from tests.tiny_gemma import save_tiny_gemma

    decoder = save_tiny_gemma(tmp_path / "gemma")

    def counting_token() -> cancel.CancelToken:  # a clock read is a second: a budget of work, not of time
        ticks = itertools.count()
        return cancel.CancelToken(cancel.RequestBudget(8.0, 2**40, "test"), clock=lambda: float(next(ticks)),
                                  memory=lambda: 0)

    monkeypatch.setattr(workers, "_request_token", counting_token)
    at = _app(SMALL).run()
    at.multiselect(key="fm_models").set_value([])
    at.text_input(key="fm_paths").set_value(f"{decoder}, {tiny['bert']}")
    at.text_area(key="fm_text").set_value("The cat sat on the [MASK] today.").run()
    _clean(at)
    assert _names(at) == ["gemma", "bert"]  # both answered
    cut = [w for w in shown(at.warning) if "candidates were scored with the whole text" in w]
    assert len(cut) == 1 and "was stopped" not in " ".join(e for e in _errors(at))

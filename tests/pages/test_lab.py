"""Pretraining lab page (AppTest) and its glue (app/state/lab.py): widgets and the URL, bad values and uploads, a
tiny real training to the end, Stop and Resume, the per-session cap and the server-wide bound seen from the page."""

from __future__ import annotations

import time

import pytest
from streamlit.testing.v1 import AppTest

from app.state import lab
from explorer.core.userfiles import MAX_UPLOAD_BYTES
from explorer.training import checkpoint, recipes, scheduler
from explorer.training.trainer import Plan
from tests.pages.conftest import assert_clean, figures, page_app, shown

# ~3,600 words: enough for the lab's minimum, small enough that cutting windows takes no time
TEXT = "\n\n".join(f"The function number {i} returns a list of values from the module, and the loop reads it "
                   f"again in order {i % 7}." for i in range(200)).encode()
READY = list(recipes.RECIPES)


@pytest.fixture(autouse=True)
def quick(monkeypatch) -> None:
    monkeypatch.setenv("EXPLORER_LAB_QUICK", "1")  # 256-token steps of 32-token windows


def _states(at: AppTest) -> list[str]:
    return [p.proto.text for p in at.get("progress")]


def _wait(at: AppTest, done, timeout: float = 180) -> AppTest:
    """Rerun the page (as the fragment's timer would) until ``done(states)`` holds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        at.run()
        if done(_states(at)):
            return at
        time.sleep(0.5)
    raise AssertionError(f"timed out; states: {_states(at)}")


def _upload(at: AppTest, content: bytes = TEXT, name: str = "notes.txt") -> AppTest:
    at.file_uploader(key="lab_upload").set_value((name, content, "text/plain"))
    return at.run()


def test_default_page_offers_every_objective_and_shares_the_url() -> None:
    at = page_app("lab.py").run()
    assert_clean(at)
    assert at.title[0].value == "Pretraining lab"
    picker = at.multiselect(key="lab_objectives")
    assert picker.options == [r.label for r in recipes.RECIPES.values()]
    assert picker.value == READY[:3]
    assert at.number_input(key="lab_steps").value == 300 and at.radio(key="lab_size").value == "tiny"
    assert dict(at.query_params) == {"objectives": ",".join(READY[:3]), "size": "tiny", "steps": "300", "seed": "0",
                                     "window": "128", "tokens": "2048"}
    assert any("min per run" in c.value for c in at.caption)  # the time estimate
    assert any("No runs yet" in c.value for c in at.caption)


@pytest.mark.parametrize("query", [
    {"steps": "-5", "seed": "lots", "size": "<script>", "objectives": "nope,<b>x</b>"},
    {"steps": str(10**9), "seed": str(2**40), "size": "huge", "objectives": ""},
    {"steps": "0", "seed": "-1", "objectives": "x" * 5000},
])
def test_bad_url_values_fall_back_inside_the_bounds(query: dict) -> None:
    at = page_app("lab.py", **query).run()
    assert_clean(at)
    assert 1 <= at.number_input(key="lab_steps").value <= 5_000
    assert 0 <= at.number_input(key="lab_seed").value < 2**31
    assert at.radio(key="lab_size").value == "tiny" and at.multiselect(key="lab_objectives").value == READY[:3]


def test_the_step_controls_reach_what_fits_this_servers_memory(monkeypatch) -> None:
    """The window and tokens per step are bounded by memory (cache_lab.limits), not by a constant."""
    roomy = page_app("lab.py", objectives="mlm", tokens=str(10**9), window="512").run()
    assert_clean(roomy)
    fits = lab.limits(["mlm"], "tiny", 512, "cpu")
    assert roomy.select_slider(key="lab_window").value == 512
    assert roomy.number_input(key="lab_tokens").value == fits["batch_tokens"] > fits["one_pass"] > 0  # clipped to it
    assert any("Memory for each training" in c and "micro-batches" in c for c in shown(roomy.caption))
    monkeypatch.setenv("EXPLORER_MEMORY_CAP_GB", "0.3")  # a small server: short windows only, fewer tokens
    tight = page_app("lab.py", objectives="mlm", tokens=str(10**9), window="512").run()
    assert_clean(tight)
    window = tight.select_slider(key="lab_window")
    assert window.value < 512 and max(window.options, key=int) == str(window.value)
    assert tight.number_input(key="lab_tokens").value < roomy.number_input(key="lab_tokens").value
    monkeypatch.setenv("EXPLORER_MEMORY_CAP_GB", "0.1")  # nothing fits: said, and Train is off
    none = page_app("lab.py", objectives="mlm").run()
    assert_clean(none, errors_expected=True)
    assert any("Not even a 32-token window" in e for e in shown(none.error)) and none.button(key="lab_train").disabled


def test_small_on_the_cpu_says_it_is_meant_for_a_gpu() -> None:
    at = page_app("lab.py", size="small").run()
    assert_clean(at)
    assert any("meant for a GPU" in i for i in shown(at.info))


@pytest.mark.parametrize(("content", "message"), [
    (b"\x00\x01binary" * 100, "looks binary"),
    (b"caf\xe9 " * 3000, "not UTF-8"),
    (b"too short " * 10, "at least 2,000"),
    (b"", "at least 2,000"),
    (b"word " * (MAX_UPLOAD_BYTES // 5 + 1), f"larger than {MAX_UPLOAD_BYTES:,} bytes"),  # refused before decoding
])
def test_bad_uploads_say_what_is_wrong_and_disable_train(content: bytes, message: str) -> None:
    at = _upload(page_app("lab.py").run(), content, "<b>evil</b>.txt")
    assert_clean(at, errors_expected=True)
    assert [message in e for e in shown(at.error)] == [True]
    assert at.button(key="lab_train").disabled


def test_a_tiny_run_trains_to_the_end_with_curves_and_a_table_and_saves_as_a_local_model(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("EXPLORER_MODELS_DIR", str(tmp_path))
    at = _upload(page_app("lab.py", objectives="mlm", steps="3").run())
    assert any("notes.txt" in c and "words" in c for c in shown(at.caption))
    at.button(key="lab_train").click().run()
    assert_clean(at)
    _wait(at, lambda s: s and s[0].endswith("done"))
    assert_clean(at)
    assert [f["layout"]["title"]["text"].split(" ")[0] for f in figures(at)] == ["Training", "Token", "Held-out"]
    row = at.dataframe[0].value.iloc[0]
    assert row["objective"] == "mlm" and row["steps"] == 3 and row["tokens seen"] > 0 and "→" in row["held-out loss"]
    assert "%" in row["probe"] and "±" in row["probe"]  # every finished run is probed
    next(b for b in at.button if (b.key or "").startswith("lab_save_")).click().run()
    assert any("lab/mlm-tiny-3steps-seed0" in m.value for m in at.success)
    card = checkpoint.load_card(tmp_path / "lab" / "mlm-tiny-3steps-seed0")
    assert card["steps"] == 3 and card["objective"] == "mlm"
    at.button(key="lab_clear").click().run()
    assert not at.get("progress") and any("No runs yet" in c.value for c in at.caption)


def test_stop_and_resume_continue_the_same_run() -> None:
    at = _upload(page_app("lab.py", objectives="mlm", steps="2000").run())
    at.button(key="lab_train").click().run()
    _wait(at, lambda s: s and "step " in s[0])
    at.button(key="lab_stop_#1 mlm (tiny, seed 0)").click().run()
    _wait(at, lambda s: s[0].endswith("stopped"))
    stopped_at = at.session_state["_lab_jobs"][0].run.step
    assert any("Resume continues" in c.value for c in at.caption)
    at.button(key="lab_resume_#1 mlm (tiny, seed 0)").click().run()
    _wait(at, lambda s: "step " in s[0] and int(s[0].split("step ")[1].split(" ")[0].replace(",", "")) > stopped_at)
    at.button(key="lab_stop_#1 mlm (tiny, seed 0)").click().run()
    _wait(at, lambda s: s[0].endswith("stopped"))
    assert_clean(at)


def test_a_session_keeps_at_most_max_runs() -> None:
    at = page_app("lab.py", objectives="mlm").run()
    at.session_state["_lab_jobs"] = [lab.Job(Plan("mlm"), label=f"#{i} mlm (tiny, seed 0)", state="done")
                                     for i in range(lab.MAX_RUNS)]
    at.button(key="lab_train").click().run()
    assert_clean(at, errors_expected=True)
    assert any(f"at most {lab.MAX_RUNS} runs" in e for e in shown(at.error))
    assert len(_states(at)) == lab.MAX_RUNS and at.dataframe[0].value.shape[0] == lab.MAX_RUNS


def test_fastbert_exits_train_after_the_run_and_are_saved_with_it(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("EXPLORER_MODELS_DIR", str(tmp_path))
    at = page_app("lab.py", objectives="mlm", steps="3").run()
    at.checkbox(key="lab_exits").check().run()
    at.button(key="lab_train").click().run()
    _wait(at, lambda s: s and s[0].endswith("done"))
    assert_clean(at)
    row = at.dataframe[0].value.iloc[0]
    assert "%" in row["exit accuracy by layer"] and "teacher" in row["exit accuracy by layer"]
    next(b for b in at.button if (b.key or "").startswith("lab_save_")).click().run()
    assert any("FastBERT exits were saved" in m.value for m in at.success)
    assert checkpoint.has_exits(tmp_path / "lab" / "mlm-tiny-3steps-seed0")


def test_the_server_bounds_the_runs_queued_by_all_sessions_together(monkeypatch) -> None:
    """Every new tab is a new session with MAX_RUNS of its own; only a server-wide count bounds the queue."""
    from explorer.training import admission

    monkeypatch.setenv("EXPLORER_LAB_ACTIVE", "3")
    monkeypatch.setattr(admission.GATE, "active", 2)  # two runs of other visitors' tabs
    launched: list[str] = []
    monkeypatch.setattr(scheduler, "_start", lambda job, *_: launched.append(job.label))  # queued, not trained
    two = page_app("lab.py", objectives="mlm,roberta").run()
    assert any("at most 3 runs queued or running from all visitors; 2 now" in c for c in shown(two.caption))
    two.button(key="lab_train").click().run()
    assert_clean(two, errors_expected=True)
    assert any("This server has 2 Lab runs queued or running (0 training, 0 waiting for a slot), and takes at "
               "most 3 at once" in e and "1 more would not fit" not in e for e in shown(two.error)), shown(two.error)
    assert not launched and admission.GATE.active == 2  # refused whole: nothing queued, nothing counted
    one = page_app("lab.py", objectives="mlm").run()  # another tab: one more run fits
    one.button(key="lab_train").click().run()
    assert_clean(one)
    assert len(launched) == 1 and admission.GATE.active == 3
    stopped = lab.Job(Plan("mlm"), label="#9 mlm (tiny, seed 0)", state="stopped")
    full = page_app("lab.py", objectives="mlm").run()  # a third tab whose stopped run asks to resume
    full.session_state["_lab_jobs"] = [stopped]
    full.run().button(key="lab_resume_#9 mlm (tiny, seed 0)").click().run()
    assert_clean(full, errors_expected=True)
    assert any("This server has 3 Lab runs queued or running" in e for e in shown(full.error))
    assert stopped.state == "stopped" and len(launched) == 1

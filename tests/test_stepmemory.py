"""explorer.training.stepmemory: a training step's peak known before anything is built, refused or accumulated
within the budget, and the estimate checked against the peak RSS of real steps.

The factor: over 26 measured steps (tiny and small sizes, every loss family, 256 to 131,072 tokens per step, windows of
32 to 512 tokens; peak RSS growth of a fresh process, VmHWM, on a 2-core CPU) the estimate was 1.11 to 1.63 times the
measured peak. On another 2-core machine (2026-11-29) the 8,192-token step below peaked at 397-405 MB, not 588:
1.97 to 2.01 times under the same estimate, with the same code and versions (the cause was not found), so the tests
allow measured <= estimate <= 2.5 x measured.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from explorer.cli import main
from explorer.core.errors import ExplorerError
from explorer.training import lossfamilies, stepmemory, trainer
from tests.peak_rss import PROBE

ROOT = Path(__file__).resolve().parents[1]
FACTOR = 2.5  # estimate / measured peak: 1.11-1.63 measured, 2.01 on another CPU (module docstring)
MILLION = trainer.Plan("mlm", steps=1, batch_tokens=1_000_000, seq_len=512)
# ~3,600 words: enough for the lab's minimum, cut into windows at once (the bundled corpus takes seconds)
TEXT = "\n\n".join(f"The function number {i} returns a list of values from the module, and the loop reads it again "
                   f"in order {i % 7}." for i in range(200))


@pytest.fixture
def no_build(monkeypatch):
    """Any model built (not on the meta device) fails the test."""
    def refuse(*_a, **_k):
        raise AssertionError("a model was built")
    for name, family in lossfamilies.FAMILIES.items():
        monkeypatch.setitem(lossfamilies.FAMILIES, name, lossfamilies.LossFamily(family.features, family.loss, refuse,
                                                                    family.forward_flops, family.teacher))


def test_a_million_token_step_is_accumulated_or_refused_before_anything_is_built(no_build, monkeypatch) -> None:
    """`pretrain mlm --steps 1 --batch-tokens 1000000 --seq-len 512` in one step grows to 17 GB and is
    OOM-killed: it is planned as accumulated smaller steps, or refused, before anything is built."""
    for cap in ("4", "0.5", "0.3"):
        monkeypatch.setenv("EXPLORER_MEMORY_CAP_GB", cap)
        try:
            step = stepmemory.step_plan(MILLION)  # planned, never built (``no_build`` fails on a build)
        except ExplorerError as err:
            assert cap != "4" and "allow" in str(err), err
            assert ("largest step that fits is" in str(err)) == (cap == "0.5"), err
            assert ("longest window that fits is" in str(err)) == (cap == "0.3"), err
            with pytest.raises(ExplorerError):  # the trainer refuses the same way, before its model is built
                trainer.start(MILLION)
            continue
        assert cap == "4" and 1 < step.passes <= stepmemory.MAX_ACCUMULATION, step
        assert step.peak <= step.budget == 4 * 10**9 < step.one_pass.total
        assert step.micro_tokens * step.passes >= 1_000_000 and "micro-batches" in (step.notice or "")


def test_the_cli_refuses_the_million_token_step_in_one_line_before_reading_text(monkeypatch, capsys) -> None:
    from explorer.training import corpus

    monkeypatch.setenv("EXPLORER_MEMORY_CAP_GB", "0.5")
    monkeypatch.setattr(corpus, "bundled", lambda: pytest.fail("the corpus was read"))
    assert main(["pretrain", "mlm", "--steps", "1", "--batch-tokens", "1000000", "--seq-len", "512"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "largest step that fits is" in err and "Traceback" not in err, err


def test_limits_follow_from_the_budget() -> None:
    shape = stepmemory.shape("mlm", "tiny", 128)
    small, large = stepmemory.limits(shape, 128, (600 * 10**6, "a")), stepmemory.limits(shape, 128, (6 * 10**9, "b"))
    assert 0 < small["one_pass"] < large["one_pass"] and small["batch_tokens"] < large["batch_tokens"]
    assert stepmemory.limits(shape, 512, (300 * 10**6, "c"))["seq_len"] < 512 == large["seq_len"]
    for budget in ((600 * 10**6, "a"), (6 * 10**9, "b")):  # the largest allowed setting fits, one more does not
        most = stepmemory.limits(shape, 128, budget)["one_pass"]
        assert stepmemory.fit(shape, most, 128, budget).passes == 1
        assert stepmemory.fit(shape, most + 128, 128, budget).passes > 1
        most = stepmemory.limits(shape, 128, budget)["batch_tokens"]
        assert stepmemory.fit(shape, most, 128, budget).passes <= stepmemory.MAX_ACCUMULATION
        with pytest.raises(ExplorerError, match="largest step that fits"):
            stepmemory.fit(shape, most + 128, 128, budget)


def test_an_accumulated_step_trains_on_the_same_tokens_as_one_pass() -> None:
    plan = trainer.Plan("mlm", steps=3, batch_tokens=1024, seq_len=32, eval_windows=4)
    shape = stepmemory.shape("mlm", "tiny", 32)
    tight = (stepmemory.estimate(shape, 32, 8 * 32, 1024).total, "a test budget of eight windows per pass")
    from explorer.training import corpus

    text = corpus.from_text(TEXT, "notes")
    one, split = trainer.start(plan, text), trainer.start(plan, text, budget=tight)
    assert one.notice is None and split.notice and "micro-batches" in split.notice
    passes: list[tuple[int, int]] = []
    trainer.advance(one)
    trainer.advance(split, on_progress=lambda p: passes.append(p.part) if p.part else None)
    assert passes and max(n for _, n in passes) >= 4  # 1,024 tokens in passes of at most 256
    assert one.tokens_seen == split.tokens_seen and one.position == split.position
    for (_, a), (_, b) in zip(one.losses, split.losses, strict=True):  # a mean of token-weighted means
        assert b == pytest.approx(a, rel=0.03)


_STEP = PROBE + textwrap.dedent("""
    import json, os, sys
    from explorer.training import batches, corpus, stepmemory, trainer

    plan = trainer.Plan("mlm", steps=1, batch_tokens=int(sys.argv[1]), seq_len=128, eval_windows=2)
    words = " ".join(f"word{i % 997} is here and there" for i in range(40000))
    text = corpus.from_text("\\n\\n".join(words[i:i + 2000] for i in range(0, len(words), 2000)), "synthetic")
    shape = stepmemory.shape("mlm", "tiny", 128)
    budget = (int(sys.argv[2]), "test") if len(sys.argv) > 2 else (10**12, "test")
    step = stepmemory.fit(shape, plan.batch_tokens, 128, budget)
    batches.windows(text, "train", 128), batches.windows(text, "heldout", 128)
    with open("/proc/self/clear_refs", "w") as fh:  # the peak from here on: the step, not the imports before it
        fh.write("5")
    before = rss()
    trainer.advance(trainer.start(plan, text, budget=budget))
    print(json.dumps({"measured": peak() - before, "estimate": step.peak, "passes": step.passes}))
""")


def _measure(*argv: str) -> dict[str, int]:
    if not os.access("/proc/self/clear_refs", os.W_OK):
        pytest.skip("needs Linux's /proc/self/clear_refs to reset the peak RSS")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "2"}
    env.pop("EXPLORER_MEMORY_CAP_GB", None)
    done = subprocess.run([sys.executable, "-c", _STEP, *argv], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_estimate_bounds_the_peak_rss_of_a_real_step_within_the_stated_factor() -> None:
    """A fresh process trains one step of 8,192 tokens (64 windows of 128): measured 588 MB (397-405 MB on another
    CPU), estimated 799 MB."""
    got = _measure("8192")
    assert got["passes"] == 1
    assert got["measured"] <= got["estimate"] <= FACTOR * got["measured"], got


def test_an_accumulated_step_stays_under_its_planned_peak() -> None:
    """32,768 tokens in a budget of about a quarter of their one-pass estimate: the passes keep the peak under it."""
    shape = stepmemory.shape("mlm", "tiny", 128)
    one_pass = stepmemory.estimate(shape, 128, stepmemory._padded(32768, 128), 32768)
    budget = one_pass.overhead + one_pass.weights * 4 + one_pass.data + one_pass.activations // 4
    got = _measure("32768", str(budget))
    assert got["passes"] >= 4 and got["measured"] <= got["estimate"] <= budget < one_pass.total, got
    assert got["estimate"] <= FACTOR * got["measured"], got


def test_fastbert_exits_and_the_probe_check_memory_before_copying_the_model(monkeypatch) -> None:
    from explorer.training import downstream, exits, models, recipes

    model = models.build(recipes.get("mlm"), "tiny", seed=0)
    need = stepmemory.fine_tune_fits(model, 32, 64, "x", allowed=(10**12, "test"))
    assert need.weights == 2 * 4 * models.parameters(model) and need.activations > 0  # the model and its copy
    monkeypatch.setenv("EXPLORER_MEMORY_CAP_GB", "0.25")  # the overhead alone fills it: refused, nothing copied
    monkeypatch.setattr(exits, "wrap", lambda *_: pytest.fail("the model was copied"))
    with pytest.raises(ExplorerError, match="FastBERT's exits needs about .* batches of at most"):
        exits.train(model, exits.ExitSpec(batch=1024, seq_len=512))
    with pytest.raises(ExplorerError, match="downstream probe needs about"):
        downstream.probe(model, spec=downstream.ProbeSpec(batch=1024, seq_len=512))


def test_the_cli_accumulates_a_step_too_large_for_one_pass_and_says_so(tmp_path, monkeypatch, capsys) -> None:
    from explorer.cli import progress

    monkeypatch.setenv("EXPLORER_MEMORY_CAP_GB", "0.32")  # ~30 MB for activations: about 500 tokens per pass
    monkeypatch.setattr(progress, "REPORT_SECONDS", 0.0)  # a line for every pass (else: every 5 s)
    text = tmp_path / "notes.txt"
    text.write_text(TEXT)
    argv = ["pretrain", "mlm", "--steps", "1", "--batch-tokens", "4096", "--seq-len", "32", "--eval-windows", "2",
            "--text-file", str(text), "--out", str(tmp_path / "run"), "--json"]
    assert main(argv) == 0
    captured = capsys.readouterr()
    notes = [ln for ln in captured.err.splitlines() if ln.startswith("note: ")]
    assert len(notes) == 1 and "micro-batches" in notes[0] and "same tokens per step" in notes[0], captured.err
    assert any("micro-batch 1/" in ln and "ETA" in ln for ln in captured.err.splitlines()), captured.err
    assert json.loads(captured.out)["tokens_seen"] >= 4096

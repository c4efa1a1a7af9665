"""Long CLI work shows progress: ``compress`` and ``pretrain`` print a line on stderr at least every
few seconds (explorer.cli.progress.REPORT_SECONDS) with counts and time left, also while one method or one pass
runs for long; Ctrl-C exits 130 and keeps what was already done (``pretrain-compare`` prints its finished runs).

Without these lines, ``compress gemma3-270m`` with 10 methods prints nothing for 8 minutes."""

from __future__ import annotations

import json
import re
import sys
import time

import pytest

from explorer.cli import main, progress
from tests.tiny_models import save_tiny


class Lines:
    """A stand-in for sys.stderr that keeps every line written."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self._part = ""

    def write(self, text: str) -> int:
        self._part += text
        *full, self._part = self._part.split("\n")
        self.lines += [line for line in full if line.strip()]
        return len(text)

    def flush(self) -> None:
        pass


def test_the_heartbeat_repeats_the_status_while_nothing_new_comes(monkeypatch) -> None:
    """On the ticker's own clock (a test's, advanced by hand: no wall time): silent for less than ``every``, the
    heartbeat says nothing; each ``every`` of silence, it repeats the status with the elapsed time."""
    err = Lines()
    monkeypatch.setattr(sys, "stderr", err)
    now = [100.0]
    ticker = progress.Ticker(every=1.0, clock=lambda: now[0])
    ticker.say("step 1/1: one long pass")
    ticker.status = lambda elapsed: f"… step 1/1 still running  elapsed {elapsed:.1f} s  ETA unknown"
    said = []
    for _ in range(4):
        now[0] += 0.5
        said.append(ticker.beat())
    assert said == [False, True, False, True]
    assert err.lines == ["step 1/1: one long pass", "… step 1/1 still running  elapsed 1.0 s  ETA unknown",
                         "… step 1/1 still running  elapsed 2.0 s  ETA unknown"]
    with progress.Ticker(every=0.01) as running:  # and its thread calls it
        running.status = lambda elapsed: "beat"
        deadline = time.monotonic() + 60
        while "beat" not in err.lines:
            assert time.monotonic() < deadline, "the heartbeat thread never beat"
            time.sleep(0.01)


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory) -> str:
    return str(save_tiny("bert-base", tmp_path_factory.mktemp("compress") / "bb"))


def test_compress_reports_each_method_with_counts_and_time_left_at_least_every_few_seconds(tiny_bert, monkeypatch,
                                                                                        capsys) -> None:
    monkeypatch.setattr(progress, "REPORT_SECONDS", 0.2)
    err = Lines()
    monkeypatch.setattr(sys, "stderr", err)
    assert main(["compress", tiny_bert, "--method", "bf16", "--method", "prune-20", "--repeats", "1", "--device",
                 "cpu", "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)) == 2
    lines = err.lines
    assert any(re.match(r"^\s*\d+% .*bf16: .*\(method 1/2\)  elapsed \d+ s  ETA ", ln) for ln in lines), lines
    assert any("prune-20" in ln and "(method 2/2)" in ln for ln in lines), lines
    assert all(re.match(r"^\s*\d+(\.\d+)?%\s", ln) for ln in lines), lines  # the form tests/test_cli_hostile allows


def test_ctrl_c_during_compress_exits_130_with_one_line(tiny_bert, monkeypatch, capsys) -> None:
    from explorer.compression import study

    def interrupted(*_a, progress=None, **_k):
        progress(0.1, "bf16: compressing a copy and measuring it…")
        raise KeyboardInterrupt
    monkeypatch.setattr(study, "run", interrupted)
    assert main(["compress", tiny_bert, "--method", "bf16", "--device", "cpu"]) == 130
    captured = capsys.readouterr()
    assert captured.out == "" and "interrupted (Ctrl-C)" in captured.err and "Traceback" not in captured.err


def test_ctrl_c_in_pretrain_compare_prints_the_runs_that_finished(monkeypatch, capsys) -> None:
    from explorer.training import trainer

    real, calls = trainer.advance, []

    def second_interrupted(run, *a, **k):
        calls.append(run.plan.objective)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(run, *a, **k)
    monkeypatch.setattr(trainer, "advance", second_interrupted)
    args = ["--steps", "2", "--batch-tokens", "64", "--seq-len", "32", "--eval-windows", "2", "--device", "cpu"]
    assert main(["pretrain-compare", "mlm", "roberta", *args, "--no-probe", "--json"]) == 130
    captured = capsys.readouterr()
    assert [r["objective"] for r in json.loads(captured.out)] == ["mlm"]  # kept: what finished before Ctrl-C
    assert "interrupted (Ctrl-C) after 1 of 2 runs" in captured.err.splitlines()[-1]

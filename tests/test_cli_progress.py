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
    """A stand-in for sys.stderr that stamps every line with the time it was written."""

    def __init__(self) -> None:
        self.stamped: list[tuple[float, str]] = []
        self._part = ""

    def write(self, text: str) -> int:
        self._part += text
        *full, self._part = self._part.split("\n")
        self.stamped += [(time.monotonic(), line) for line in full if line.strip()]
        return len(text)

    def flush(self) -> None:
        pass

    @property
    def lines(self) -> list[str]:
        return [line for _, line in self.stamped]

    def longest_gap(self, after: str) -> float:
        """The longest silence between lines, from the first line containing ``after`` on."""
        times = [t for t, _ in self.stamped]
        first = next(i for i, line in enumerate(self.lines) if after in line)
        return max((b - a for a, b in zip(times[first:], times[first + 1:], strict=False)), default=0.0)


def test_the_heartbeat_repeats_the_status_while_nothing_new_comes(monkeypatch) -> None:
    err = Lines()
    monkeypatch.setattr(sys, "stderr", err)
    with progress.Ticker(every=0.1) as ticker:
        ticker.say("step 1/1: one long pass")
        ticker.status = lambda elapsed: f"… step 1/1 still running  elapsed {elapsed:.1f} s  ETA unknown"
        time.sleep(0.8)  # a single pass of a large step: nothing to report for a while
    beats = [line for line in err.lines if line.startswith("… step 1/1 still running")]
    assert len(beats) >= 4 and err.longest_gap("one long pass") < 0.5, err.lines


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
    # the heartbeat fills every silence: a report every 0.2 s, and up to 3 s more where the test runs beside others
    # (2.3 s once, on two workers of two cores); without it, each method's measuring is one silence
    assert err.longest_gap("Loading") < 0.2 + 3.0, err.stamped


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

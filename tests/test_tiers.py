"""The tier guard (tests/tiers.py): a quick test that reaches a real model at run time fails with its advice, and a
real fixture named among a test's arguments marks the test slow."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests import tiers

ROOT = Path(__file__).resolve().parents[1]


def test_a_real_fixture_asked_for_at_run_time_fails_the_quick_test() -> None:
    """The real fixtures are session-scoped: a setup hook in tests/conftest.py is not asked for them (pytest asks the
    session node's hooks), so the guard is a plugin; it once saw none of them."""
    env = {**os.environ, tiers.SWITCH: "1"}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "not slow",
                           "tests/tier_guard_probe.py"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stdout[-2000:]
    assert "reaches 'bundled_encoder' at run time" in done.stdout and "1 failed" in done.stdout, done.stdout[-2000:]


def test_a_real_fixture_among_the_arguments_marks_the_test_slow(request: pytest.FixtureRequest) -> None:
    item = request.node
    assert not tiers.is_real(item)  # this test names none
    item.fixturenames.append("bundled_decoder")  # as a test naming it would have it
    try:
        assert tiers.is_real(item)
    finally:
        item.fixturenames.remove("bundled_decoder")

"""explorer.runtime.threads: a server request leaves the cores other processes keep busy to them."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import pytest
import torch

from explorer.runtime import threads, workers


@pytest.fixture()
def two_busy_processes() -> Iterator[None]:
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    before = torch.get_num_threads()
    try:
        yield
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
        torch.set_num_threads(before)


def test_the_run_queue_is_read() -> None:
    assert threads.running_elsewhere() >= 0 and threads.configured() >= 1


def test_a_request_on_a_busy_machine_uses_the_cores_left(two_busy_processes) -> None:
    """With two processes spinning, a queued request runs on at most the cores they leave (one, on 2 cores): on
    oversubscribed cores, a thread of a parallel matrix product waits for a descheduled sibling at every product."""
    assert threads.running_elsewhere() >= 2

    @workers.queued
    def request() -> int:
        return torch.get_num_threads()

    before = torch.get_num_threads()
    assert request() <= max(1, (os.cpu_count() or 1) - 2)
    assert torch.get_num_threads() == before  # the process's setting is back after the request

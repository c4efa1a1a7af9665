"""A Streamlit server whose named functions take at least a set time per call, so that a test fixes the pace of the
work it races (a training step, a decoding step): what it sees mid-run, or what a budget stops, then does not depend
on the machine's speed (a faster machine once finished a run between two redraws).

    python -m tests.browser.paced explorer.training.trainer:_step=0.1 -- run app/main.py --server.port 8599

Each ``module:attribute[.attribute]=seconds`` is wrapped before Streamlit starts, so every later call (and every
later ``from module import name``) goes through the pause; the arguments after ``--`` are Streamlit's own.
"""

from __future__ import annotations

import functools
import importlib
import sys
import time
from collections.abc import Callable
from typing import Any

__all__ = ["pace", "spec"]


def spec(target: str, seconds: float) -> str:
    """The command-line form of one pace: ``spec("explorer.training.trainer:_step", 0.1)``."""
    return f"{target}={seconds}"


def pace(one: str) -> None:
    """Wrap the function named by ``one`` (``module:qualname=seconds``) to sleep before each call."""
    target, seconds = one.rsplit("=", 1)
    module_name, qualname = target.split(":", 1)
    owner: Any = importlib.import_module(module_name)
    *path, name = qualname.split(".")
    for part in path:
        owner = getattr(owner, part)
    original: Callable[..., Any] = getattr(owner, name)
    pause = float(seconds)

    @functools.wraps(original)
    def paced(*args: Any, **kwargs: Any) -> Any:
        time.sleep(pause)
        return original(*args, **kwargs)

    setattr(owner, name, paced)


def main(argv: list[str]) -> int:
    split = argv.index("--")
    for one in argv[:split]:
        pace(one)
    from streamlit.web import cli

    sys.argv = ["streamlit", *argv[split + 1:]]
    return int(cli.main() or 0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

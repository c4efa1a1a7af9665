"""explorer.core.units: human-readable counts and bytes."""

from __future__ import annotations

import pytest

from explorer.core.units import human, human_bytes


@pytest.mark.parametrize("n, text", [(0, "0"), (999, "999"), (1_000, "1K"), (109_482_240, "109M"),
                                     (174_600_000_000, "175B"), (2.5e12, "2.5T"), (-12_345_678, "-12.3M")])
def test_human(n: float, text: str) -> None:
    assert human(n) == text


@pytest.mark.parametrize("n, text", [(512, "512 B"), (1_500, "1.5 kB"), (440_000_000, "440 MB"),
                                     (44e9, "44 GB"), (3e12, "3 TB")])
def test_human_bytes(n: float, text: str) -> None:
    assert human_bytes(n) == text

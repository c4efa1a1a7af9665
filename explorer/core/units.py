"""Human-readable numbers: 12,345,678 -> '12.3M', 440,000,000 bytes -> '440 MB'."""

from __future__ import annotations

__all__ = ["human", "human_bytes"]


def human(n: float) -> str:
    """A count with a T/B/M/K suffix and three significant digits."""
    for unit, size in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if abs(n) >= size:
            return f"{n / size:.3g}{unit}"
    return f"{n:.0f}"


def human_bytes(n: float) -> str:
    """Bytes in decimal units."""
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if abs(n) >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n:.0f} B"

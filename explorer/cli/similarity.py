"""CLI commands of the similarity area (filled in by that area's work)."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    """Add this area's sub-commands to the parser."""

"""CLI commands of the architecture area: list, inspect, compare."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    """Add this area's sub-commands to the parser."""

"""Positions from configs, no weights: each variant's scheme (``scheme.py``), the formulas (``formulas.py``: sinusoid
tables, T5's and DeBERTa's buckets, ALiBi, rotary angles) and what a position table's rows say (``tables.py``).

The weights themselves (a learned table, T5's bias per bucket, a rotary module's output) are read by
:mod:`explorer.internals.positions`.
"""

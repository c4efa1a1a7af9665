"""Mechanisms that define a variant, computed on real modules (DeBERTa's disentangled attention, ...).

Each module builds what it needs from the variant's config (random weights where the point is the
arithmetic, said in the result) and checks its decomposition against the model's own numbers.
"""

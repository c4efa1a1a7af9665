"""Shared utilities every layer uses, with no torch or transformers: the one error type, notices,
labels and escapers, number formatting, the on-disk result cache, and checks for what users type
(:mod:`~explorer.core.userinput`) or hand over as files (:mod:`~explorer.core.userfiles`)."""

"""The forward pass, step by step: every operation of every layer recomputed from a model's own weights with
plain tensor arithmetic, in the order the model runs them, each checked against the model's own intermediate.

- :mod:`~explorer.internals.forward.walk`: :func:`walk` (a loaded model and a text -> a :class:`Walk`);
- :mod:`~explorer.internals.forward.run`: :func:`run` (a resolved model: bad input refused before it loads);
- :mod:`~explorer.internals.forward.family`: the framework the families share, the block as the card orders it;
- one file per family (``bert.py``, ``gemma3.py``, ``gpt2.py``, ``t5.py``), listed in
  :mod:`~explorer.internals.forward.families`; a family not there is refused, naming those that are.

Adding a family: a file with a :class:`~explorer.internals.forward.family.Family` subclass (its embeddings, its
head, what else its card cannot say), one line in ``families.FAMILIES``, and its oracle test.
"""

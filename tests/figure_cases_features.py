"""Figure cases of the Features page (tests/figure_cases.py imports this): a hand-made card and clamp."""

from __future__ import annotations

from explorer.features import dashboard
from explorer.features.clamp import Clamped
from explorer.features.dashboard import Card, Context
from explorer.plots import features
from tests.figure_cases import CASES

TOKENS = ("The", " function", " returns", " a", " <list>", " of", " values")
CONTEXT = Context(TOKENS, (0.0, 0.1, 0.5, 0.0, 3.2, 0.2, 0.0), 4, 3.2)
CARD = Card(7, 0.031, 3.2, 1.1, 8192, (CONTEXT,) * 5, ((2.56, 3.2, 4, (CONTEXT,)),), ((-1.0, -0.5, 0.0, 0.5),
            (3, 9, 2)), tuple((f" tok{i}", 2.0 - i / 10) for i in range(10)),
            tuple((f" low{i}", -1.0 + i / 10) for i in range(10)), dashboard.HEAD)
CLAMPED = Clamped(7, 40.0, 6, " is", "the next token", tuple((f" a{i}", 0.3 / (i + 1)) for i in range(10)),
                  tuple((f" b{i}", 0.5 / (i + 1)) for i in range(10)), 0.42, 0.8)

CASES["features.contexts"] = lambda: features.contexts(CARD)
CASES["features.density"] = lambda: features.density(CARD)
CASES["features.effect"] = lambda: features.effect(CARD)
CASES["features.prediction"] = lambda: features.prediction(CLAMPED)

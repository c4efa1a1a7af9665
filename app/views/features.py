"""Drawing of the Features page: a dictionary's measured figures, a feature's dashboard, a text's active features
per token, a clamp's before and after."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from app import ui
from explorer.features.active import Active
from explorer.features.clamp import Clamped
from explorer.features.dashboard import Card
from explorer.features.folder import Saved
from explorer.plots import features as plots

__all__ = ["DEFINITIONS", "active", "card", "clamped", "figures"]

DEFINITIONS = {
    "l0": "L0: features active per token, on average",
    "fve": "FVE: fraction of the site's variance the reconstruction explains",
    "ce_clean": "the model's own loss on held-out text",
    "ce_spliced": "the loss with the reconstruction spliced in at the site",
    "ce_zero": "the loss with the site zeroed",
    "ce_recovered": "CE recovered: (zero - spliced) / (zero - clean); 1 is perfect",
    "dead_fraction": "features that never fire on the held-out tokens",
    "dense_fraction": "features that fire on more than 10% of them",
}


def figures(saved: Saved) -> None:
    """What the dictionary is and its figures as measured right after training (ours), or as its file claims."""
    st.caption(f"{saved.about.kind} dictionary of {saved.dictionary.width:,} features on the {saved.about.where} "
               f"({saved.about.format} layout).")
    measured = saved.about.measured or {}
    rows = [{"figure": DEFINITIONS[k], "value": measured[k]} for k in DEFINITIONS if measured.get(k) is not None]
    if rows:
        st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
    elif saved.about.claims:
        st.json(saved.about.claims)


def card(c: Card) -> None:
    st.markdown(f"**Feature {c.feature}**: active on {c.density:.2%} of {c.tokens:,} held-out tokens; largest "
                f"activation {c.max_act:.2f}, mean where active {c.mean_act:.2f}.")
    if not c.top:
        st.caption("This feature never fired on the held-out text (dead here).")
        return
    ui.figure(plots.contexts(c), f"feature-{c.feature}-contexts")
    left, right = st.columns(2)
    with left:
        ui.figure(plots.density(c), f"feature-{c.feature}-density")
    with right:
        ui.figure(plots.effect(c), f"feature-{c.feature}-effect")
    st.caption(f"Logit effect: {c.effect}.")


def active(a: Active) -> None:
    rows = [{"position": t.position, "token": t.token,
             "features": "—" if t.special else ", ".join(f"{f} ({v:.2f})" for f, v in t.features)}
            for t in a.tokens]
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
    if a.cut:
        st.caption("Only the first tokens are read.")


def clamped(result: Clamped) -> None:
    st.caption(f"Read: {result.read} (at token {result.position}, {result.token!r}); the feature's mean activation "
               f"on this text was {result.mean_activation:.3f}.")
    ui.figure(plots.prediction(result), f"feature-{result.feature}-clamp")

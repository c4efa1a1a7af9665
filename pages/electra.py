"""Replaced-token detection: ELECTRA's generator fills masks, its discriminator finds what was replaced."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from app import ui
from app.caches import models as cache
from app.views import device_picker
from explorer.core.errors import ExplorerError
from explorer.plots import fillmask as plots
from explorer.runtime.resolve import ModelRef, resolve
from explorer.tasks.discriminator import ReplacedTokens

EXAMPLE = "The chef cooked the meal and everyone enjoyed it."
MAX_SEED = 10_000


def inputs(pairs: list[str]) -> tuple[str | None, float, int, str, bool]:
    """Pair, share masked, seed (pair and seed in the URL), sentence, and whether random weights may stand in."""
    ui.seed_from_url("el_pair", "pair", pairs)
    e1, e2, e3 = st.columns([2, 1, 1])
    pair = e1.selectbox("ELECTRA pair", pairs, key="el_pair")
    fraction = e2.slider("Share of tokens to mask (without [MASK] in the text)", 0.0, 0.5, 0.15, 0.05, key="el_frac")
    seed = int(e3.number_input("Seed", 0, MAX_SEED, ui.query_int("seed", 0, 0, MAX_SEED), key="el_seed"))
    sentence = st.text_input("Sentence", EXAMPLE, key="el_text", help="Blanks you type ([MASK] or ___) are what "
                             "the generator fills; without any, the share above is masked at random (seeded).")
    allow_random = st.toggle("Untrained weights for models whose weights are not on disk", value=True,
                             key="el_random", help="Random weights built from the published config: the "
                             "probabilities are noise, but the code path is real. Labelled 'untrained'.")
    if pair:
        st.query_params.update({"pair": pair, "seed": str(seed)})
    return pair, float(fraction), seed, sentence, allow_random


def refs(models: tuple[str, str], directory: str | None, allow_random: bool) -> list[ModelRef] | None:
    """Each model resolved once; None, with how to get them, when weights are absent and may not be random."""
    found = [resolve(k, directory, allow_random=allow_random) for k in models]
    absent = [p for p in found if p.missing and not p.random_weights]
    for p in absent:  # how to get them: a state to explain, not a failure
        st.warning(ui.markdown_safe(p.reason), icon=":material/cloud_download:")
    return None if absent else found


def result(res: ReplacedTokens) -> None:
    """Labels, the strip of P(replaced) per token, and the table (also as CSV)."""
    if res.untrained:
        ui.notice(ui.UNTRAINED)
    ui.notices(res.notices)
    st.caption(f"{sum(res.replaced)} of {len(res.tokens)} tokens replaced · accuracy at 0.5: {res.accuracy:.0%} "
               f"· {device_picker.ran_caption(res)} · {res.latency_ms:.0f} ms")
    ui.figure(plots.replaced_strip(res), "electra_replaced", key="el_fig")
    table = pd.DataFrame({"original": res.original, "input": res.tokens, "replaced": res.replaced,
                          "P(replaced)": res.probability})
    st.dataframe(table, hide_index=True, width="stretch")
    ui.csv_download(table, "electra_replaced", key="el_csv")


where = device_picker.pick().kwargs()  # the sidebar's device and precision, part of every cache key
st.title("Replaced-token detection (ELECTRA)")
st.caption("ELECTRA pretrains a discriminator instead of a masked LM: a small generator fills the masks "
           "(by sampling, as in pretraining), and the discriminator reads the result and gives, for every "
           "token, the probability that it was replaced. Every token teaches it, not only the masked 15%.")
pairs = cache.electra_pairs()
pair, fraction, seed, sentence, allow_random = inputs(list(pairs))
directory = cache.models_dir()
with ui.guard():
    if pair is None:
        raise ExplorerError("The catalog has no ELECTRA pair: add one with a generator and a discriminator.")
    found = refs(pairs[pair], directory, allow_random)
    if found is not None:
        with st.spinner("Generator and discriminator at work…"):
            res = cache.electra(found[0], found[1], sentence, fraction, seed, **where)
        result(res)

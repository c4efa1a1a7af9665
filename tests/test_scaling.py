"""Scaling laws: Kaplan's constants, Chinchilla's split, and the catalog placed by its recorded budgets."""

from __future__ import annotations

import pytest

from explorer.architecture import catalog
from explorer.papers import budgets, scaling
from explorer.plots import scaling as plots


def test_kaplan_curves_at_their_constants():
    assert scaling.loss_n(scaling.N_C) == pytest.approx(1.0)
    assert scaling.loss_d(scaling.D_C) == pytest.approx(1.0)
    assert scaling.loss_n(1e9) == pytest.approx(88_000 ** 0.076)  # 8.8e13 / 1e9
    assert scaling.loss_n(2e9) / scaling.loss_n(1e9) == pytest.approx(2 ** -0.076)  # 5% per doubling


def test_chinchilla_optimum_recovers_chinchilla_itself():
    n, d = scaling.chinchilla_optimal(6 * 70e9 * 1.4e12)  # 70B parameters on 1.4T tokens
    assert n == pytest.approx(70e9, rel=0.01) and d == pytest.approx(1.4e12, rel=0.01)
    assert d / n == scaling.TOKENS_PER_PARAM


def test_placements_use_published_params_and_recorded_tokens():
    places = {p.key: p for p in scaling.placements()}
    assert {"bert-base", "gpt3", "gpt-j", "longformer"} <= set(places)
    gpt3 = places["gpt3"]
    assert gpt3.params == 175_000_000_000 and gpt3.tokens == 3e11
    assert gpt3.tokens_per_param == pytest.approx(300 / 175)  # far below Chinchilla's 20
    assert "bart-large" not in places and "ctrl" not in places  # their budgets give no token count


def test_every_budget_with_tokens_and_a_parameter_count_is_placed():
    """Every budget with tokens and a published count sits on the plots, ALBERT (sequence length read in
    Sec. 4.1) and ELECTRA-Base (Table 6's 766K steps) included; what is left out lacks tokens or a published
    count."""
    places = {p.key: p for p in scaling.placements()}
    expected = {b.key for b in budgets.budgets()
                if b.tokens is not None and catalog.get_variant(b.key).published_params is not None}
    assert set(places) == expected
    assert {"albert-base", "albert-large", "albert-xxlarge", "electra-base-discriminator", "t5-11b"} <= expected
    albert = places["albert-base"]
    assert albert.tokens == 125_000 * 4096 * 512 and albert.tokens_source == "steps x batch x seq_len"
    # its 12 layers share one set of weights, counted once as Kaplan counts weights: a tenth of BERT-base's
    assert albert.non_embedding < places["bert-base"].non_embedding / 10


def test_geomspace_is_log_even():
    pts = scaling.geomspace(1e2, 1e4, 3)
    assert pts == pytest.approx([1e2, 1e3, 1e4])


def test_figures_draw_every_placement():
    places = scaling.placements()
    kaplan = plots.kaplan_figure(places)
    assert len(kaplan.data) == 4 and len(kaplan.data[2].x) == len(places)
    plane = plots.chinchilla_figure(places)
    assert plane.data[0].name.startswith("Chinchilla") and len(plane.data[-1].x) == len(places)


def test_kaplans_n_leaves_out_the_embeddings_and_chinchillas_counts_everything():
    """Counting embeddings in Kaplan's N puts Gemma 3 270M 2.7x too far right on L(N). Its model card: about
    100M transformer parameters beside 170M of embeddings; BERT-base's encoder has 85M outside its 23.8M of
    embedding tables."""
    places = {p.key: p for p in scaling.placements()}
    gemma, bert = places["gemma3-270m"], places["bert-base"]
    assert gemma.non_embedding == pytest.approx(100e6, rel=0.02) and gemma.params / gemma.non_embedding > 2.6
    assert gemma.loss_n == pytest.approx(scaling.loss_n(gemma.non_embedding))
    assert bert.non_embedding == pytest.approx(86.3e6, rel=0.01)  # the encoder and its MLM head's transform
    assert gemma.loss_chinchilla == pytest.approx(scaling.loss_chinchilla(270e6, gemma.tokens))
    assert scaling.loss_chinchilla(70e9, 1.4e12) == pytest.approx(1.69 + 406.4 / 70e9 ** 0.34 + 410.7 / 1.4e12 ** 0.28)
    plane = plots.chinchilla_figure(list(places.values()))
    assert sum(1 for t in plane.data if t.name and t.name.startswith("L(N, D)")) == len(plots.ISO_COMPUTE)

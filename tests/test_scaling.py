"""Scaling laws: Kaplan's constants, Chinchilla's split, and the catalog placed by its recorded budgets."""

from __future__ import annotations

import pytest

from explorer.architecture import budgets, catalog
from explorer.papers import scaling
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
    """Every budget with tokens and a published count that is its checkpoint's own sits on the plots (ELECTRA-Base:
    Table 6's 766K steps); what is left out lacks tokens or a published count, or is a shorter setup of its paper
    than the checkpoint the catalog builds (ALBERT v2), and says so."""
    places = {p.key: p for p in scaling.placements()}
    expected = {b.key for b in budgets.budgets() if b.tokens is not None and b.describes_checkpoint
                and catalog.get_variant(b.key).published_params is not None}
    assert set(places) == expected
    assert {"electra-base-discriminator", "t5-11b"} <= expected


def test_albert_v2_checkpoints_are_not_placed_at_the_papers_v1_budget():
    """The catalog builds ALBERT v2 (the README: base 10M steps, the others 3M) and the budget records the paper's
    125K-step setup: 80x and 24x fewer steps. The v2 token count is not published, so the plots leave them out."""
    places = {p.key for p in scaling.placements()}
    left_out = scaling.unplaced()
    for key, ratio in (("albert-base", 80), ("albert-large", 24), ("albert-xxlarge", 24)):
        b = budgets.budget(key)
        assert b.steps == 125_000 and b.checkpoint_ratio == ratio and not b.describes_checkpoint
        assert key not in places and f"{ratio}x" in left_out[key]
        assert f"{ratio}x the paper's steps" in b.note and "several times" not in b.note
        assert f"trained {ratio}x as many steps" in b.train_flops_source
    plane = plots.chinchilla_figure(scaling.placements())
    assert not any("albert" in str(t) for t in plane.data[-1].text)


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


def test_the_chinchilla_fit_cites_what_can_be_checked_and_the_replication():
    doc = scaling.__doc__ or ""
    assert "Eq. 10" not in doc and "Approach 3" in doc
    assert "Besiroglu et al. 2024" in doc and "rounded" in doc

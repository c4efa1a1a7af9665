"""XLM: CLM targets, Bernoulli MLM rate, TLM language ids and position reset."""

from __future__ import annotations

import math

from explorer.objectives import STRATEGIES, run
from explorer.objectives.stats import draw_stats
from explorer.objectives.text import EXAMPLE_TEXT, EXAMPLE_TRANSLATION, prepare


def prep(name: str):
    s = STRATEGIES[name]
    return prepare(EXAMPLE_TEXT.split("!")[0] + ".", s.tokenizer, s.frame, EXAMPLE_TRANSLATION if s.pair else None)


def test_tlm_language_ids_and_positions_reset() -> None:
    p = prep("xlm-tlm")
    r = run("xlm-tlm", p.tokens, 0, p.vocab)
    cut = p.tokens.index("[SEP]") + 1
    assert r.lang_ids == (0,) * cut + (1,) * (len(p.tokens) - cut)
    assert r.positions[:cut] == tuple(range(cut)) and r.positions[cut:] == tuple(range(len(p.tokens) - cut))
    assert r.languages == ("en", "fr")


def test_mlm_and_tlm_mask_each_token_with_probability_fifteen_percent() -> None:
    for name in ("xlm-mlm", "xlm-tlm"):
        p = prep(name)
        st = draw_stats(name, p.tokens, p.vocab, seed=1, n_draws=4000)
        trials = st.n_eligible * st.n_draws
        assert abs(st.rate - 0.15) < 4.5 * math.sqrt(0.15 * 0.85 / trials)
        assert st.rate_std > 0  # independent Bernoulli: the count varies, unlike BERT's
    # both languages get masked
    p = prep("xlm-tlm")
    langs = set()
    for d in range(50):
        r = run("xlm-tlm", p.tokens, 0, p.vocab, epoch=d)
        langs |= {r.lang_ids[i] for i, t in enumerate(r.targets) if t is not None}
    assert langs == {0, 1}


def test_clm_targets_are_the_next_tokens() -> None:
    p = prep("xlm-clm")
    r = run("xlm-clm", p.tokens, 0, p.vocab)
    assert r.targets == tuple(p.tokens[1:]) + (None,) and r.input_tokens == p.tokens

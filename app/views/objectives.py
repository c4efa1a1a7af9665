"""Drawing the Objectives page's tabs (Streamlit only; every decision comes from explorer.objectives.view)."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import streamlit as st

from app import ui
from app.caches import objectives as cache
from explorer.core.labels import escape_markdown
from explorer.objectives import STRATEGIES, ObjectiveResult, Strategy, view
from explorer.objectives import decoding as dec
from explorer.objectives import distill as dist
from explorer.objectives.base import SentencePairResult, Seq2SeqResult
from explorer.objectives.electra import ElectraResult
from explorer.objectives.stats import expected_kinds
from explorer.plots import objectives as plots

COMPARE_DEFAULT = ["bert", "wwm", "spanbert", "t5", "bart-infill"]


def chips(tokens: Sequence[str], kinds: Sequence[str], tokenizer: str, notes: Sequence[str] | None = None) -> None:
    st.html(plots.chips_html(view.display_tokens(tokens, tokenizer), kinds, notes))


def options(s: Strategy) -> tuple[tuple[str, object], ...]:
    """The strategy's own knobs (declared by the library), as a hashable tuple of (keyword, value)."""
    picked = []
    for o in s.options:
        value: float | tuple[object, ...]
        if o.kind == "slider":
            lo, hi, step = o.choices
            value = float(st.slider(o.label, lo, hi, o.default, step, key=f"obj_{o.keyword}", help=o.help or None))
        else:
            value = tuple(st.multiselect(o.label, list(o.choices), list(o.default), key=f"obj_{o.keyword}"))
        picked.append((o.keyword, value))
    return tuple(picked)


def header(s: Strategy, text: str, pair: str | None) -> None:
    st.markdown(f"**{s.label}.** {s.description}")
    st.caption(f"Tokenizer: {s.tokenizer_note}")
    notice = view.truncation_notice(cache.prepared(s.name, text, pair))
    if notice:
        ui.notice(notice)


def one_draw(s: Strategy, text: str, pair: str | None, seed: int, opts: tuple[tuple[str, object], ...]) -> None:
    """The input with coloured tokens and a legend, then the targets and what defines the draw."""
    r = cache.result(s.name, text, pair, seed, 0, opts)
    if isinstance(r, SentencePairResult):
        st.markdown(f"Label to predict: **{r.label}** (classes: {', '.join(r.classes)})")
    else:
        st.markdown("**Model input** (hover a chip for its target)")
    chips(r.input_tokens, view.chip_kinds(r), s.tokenizer, view.hover_notes(r))
    st.html(plots.legend_html(view.chip_kinds(r)))
    if isinstance(r, Seq2SeqResult):
        st.markdown("**Decoder target**")
        chips(r.target_tokens, plots.target_kinds(r.target_tokens), s.tokenizer)
        if r.detail:
            st.caption(r.detail)
        for step, toks in r.steps:
            st.caption(f"after {step}: {escape_markdown(' '.join(view.display_tokens(toks, s.tokenizer))[:400])}")
    if isinstance(r, ElectraResult):
        st.markdown("**Generator input** (the discriminator above sees the generator's proposals)")
        chips(r.generator_input, r.generator_kinds(), s.tokenizer)
    tables(s, r)


def tables(s: Strategy, r: ObjectiveResult) -> None:
    """SpanBERT's span table and the per-token table (CSV) of token-level results."""
    spans = view.span_rows(r, s.tokenizer)
    if spans:
        st.markdown("**Spans** and their boundary tokens: SBO predicts each target from x(s-1), x(e+1) "
                    "and its position")
        st.dataframe(pd.DataFrame(spans), hide_index=True)
    rows = view.token_rows(r, s.tokenizer)
    if rows:
        with st.expander("Per-token table"):
            df = pd.DataFrame(rows)
            st.dataframe(df, hide_index=True, height=260)
            ui.csv_download(df, f"objective-{s.name}", key="obj_csv")


def statistics(s: Strategy, text: str, pair: str | None, seed: int, opts: tuple[tuple[str, object], ...]) -> None:
    """The defining statistics over many draws, against the theory."""
    n = st.select_slider("Draws", [100, 200, 500, 1000, 2000], 500, key="obj_draws")
    with st.spinner(f"Running {s.label} {n:,} times..."):
        stats = cache.draw_stats(s.name, text, pair, seed, n, opts)
    shown = view.display_tokens(cache.prepared(s.name, text, pair).tokens, s.tokenizer)
    if stats.expected_rate is not None:
        a, b, c = st.columns(3)
        a.metric("Realised selection rate", f"{stats.rate:.4f}",
                 help="Mean fraction of non-special tokens selected per draw.")
        b.metric("Built to realise", f"{stats.expected_rate:.4f}", help=s.rate_help or None)
        c.metric("Spread across draws (sd)", f"{stats.rate_std:.4f}")
    if stats.position_freq and s.kind != "sentence" and stats.rate > 0:
        ui.figure(plots.position_figure(stats, shown), f"objective-{s.name}-positions")
    rule = expected_kinds(s.name, dict(opts))
    if stats.kind_counts and rule:
        ui.figure(plots.kinds_figure(stats, rule), f"objective-{s.name}-kinds")
    if stats.sampled_lengths or stats.span_lengths:
        ui.figure(plots.span_figure(stats), f"objective-{s.name}-spans")
        st.caption("Lengths as drawn. A realised span can be shorter: the budget runs out or a neighbouring "
                   "span is in the way (T5 instead cuts the noise into spans directly, so drawn = realised).")
    if stats.labels:
        r = cache.result(s.name, text, pair, seed, 0, opts)
        classes = r.classes if isinstance(r, SentencePairResult) else None
        ui.figure(plots.labels_figure(stats, classes), f"objective-{s.name}-outcomes")
    if s.shows_epochs:
        dyn, sta = cache.epochs(text, seed, 6)
        ui.figure(plots.epochs_figure(shown, [r.kinds for r in dyn], [r.kinds for r in sta]), "objective-epochs")


def compare(text: str, pair: str, seed: int) -> None:
    names = st.multiselect("Strategies", list(STRATEGIES),
                           default=ui.query_list("compare", COMPARE_DEFAULT, list(STRATEGIES)), key="obj_compare",
                           format_func=lambda n: STRATEGIES[n].label)
    ui.set_query_list("compare", names)
    for name in names:
        s = STRATEGIES[name]
        r = cache.result(name, text, pair if s.pair else None, seed)
        st.markdown(f"**{s.label}** · {s.tokenizer}")
        chips(r.input_tokens, view.chip_kinds(r), s.tokenizer)
        if isinstance(r, Seq2SeqResult):
            chips(r.target_tokens, plots.target_kinds(r.target_tokens), s.tokenizer)
        if isinstance(r, SentencePairResult):
            st.caption(f"label: {r.label}")


def decoding(text: str, seed: int) -> None:
    """A next-token table (editable) through greedy / temperature / top-k, then a tiny generator."""
    st.markdown(f"GPT predicts a distribution over the next token. Context: *{dec.EXAMPLE_CONTEXT} …* "
                "Edit the table (rows can be added), then pick how to choose from it. The Decoding lab page "
                "does the same with a real model's logits.")
    left, right = st.columns([2, 3])
    edited = left.data_editor(pd.DataFrame({"token": list(dec.EXAMPLE_TABLE),
                                            "probability": list(dec.EXAMPLE_TABLE.values())}),
                              num_rows="dynamic", key="obj_table", hide_index=True)
    table: tuple[tuple[str, float], ...] = ()
    with ui.guard():  # an empty or inconsistent table: a red box, the rest of the page goes on
        table = tuple(dec.table_from_rows(list(edited["token"]), list(edited["probability"])).items())
    if not table:
        return
    method = right.radio("Method", dec.METHODS, horizontal=True, key="obj_method")
    temperature = right.slider("Temperature", 0.1, 3.0, 1.0, 0.1, key="obj_temp", disabled=method == "greedy")
    top_k = right.number_input("k (top-k)", 1, len(table), min(3, len(table)), key="obj_topk",
                               disabled=method != "top-k")
    with ui.guard():
        r = cache.decode(table, method, float(temperature), int(top_k), seed, 2000)
        right.metric("Chosen next token" if method == "greedy" else "First sample", r.choice)
        ui.figure(plots.decoding_figure(r), "objective-decoding")
    st.markdown("**Generate from your text.** A bigram model counted from your text's GPT-2 pieces continues its "
                "first piece:")
    with ui.guard():
        out = cache.generate(text, 25, method, float(temperature), int(top_k), seed)
        chips(out, ["start"] + ["predicts next"] * (len(out) - 1), "gpt2")


def distillation() -> None:
    """DistilBERT's loss on one masked position: teacher vs student, softened by T."""
    st.markdown(f"Masked position: *{dist.EXAMPLE_CONTEXT}* (true token **{dist.EXAMPLE_TRUE}**). The student "
                "learns from the true token (CE) and from the teacher's softened distribution (KL).")
    a, b, c = st.columns(3)
    temperature = a.slider("Temperature T", 1.0, 10.0, 2.0, 0.5, key="obj_dist_t")
    alpha = b.slider("alpha (weight of CE)", 0.0, 1.0, 0.5, 0.05, key="obj_dist_alpha")
    skill = c.slider("Student quality", 0.0, 1.0, 0.0, 0.1, key="obj_dist_skill",
                     help="0: the example student; 1: the student's logits equal the teacher's.")
    r = cache.distillation(float(temperature), float(alpha), float(skill))
    m = st.columns(4)
    m[0].metric("CE (student vs true token)", f"{r.ce:.4f}")
    m[1].metric("KL(teacher_T ‖ student_T)", f"{r.kl:.4f}")
    m[2].metric("T² · KL", f"{r.kl_scaled:.4f}",
                help="Hinton et al.: T² keeps the soft term's gradients comparable as T grows.")
    m[3].metric("loss = α·CE + (1-α)·T²·KL", f"{r.loss:.4f}")
    ui.figure(plots.distill_figure(r), "objective-distillation")
    ui.csv_download(pd.DataFrame(r.rows()), "objective-distillation", key="obj_dist_csv")

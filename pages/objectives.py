"""Objectives: what each pretraining objective feeds the model and what it must predict."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from app import cache_objectives as cache
from app import ui
from explorer.objectives import GROUPS, STRATEGIES, Strategy
from explorer.objectives import decoding as dec
from explorer.objectives import distill as dist
from explorer.objectives.bart import NOISES
from explorer.objectives.base import is_special
from explorer.objectives.electra import P_ORIGINAL
from explorer.objectives.stats import expected_kinds
from explorer.objectives.text import EXAMPLE_TEXT, EXAMPLE_TRANSLATION, MAX_CHARS, MAX_TOKENS
from explorer.plots import objectives as plots
from explorer.tokenization import readable_piece

COMPARE_DEFAULT = ["bert", "wwm", "spanbert", "t5", "bart-infill"]


def show(tokens, tokenizer: str) -> list[str]:
    """Pieces as a learner reads them (GPT-2's byte alphabet decoded: "Ġworld" -> "␣world")."""
    if tokenizer != "gpt2":
        return list(tokens)
    return [t if t.startswith("<mask") or is_special(t) else readable_piece("gpt2", t, False) for t in tokens]


def chips(tokens, kinds, tokenizer: str, notes=None) -> None:
    st.html(plots.chips_html(show(tokens, tokenizer), kinds, notes))


def inputs() -> tuple[str, str, Strategy, int]:
    """Text, translation (TLM), strategy (grouped) and seed; the strategy is kept in the URL."""
    left, right = st.columns([3, 2])
    text = left.text_area("Text", EXAMPLE_TEXT, height=120, max_chars=MAX_CHARS, key="obj_text",
                          help=f"Cut to {MAX_TOKENS} tokens, like the models.")
    pair = left.text_input("Translation (XLM TLM only)", EXAMPLE_TRANSLATION, key="obj_pair")
    picked = ui.query_list("strategy", ["bert"], list(STRATEGIES))[0]
    group = right.selectbox("Family", GROUPS, index=GROUPS.index(STRATEGIES[picked].group), key="obj_group")
    names = [n for n, s in STRATEGIES.items() if s.group == group]
    name = right.selectbox("Strategy", names, index=names.index(picked) if picked in names else 0,
                           format_func=lambda n: STRATEGIES[n].label, key=f"obj_strategy_{group}")
    ui.set_query_list("strategy", [name])
    seed = int(right.number_input("Seed", 0, 2**31 - 1, 0, key="obj_seed"))
    return text, pair, STRATEGIES[name], seed


def notices(s: Strategy, text: str, pair: str | None) -> None:
    p = cache.prepared(s.name, text, pair)
    st.caption(f"Tokenizer: {s.tokenizer_note}")
    if p.truncated:
        st.warning(f"The text has {p.n_text_tokens:,} tokens; only the first {MAX_TOKENS} positions "
                   f"(special tokens included) are used, as the model would.", icon=":material/content_cut:")


def options(s: Strategy) -> tuple[tuple[str, object], ...]:
    """The strategy's own knobs (keyword options of its function), as a hashable tuple."""
    if s.name == "electra":
        p = st.slider("Generator proposes the original token", 0.0, 1.0, P_ORIGINAL, 0.05, key="obj_p_original",
                      help="A trained generator is often right; a correct guess is labelled original (0).")
        return (("p_original", float(p)),)
    if s.name == "bart-compose":
        noises = st.multiselect("Noisings, in order", list(NOISES), ["permute", "infill"], key="obj_noises")
        return (("noises", tuple(noises)),)
    return ()


def notes_for(r) -> list[str]:
    """Hover text per input position: the target and what defines it (span position, language)."""
    out = []
    for i, t in enumerate(r.targets):
        parts = [f"target: {t}"] if t is not None else []
        if getattr(r, "span_positions", None) and r.span_positions[i]:
            parts.append(f"position {r.span_positions[i]} in its span")
        if getattr(r, "lang_ids", None):
            parts.append(f"language {r.languages[min(r.lang_ids[i], len(r.languages) - 1)]}, position id {r.positions[i]}")
        if getattr(r, "labels", None):
            parts.append(f"discriminator label {r.labels[i]}")
        out.append(", ".join(parts))
    return out


def one_draw(s: Strategy, text: str, pair: str | None, seed: int, opts) -> None:
    """The input with coloured tokens and a legend, then the targets and what defines the draw."""
    r = cache.result(s.name, text, pair, seed, 0, opts)
    if s.kind == "sentence":
        st.markdown(f"Label to predict: **{r.label}** (classes: {', '.join(r.classes)})")
        chips(r.input_tokens, r.input_kinds, s.tokenizer, [f"segment {g}" for g in r.segment_ids])
        st.html(plots.legend_html(r.input_kinds))
        return
    kinds = r.kinds if s.kind == "token" else r.input_kinds
    st.markdown("**Model input** (hover a chip for its target)")
    chips(r.input_tokens, kinds, s.tokenizer, notes_for(r) if s.kind == "token" else None)
    st.html(plots.legend_html(kinds))
    if s.kind == "seq2seq":
        st.markdown("**Decoder target**")
        chips(r.target_tokens, plots.target_kinds(r.target_tokens), s.tokenizer)
        if r.detail:
            st.caption(r.detail)
        for step, toks in r.steps:
            st.caption(f"after {step}: {' '.join(show(toks, s.tokenizer))[:400]}")
    if s.name == "electra":
        st.markdown("**Generator input** (the discriminator above sees the generator's proposals)")
        chips(r.generator_input, ["masked" if t is not None else k for t, k in zip(r.targets, r.kinds, strict=True)], s.tokenizer)
    details(s, r)


def span_table(s: Strategy, r) -> pd.DataFrame:
    """SpanBERT: every span with the two boundary tokens SBO predicts it from."""
    tokens = show(r.original_tokens, s.tokenizer)
    rows = []
    for (a, b), (left, right) in zip(r.spans, r.boundaries, strict=True):
        rows.append({"span": " ".join(tokens[a:b]), "left boundary x(s-1)": tokens[left] if left >= 0 else "",
                     "right boundary x(e+1)": tokens[right] if right < len(tokens) else "", "length (tokens)": b - a})
    return pd.DataFrame(rows)


def details(s: Strategy, r) -> None:
    """The per-token table (CSV) with what defines this strategy."""
    if s.kind != "token":
        return
    df = pd.DataFrame({"position": range(len(r.original_tokens)), "original": show(r.original_tokens, s.tokenizer),
                       "input": show(r.input_tokens, s.tokenizer),
                       "target": [show([t], s.tokenizer)[0] if t else "" for t in r.targets], "kind": r.kinds})
    extra = {"labels": "discriminator label", "lang_ids": "language id", "positions": "position id",
             "span_positions": "position in span"}
    for field, column in extra.items():
        if getattr(r, field, None):
            df[column] = list(getattr(r, field))
    if getattr(r, "boundaries", None):
        st.markdown("**Spans** and their boundary tokens: SBO predicts each target from x(s-1), x(e+1) and its position")
        st.dataframe(span_table(s, r), hide_index=True)
    with st.expander("Per-token table"):
        st.dataframe(df, hide_index=True, height=260)
        ui.csv_download(df, f"objective-{s.name}", key="obj_csv")


def statistics(s: Strategy, text: str, pair: str | None, seed: int, opts) -> None:
    """The defining statistics over many draws, against the theory."""
    n = st.select_slider("Draws", [100, 200, 500, 1000, 2000], 500, key="obj_draws")
    with st.spinner(f"Running {s.label} {n:,} times..."):
        stats = cache.draw_stats(s.name, text, pair, seed, n, opts)
    p = cache.prepared(s.name, text, pair)
    if stats.expected_rate is not None:
        a, b, c = st.columns(3)
        a.metric("Realised selection rate", f"{stats.rate:.4f}", help="Mean fraction of non-special tokens selected per draw.")
        b.metric("Built to realise", f"{stats.expected_rate:.4f}",
                 help="SpanBERT: the token budget; completing the last word of a span can overshoot it." if s.name == "spanbert" else
                 "wwm: the budget; a word that would overshoot it is skipped, so the rate can fall short." if s.name == "wwm" else None)
        c.metric("Spread across draws (sd)", f"{stats.rate_std:.4f}")
    if stats.position_freq and s.kind != "sentence" and stats.rate > 0:
        ui.figure(plots.position_figure(stats, show(p.tokens, s.tokenizer)), f"objective-{s.name}-positions")
    rule = expected_kinds(s.name, dict(opts))
    if stats.kind_counts and rule:
        ui.figure(plots.kinds_figure(stats, rule), f"objective-{s.name}-kinds")
    if stats.sampled_lengths or stats.span_lengths:
        ui.figure(plots.span_figure(stats), f"objective-{s.name}-spans")
        st.caption("Lengths as drawn. A realised span can be shorter: the budget runs out or a neighbouring "
                   "span is in the way (T5 instead cuts the noise into spans directly, so drawn = realised).")
    if stats.labels:
        classes = cache.result(s.name, text, pair, seed, 0, opts).classes if s.kind == "sentence" else None
        ui.figure(plots.labels_figure(stats, classes), f"objective-{s.name}-outcomes")
    if s.name in ("roberta", "bert"):
        dyn, sta = cache.epochs(text, seed, 6)
        ui.figure(plots.epochs_figure(show(p.tokens, s.tokenizer), [r.kinds for r in dyn], [r.kinds for r in sta]), "objective-epochs")


def compare(text: str, pair: str, seed: int) -> None:
    names = st.multiselect("Strategies", list(STRATEGIES), default=ui.query_list("compare", COMPARE_DEFAULT, list(STRATEGIES)),
                           key="obj_compare", format_func=lambda n: STRATEGIES[n].label)
    ui.set_query_list("compare", names)
    for name in names:
        s = STRATEGIES[name]
        r = cache.result(name, text, pair if s.pair else None, seed)
        st.markdown(f"**{s.label}** · {s.tokenizer}")
        chips(r.input_tokens, r.kinds if s.kind == "token" else r.input_kinds, s.tokenizer)
        if s.kind == "seq2seq" and name == "t5":
            chips(r.target_tokens, plots.target_kinds(r.target_tokens), s.tokenizer)
        if s.kind == "sentence":
            st.caption(f"label: {r.label}")


def decoding_tab(text: str, seed: int) -> None:
    """A next-token table (editable) through greedy / temperature / top-k, then a tiny generator."""
    st.markdown(f"GPT predicts a distribution over the next token. Context: *{dec.EXAMPLE_CONTEXT} …* "
                "Edit the table (rows can be added), then pick how to choose from it.")
    left, right = st.columns([2, 3])
    edited = left.data_editor(pd.DataFrame({"token": list(dec.EXAMPLE_TABLE), "probability": list(dec.EXAMPLE_TABLE.values())}),
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
    st.markdown("**Generate from your text.** A bigram model counted from your text's GPT-2 pieces continues its first piece:")
    with ui.guard():
        p = cache.prepared("gpt-clm", text, None)
        out = cache.generate(text, p.tokens[0], 25, method, float(temperature), int(top_k), seed)
        chips(out, ["start"] + ["predicts next"] * (len(out) - 1), "gpt2")


def distillation_tab() -> None:
    """DistilBERT's loss on one masked position: teacher vs student, softened by T."""
    st.markdown(f"Masked position: *{dist.EXAMPLE_CONTEXT}* (true token **{dist.EXAMPLE_TRUE}**). The student "
                "learns from the true token (CE) and from the teacher's softened distribution (KL).")
    a, b, c = st.columns(3)
    temperature = a.slider("Temperature T", 1.0, 10.0, 2.0, 0.5, key="obj_dist_t")
    alpha = b.slider("alpha (weight of CE)", 0.0, 1.0, 0.5, 0.05, key="obj_dist_alpha")
    skill = c.slider("Student quality", 0.0, 1.0, 0.0, 0.1, key="obj_dist_skill",
                     help="0: the example student; 1: the student's logits equal the teacher's.")
    student = tuple(s + skill * (t - s) for s, t in zip(dist.EXAMPLE_STUDENT, dist.EXAMPLE_TEACHER, strict=True))
    r = cache.distillation(float(temperature), float(alpha), student)
    m = st.columns(4)
    m[0].metric("CE (student vs true token)", f"{r.ce:.4f}")
    m[1].metric("KL(teacher_T ‖ student_T)", f"{r.kl:.4f}")
    m[2].metric("T² · KL", f"{r.kl_scaled:.4f}", help="Hinton et al.: T² keeps the soft term's gradients comparable as T grows.")
    m[3].metric("loss = α·CE + (1-α)·T²·KL", f"{r.loss:.4f}")
    ui.figure(plots.distill_figure(r), "objective-distillation")
    df = pd.DataFrame({"token": r.tokens, "teacher (T)": r.teacher_soft, "student (T)": r.student_soft,
                       "student (T=1)": r.student_hard})
    ui.csv_download(df, "objective-distillation", key="obj_dist_csv")


st.title("Pretraining objectives")
st.caption("What each model is trained to predict: type a text, pick an objective, see the model input, the "
           "targets and the statistics that define the objective over many random draws.")
text, pair, strategy, seed = inputs()
tab_one, tab_compare, tab_decode, tab_distill = st.tabs(["Objective", "Compare side by side", "Decoding", "Distillation"])
with tab_one, ui.guard():
    pair_or_none = pair if strategy.pair else None  # other strategies ignore it: keep it out of cache keys
    st.markdown(f"**{strategy.label}.** {strategy.description}")
    notices(strategy, text, pair_or_none)
    opts = options(strategy)
    one_draw(strategy, text, pair_or_none, seed, opts)
    st.subheader("Over many draws")
    statistics(strategy, text, pair_or_none, seed, opts)
with tab_compare, ui.guard():
    compare(text, pair, seed)
with tab_decode:
    decoding_tab(text, seed)
with tab_distill:
    distillation_tab()

"""Every figure builder of ``explorer/plots/*.py`` on small inputs, for ``tests/test_figure_style.py``.

``CASES["module.function"]`` (or ``"module.function:variant"``) builds one figure. The inputs are what the pages
pass, at the sizes where labels are tightest: the lens grid at its most positions (16) on an 18-layer model, names
as long as the catalog's, untrained titles where the stand-ins make them. Results are made by the library where that
is cheap (catalog comparisons, tokenizations, the lineage, DeBERTa's buckets), else built from their dataclasses.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import plotly.graph_objects as go

from explorer.plots import (
    architecture,
    attention,
    compression,
    evaluation,
    explain,
    fillmask,
    generation,
    interventions,
    longattention,
    mechanisms,
    objectives,
    overview,
    patterns,
    results,
    scaling,
    similarity,
    spans,
    tokenization,
    training,
)

MODEL = "deberta-v3-base"  # a catalog key of usual length
RNG = np.random.default_rng(0)
CASES: dict[str, Callable[[], go.Figure]] = {}


def case(name: str) -> Callable[[Callable[[], go.Figure]], Callable[[], go.Figure]]:
    def register(build: Callable[[], go.Figure]) -> Callable[[], go.Figure]:
        CASES[name] = build
        return build
    return register


# architecture ------------------------------------------------------------------------------------------------------
def _tree():  # BERT-base's shape, by hand
    from explorer.architecture.layertree import TreeNode

    def node(label, kind, params, children=(), repeat=1):
        return TreeNode(label, label, kind, params, repeat, 1, False, (), None, tuple(children))
    layer = node("0", "BertLayer", 7_087_872, [node("attention", "BertAttention", 2_363_904),
                                               node("intermediate", "BertIntermediate", 2_362_368)], repeat=12)
    return node("", "BertModel", 109_482_240, [node("embeddings", "BertEmbeddings", 23_837_184),
                                               node("encoder", "BertEncoder", 85_054_464, [layer]),
                                               node("pooler", "BertPooler", 590_592)])


def _comparison():
    from explorer.architecture import compare
    return compare.compare(["bert-base", "gpt2", "t5-base"])


CASES["architecture.tree_figure:treemap"] = lambda: architecture.tree_figure(_tree(), "treemap")
CASES["architecture.tree_figure:sunburst"] = lambda: architecture.tree_figure(_tree(), "sunburst")
CASES["architecture.module_graph"] = lambda: architecture.module_graph(_tree())
CASES["architecture.components_figure"] = lambda: architecture.components_figure(
    {"token embeddings": 23_440_896, "attention Q/K/V/O": 28_366_848, "feed-forward": 56_669_184,
     "layer norms": 38_400}, "BERT-base (uncased): parameters by component")
CASES["architecture.stacked_components"] = lambda: architecture.stacked_components(_comparison())
CASES["architecture.stacked_components:share"] = lambda: architecture.stacked_components(_comparison(), True)
CASES["architecture.params_log"] = lambda: architecture.params_log(_comparison())
CASES["architecture.scaling"] = lambda: architecture.scaling(_comparison(), "flops")
CASES["architecture.scaling:memory"] = lambda: architecture.scaling(_comparison(), "memory")


# attention ---------------------------------------------------------------------------------------------------------
def _view(n: int, title: str = "Self-attention: layer 4, head 7"):
    from explorer.tasks.attention import ViewMatrix
    m = RNG.random((n, n)).astype(np.float32)
    tokens = tuple(("1889", " .", " the", "<b>")[i % 4] for i in range(n))
    return ViewMatrix(view="head", title=title, matrix=m / m.sum(-1, keepdims=True), row_tokens=tokens,
                      col_tokens=tokens)


def _maps():
    from explorer.tasks.attention import AttentionMaps
    att = RNG.random((6, 12, 10, 10)).astype(np.float32)
    return AttentionMaps(model=MODEL, tokens=tuple("abcdefghij"), attentions=att, family="encoder-decoder",
                         source_format="square", n_input_tokens=10, untrained=True)


CASES["attention.head_heatmap"] = lambda: attention.head_heatmap(_view(8), untrained=True)
CASES["attention.head_heatmap:long"] = lambda: attention.head_heatmap(
    _view(120, "Decoder self-attention: layer 11, mean of 16 heads"), untrained=True)
CASES["attention.link_view"] = lambda: attention.link_view(_view(8), untrained=True)
CASES["attention.model_grid"] = lambda: attention.model_grid(_maps().attentions, untrained=True)
CASES["attention.maps_grid"] = lambda: attention.maps_grid(_maps(), (2, 6))


# compression -------------------------------------------------------------------------------------------------------
@case("compression.tradeoff_figure")
def _tradeoff() -> go.Figure:
    from explorer.compression.quality import Quality
    from explorer.compression.study import Row, Study

    def row(method, size, latency, value):
        return Row(method, "", size, size, latency, 1.0, 10.0, Quality("cosine agreement", value, 1.0), 0.0, "a")
    rows = (row("dynamic-int8", 60_000_000, 5.0, 0.95), row("magnitude-50", 90_000_000, 10.0, 0.7))
    return compression.tradeoff_figure(Study("sentence-bert", "all-MiniLM-L6-v2", False, "cpu", "cpu", "float32",
                                             "sentences/s", "p", row("original", 90_900_000, 10.0, 1.0), rows))


# evaluation --------------------------------------------------------------------------------------------------------
def _report():
    from explorer.evaluation import report
    from explorer.evaluation.result import ExampleScores, ModelRun
    from explorer.evaluation.task import Example, Task
    examples = tuple(Example(i, i + 1, f"Q{i}:", ("yes", "no"), i % 2, (("year", 2019 + i % 2),)) for i in range(6))
    task = Task("bundled: capitals", "choice", examples, "written here")
    runs = [ModelRun(m, "decoder", "", "choice", tuple(ExampleScores(i, (-1.0 - (i + k) % 2, -1.5), (True, False),
                                                                     (1, 1)) for i in range(6)), 6, untrained=True)
            for k, m in enumerate(("gemma3-270m", "gpt2-medium"))]
    return report.build(task, runs), task


def _projection(dims: int = 2, method: str = "pca"):
    from explorer.evaluation.projector import Projection
    return Projection(model="sentence-bert", kind="sentences", method=method, dims=dims, seed=0,
                      points=RNG.normal(size=(8, dims)), labels=tuple(f"sentence {i}" for i in range(8)),
                      owners=tuple(range(8)), how="mean-pooled", explained=(0.4, 0.2)[:dims] if method == "pca" else ())


@case("evaluation.slice_bars")
def _slices() -> go.Figure:
    from explorer.evaluation.slices import slices
    rep, task = _report()
    return evaluation.slice_bars(slices(rep, task, "year"))


@case("evaluation.perplexity_bars")
def _perplexity() -> go.Figure:
    from explorer.evaluation.perplexity import Perplexity
    return evaluation.perplexity_bars([Perplexity("gemma3-270m", "sliding window", 24.5, -3.2, 100, 1, 1, 512, 40.0,
                                                  1.2, 0.5, True), Perplexity("sentence-bert", "pseudo-log-likelihood",
                                                                              3.1, -1.1, 100, 1, 1, 256, 5.0, 0.6,
                                                                              0.4, True)])


CASES["evaluation.accuracy_bars"] = lambda: evaluation.accuracy_bars(_report()[0])
CASES["evaluation.projection_figure"] = lambda: evaluation.projection_figure(_projection(), ["a", "b"] * 4, "label")
CASES["evaluation.projection_figure:3d"] = lambda: evaluation.projection_figure(_projection(3, "umap"))
CASES["evaluation.side_by_side_figure"] = lambda: evaluation.side_by_side_figure(_projection(), _projection())
CASES["evaluation.side_by_side_figure:3d"] = lambda: evaluation.side_by_side_figure(_projection(3), _projection(3))
CASES["evaluation.overlay_figure"] = lambda: evaluation.overlay_figure(_projection(), _projection(method="tsne"))


# explain -----------------------------------------------------------------------------------------------------------
def _lens(layers: int = 18, positions: int = 16, kind: str = "logit"):
    from explorer.explain.lens import Lens, LensLayer
    rows = tuple(LensLayer(i, i / layers, ((" Paris", 0.5),), layers - i + 1, 0.1, 1.0, float(layers - i))
                 for i in range(layers + 1))  # the last layer's KL to the final distribution: exactly 0
    words = (" capital", " Paris", "<b>", " of", " France", " is", "ization", "\n")
    grid = tuple(tuple(words[(i + j) % len(words)] for j in range(positions)) for i in range(layers + 1))
    return Lens(MODEL, kind, "next-token", positions - 1, " is", " Paris", rows,
                tokens=tuple(words[j % len(words)] for j in range(positions)), grid_start=3, grid_tokens=grid,
                grid_probability=tuple(tuple(float(RNG.random()) for _ in range(positions)) for _ in grid),
                untrained=True)


def _attribution(method: str = "ig", pair: bool = False, n: int = 7):
    from explorer.explain.attribution import Attribution, TokenScore
    tokens = tuple(TokenScore(w, float(RNG.normal()), int(pair and i >= n // 2))
                   for i, w in enumerate(("The", " capital", " of", " France", " is", "<b>", " Paris", " indeed") * 8)
                   if i < n)
    return Attribution(model=MODEL, method=method, task="next-token", objective="log p(' Paris') − log p(' Rome')",
                       target=" Paris", foil=" Rome", output=1.0, baseline_output=0.0, completeness=0.101,
                       tokens=tokens, untrained=True)


@case("explain.tuned_figure")
def _tuned() -> go.Figure:
    from explorer.explain.tuning import TuneReport
    return explain.tuned_figure(TuneReport("gemma3-270m", "bundled corpus", 200, 200, 64_000, 30.0,
                                           (5.0, 3.0, 1.0, 0.0), (2.0, 1.0, 0.5, 0.0)))


CASES["explain.lens_grid"] = lambda: explain.lens_grid(_lens())
CASES["explain.lens_grid:short"] = lambda: explain.lens_grid(_lens(3, 6, "tuned"))
CASES["explain.depth_figure"] = lambda: explain.depth_figure([_lens(6), _lens(18)])
CASES["explain.token_strip"] = lambda: explain.token_strip(_attribution())
CASES["explain.token_strip:long"] = lambda: explain.token_strip(_attribution("occlusion", n=40))
CASES["explain.token_strip:pair"] = lambda: explain.token_strip(_attribution("grad", pair=True))


# fillmask ----------------------------------------------------------------------------------------------------------
def _fill(name: str):
    from explorer.tasks.fillmask.result import MaskResult, ModelFill, Prediction
    preds = tuple(Prediction(i, f"w{i}", f"word{i}", 0.5 / (i + 1)) for i in range(5))
    return ModelFill(name, name, True, "cpu", "the [MASK] sat", (MaskResult(0, 2, preds),), "the word0 sat", 5, (),
                     1.0)


@case("fillmask.replaced_strip")
def _replaced() -> go.Figure:
    from explorer.tasks.discriminator import ReplacedTokens
    tokens = ("[CLS]", "the", "chef", "ate", "the", "meal", "[SEP]")
    return fillmask.replaced_strip(ReplacedTokens("electra-small-generator", "electra-small-discriminator", True,
                                                  tokens, tokens[:2] + ("cook",) + tokens[3:], (False,) * 7,
                                                  (False, False, True) + (False,) * 4,
                                                  (0.1, 0.2, 0.9, 0.1, 0.1, 0.3, 0.0), (), 1.0))


CASES["fillmask.topk_figure"] = lambda: fillmask.topk_figure([_fill(k) for k in ("bert-base", "roberta-base",
                                                                                  "distilbert-base")])


# generation --------------------------------------------------------------------------------------------------------
def _gen(strategy: str, n: int = 20):
    from explorer.tasks.generation.run import Generation
    from explorer.tasks.generation.steps import Alternative, Step
    from explorer.tasks.generation.strategy import DecodingSettings
    steps = tuple(Step(f" w{i % 4}", i, 0.9 / (1 + i % 3), (Alternative(" x", 9, 0.01),)) for i in range(n))
    return Generation("gemma3-270m", DecodingSettings(strategy), "prompt", "text", steps, True, 0.0)


@case("generation.next_token_figure")
def _next() -> go.Figure:
    from explorer.tasks.generation.nexttoken import Candidate, NextToken
    return generation.next_token_figure(NextToken("gemma3-270m", 262_144, True, 3, (
        Candidate(" Paris", 5, 3.0, 0.7), Candidate(" the", 6, 1.0, 0.1))))


CASES["generation.tokens_figure"] = lambda: generation.tokens_figure([_gen("greedy"), _gen("top-p", 8)])
CASES["generation.repetition_figure"] = lambda: generation.repetition_figure([_gen("greedy"), _gen("top-p")])


# interventions -----------------------------------------------------------------------------------------------------
def _grid(layers: int, model: str = "gemma3-270m", site: str = "resid"):
    from explorer.interventions.grid import PatchGrid
    tokens = ("<bos>", "The", " Eiffel", " Tower", " is", " in")
    columns = tuple(f"head {h}" for h in range(4)) if site == "heads" else tokens
    values = tuple(tuple(float(i + j) for j in range(len(columns))) for i in range(layers))
    return PatchGrid(model, "decoder", "decoder", site, "logit-diff", tokens, tokens, columns, " Paris", " Rome",
                     4.0, 0.0, values, tuple(i / (layers - 1) for i in range(layers)), 2, untrained=True)


@case("interventions.distribution_figure")
def _ablation() -> go.Figure:
    from explorer.interventions.ablation import Ablation
    return interventions.distribution_figure(Ablation("gemma3-270m", "t", "head 3.1", "zero", " x", 1,
                                                      ((" x", 0.5), (" y", 0.2)), ((" y", 0.4),), 0.5, 0.1, 0.3,
                                                      untrained=True))


@case("interventions.ranking_figure")
def _ranking() -> go.Figure:
    from explorer.interventions.ranking import HeadRank, HeadRanking
    heads = tuple(HeadRank(layer, head, 0.1 * (layer - head), 0.2 * head) for layer in range(3) for head in range(4))
    return interventions.ranking_figure(HeadRanking("gemma3-270m", "t", "zero", "logit-diff", " x", None, 0.5,
                                                    heads, "note", 0.42, untrained=True))


CASES["interventions.patch_heatmap"] = lambda: interventions.patch_heatmap(_grid(18))
CASES["interventions.patch_heatmap:heads"] = lambda: interventions.patch_heatmap(_grid(6, site="heads"))
CASES["interventions.across_figure"] = lambda: interventions.across_figure([_grid(6, "gpt2"), _grid(18)])


# long attention ----------------------------------------------------------------------------------------------------
CASES["longattention.block_heatmap"] = lambda: longattention.block_heatmap(
    RNG.random((8, 8)), list(range(0, 33, 4)), [f"t{i}" for i in range(32)],
    title="Layer 3, head 2: blocks of 4 x 4 tokens", untrained=True)
CASES["longattention.query_row_figure"] = lambda: longattention.query_row_figure(
    RNG.random(600), [f"t{i}" for i in range(600)], 5, title="Query 5 (t5), layer 3, head 2", untrained=True)


# mechanisms --------------------------------------------------------------------------------------------------------
@case("mechanisms.deberta_terms")
def _deberta() -> go.Figure:
    from explorer.papers.mechanisms.deberta import DisentangledSplit
    tokens = ("[CLS]", "The", "<b>cat</b>", "sat", ".", "[SEP]")
    parts = [RNG.normal(size=(2, 6, 6)) for _ in range(3)]
    return mechanisms.deberta_terms(DisentangledSplit("deberta-v3-base", tokens, *parts, np.zeros((2, 6, 6)), 0.0,
                                                      0.0, np.zeros((6, 6))), head=1)


@case("mechanisms.bucket_chart")
def _buckets() -> go.Figure:  # the shape of DeBERTa's table (its own needs transformers, seconds to import)
    distances = np.arange(-1024, 1025)
    far = np.sign(distances) * (128 + np.log2(np.maximum(np.abs(distances), 128) / 128) * 32)
    return mechanisms.bucket_chart(distances, np.where(np.abs(distances) <= 128, distances, far).astype(int), 128)


@case("mechanisms.triple_loss_bars")
def _triple() -> go.Figure:
    from explorer.papers.mechanisms.distillation import TripleLoss
    none = np.zeros(1)
    return mechanisms.triple_loss_bars(TripleLoss(None, 4.0, 1.2, 2.5, 0.3, 4.1, none, none, none, none, "cpu",
                                                  "cpu", "float32"))


@case("mechanisms.temperature_chart")
def _temperature() -> go.Figure:
    temps = (1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0)
    kl = np.array([1.0 / t ** 2 for t in temps])
    return mechanisms.temperature_chart(temps, kl * np.square(temps), kl, np.log(np.array(temps) * 100), 30522)


@case("mechanisms.layerwise_bars")
def _layerwise() -> go.Figure:
    from explorer.papers.mechanisms.distillation import LayerwiseLoss
    none = np.zeros(1)
    return mechanisms.layerwise_bars(LayerwiseLoss(None, (0, 3, 6, 9, 12), 12, (0.1, 0.2, 0.3, 0.4),
                                                   (1.0, 2.0, 3.0, 4.0), 0.5, 2.0, 0.0, *[none] * 8, "cpu", "cpu",
                                                   "float32"))


@case("mechanisms.layout_strip")
def _layout() -> go.Figure:
    from explorer.papers.mechanisms.text2text import Layout
    encoder = Layout(("translate", "▁English", "▁to", "▁German", ":", "▁Hi", "</s>"), (1, 2, 3, 4, 5, 6, None),
                     ("prefix",) * 5 + ("text", "special"))
    return mechanisms.layout_strip({"encoder input": encoder, "labels": Layout(("▁Hallo", "</s>"), (7, 1),
                                                                               ("text", "special"))}, "T5 (translate)")


CASES["mechanisms.layer_mapping"] = lambda: mechanisms.layer_mapping((0, 3, 6, 9, 12), 12)


# objectives --------------------------------------------------------------------------------------------------------
def _stats():
    from explorer.objectives.stats import DrawStats
    return DrawStats("spanbert", 50, 12, 10, 0.15, 0.01, 0.15, {"masked": 80, "random": 10, "kept": 10},
                     tuple(0.15 for _ in range(12)), {1: 30, 2: 20, 3: 10}, {}, {1: 0.5, 2: 0.3, 3: 0.2}, 1.8,
                     {"IsNext": 26, "NotNext": 24}, "words")


TOKENS = ("[CLS]", "the", "<b>", "cat", "sat", "on", "the", "mat", ".", "[SEP]", "x", "y")


@case("objectives.decoding_figure")
def _decoding() -> go.Figure:
    from explorer.objectives.decoding import EXAMPLE_TABLE, decode
    from explorer.objectives.mlm import epoch_rng
    return objectives.decoding_figure(decode(EXAMPLE_TABLE, "top-k", epoch_rng(0, 0), 0.7, 3, 100))


@case("objectives.distill_figure")
def _distill() -> go.Figure:
    from explorer.objectives.distill import EXAMPLE_STUDENT, EXAMPLE_TEACHER, EXAMPLE_TOKENS, EXAMPLE_TRUE, distill_loss
    return objectives.distill_figure(distill_loss(EXAMPLE_TOKENS, EXAMPLE_TEACHER, EXAMPLE_STUDENT, EXAMPLE_TRUE))


CASES["objectives.kinds_figure"] = lambda: objectives.kinds_figure(_stats(), {"masked": 0.8, "random": 0.1,
                                                                             "kept": 0.1})
CASES["objectives.span_figure"] = lambda: objectives.span_figure(_stats())
CASES["objectives.position_figure"] = lambda: objectives.position_figure(_stats(), TOKENS)
CASES["objectives.labels_figure"] = lambda: objectives.labels_figure(_stats(), ("IsNext", "NotNext"))
CASES["objectives.epochs_figure"] = lambda: objectives.epochs_figure(
    TOKENS, [["masked", "kept"] * 6] * 4, [["random", "not selected"] * 6] * 4)


# overview, patterns, results, scaling ------------------------------------------------------------------------------
def _lineage():
    from explorer.architecture import lineage
    return lineage.lineage()


def _points():
    from explorer.papers.results import Point
    return [Point("BERT-base", "bert-base", 79.6, 110_000_000, 200_000_000, "Devlin et al. 2019 (BERT), Table 1",
                  8.4e19), Point("DistilBERT", "distilbert", 77.0, 66_000_000, 120_000_000, "Sanh et al. 2019", 2.1e19)]


def _places():
    from explorer.papers.scaling import ScalingPoint
    return [ScalingPoint("bert-base", "BERT-base", 110_000_000, 85_000_000, 3.3e9 * 40, "Devlin et al.", 2.5, 2.2,
                         1200.0, 6e19, 2.4)]


@case("patterns.variant_mask_heatmap")
def _mask() -> go.Figure:
    from explorer.architecture import patterns as P
    vp = P.pattern_for_variant("bigbird", 600)
    return patterns.variant_mask_heatmap(vp, P.mask_view(vp.spec, 256))


@case("patterns.mask_heatmap")
def _raw_mask() -> go.Figure:
    return patterns.mask_heatmap(np.tril(np.ones((12, 12), dtype=bool)), 1, "gpt2, layer 0", kind="causal")


@case("patterns.cost_chart")
def _costs() -> go.Figure:
    from explorer.architecture import patterns as P
    return patterns.cost_chart([P.variant_cost_curve(k, (256, 512, 1024, 2048)) for k in ("bert-base", "longformer")],
                               "flops")


@case("results.glue_figure")
def _glue() -> go.Figure:
    from explorer.papers import crosspaper
    return results.glue_figure(crosspaper.glue_view(), "CoLA")


@case("results.speed_figure")
def _speed() -> go.Figure:
    from explorer.papers import speed
    return results.speed_figure(speed.Speed(("bert-base", "distilbert"), (2.0, 1.0), 128, 5, "cpu", "cpu",
                                            "float32"), speed.PAPER)


CASES["overview.params_by_date_figure"] = lambda: overview.params_by_date_figure(
    [{"key": "a", "name": "BERT-base", "family": "encoder", "date": 2018.75, "params": 110_000_000},
     {"key": "b", "name": "GPT-2", "family": "decoder", "date": 2019.1, "params": 124_000_000}])
CASES["overview.lineage_figure"] = lambda: overview.lineage_figure(_lineage())
CASES["results.efficiency_figure"] = lambda: results.efficiency_figure(_points(), _points()[:1], "glue_score",
                                                                        "train_flops")
CASES["scaling.kaplan_figure"] = lambda: scaling.kaplan_figure(_places())
CASES["scaling.chinchilla_figure"] = lambda: scaling.chinchilla_figure(_places())


# similarity, spans, tokenization, training -------------------------------------------------------------------------
SENTENCES = ("A man is playing a guitar.", "<b>Someone</b> plays an instrument.", "The cat sleeps.")


@case("similarity.similarity_heatmap")
def _similarity() -> go.Figure:
    from explorer.tasks.similarity import SimilarityResult
    matrix = tuple(tuple(1.0 if i == j else 0.3 for j in range(3)) for i in range(3))
    return similarity.similarity_heatmap(SimilarityResult("sentence-bert", SENTENCES, matrix, 384, True))


@case("similarity.search_bars")
def _search() -> go.Figure:
    from explorer.tasks.similarity import SearchHit, SearchResult
    return similarity.search_bars(SearchResult("sentence-bert", "a guitar", tuple(
        SearchHit(i + 1, i, s, 0.9 - 0.2 * i) for i, s in enumerate(SENTENCES)), True))


@case("similarity.maxsim_heatmap")
def _maxsim() -> go.Figure:
    from explorer.tasks.colbert import MaxSim
    return similarity.maxsim_heatmap(MaxSim(("q0", "q1"), ("d0", "<d1>", "d2"), ((0.1, 0.9, 0.2), (0.8, 0.2, 0.1)),
                                            (1, 0), (0.9, 0.8), 1.7), "MaxSim of document 1")


@case("similarity.ranking_slope")
def _slope() -> go.Figure:
    from explorer.tasks.colbert import Ranking
    from explorer.tasks.colbert.late import RankedDoc
    docs = tuple(RankedDoc(i, s, 2.0 - i, i + 1, 0.5, 3 - i) for i, s in enumerate(SENTENCES))
    return similarity.ranking_slope(Ranking("a guitar", "sentence-bert", True, True, docs, -0.33))


@case("similarity.compression_figure")
def _colbert() -> go.Figure:
    from explorer.tasks.colbert import CompressionStudy
    from explorer.tasks.colbert.compression import storage_ratio
    from explorer.tasks.colbert.study import BitsReport
    reports = tuple(BitsReport(b, 4 + 16 * b, round(storage_ratio(128, b), 3), 0.9, (1.0, 2.0, 1.5), 0.1, 1.0, 1.0)
                    for b in (1, 2))
    return similarity.compression_figure(CompressionStudy("colbertv2", True, True, "q", SENTENCES, 10, 128, 4, 2,
                                                          1024, (1.1, 2.1, 1.4), reports))


@case("spans.qa_strip")
def _qa() -> go.Figure:
    from explorer.tasks.qa import QAResult
    tokens = ("The", " tower", " was", " built", " in", " 1889", ".")
    return spans.qa_strip(QAResult("distilbert-squad", "When?", "The tower was built in 1889.", "1889", 22, 26, 0.5,
                                   0.1, 0, 1, tokens, tuple((i, i + 1) for i in range(7)), (0.1,) * 6 + (0.4,),
                                   (0.2,) * 7, (5, 5), True, 0.01))


def _tokenizations():
    from explorer.tokenization import compare
    return compare("The taaaasty soup of 1889, 2,048 tokens", ["bert-base-uncased", "gpt2"])


RUN = {"objective": "mlm", "losses": [[1, 9.0], [2, 8.5], [3, 8.1]], "eval": {"history": [
    {"step": 0, "loss": 9.1, "accuracy": 0.0, "flops": 0.0, "seconds": 0.0},
    {"step": 3, "loss": 8.0, "accuracy": 0.1, "flops": 1e9, "seconds": 1.5}]}}
CASES["tokenization.counts_figure"] = lambda: tokenization.counts_figure(_tokenizations())
CASES["tokenization.fertility_figure"] = lambda: tokenization.fertility_figure(_tokenizations())
CASES["tokenization.word_split_figure"] = lambda: tokenization.word_split_figure(_tokenizations())
CASES["training.loss_figure"] = lambda: training.loss_figure({"#1 mlm (tiny, seed 0)": RUN, "#2 gpt": RUN})
CASES["training.heldout_figure"] = lambda: training.heldout_figure({"#1 mlm (tiny, seed 0)": RUN})
CASES["training.accuracy_figure"] = lambda: training.accuracy_figure({"#1 mlm (tiny, seed 0)": RUN})


# The areas added later keep their cases in a file of their own (tests/figure_cases_<area>.py), each adding to
# CASES when imported: several builders can land at once without editing one file.
def _more_cases() -> None:
    import importlib
    from pathlib import Path

    for path in sorted(Path(__file__).parent.glob("figure_cases_*.py")):
        importlib.import_module(f"tests.{path.stem}")


_more_cases()

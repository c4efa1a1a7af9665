"""Published results: every row has a source, the values equal the shared tables, pairs split, '-' kept."""

from __future__ import annotations

import math
import re

import pytest

from explorer.architecture import catalog
from explorer.core.errors import ExplorerError
from explorer.papers import results
from tests.conftest import REFERENCE

SHARED = REFERENCE / "results"
COPIED = ("bigbird_qa", "distilbert_glue", "distilbert_speed", "roberta_ablation", "spanbert_mrqa", "structbert_glue")


def test_every_row_has_a_source_a_benchmark_and_a_known_variant():
    rows = results.rows()
    assert len(rows) > 300
    keys = set(catalog.keys())
    for r in rows:
        assert re.match(r"[A-Z][a-z]+ (et al\.|& [A-Z][a-z]+|Team) 20\d\d \(", r.source), r  # paper, year, where in it
        assert r.benchmark and r.metric and r.model
        assert r.variant is None or r.variant in keys, r
        assert r.value is None or math.isfinite(r.value)


def _shared_cells(name: str) -> list[tuple[str, str, str]]:
    lines = (SHARED / f"{name}.tsv").read_text(encoding="utf-8").splitlines()
    header, *body = [line.split("\t") for line in lines[1:] if line.strip()]
    return [(cells[0], column, cell) for cells in body for column, cell in zip(header[1:], cells[1:], strict=True)]


@pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/reference/results is not beside this checkout")
@pytest.mark.parametrize("name", COPIED)
def test_copied_tables_equal_the_shared_tables(name):
    ours = (results.RESULTS_DIR / f"{name}.tsv").read_text(encoding="utf-8").splitlines()
    theirs = (SHARED / f"{name}.tsv").read_text(encoding="utf-8").splitlines()
    assert ours[0] == theirs[0]  # the source line travels with the copy
    body = [line.split("\t") for line in ours if not line.startswith("#")]
    assert [cells[:-2] for cells in body] == [line.split("\t") for line in theirs[1:]]


def test_parsed_values_match_the_cells_they_came_from():
    text = (results.RESULTS_DIR / "structbert_glue.tsv").read_text(encoding="utf-8")
    rows = {(r.model, r.metric): r.value for r in results.parse_table(text)}
    assert rows[("Human Baseline", "mrpc_f1")] == 86.3
    assert rows[("Human Baseline", "mrpc_accuracy")] == 80.8
    assert rows[("BERT-large", "mnli_mismatched")] == 85.9
    assert rows[("Human Baseline", "ax")] is None  # '-' stays a row: not reported
    assert rows[("StructBERT-RoBERTa ensemble", "average")] == 89.0


@pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/reference/results is not beside this checkout")
def test_every_shared_cell_is_a_row_with_the_same_value():
    for name in ("bigbird_qa", "distilbert_glue", "distilbert_speed", "spanbert_mrqa"):
        text = (results.RESULTS_DIR / f"{name}.tsv").read_text(encoding="utf-8")
        values = {(r.model, r.metric): r.value for r in results.parse_table(text)}
        assert len(values) == len(_shared_cells(name))
        for model, column, cell in _shared_cells(name):
            assert values[(model, column)] == (None if cell == "-" else float(cell)), (name, model, column)


def test_described_settings_become_part_of_the_model_label():
    models = {r.model for r in results.rows("roberta-ablation-dev")}
    assert "RoBERTa (+ pretrain even longer, 160GB, 8K, 500K)" in models
    assert not {r.metric for r in results.rows("roberta-ablation-dev")} & {"setting", "data", "steps"}


def test_unknown_benchmark_is_a_message_with_suggestions():
    with pytest.raises(ExplorerError, match="Did you mean glue-dev, glue-test"):
        results.rows("glue")
    assert results.metrics("cpu-inference")[0] == "inference_seconds"  # a score first, the size last


@pytest.mark.parametrize("cell", ["abc", "1/2/3", "<b>9</b>"])
def test_malformed_cells_are_data_errors(cell):
    text = f"# src\n# benchmark: b\n# pairs: x=a/b\nmodel\tx\tvariant\tsource\nM\t{cell}\t-\tS\n"
    with pytest.raises(ExplorerError, match="fix assets/results"):
        results.parse_table(text)


def _point(score: float, params: int) -> results.Point:
    return results.Point(f"m{score}", "bert-base", score, params, params * 2, "s")


def test_frontier_keeps_only_points_nothing_cheaper_beats():
    pts = [_point(80, 100), _point(78, 50), _point(79, 120), _point(85, 300), _point(70, 10)]
    assert [p.score for p in results.frontier(pts)] == [70, 78, 80, 85]
    assert [p.score for p in results.frontier(pts, higher_is_better=False)] == [70]


def test_points_skip_rows_without_variant_or_value():
    rows = results.rows("long-document-qa-dev")
    costs = {r.variant: (1, 2) for r in rows if r.variant}
    pts = results.points([r for r in rows if r.metric == "nq_la"], costs)
    assert [p.model for p in pts] == ["BigBird-ITC"]  # RoBERTa and Longformer did not report NQ


def test_table_has_a_record_per_model_and_source_with_not_reported_cells():
    records = results.table(results.rows("long-document-qa-dev"))
    assert [r["model"] for r in records] == ["RoBERTa", "Longformer", "BigBird-ITC", "BigBird-ETC"]
    assert records[0]["nq_la"] == results.NOT_REPORTED and records[2]["nq_la"] == 70.8
    assert list(records[0])[:2] == ["model", "catalog"] and list(records[0])[-1] == "source"


def test_unplaced_names_models_without_variant_or_value():
    chosen = [r for r in results.rows("long-document-qa-dev") if r.metric == "nq_la"]
    assert results.unplaced(chosen) == {"no catalog variant": ["BigBird-ETC"],
                                        results.NOT_REPORTED: ["RoBERTa", "Longformer"]}


def test_variant_cost_is_our_own_count():
    params, flops = results.variant_cost("bert-base")
    assert params == 109_482_240  # bare BertModel, as `python -m explorer list` counts it
    assert flops > 2 * 85_000_000  # at least 2 FLOPs per weight of the 12 layers


def test_times_are_lower_is_better_and_scored_variants_are_sorted_keys():
    assert results.higher_is_better("average") and not results.higher_is_better("inference_seconds")
    assert results.scored_variants(results.rows("cpu-inference")) == ("bert-base", "distilbert")


def test_sizes_are_not_scores_and_never_the_default_metric():
    # Sanh et al. Table 3 and Lan et al. Table 2 list parameters beside the scores: a bigger model is not better.
    assert not results.higher_is_better("params_millions")
    for name in results.benchmarks():
        assert results.metrics(name)[0] not in results.SIZE_METRICS
    assert results.metrics("cpu-inference") == ["inference_seconds", "params_millions"]


def test_albert_table_2_is_whole():
    # Cells read from arXiv:1909.11942v6, Table 2: the BERT rows, all four ALBERT sizes, parameters and speed-up.
    rows = [r for r in results.rows("squad-mnli-sst2-race-dev") if r.source == "Lan et al. 2020 (ALBERT), Table 2"]
    cell = {(r.model, r.metric): r.value for r in rows}
    assert {r.model for r in rows} == {"BERT-base", "BERT-large", "ALBERT-base", "ALBERT-large", "ALBERT-xlarge",
                                       "ALBERT-xxlarge"}
    assert cell[("BERT-base", "squad1.1_f1")] == 90.4 and cell[("BERT-base", "params_millions")] == 108
    assert cell[("BERT-large", "race")] == 73.9 and cell[("BERT-large", "speedup")] == 1.0
    assert cell[("ALBERT-xxlarge", "squad2.0_em")] == 85.1 and cell[("ALBERT-xxlarge", "avg")] == 88.7
    assert cell[("ALBERT-base", "speedup")] == 5.6 and cell[("ALBERT-xlarge", "params_millions")] == 60


def test_benchmark_names_ignore_case_and_unknown_ones_get_the_closest():
    assert results.rows("GLUE-Dev") == results.rows("glue-dev")
    with pytest.raises(ExplorerError, match="Did you mean"):
        results.rows("GLUE")


# A few cells of every transcribed table, as read in the source each file's README row names.
CELLS = [
    ("fairseq_glue_dev", "RoBERTa-base (dev, single model, single-task)", "mnli", 87.6),
    ("fairseq_glue_dev", "BART-large (dev, single model, single-task)", "cola", 62.8),
    ("fairseq_glue_dev", "RoBERTa-large (dev, single model, single-task)", "stsb", 92.4),
    ("fairseq_squad_dev", "BART-large", "squad2.0_f1", 89.2),
    ("bart_cnndm_test", "BART-large", "rouge2", 21.28),
    ("xlmr_xnli", "XLM-R large (translate-train-all)", "sw", 78.0),
    ("xlmr_xnli", "RoBERTa-large (MNLI) (translate-test)", "avg", 77.8),
    ("xlm_xnli", "XLM (MLM+TLM) (zero-shot, test)", "avg", 75.1),
    ("xlm_xnli", "XLM (MLM) (zero-shot, test)", "ur", 63.4),
    ("xlm_xnli", "mBERT (zero-shot, test)", "fr", None),
    ("gpt2_zeroshot", "GPT-2 117M", "lambada_ppl", 35.13),
    ("gpt2_zeroshot", "GPT-2 1542M", "1bw_ppl", 42.16),
    ("gpt2_zeroshot", "GPT-2 762M", "1bw_ppl", 44.575),
    ("gpt3_openqa", "GPT-3 175B (few-shot)", "triviaqa", 71.2),
    ("gpt3_openqa", "T5-11B (fine-tuned, closed-book)", "natural_questions", 34.5),
    ("colbert_rerank", "ColBERT (over BERT-base) (re-rank top-1000)", "latency_ms", 61.0),
    ("colbert_rerank", "BERT-large (Nogueira and Cho) (re-rank top-1000)", "mrr10_dev", 36.5),
    ("colbert_e2e", "ColBERT L2 (end-to-end) (end-to-end)", "recall1000", 96.8),
    ("colbertv2_msmarco", "ColBERTv2 (end-to-end)", "mrr10_dev", 39.7),
    ("sbert_sts", "SBERT-NLI-base", "stsb", 77.03),
    ("sbert_sts", "Universal Sentence Encoder", "sickr", 76.69),
    ("tinybert_glue_test", "TinyBERT4", "mnli_mismatched", 81.8),
    ("tinybert_glue_test", "BERT6-PKD", "cola", None),
    ("mobilebert_glue_test", "MobileBERT", "glue_score", 77.7),
    ("mobilebert_glue_test", "BERT-base", "glue_score", 78.3),
    ("mobilebert_squad_dev", "MobileBERT", "squad1.1_f1", 90.0),
    ("electra_readme_glue_test", "ELECTRA-Base (released)", "glue_score", 82.7),
    ("electra_readme_glue_dev", "ELECTRA-Small (released) (dev, median of many seeds)", "rte", 66.7),
    ("electra_readme_squad_dev", "ELECTRA-Large (released)", "squad2.0_em", 88.1),
    ("longformer_dev", "Longformer-base", "hyperpartisan", 94.8),
    ("longformer_leaderboard", "Longformer-large", "wikihop", 81.9),
    ("deberta_readme_glue_dev", "DeBERTa-V2-xlarge (README NLU dev table)", "qqp_f1", 89.8),
    ("deberta_readme_glue_dev", "DeBERTa-V3-base (README NLU dev table)", "mnli_mismatched", 90.7),
    ("deberta_readme_glue_dev", "DeBERTa-xlarge (README NLU dev table)", "qnli", None),
    ("deberta_readme_squad_dev", "DeBERTa-V3-base", "squad2.0_em", 85.4),
    ("deberta_readme_xnli_dev", "XLM-R base (zero-shot, dev)", "avg", 76.2),
    ("deberta_readme_xnli_dev", "mDeBERTa-V3 base (zero-shot, dev)", "ur", 72.4),
    ("gptj_readme_zeroshot", "GPT-J 6B (lm-evaluation-harness)", "lambada_ppl", 3.99),
    ("gptj_readme_zeroshot", "GPT-Neo 1.3B (lm-evaluation-harness)", "piqa", 71.1),
    ("gptj_readme_zeroshot", "GPT-3 175B (reported by the model's authors)", "hellaswag", 78.9),
    ("distil_readme_glue_dev", "DistilRoBERTa", "macro_score_without_wnli", 82.3),
    ("distil_readme_glue_dev", "BERT-base-uncased (Distil* README)", "mnli", 84.7),
    ("distil_readme_glue_dev", "DistilBERT-base-cased (Distil* README)", "macro_score_without_wnli", None),
    ("fastbert_readme", "FastBERT (self-distillation epoch 5, Speed=0.5) (Ag.news)", "flops", 2108341649.0),
    ("fastbert_readme", "BERT baseline (fine-tuned, epoch 3) (Douban book review)", "accuracy", 0.8688),
    ("gemma3_270m_card", "Gemma 3 PT 270M (pretrained, 10-shot)", "hellaswag", 40.9),
    ("gemma3_270m_card", "Gemma 3 IT 270M (instruction-tuned, 0-shot)", "ifeval", 51.2),
    ("gemma3_270m_card", "Gemma 3 PT 270M (pretrained, 10-shot)", "boolq", None),
    ("colbertv2_msmarco", "SPLADEv2 (end-to-end)", "mrr10_dev", 36.8),
    # Zaheer et al. 2020, Table 4, as read in two markdown copies of the paper (msc_thesis notes, ar5iv).
    ("bigbird_pegasus_summarization", "BigBird-Pegasus (large)", "arxiv_rouge1", 46.63),
    ("bigbird_pegasus_summarization", "BigBird-Pegasus (large)", "bigpatent_rougeL", 50.01),
    ("bigbird_pegasus_summarization", "Pegasus (re-evaluated) (large)", "pubmed_rouge2", 19.30),
    ("bigbird_pegasus_summarization", "BigBird-RoBERTa (base)", "bigpatent_rouge2", 37.27),
    ("bigbird_pegasus_summarization", "LSA (Prior art)", "bigpatent_rouge1", None),
    # Rothe et al. 2020, Tables 4 and 5, as read in an ar5iv text copy (newstest2014 / ROUGE-2 also in the HF blog).
    ("bert2bert_wmt14", "bert2bert (public checkpoints, 12 layers)", "newstest2014_en_de", 30.1),
    ("bert2bert_wmt14", "bert2bert (public checkpoints, 12 layers)", "newstest2016_de_en", 39.3),
    ("bert2bert_wmt14", "bert2rnd (custom BERT checkpoint, 24 layers)", "newstest2014_de_en", 34.2),
    ("bert2bert_wmt14", "Vaswani et al. (2017) (published systems)", "newstest2014_de_en", None),
    ("bert2bert_summarization", "bert2bert (base checkpoints, 12 layers)", "cnndm_rouge2", 17.84),
    ("bert2bert_summarization", "robertaShare (large checkpoints, 24 layers)", "xsum_rouge1", 41.45),
    ("bert2bert_summarization", "UniLM (published systems)", "cnndm_rougeL", 40.63),
    ("bert2bert_summarization", "MASS (published systems)", "xsum_rouge2", None),
    # Clark et al. 2020, Tables 1 and 2, as read in a PDF-to-markdown copy of arXiv:2003.10555.
    ("electra_glue", "ELECTRA-Small", "train_flops", 1.4e18),
    ("electra_glue", "ELECTRA-Base", "infer_flops", 2.9e10),
    ("electra_glue", "GPT", "train_flops", 4.0e19),
    ("electra_glue", "ELECTRA-Small 6.25% trained", "glue_score", 74.1),
    ("electra_large_glue_dev", "ELECTRA-1.75M", "train_flops", 3.1e21),
    ("electra_large_glue_dev", "RoBERTa-500K", "avg", 88.9),
    ("electra_large_glue_dev", "ELECTRA-400K", "cola", 69.3),
    ("electra_large_glue_dev", "BERT (Clark et al. 2019)", "stsb_spearman", 90.0),
    # Sun et al. 2020, Table 4 and the SQuAD dev table, as transcribed in huggingface/nn_pruning analysis/plot_data.py.
    ("mobilebert_glue_test", "MobileBERT w/o OPT", "latency_ms", 192.0),
    ("mobilebert_glue_test", "MobileBERT w/o OPT", "rte", 70.4),
    ("mobilebert_glue_test", "MobileBERT-tiny", "flops", 3.1e9),
    ("mobilebert_glue_test", "MobileBERT", "cola", 50.5),
    ("mobilebert_glue_test", "MobileBERT", "stsb_spearman", 84.4),
    ("mobilebert_glue_test", "BERT-base", "cola", None),
    ("mobilebert_squad_dev", "MobileBERT w/o OPT", "squad2.0_em", 77.6),
    ("mobilebert_squad_dev", "MobileBERT-tiny", "squad1.1_em", 81.4),
    ("mobilebert_squad_dev", "MobileBERT", "squad2.0_f1", 79.2),
    # Khattab & Zaharia 2020, Table 2, DeepCT row, as read in a text extraction of the ar5iv copy.
    ("colbert_e2e", "DeepCT (end-to-end; latency estimated, recall as reported by Dai and Callan)", "mrr10_dev", 24.3),
    ("colbert_e2e", "DeepCT (end-to-end; latency estimated, recall as reported by Dai and Callan)", "recall1000", 91.0),
    ("colbert_e2e", "DeepCT (end-to-end; latency estimated, recall as reported by Dai and Callan)", "mrr10_local_eval",
     None),
    # The google-research/albert README (snapshot b772393): v2 vs v1, GLUE dev, SQuAD and RACE tables.
    ("albert_readme_dev", "ALBERT-base (v2, 10M steps)", "race", 66.8),
    ("albert_readme_dev", "ALBERT-xxlarge (v2, 3M steps)", "squad2.0_em", 86.9),
    ("albert_readme_dev", "ALBERT-xxlarge (v1, 1.5M steps)", "avg", 91.0),
    ("albert_readme_glue_dev", "ALBERT (1.5M) (ALBERT-xxlarge v1, 1.5M steps)", "cola", 71.4),
    ("albert_readme_glue_dev", "XLNet-large (reported in the ALBERT README)", "rte", 83.8),
    ("albert_readme_squad_race", "ALBERT (1.5M)", "squad2.0_test_f1", 90.9),
    ("albert_readme_squad_race", "ALBERT (1.5M)", "race_test_high", 85.5),
    ("albert_readme_squad_race", "UPM", "squad2.0_test_em", 87.2),
    ("albert_readme_squad_race", "ALBERT (1M)", "squad2.0_test_f1", None),
    # The salesforce/ctrl README (snapshot a089a0c), Source Attributions.
    ("ctrl_source_attribution", "CTRL (256-token model) (My landlord is suing me for unpaid rent, Legal)", "prompt_ppl",
     21.210965),
    ("ctrl_source_attribution", "CTRL (256-token model) (I love God, Atheism)", "prompt_ppl", 116.811038),
]


@pytest.mark.parametrize(("name", "model", "metric", "value"), CELLS, ids=[f"{c[0]}-{c[2]}" for c in CELLS])
def test_transcribed_cells_equal_their_source(name, model, metric, value):
    rows = results.parse_table((results.RESULTS_DIR / f"{name}.tsv").read_text(encoding="utf-8"))
    assert [r.value for r in rows if r.model == model and r.metric == metric] == [value]


def test_every_results_file_has_a_readme_row():
    readme = (results.RESULTS_DIR / "README.md").read_text(encoding="utf-8")
    for path in results.RESULTS_DIR.glob("*.tsv"):
        assert f"| {path.name} |" in readme, path.name


def test_longformer_rows_agree_between_its_paper_and_bigbird():
    ours = {(r.model, r.metric): r.value for r in results.rows("long-document-dev")}
    bigbird = {(r.model, r.metric): r.value for r in results.rows("long-document-qa-dev")}
    assert ours[("Longformer-base", "wikihop")] == bigbird[("Longformer", "wikihop_mcq")] == 75.0
    assert ours[("RoBERTa-base", "triviaqa")] == bigbird[("RoBERTa", "triviaqa_full")] == 74.3


def test_perplexity_bits_and_latency_are_lower_is_better():
    assert not any(results.higher_is_better(m) for m in ("lambada_ppl", "enwik8_bpb", "text8_bpc", "latency_ms"))
    assert results.higher_is_better("lambada_acc") and results.higher_is_better("mrr10_dev")


def test_with_compute_keeps_only_variants_with_a_budget():
    pts = [results.Point("a", "bert-base", 80.0, 1, 1, "s"), results.Point("b", "t5-small", 70.0, 1, 1, "s")]
    kept = results.with_compute(pts, {"bert-base": 8.4e19, "t5-small": None})
    assert [(p.variant, p.train_flops) for p in kept] == [("bert-base", 8.4e19)]
    assert results.frontier(kept, "train_flops") == kept


# Catalog families -> (catalog keys, the paper tag a source names). A family is covered when a row names one
# of its keys as variant, or comes from its paper (Sentence-BERT's table has no row of the catalog's checkpoint).
FAMILIES = {
    "BERT": (("bert-base", "bert-large"), "BERT"), "RoBERTa": (("roberta-base", "roberta-large"), "RoBERTa"),
    "DeBERTa": (("deberta-base", "deberta-v2-xlarge", "deberta-v3-base"), "DeBERTa"),
    "ALBERT": (("albert-base", "albert-large", "albert-xxlarge"), "ALBERT"),
    "DistilBERT": (("distilbert",), "DistilBERT"),
    "DistilRoBERTa": (("distilroberta",), "DistilRoBERTa"), "TinyBERT": (("tinybert",), "TinyBERT"),
    "MobileBERT": (("mobilebert",), "MobileBERT"), "FastBERT": (("fastbert",), "FastBERT"),
    "ELECTRA": (("electra-small", "electra-base", "electra-small-generator", "electra-small-discriminator",
                 "electra-base-generator", "electra-base-discriminator"), "ELECTRA"),
    "SpanBERT": (("spanbert",), "SpanBERT"), "StructBERT": (("structbert",), "StructBERT"), "XLM": (("xlm",), "XLM"),
    "XLM-R": (("xlm-roberta",), "XLM-R"), "Longformer": (("longformer",), "Longformer"),
    "BigBird": (("bigbird",), "BigBird"),
    "Sentence-BERT": (("sentence-bert",), "Sentence-BERT"), "ColBERT": (("colbert",), "ColBERT"),
    "ColBERTv2": (("colbertv2",), "ColBERTv2"), "GPT": (("gpt",), "GPT"), "GPT-2": (("gpt2",), "GPT-2"),
    "GPT-3": (("gpt3",), "GPT-3"), "GPT-Neo": (("gpt-neo",), "GPT-Neo"), "GPT-J": (("gpt-j",), "GPT-J"),
    "CTRL": (("ctrl",), "CTRL"), "Gemma 3": (("gemma3-270m",), "Gemma 3"),
    "T5": (("t5-small", "t5-base", "t5-11b"), "T5"),
    "BART": (("bart-base", "bart-large"), "BART"), "M2M-100": (("m2m100",), "M2M-100"),
    "BigBird-Pegasus": (("bigbird-pegasus",), "BigBird-Pegasus"), "BERT2BERT": (("bert2bert",), "BERT2BERT"),
}
# Families without a sourced row, each with the reason (assets/results/README.md says the same). None left: CTRL's
# rows are its README's source-attribution perplexities, M2M-100's its abstract's claim in words (tests below).
NO_ROW_YET: dict[str, str] = {}


def test_every_catalog_key_is_in_a_family():
    assert {k for keys, _ in FAMILIES.values() for k in keys} == set(catalog.keys())


def test_every_family_but_the_listed_ones_has_a_sourced_row():
    rows = results.rows()
    covered = {name for name, (keys, tag) in FAMILIES.items()
               if any(r.variant in keys or f"({tag})" in r.source for r in rows)}
    missing = set(FAMILIES) - covered
    assert missing == set(NO_ROW_YET), {name: NO_ROW_YET.get(name, "no reason recorded") for name in missing}
    readme = (results.RESULTS_DIR / "README.md").read_text(encoding="utf-8")
    assert all(name in readme for name in NO_ROW_YET)  # the README says which families still lack a table


def test_the_new_families_are_covered_by_their_own_papers_rows():
    mapped = {r.variant: r.source for r in results.rows() if r.variant in ("bigbird-pegasus", "bert2bert")}
    assert mapped["bigbird-pegasus"].startswith("Zaheer et al. 2020 (BigBird), Table 4")
    assert mapped["bert2bert"].startswith("Rothe et al. 2020 (BERT2BERT), Table 5")


def test_train_flops_are_costs_never_the_default_metric():
    assert not results.higher_is_better("train_flops") and not results.higher_is_better("infer_flops")
    assert results.metrics("glue-dev")[0] not in results.SIZE_METRICS


def test_distil_readme_macro_scores_are_the_means_of_their_cells():
    rows = [r for r in results.rows("glue-dev") if "distillation README" in r.source]
    by = {(r.model, r.metric): r.value or 0.0 for r in rows}  # every cell of these two rows is reported
    tasks = ("cola", "mnli", "mrpc", "qnli", "qqp", "rte", "sst2", "stsb")
    for model in ("DistilRoBERTa", "RoBERTa-base (reported; Distil* README)"):
        with_wnli = sum(by[(model, t)] for t in (*tasks, "wnli")) / 9
        without = sum(by[(model, t)] for t in tasks) / 8
        assert abs(with_wnli - by[(model, "macro_score")]) < 0.06
        assert abs(without - by[(model, "macro_score_without_wnli")]) < 0.06


def test_costs_are_never_the_default_metric():
    assert results.metrics("fastbert-adaptive-test") == ["accuracy", "flops"]
    assert not results.higher_is_better("flops")


def test_model_labels_are_unique_within_a_table():
    """``table`` keys records by (model label, source): two lines with one label would overwrite each other."""
    for path in results.RESULTS_DIR.glob("*.tsv"):
        rows = results.parse_table(path.read_text(encoding="utf-8"))
        pairs = [(r.model, r.metric) for r in rows]
        assert len(pairs) == len(set(pairs)), path.name


def _cells_of(name: str) -> dict[tuple[str, str], float | None]:
    return {(r.model, r.metric): r.value
            for r in results.parse_table((results.RESULTS_DIR / f"{name}.tsv").read_text(encoding="utf-8"))}


def _number(cells: dict[tuple[str, str], float | None], model: str, metric: str) -> float:
    value = cells[(model, metric)]
    assert value is not None, (model, metric)
    return value


GLUE_TASKS = ("cola", "sst2", "mrpc_f1", "stsb_spearman", "qqp_f1", "mnli_matched", "mnli_mismatched", "qnli", "rte")


def test_mobilebert_tiny_equals_the_row_tinybert_quotes():
    # Two copies of one row: MobileBERT's Table 4 (via nn_pruning) and TinyBERT's GLUE test table, which quotes it.
    ours, theirs = _cells_of("mobilebert_glue_test"), _cells_of("tinybert_glue_test")
    for metric in (*GLUE_TASKS, "params_millions"):
        assert ours[("MobileBERT-tiny", metric)] == theirs[("MobileBERT-tiny", metric)], metric
        assert ours[("MobileBERT", metric)] is not None and ours[("MobileBERT w/o OPT", metric)] is not None


def test_mobilebert_glue_scores_keep_the_gaps_the_text_states():
    # Abstract: MobileBERT is 0.6 below BERT-base; a summary of Table 4: w/o OPT is 0.2 above it.
    cell = _cells_of("mobilebert_glue_test")
    base, mobile, no_opt = (_number(cell, m, "glue_score") for m in ("BERT-base", "MobileBERT", "MobileBERT w/o OPT"))
    assert round(base - mobile, 1) == 0.6 and round(no_opt - base, 1) == 0.2
    assert cell[("MobileBERT", "latency_ms")] == 62 and not results.higher_is_better("latency_ms")


def test_albert_readme_v1_rows_equal_the_papers_table_2():
    readme, paper = _cells_of("albert_readme_dev"), _cells_of("albert_dev")
    metrics = ("avg", "squad1.1_f1", "squad1.1_em", "squad2.0_f1", "squad2.0_em", "mnli", "sst2", "race")
    for size in ("base", "large", "xlarge"):
        assert [readme[(f"ALBERT-{size} (v1)", m)] for m in metrics] == [paper[(f"ALBERT-{size}", m)] for m in metrics]
    # The released xxlarge v1 trained longer (1.5M steps) than Table 2's 125k-step model: the rows differ.
    assert readme[("ALBERT-xxlarge (v1, 1.5M steps)", "race")] != paper[("ALBERT-xxlarge", "race")]


def test_albert_readme_baselines_equal_their_other_copies():
    glue, electra, fairseq = _cells_of("albert_readme_glue_dev"), _cells_of("electra_large_glue_dev"), \
        _cells_of("fairseq_glue_dev")
    electra_name = {"mrpc": "mrpc_accuracy", "qqp": "qqp_accuracy", "stsb": "stsb_spearman"}
    for task in ("mnli", "qnli", "qqp", "rte", "sst2", "mrpc", "cola", "stsb"):
        assert glue[("BERT-large (reported in the ALBERT README)", task)] == \
            electra[("BERT (Clark et al. 2019)", electra_name.get(task, task))], task
        assert glue[("RoBERTa-large (reported in the ALBERT README)", task)] == \
            fairseq[("RoBERTa-large (dev, single model, single-task)", task)], task
    squad, fairseq_squad = _cells_of("albert_readme_squad_race"), _cells_of("fairseq_squad_dev")
    for version in ("1.1", "2.0"):
        for metric in ("f1", "em"):  # F1/EM here, EM/F1 there: equal cells confirm both the order and RoBERTa-large
            assert squad[("RoBERTa", f"squad{version}_dev_{metric}")] == \
                fairseq_squad[("RoBERTa-large", f"squad{version}_{metric}")]


def test_albert_readme_squad_pairs_are_f1_then_em():
    # F1 is never below exact match, so the larger number of each README pair is F1.
    for name in ("albert_readme_dev", "albert_readme_squad_race"):
        cell = _cells_of(name)
        for (model, metric), f1 in cell.items():
            if metric.endswith("_f1") and f1 is not None:
                assert f1 >= _number(cell, model, metric[:-3] + "_em"), (name, model, metric)


def test_ctrl_rows_are_source_attribution_perplexities_not_a_benchmark_score():
    rows = results.rows("ctrl-source-attribution-perplexity")
    assert len(rows) == 15 and {r.variant for r in rows} == {"ctrl"} and {r.metric for r in rows} == {"prompt_ppl"}
    assert not results.higher_is_better("prompt_ppl")
    by_prompt: dict[str, list[float]] = {}
    for r in rows:  # the README lists each prompt's domains lowest perplexity first
        by_prompt.setdefault(r.model.rsplit(", ", 1)[0], []).append(r.value or 0.0)
    assert len(by_prompt) == 5 and all(ppl == sorted(ppl) and len(ppl) == 3 for ppl in by_prompt.values())


def test_m2m100_has_a_claim_in_words_and_no_invented_number():
    (row,) = results.rows("m2m100-non-english-bleu-claim")
    assert row.value is None and row.variant is None and row.source.startswith("Fan et al. 2021 (M2M-100), abstract")
    claim = dict(row.texts)["claim"]
    assert "gains of more than 10 BLEU when directly translating between non-English directions" in claim
    assert results.numberless([row]) and not results.numberless(results.rows("ms-marco-passage"))
    (record,) = results.table([row])
    assert record["claim"] == claim and record["bleu_gain_non_english_directions"] == results.NOT_REPORTED
    readme = (results.RESULTS_DIR / "README.md").read_text(encoding="utf-8")
    assert "M2M-100's BLEU tables" in readme and "m2m100_abstract_claim.tsv" in readme


def test_text_columns_are_words_never_metrics():
    text = ("# src\n# benchmark: b\n# text: note\nmodel\tscore\tnote\tvariant\tsource\n"
            "A\t1.5\tsaid so\t-\tS\nB\t-\t-\t-\tS\n")
    rows = results.parse_table(text)
    assert [(r.model, r.metric, r.value, r.texts) for r in rows] == [("A", "score", 1.5, (("note", "said so"),)),
                                                                     ("B", "score", None, ())]
    assert [rec["note"] for rec in results.table(rows)] == ["said so", ""]
    assert not results.numberless(rows) and not results.numberless(rows[1:])  # a blank without words is no claim


def test_albert_squad_race_says_what_changed_and_flags_the_copied_cell() -> None:
    first = (results.RESULTS_DIR / "albert_readme_squad_race.tsv").read_text(encoding="utf-8").splitlines()[0]
    assert "unchanged since" not in first  # one cell changed: said, with its commits and dates
    assert "79.6" in first and "76.6" in first and "2019-12-06" in first
    bert = {r.metric: r for r in results.rows("squad-race") if r.model == "BERT-large"}
    xlnet = {r.metric: r.value for r in results.rows("squad-race") if r.model == "XLNet"}
    assert bert["race_test_middle"].value == 76.6
    assert bert["squad2.0_test_f1"].value == xlnet["squad2.0_test_f1"]  # the README's cell, kept as printed...
    assert "XLNet" in dict(bert["squad2.0_test_f1"].texts)["note"]  # ...with the caveat beside it


def test_a_cross_check_that_reads_the_same_file_twice_says_it_is_not_independent() -> None:
    first = (results.RESULTS_DIR / "mobilebert_glue_test.tsv").read_text(encoding="utf-8").splitlines()[0]
    assert "not an independent check" in first and "nn_pruning" in first

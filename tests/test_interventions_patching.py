"""Activation patching's oracles on tiny models of three families (and the bundled Gemma once): patching every
position restores the clean metric, patching nothing leaves the corrupted one, positions before the first
difference do nothing, the last layer at the answer's position restores the clean output; batched equals one
forward per cell; a stopped request keeps its cells; bad input gets one message before any work."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import pytest
import torch

from explorer.core.errors import ExplorerError
from explorer.interventions import metrics, patching, plan, stacks, traces
from explorer.interventions.engine import engine_for
from explorer.interventions.models import local_ref
from explorer.interventions.pair import make_pair
from explorer.runtime import cancel, loading
from explorer.runtime.resolve import resolve
from tests.tiny_gemma import load_tiny_gemma
from tests.tiny_models import save_tiny

CLEAN, CORRUPT = "The Eiffel Tower is in the city of ___.", "The Colosseum is in the city of ___."
TOL = 1e-5  # float32 sums over a batch of rows are not ordered as over one row


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict[str, loading.LoadedModel]:
    root = tmp_path_factory.mktemp("patching")
    out = {"decoder": load_tiny_gemma(root / "gemma", device="cpu")}
    for kind, task in (("bert", "masked-lm"), ("t5", "seq2seq"), ("bart", "seq2seq")):
        out[kind] = loading.load_model(resolve(str(save_tiny(kind, root / kind))), task, device="cpu")
    return out


def _metric_of(loaded, cells, site: str = "resid", rows: int | None = None, metric: str = "logit-diff",
               stack: str | None = None) -> tuple[list[float], float, float]:
    """The metric of the corrupted run with ``cells`` of the clean run patched in (each a row), and both runs'."""
    engine = engine_for(loaded.model)
    s, name = stacks.stack_sites(engine.model, stack)
    pair = make_pair(loaded.tokenizer, engine.model.config, s.family, name, CLEAN, _corrupt(loaded), "Paris", "Rome")
    with engine.session():
        clean_in = traces.batch_inputs(engine, pair.clean, 1)
        readout = traces.readout_index(pair.clean, clean_in)
        acts, clean = traces.capture(engine, s, site, clean_in, readout)
        _, corrupt = traces.capture(engine, s, site, traces.batch_inputs(engine, pair.corrupt, 1), readout)
        batch = traces.batch_inputs(engine, pair.corrupt, rows or len(cells))
        logits = traces.replaced(engine, s, site, batch, readout, cells, dict(enumerate(acts)))
    both = metrics.values(torch.stack([clean, corrupt]).float(), metric, pair.target_id, pair.foil_id, clean=clean)
    values = metrics.values(logits, metric, pair.target_id, pair.foil_id, clean=clean.float())
    return values.tolist(), float(both[0]), float(both[1])


def _corrupt(loaded) -> str:
    """A corrupted prompt of the clean one's length for this tokenizer (the tiny models use GPT-2/BERT/T5 pieces)."""
    return {"bert": "The Colosseum Tower is in the city of ___."}.get(Path(loaded.key).name, CORRUPT)


@pytest.mark.parametrize("kind", ["decoder", "bert", "t5", "bart"])
def test_patching_every_position_restores_the_clean_metric_and_nothing_the_corrupted(models, kind: str) -> None:
    loaded = models[kind]
    layers = stacks.stack_sites(engine_for(loaded.model).model)[0].layers
    values, clean, corrupt = _metric_of(loaded, [(layer, None) for layer in range(layers)])
    assert abs(clean - corrupt) > 1e-4  # there is something to restore
    assert all(math.isclose(v, clean, abs_tol=TOL) for v in values)
    untouched, _, _ = _metric_of(loaded, [], rows=1)
    assert math.isclose(untouched[0], corrupt, abs_tol=TOL)


def test_the_last_layer_at_the_answer_restores_the_clean_output_and_earlier_positions_do_nothing(models) -> None:
    loaded = models["decoder"]
    grid = patching.patch_loaded(loaded, CLEAN, CORRUPT, "Paris", "Rome")
    assert grid.first_difference == 1  # "The" is shared
    assert math.isclose(grid.values[-1][-1], grid.clean_metric, abs_tol=TOL) and math.isclose(grid.grid[-1][-1], 1.0,
                                                                                              abs_tol=1e-3)
    for row in grid.grid:  # a decoder's positions before the first difference see the same tokens in both runs
        assert all(abs(v) < 1e-4 for v in row[:grid.first_difference])
    assert all(abs(v) < 1e-4 for v in grid.grid[-1][:-1])  # the last layer's other positions reach no answer


@pytest.mark.parametrize("site", ["resid", "heads"])
def test_batched_grid_equals_one_forward_per_cell(models, site: str) -> None:
    loaded = models["decoder"]
    batched = patching.patch_loaded(loaded, CLEAN, CORRUPT, "Paris", "Rome", site=site, metric="kl")
    single = patching.patch_loaded(loaded, CLEAN, CORRUPT, "Paris", "Rome", site=site, metric="kl", max_rows=1)
    assert batched.plan.forwards == 3 and single.plan.forwards == single.plan.cells + 2
    for a, b in zip(itertools.chain(*batched.values), itertools.chain(*single.values), strict=True):
        assert math.isclose(a, b, abs_tol=TOL)
    assert len(batched.values) == 3 and len(batched.columns) == (2 if site == "heads" else len(batched.clean_tokens))


@pytest.mark.parametrize("kind,stack", [("bert", None), ("t5", "encoder"), ("t5", "decoder"), ("bart", None)])
def test_grids_of_masked_lms_and_encoder_decoders(models, kind: str, stack: str | None) -> None:
    grid = patching.patch_loaded(models[kind], CLEAN, _corrupt(models[kind]), "Paris", "Rome", stack=stack)
    assert grid.stack == (stack or "encoder") and grid.family in ("encoder", "encoder-decoder")
    assert all(not math.isnan(v) for row in grid.values for v in row)
    if grid.stack == "decoder":  # the decoder reads the same tokens in both runs: nothing differs there
        assert grid.first_difference == len(grid.clean_tokens)
    assert grid.to_dict()["grid"] and grid.rows()[0]["layer"] == 0


def test_a_request_out_of_time_keeps_the_cells_computed(models) -> None:
    clock = itertools.chain([0.0] * 2, itertools.repeat(1e9))  # the token and its first check, then out of time
    token = cancel.CancelToken(cancel.RequestBudget(60.0, 2**40, "test"), clock=clock.__next__, memory=lambda: 0)
    with cancel.scope(token):
        grid = patching.patch_loaded(models["decoder"], CLEAN, CORRUPT, "Paris", "Rome", max_rows=10)
    assert 0 < grid.cells_done < grid.plan.cells and [n.kind for n in grid.notices] == ["stopped"]
    assert "Computed: " in grid.notices[0].text


def test_the_plan_is_known_and_bounded_before_work() -> None:
    cfg = {"hidden_size": 640, "intermediate_size": 2048, "num_attention_heads": 4}
    work = plan.plan(cfg, cells=18 * 9, length=9, logits_per_row=262_144)
    assert work.rows_per_forward * (work.forwards - plan.BASE_FORWARDS) >= work.cells
    with pytest.raises(ExplorerError, match="token positions"):
        plan.plan(cfg, cells=48 * 64, length=2000, logits_per_row=10)


@pytest.mark.parametrize("clean,corrupt,target,foil,pattern", [
    (CLEAN, "The Colosseum in Rome is in the city of ___.", "Paris", "Rome", r"clean prompt has 10 tokens and the "
                                                                            r"corrupted one 12"),
    ("   ", CORRUPT, "Paris", "Rome", "clean prompt is empty"),
    (CLEAN, "", "Paris", "Rome", "corrupted prompt is empty"),
    (CLEAN, CLEAN, "Paris", "Rome", "same tokens"),
    (CLEAN, CORRUPT, "", "Rome", "target is empty"),
    (CLEAN, CORRUPT, "Paris", None, "needs a foil|compares the target with a foil"),
    (CLEAN, CORRUPT, "Paris", "Paris", "same token"),
])
def test_bad_pairs_get_one_message(models, clean, corrupt, target, foil, pattern) -> None:
    with pytest.raises(ExplorerError, match=pattern):
        patching.patch_loaded(models["decoder"], clean, corrupt, target, foil)


def test_bad_choices_and_models_are_refused_before_loading() -> None:
    with pytest.raises(ExplorerError, match="Unknown site"):
        patching.patch(resolve("gemma3-270m"), CLEAN, CORRUPT, "Paris", "Rome", site="everything")
    with pytest.raises(ExplorerError, match="Unknown metric"):
        patching.patch(resolve("gemma3-270m"), CLEAN, CORRUPT, "Paris", "Rome", metric="accuracy")
    with pytest.raises(ExplorerError, match="served by an inference engine"):
        patching.patch(local_ref("served:llama"), CLEAN, CORRUPT, "Paris", "Rome")
    with pytest.raises(ExplorerError, match="served by an inference engine"):  # resolved without local_ref
        patching.patch(resolve("served:llama"), CLEAN, CORRUPT, "Paris", "Rome")
    with pytest.raises(ExplorerError, match="saved without a masked-language-model head"):
        patching.patch(local_ref("sentence-bert"), CLEAN, CORRUPT, "Paris", "Rome", device="cpu")


def test_a_catalog_key_without_weights_says_how_to_get_them(tmp_path: Path) -> None:
    """Resolving loads nothing and never raises; the load says what resolve found (the message the page and the
    command showed when they passed the name down)."""
    ref = local_ref("bert-base", str(tmp_path))
    assert not ref.ready and ref.missing and ref.reason
    with pytest.raises(ExplorerError) as err:
        patching.patch(ref, CLEAN, CORRUPT, "Paris", "Rome", device="cpu")
    assert str(err.value) == ref.reason


def test_a_masked_lm_needs_a_blank(models) -> None:
    with pytest.raises(ExplorerError, match="put ___ where the answer goes"):
        patching.patch_loaded(models["bert"], "The Eiffel Tower is in Paris.", "The Colosseum is in Paris.",
                              "Paris", "Rome")


def test_the_bundled_gemma_restores_paris(bundled_decoder) -> None:
    """The real model: its clean and corrupted metrics are its own logits; the last layer at the last position
    restores the clean one, and <bos> (the same in both prompts) changes nothing."""
    loaded = loading.load_model(resolve("gemma3-270m"), "causal-lm", device="cpu")
    (last, bos), clean, corrupt = _metric_of(loaded, [(17, 8), (5, 0)])
    tok = loaded.tokenizer
    paris, rome = (tok(" " + w, add_special_tokens=False)["input_ids"][0] for w in ("Paris", "Rome"))
    with torch.no_grad():
        ends = [loaded.model(**tok(t, return_tensors="pt")).logits[0, -1] for t in
                ("The Eiffel Tower is in the city of", "The Colosseum is in the city of")]
    assert math.isclose(clean, float(ends[0][paris] - ends[0][rome]), abs_tol=1e-3)
    assert math.isclose(corrupt, float(ends[1][paris] - ends[1][rome]), abs_tol=1e-3)
    assert clean > 0 > corrupt  # Paris for the tower, Rome for the Colosseum
    assert math.isclose(last, clean, abs_tol=1e-4) and math.isclose(bos, corrupt, abs_tol=1e-4)

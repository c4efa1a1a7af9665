"""The feature lab's oracles on tiny random models: TopK's L0 is k on every token; the reconstruction plus its error
spliced back is the model's own logits (a decoder, a masked LM, an encoder-decoder, a transcoder); the same seed,
data and settings give the same dictionary; clamping a feature to its own value changes nothing."""

from __future__ import annotations

import pytest
import torch

from explorer.features import about as abouts
from explorer.features import clamp, fidelity, folder, pipeline, recipe, trainer, windows
from explorer.features.dictionary import Dictionary, Shape
from explorer.runtime import loading
from explorer.runtime.resolve import resolve
from explorer.training import corpus
from tests.tiny_gemma import save_tiny_gemma
from tests.tiny_models import save_tiny

TEXT = "\n\n".join(f"The function number {i} returns a list of values from the module, and the loop reads it "
                   f"again in order {i % 7}." for i in range(600)).encode()
RECIPE = recipe.with_changes(recipe.QUICK, heldout_tokens=256, ce_tokens=64)
TASKS = {"gemma": "causal-lm", "bert": "masked-lm", "t5": "seq2seq"}


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """Tiny models, the corpus, and this module's own cache (harvests are kept on disk)."""
    root = tmp_path_factory.mktemp("features")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("EXPLORER_CACHE_DIR", str(root / "cache"))
        models = {}
        for kind, task in TASKS.items():
            path = save_tiny_gemma(root / kind) if kind == "gemma" else save_tiny(kind, root / kind)
            models[kind] = loading.load_model(resolve(str(path)), task, device="cpu")
        yield models, corpus.from_bytes(TEXT, "tiny text"), {}


def _trained(lab, kind: str, r: recipe.Recipe = RECIPE, again: bool = False):
    """(the model, the training's outcome, the dictionary), trained once per module unless ``again``."""
    models, text, done = lab
    if again or (kind, r) not in done:
        result, run = pipeline.train(models[kind], r, text, save=False)
        done[(kind, r)] = (models[kind], result, trainer.fold(run))
    return done[(kind, r)]


def test_topk_has_exactly_k_features_on_every_token() -> None:
    d = Dictionary(Shape(d_in=16, width=64, d_out=16, activation="topk", k=5))
    g = torch.Generator().manual_seed(0)
    with torch.no_grad():
        d.W_enc.copy_(torch.randn(16, 64, generator=g))
        d.b_enc.fill_(100.0)  # every pre-activation positive: the k largest are all active
    features = d.encode(torch.randn(500, 16, generator=g))
    assert ((features > 0).sum(dim=-1) == 5).all()


def test_a_trained_topk_sae_has_l0_k_wherever_k_pre_activations_are_positive(lab) -> None:
    loaded, result, d = _trained(lab, "gemma")
    held = pipeline.heldout(loaded, lab[1], 256, RECIPE.seq_len, 0)
    taps, _ = pipeline.taps_of(loaded, RECIPE)
    x = fidelity._reconstruction(loaded.model, d, taps, {"input_ids": held.ids})[0].reshape(-1, d.shape.d_in)
    active = (d.encode(x) > 0).sum(dim=-1)
    assert torch.equal(active, (d.pre(x) > 0).sum(dim=-1).clamp(max=RECIPE.k))
    assert result.fidelity.l0 == RECIPE.k and result.report.steps == RECIPE.steps


@pytest.mark.parametrize("kind", ["gemma", "bert", "t5"])
def test_the_reconstruction_plus_its_error_is_the_models_own_logits(lab, kind) -> None:
    loaded, result, d = _trained(lab, kind)
    taps, _ = pipeline.taps_of(loaded, RECIPE)
    family = pipeline.family_of(loaded)
    held = pipeline.heldout(loaded, lab[1], 64, RECIPE.seq_len, 0)
    got = {m: fidelity.logits(loaded, family, taps, d, held.ids, m, held.special) for m in fidelity.MODES}
    with torch.no_grad():
        own = loaded.model(**windows.inputs(loaded.model, family, held.ids))
    assert torch.allclose(got["clean"], own.logits.float(), atol=1e-6, rtol=0)
    assert (got["error"] - got["clean"]).abs().max() < 1e-5
    assert (got["spliced"] - got["clean"]).abs().max() > 1e-3  # the splice did replace the site
    assert 0 < result.fidelity.fve <= 1 and result.fidelity.loss == fidelity.LOSSES[family]


def test_a_transcoder_spliced_with_its_error_is_the_models_own_logits(lab) -> None:
    r = recipe.with_changes(RECIPE, kind="transcoder", skip=True)
    loaded, result, d = _trained(lab, "gemma", r)
    taps, about = pipeline.taps_of(loaded, r)
    assert len(taps) == 2 and about.transcoder and d.W_skip is not None
    held = pipeline.heldout(loaded, lab[1], 64, r.seq_len, 0)
    clean, error = (fidelity.logits(loaded, "decoder", taps, d, held.ids, m, held.special) for m in ("clean", "error"))
    assert (error - clean).abs().max() < 1e-5 and result.fidelity.ce_clean is not None


def test_the_same_seed_data_and_settings_give_the_same_dictionary(lab) -> None:
    first, second = _trained(lab, "gemma")[2], _trained(lab, "gemma", again=True)[2]
    other = _trained(lab, "gemma", recipe.with_changes(RECIPE, seed=1))[2]
    for name in ("W_enc", "b_enc", "W_dec", "b_dec"):
        assert torch.equal(getattr(first, name), getattr(second, name)), name
    assert not torch.equal(first.W_dec, other.W_dec)


@pytest.mark.parametrize("kind", ["gemma", "bert"])
def test_clamping_a_feature_to_its_own_value_changes_nothing(lab, kind, tmp_path) -> None:
    loaded, result, d = _trained(lab, kind)
    taps, about = pipeline.taps_of(loaded, RECIPE)
    saved = folder.Saved(d, about, tmp_path)
    held = pipeline.heldout(loaded, lab[1], 64, RECIPE.seq_len, 0)
    clean = clamp.logits(loaded, saved, held.part(0, 1))
    for feature in range(4):
        same = clamp.logits(loaded, saved, held.part(0, 1), feature, lambda f: f)
        assert torch.equal(same, clean)
    moved = clamp.logits(loaded, saved, held.part(0, 1), 0, lambda f: torch.full_like(f, 50.0))
    assert not torch.equal(moved, clean)
    assert abouts.taps(loaded.model, about) == taps


def test_a_clamp_reads_the_prediction_before_and_after(lab, tmp_path) -> None:
    loaded, _, d = _trained(lab, "gemma")
    _, about = pipeline.taps_of(loaded, RECIPE)
    saved = folder.Saved(d, about, tmp_path)
    out = clamp.clamp(loaded, saved, 3, 40.0, "The function number 4 returns")
    assert out.read == "the next token" and out.kl > 0 and len(out.before) == len(out.after) == clamp.SHOWN
    assert abs(sum(p for _, p in out.before)) <= 1.0
    kept = clamp.clamp(loaded, saved, 3, 0.0, "a")  # ablating a feature that never fires on a special-only text
    assert kept.to_dict()["feature"] == 3

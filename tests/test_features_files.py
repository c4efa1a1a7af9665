"""Dictionaries others make, read exactly: Gemma Scope 2's layout and SAELens's (cfg.json + sae_weights.safetensors),
written here with known weights, encode and decode as their formulas say; ours export in SAELens's layout and load
back identically; a file's site becomes hook points of the model it names."""

from __future__ import annotations

import json

import pytest
import torch
from safetensors.torch import save_file

from explorer.core.errors import ExplorerError
from explorer.features import folder, saelens
from explorer.features.about import About
from explorer.features.dictionary import Dictionary, Shape

D_IN, WIDTH = 16, 32


def _weights(seed: int = 0, d_out: int = D_IN) -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return {"w_enc": torch.randn(D_IN, WIDTH, generator=g), "w_dec": torch.randn(WIDTH, d_out, generator=g),
            "b_enc": torch.randn(WIDTH, generator=g) * 0.1, "b_dec": torch.randn(d_out, generator=g),
            "threshold": torch.rand(WIDTH, generator=g)}


def _x(n: int = 200) -> torch.Tensor:
    return torch.randn(n, D_IN, generator=torch.Generator().manual_seed(9)) * 2


def _jumprelu(pre: torch.Tensor, threshold: torch.Tensor) -> torch.Tensor:
    return torch.relu(pre) * (pre > threshold)


def test_a_gemma_scope_2_sae_encodes_and_decodes_as_its_formula_says(tmp_path) -> None:
    w = _weights()
    place = tmp_path / "resid_post" / "layer_1_width_32_l0_small"
    place.mkdir(parents=True)
    save_file(w, str(place / "params.safetensors"))
    saved = folder.load(place)
    x = _x()
    f = _jumprelu(x @ w["w_enc"] + w["b_enc"], w["threshold"])  # no decoder bias subtracted from the input
    assert torch.equal(saved.dictionary.encode(x), f) and 0 < int((f > 0).sum()) < f.numel()
    assert torch.allclose(saved.dictionary.decode(f, x), f @ w["w_dec"] + w["b_dec"], atol=1e-6)
    about = saved.about
    assert (about.kind, about.format, about.layer, about.hook_in) == ("jumprelu", "gemma-scope", 1,
                                                                       "model.layers.1.output")
    assert about.claims["l0"].startswith("10-20")


def test_a_gemma_scope_2_skip_transcoder_adds_its_affine_skip(tmp_path) -> None:
    w = {**_weights(1), "affine_skip_connection": torch.randn(D_IN, D_IN)}
    place = tmp_path / "transcoder" / "layer_2_width_32_l0_big"
    place.mkdir(parents=True)
    save_file(w, str(place / "params.safetensors"))
    saved = folder.load(place)
    x = _x()
    f = _jumprelu(x @ w["w_enc"] + w["b_enc"], w["threshold"])
    want = f @ w["w_dec"] + w["b_dec"] + x @ w["affine_skip_connection"]
    assert torch.allclose(saved.dictionary(x), want, atol=1e-5)
    assert saved.about.transcoder and saved.about.hook_out == "model.layers.2.post_feedforward_layernorm.output"


def _saelens_folder(place, w: dict[str, torch.Tensor], **cfg: object) -> None:
    place.mkdir(parents=True)
    config = {"architecture": "jumprelu", "d_in": D_IN, "d_sae": WIDTH, "apply_b_dec_to_input": True,
              "normalize_activations": "none", "metadata": {"model_name": "gemma-3-270m",
                                                            "hook_name": "blocks.3.hook_resid_post"}, **cfg}
    (place / "cfg.json").write_text(json.dumps(config), encoding="utf-8")
    save_file({"W_enc": w["w_enc"], "W_dec": w["w_dec"], "b_enc": w["b_enc"], "b_dec": w["b_dec"],
               "threshold": w["threshold"]}, str(place / "sae_weights.safetensors"))


def test_an_saelens_jumprelu_sae_encodes_and_decodes_as_its_formula_says(tmp_path) -> None:
    w = _weights(2)
    _saelens_folder(tmp_path / "sae", w)
    saved = folder.load(tmp_path / "sae")
    x = _x()
    f = _jumprelu((x - w["b_dec"]) @ w["w_enc"] + w["b_enc"], w["threshold"])  # SAELens subtracts b_dec first
    assert torch.equal(saved.dictionary.encode(x), f)
    assert torch.allclose(saved.dictionary.decode(f), f @ w["w_dec"] + w["b_dec"], atol=1e-6)
    assert (saved.about.site, saved.about.layer, saved.about.format) == ("resid", 3, "saelens")


def test_an_saelens_scale_kept_apart_is_folded_into_the_weights(tmp_path) -> None:
    w, factor = _weights(3), 0.37
    _saelens_folder(tmp_path / "sae", w, normalize_activations="expected_average_only_in")
    (tmp_path / "sae" / "activation_scaler.json").write_text(json.dumps({"scaling_factor": factor}))
    saved = folder.load(tmp_path / "sae")
    x = _x()
    f = _jumprelu((x * factor - w["b_dec"]) @ w["w_enc"] + w["b_enc"], w["threshold"])  # SAELens's own order
    assert torch.allclose(saved.dictionary.encode(x), f, atol=1e-5)
    assert torch.allclose(saved.dictionary.decode(f), (f @ w["w_dec"] + w["b_dec"]) / factor, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("activation", ["topk", "jumprelu"])
def test_our_export_loads_back_identically(tmp_path, activation) -> None:
    d = Dictionary(Shape(D_IN, WIDTH, D_IN, activation=activation, k=4))
    w = _weights(4)
    with torch.no_grad():
        for ours, theirs in (("W_enc", "w_enc"), ("W_dec", "w_dec"), ("b_enc", "b_enc"), ("b_dec", "b_dec"),
                             ("threshold", "threshold")):
            getattr(d, ours).copy_(w[theirs])
    about = About(activation, "explorer", name="mine", model="gemma3-270m", site="mlp", layer=2)
    record = {"name": "mine", "kind": activation, "model": "gemma3-270m", "site": "mlp", "layer": 2}
    place = folder.save(d, about, record, ("model.layers.2.mlp.output", None), 128, [tmp_path / "mine"])
    back = folder.load(place)
    for name in ("W_enc", "W_dec", "b_enc", "b_dec") + (("threshold",) if activation == "jumprelu" else ()):
        assert torch.equal(getattr(back.dictionary, name), getattr(d, name)), name
    assert back.dictionary.shape == d.shape and torch.equal(back.dictionary.encode(_x()), d.encode(_x()))
    assert (back.about.site, back.about.layer, back.about.format) == ("mlp", 2, "explorer")
    cfg = json.loads((place / saelens.CFG).read_text())
    assert cfg["metadata"]["hook_name"] == "blocks.2.hook_mlp_out" and cfg["architecture"] == activation
    theirs = saelens.read(place)[0]  # the same folder read as SAELens's alone (our record ignored)
    assert torch.equal(theirs.W_enc, d.W_enc)


def test_a_folder_that_holds_no_dictionary_is_refused_in_words(tmp_path) -> None:
    with pytest.raises(ExplorerError, match="holds no dictionary"):
        folder.load(tmp_path)
    w = _weights()
    _saelens_folder(tmp_path / "bad", {**w, "w_enc": w["w_enc"][:, :8].contiguous()})
    with pytest.raises(ExplorerError, match="W_enc is"):
        folder.load(tmp_path / "bad")
